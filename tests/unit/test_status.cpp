// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "fake_tree.hpp"
#include "zbatch/status.hpp"

TEST(Status, NotLoadedSaysHowToLoad)
{
	FakeTree t;
	zbatch::SysfsTree tree(t.root());
	auto st = zbatch::read_status(tree);
	ASSERT_FALSE(st.has_value());
	EXPECT_EQ(st.error().code, ENOENT);
	EXPECT_NE(st.error().message.find("not loaded"), std::string::npos);
	EXPECT_NE(st.error().message.find("zbatch load"), std::string::npos);
}

TEST(Status, ReadsVersionAndAttributes)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/version", "0.1.0\n");
	t.put("/sys/kernel/zbatch/codec", "lz4\n");
	t.put("/sys/kernel/zbatch/devices/dev0/wqs", "2\n");
	zbatch::SysfsTree tree(t.root());
	auto st = zbatch::read_status(tree);
	ASSERT_TRUE(st.has_value()) << st.error().message;
	EXPECT_EQ(st->version, "0.1.0");
	EXPECT_EQ(st->attributes.at("codec"), "lz4");
	EXPECT_EQ(st->attributes.count("devices"), 0u);
}
