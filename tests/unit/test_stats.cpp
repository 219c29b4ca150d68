// SPDX-License-Identifier: GPL-2.0
// Statistics parsing and the invariants of 'zbatch validate' (fake debugfs).
#include <gtest/gtest.h>

#include "fake_tree.hpp"
#include "zbatch/stats.hpp"

namespace {

void fake_stats(FakeTree &t, const std::string &global, const std::string &wq)
{
	t.put("/sys/kernel/debug/zbatch/stats", global);
	t.put("/sys/kernel/debug/zbatch/dev0/stats", wq);
	t.put("/sys/kernel/debug/zbatch/dev0/wq0/stats", wq);
	t.put("/sys/kernel/debug/zbatch/batch_hist", "# batch_size count\n1 5\n2 0\n16 3\n");
	t.put("/sys/kernel/debug/zbatch/latency",
	      "# op samples p50_ns p95_ns p99_ns\ncompress 10 100 200 300\ndecompress 0 0 0 0\n");
}

const char *kGood = "compress_calls 10\ndecompress_calls 5\ncompletions 12\nerr_nospc 3\n"
		    "timeouts 0\nerr_verify 0\n";

} // namespace

TEST(Stats, ReadsScopesHistogramAndLatency)
{
	FakeTree t;
	fake_stats(t, kGood, kGood);
	zbatch::SysfsTree tree(t.root());
	auto s = zbatch::read_stats(tree);
	ASSERT_TRUE(s) << s.error().message;
	EXPECT_EQ(s->global.at("compress_calls"), 10u);
	EXPECT_EQ(s->scopes.count("dev0/wq0"), 1u);
	ASSERT_EQ(s->batch_hist.size(), 2u);
	EXPECT_EQ(s->batch_hist[1], (std::pair<unsigned int, uint64_t>{16, 3}));
	ASSERT_EQ(s->latency.size(), 2u);
	EXPECT_EQ(s->latency[0].p99, 300u);
	EXPECT_NE(zbatch::stats_to_json(*s).find("\"dev0/wq0\": {"), std::string::npos);
}

TEST(Stats, MissingDebugfsIsASkip)
{
	FakeTree t;
	zbatch::SysfsTree tree(t.root());
	auto s = zbatch::read_stats(tree);
	ASSERT_FALSE(s);
	EXPECT_EQ(s.error().exit, zbatch::kExitSkipped);
}

TEST(Validate, BalancedCountersPass)
{
	FakeTree t;
	fake_stats(t, kGood, kGood);
	zbatch::SysfsTree tree(t.root());
	for (const auto &c : zbatch::validate(*zbatch::read_stats(tree), tree))
		EXPECT_TRUE(c.ok) << c.what << ": " << c.detail;
}

TEST(Validate, EachBrokenInvariantIsReported)
{
	FakeTree t;
	fake_stats(t, "compress_calls 10\ncompletions 8\ntimeouts 2\nerr_verify 1\n", kGood);
	t.put("/sys/module/zswap/parameters/compressor", "lz4-zbatch\n");
	t.put("/sys/module/zswap/parameters/enabled", "Y\n");
	t.put("/sys/kernel/debug/zswap/stored_pages", "50\n");
	zbatch::SysfsTree tree(t.root());
	std::map<std::string, bool> seen;
	for (const auto &c : zbatch::validate(*zbatch::read_stats(tree), tree))
		seen[c.what] = c.ok;
	EXPECT_FALSE(seen.at("global: calls = completions + errors"));
	EXPECT_TRUE(seen.at("dev0/wq0: calls = completions + errors"));
	EXPECT_FALSE(seen.at("no descriptor timeouts"));
	EXPECT_FALSE(seen.at("no verify mismatches"));
	EXPECT_FALSE(seen.at("zswap (lz4-zbatch) holds no more pages than zbatch compressed"));
}
