// SPDX-License-Identifier: GPL-2.0
/* Latency percentiles from a log-linear histogram; see pct.h. */
#include "pct.h"

unsigned int zbatch_lat_bucket(unsigned long long ns)
{
	unsigned int log = 0, sub;

	if (ns < 4)
		return (unsigned int)ns;
	/* highest set bit h >= 2; ns >> (h - 2) is in [4, 8) */
	log = 63 - __builtin_clzll(ns) - 2;
	/* ns is in [4 << log, 8 << log): 4 steps of (1 << log) */
	sub = (unsigned int)(ns >> log) - 4;
	if (4 + log * 4 + sub >= ZBATCH_LAT_BUCKETS)
		return ZBATCH_LAT_BUCKETS - 1;
	return 4 + log * 4 + sub;
}

unsigned long long zbatch_lat_bucket_max(unsigned int b)
{
	unsigned int log, sub;

	if (b < 4)
		return b;
	log = (b - 4) / 4;
	sub = (b - 4) % 4;
	if (log >= 60)
		return ~0ULL;
	return ((unsigned long long)(4 + sub + 1) << log) - 1;
}

unsigned long long zbatch_lat_percentile(const unsigned long long *counts,
					 unsigned int permille)
{
	unsigned long long total = 0, want, seen = 0;
	unsigned int b;

	for (b = 0; b < ZBATCH_LAT_BUCKETS; b++)
		total += counts[b];
	if (!total)
		return 0;
	/* smallest bucket holding at least permille/1000 of the samples */
	want = (total * permille + 999) / 1000;
	if (!want)
		want = 1;
	for (b = 0; b < ZBATCH_LAT_BUCKETS; b++) {
		seen += counts[b];
		if (seen >= want)
			return zbatch_lat_bucket_max(b);
	}
	return zbatch_lat_bucket_max(ZBATCH_LAT_BUCKETS - 1);
}
