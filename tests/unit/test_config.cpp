// SPDX-License-Identifier: GPL-2.0
// Tunables: validation, JSON files, all-or-nothing apply (fake sysfs).
#include <gtest/gtest.h>

#include "fake_tree.hpp"
#include "zbatch/config.hpp"
#include "zbatch/parse.hpp"

namespace {

void fake_module(FakeTree &t)
{
	t.put("/sys/kernel/zbatch/version", "0.2.0\n");
	t.put("/sys/kernel/zbatch/codec", "deflate [lz4] zstd lzo\n");
	t.put("/sys/kernel/zbatch/sync_mode", "sync [async] async_irq\n");
	t.put("/sys/kernel/zbatch/distribute_comps", "1\n");
	t.put("/sys/kernel/zbatch/distribute_decomps", "0\n");
	t.put("/sys/kernel/zbatch/g_comp_wqs_per_iaa", "1\n");
	t.put("/sys/kernel/zbatch/verify_compress", "0\n");
	t.put("/sys/kernel/zbatch/timeout_ms", "1000\n");
	t.put("/sys/kernel/zbatch/acomp_inline", "1\n");
}

} // namespace

TEST(Config, GetReadsTheBracketedChoice)
{
	FakeTree t;
	fake_module(t);
	zbatch::SysfsTree tree(t.root());
	EXPECT_EQ(*zbatch::config_get(tree, "codec"), "lz4");
	EXPECT_EQ(*zbatch::config_get(tree, "timeout_ms"), "1000");
	auto bad = zbatch::config_get(tree, "nope");
	ASSERT_FALSE(bad);
	EXPECT_NE(bad.error().message.find("known: codec, sync_mode"), std::string::npos);
}

TEST(Config, SetValidatesBeforeWriting)
{
	FakeTree t;
	fake_module(t);
	zbatch::SysfsTree tree(t.root());
	auto r = zbatch::config_set(tree, "codec", "gzip");
	ASSERT_FALSE(r);
	EXPECT_NE(r.error().message.find("'gzip' is not one of: deflate, lz4, zstd, lzo"),
		  std::string::npos) << r.error().message;
	EXPECT_FALSE(zbatch::config_set(tree, "timeout_ms", "0"));
	EXPECT_FALSE(zbatch::config_set(tree, "timeout_ms", "60001"));
	EXPECT_FALSE(zbatch::config_set(tree, "timeout_ms", "12x"));
	EXPECT_FALSE(zbatch::config_set(tree, "verify_compress", "maybe"));
	EXPECT_EQ(*tree.read("/sys/kernel/zbatch/timeout_ms"), "1000");
	ASSERT_TRUE(zbatch::config_set(tree, "verify_compress", "on"));
	EXPECT_EQ(*tree.read("/sys/kernel/zbatch/verify_compress"), "1");
	ASSERT_TRUE(zbatch::config_set(tree, "codec", "zstd"));
	EXPECT_EQ(*tree.read("/sys/kernel/zbatch/codec"), "zstd");
}

TEST(Config, JsonRoundTrip)
{
	zbatch::Config c{{"codec", "zstd"}, {"timeout_ms", "20"}};
	auto back = zbatch::config_from_json(zbatch::config_to_json(c));
	ASSERT_TRUE(back) << back.error().message;
	EXPECT_EQ(*back, c);
	auto nums = zbatch::config_from_json(R"({"timeout_ms": 50, "verify_compress": true})");
	ASSERT_TRUE(nums);
	EXPECT_EQ(nums->at("timeout_ms"), "50");
	EXPECT_EQ(nums->at("verify_compress"), "true");
	for (const char *bad : {"", "{", "{\"a\"}", "{\"a\": }", "{\"a\": 1,}", "{\"a\": 1} x",
				"{\"a\": 1, \"a\": 2}", "[1]"})
		EXPECT_FALSE(zbatch::config_from_json(bad)) << bad;
}

TEST(Config, ApplyIsAllOrNothing)
{
	FakeTree t;
	fake_module(t);
	zbatch::SysfsTree tree(t.root());
	// one invalid value: nothing is written
	auto r = zbatch::config_apply(tree, {{"codec", "zstd"}, {"timeout_ms", "0"}});
	ASSERT_FALSE(r);
	EXPECT_EQ(*tree.read("/sys/kernel/zbatch/codec"), "deflate [lz4] zstd lzo");
	// unknown key: refused whole
	EXPECT_FALSE(zbatch::config_apply(tree, {{"codec", "zstd"}, {"colour", "red"}}));
	ASSERT_TRUE(zbatch::config_apply(tree, {{"codec", "zstd"}, {"timeout_ms", "20"}}));
	EXPECT_EQ(*tree.read("/sys/kernel/zbatch/codec"), "zstd");
	EXPECT_EQ(*tree.read("/sys/kernel/zbatch/timeout_ms"), "20");
}

TEST(Parse, NumbersWithoutExceptionsNameTheSource)
{
	EXPECT_EQ(*zbatch::parse_number<unsigned>("42", "x"), 42u);
	auto bad = zbatch::parse_number<unsigned>("4x2", "/sys/kernel/zbatch/timeout_ms");
	ASSERT_FALSE(bad);
	EXPECT_EQ(bad.error().code, EINVAL);
	EXPECT_EQ(bad.error().message, "/sys/kernel/zbatch/timeout_ms: '4x2' is not a number");
	auto big = zbatch::parse_number<uint32_t>("99999999999", "f");
	ASSERT_FALSE(big);
	EXPECT_EQ(big.error().code, ERANGE);
	EXPECT_FALSE(zbatch::parse_number<unsigned>("", "f"));
	EXPECT_FALSE(zbatch::parse_number<unsigned>("-1", "f"));
	EXPECT_FALSE(zbatch::parse_number<unsigned>(" 1", "f"));
}
