// SPDX-License-Identifier: GPL-2.0
// Latency histogram and percentiles (kmod/pct.c).
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "pct.h"
}

TEST(Pct, BucketBoundsContainTheValueWithin25Percent)
{
	for (unsigned long long ns : {0ull, 1ull, 3ull, 4ull, 7ull, 8ull, 100ull, 1000ull,
				      4095ull, 4096ull, 123456789ull, 1ull << 40}) {
		unsigned int b = zbatch_lat_bucket(ns);
		ASSERT_LT(b, (unsigned int)ZBATCH_LAT_BUCKETS);
		EXPECT_GE(zbatch_lat_bucket_max(b), ns) << ns;
		if (b > 0) {
			EXPECT_LT(zbatch_lat_bucket_max(b - 1), ns) << ns;
		}
		EXPECT_LE(zbatch_lat_bucket_max(b), ns + ns / 4 + 1) << ns;
	}
}

TEST(Pct, BucketsAreMonotonic)
{
	unsigned int prev = 0;
	for (unsigned long long ns = 0; ns < 100000; ns += 7) {
		unsigned int b = zbatch_lat_bucket(ns);
		EXPECT_GE(b, prev);
		prev = b;
	}
}

TEST(Pct, PercentilesOfAKnownDistribution)
{
	std::vector<unsigned long long> h(ZBATCH_LAT_BUCKETS, 0);
	// 900 samples at 1 us, 90 at 100 us, 10 at 10 ms
	h[zbatch_lat_bucket(1000)] = 900;
	h[zbatch_lat_bucket(100000)] = 90;
	h[zbatch_lat_bucket(10000000)] = 10;
	EXPECT_EQ(zbatch_lat_percentile(h.data(), 500), zbatch_lat_bucket_max(zbatch_lat_bucket(1000)));
	EXPECT_EQ(zbatch_lat_percentile(h.data(), 950), zbatch_lat_bucket_max(zbatch_lat_bucket(100000)));
	EXPECT_EQ(zbatch_lat_percentile(h.data(), 990), zbatch_lat_bucket_max(zbatch_lat_bucket(100000)));
	EXPECT_EQ(zbatch_lat_percentile(h.data(), 995), zbatch_lat_bucket_max(zbatch_lat_bucket(10000000)));
}

TEST(Pct, EmptyHistogramIsZero)
{
	std::vector<unsigned long long> h(ZBATCH_LAT_BUCKETS, 0);
	EXPECT_EQ(zbatch_lat_percentile(h.data(), 500), 0u);
}
