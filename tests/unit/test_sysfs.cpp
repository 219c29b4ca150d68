// SPDX-License-Identifier: GPL-2.0
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "fake_tree.hpp"
#include "zbatch/sysfs.hpp"

using zbatch::SysfsTree;

TEST(SysfsTree, ReadStripsOneTrailingNewline)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/version", "0.1.0\n");
	SysfsTree tree(t.root());
	auto v = tree.read("/sys/kernel/zbatch/version");
	ASSERT_TRUE(v.has_value()) << v.error().message;
	EXPECT_EQ(*v, "0.1.0");
}

TEST(SysfsTree, ReadMissingFileNamesThePath)
{
	FakeTree t;
	SysfsTree tree(t.root());
	auto v = tree.read("/sys/kernel/zbatch/nope");
	ASSERT_FALSE(v.has_value());
	EXPECT_EQ(v.error().code, ENOENT);
	EXPECT_NE(v.error().message.find("sys/kernel/zbatch/nope"), std::string::npos);
}

TEST(SysfsTree, WriteThenRead)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/codec", "lz4\n");
	SysfsTree tree(t.root());
	ASSERT_TRUE(tree.write("/sys/kernel/zbatch/codec", "zstd").has_value());
	EXPECT_EQ(*tree.read("/sys/kernel/zbatch/codec"), "zstd");
}

TEST(SysfsTree, ListIsSorted)
{
	FakeTree t;
	t.put("/d/b", "");
	t.put("/d/a", "");
	SysfsTree tree(t.root());
	auto names = tree.list("/d");
	ASSERT_TRUE(names.has_value());
	EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"}));
}

TEST(SysfsTree, ReadChoice)
{
	FakeTree t;
	t.put("/c", "deflate [lz4] zstd\n");
	t.put("/n", "plain\n");
	SysfsTree tree(t.root());
	EXPECT_EQ(tree.read_choice("/c"), "lz4");
	EXPECT_EQ(tree.read_choice("/n"), "");
	EXPECT_EQ(tree.read_choice("/missing"), "");
}
