// SPDX-License-Identifier: GPL-2.0
// Dispatch decisions (kmod/plan.c): how many engines a job is handed to,
// how it is cut, and the batch size asked of callers.
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "plan.h"
}

namespace {

TEST(Plan, OneRequestNeverLeavesTheSubmitter)
{
	EXPECT_EQ(zbatch_plan_helpers(1000000000ULL, 1000, 1, 8), 0u);
}

TEST(Plan, NoHelperOrUnknownWorkStaysInline)
{
	EXPECT_EQ(zbatch_plan_helpers(1000000, 1000, 16, 0), 0u);
	EXPECT_EQ(zbatch_plan_helpers(0, 1000, 16, 4), 0u);
}

TEST(Plan, UnmeasuredHandoffTriesOneHelper)
{
	EXPECT_EQ(zbatch_plan_helpers(1000, 0, 16, 4), 1u);
}

// Work under two hand-off latencies stays inline; every further latency
// of work buys one more helper, up to what is available and useful.
TEST(Plan, HelpersFollowWorkOverHandoff)
{
	const unsigned long long h = 100000;
	EXPECT_EQ(zbatch_plan_helpers(h, h, 16, 4), 0u);
	EXPECT_EQ(zbatch_plan_helpers(2 * h - 1, h, 16, 4), 0u);
	EXPECT_EQ(zbatch_plan_helpers(2 * h, h, 16, 4), 1u);
	EXPECT_EQ(zbatch_plan_helpers(3 * h, h, 16, 4), 2u);
	EXPECT_EQ(zbatch_plan_helpers(100 * h, h, 16, 4), 4u);
	EXPECT_EQ(zbatch_plan_helpers(100 * h, h, 3, 4), 2u);
}

TEST(Plan, SplitGivesTheSubmitterTheRemainder)
{
	for (unsigned int nr = 1; nr <= 64; nr++) {
		for (unsigned int k = 0; k < 16 && k < nr; k++) {
			std::vector<unsigned int> s(k + 1);
			zbatch_plan_split(nr, k, s.data());
			EXPECT_EQ(std::accumulate(s.begin(), s.end(), 0u), nr) << nr << " " << k;
			for (unsigned int i = 1; i <= k; i++) {
				EXPECT_EQ(s[i], nr / (k + 1));
				EXPECT_GE(s[0], s[i]);
			}
		}
	}
}

TEST(Plan, BatchSizeIsWhatUsesEveryHelper)
{
	// no helper: batching buys nothing
	EXPECT_EQ(zbatch_plan_batch_size(20000, 80000, 0, 64), 1u);
	// 20 us requests, 80 us hand-off, 1 helper: 8 requests give k = 1
	unsigned int n = zbatch_plan_batch_size(20000, 80000, 1, 64);
	EXPECT_EQ(n, 8u);
	EXPECT_EQ(zbatch_plan_helpers(n * 20000ULL, 80000, n, 1), 1u);
	EXPECT_EQ(zbatch_plan_helpers((n - 1) * 20000ULL, 80000, n - 1, 1), 0u);
	// expensive requests: one each
	EXPECT_EQ(zbatch_plan_batch_size(1000000, 80000, 3, 64), 4u);
	// capped
	EXPECT_EQ(zbatch_plan_batch_size(10, 80000, 7, 64), 64u);
	// unmeasured: 4 per participant
	EXPECT_EQ(zbatch_plan_batch_size(0, 80000, 1, 64), 8u);
}

} // namespace
