/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Latency histogram buckets and percentiles: pure functions shared by the
 * module and the host unit tests. Buckets are log2 with 4 linear steps
 * each, so a reported percentile is within 25% above the true value.
 */
#ifndef _ZBATCH_PCT_H
#define _ZBATCH_PCT_H

#define ZBATCH_LAT_BUCKETS	256

/* Bucket index of a latency of @ns nanoseconds. */
unsigned int zbatch_lat_bucket(unsigned long long ns);
/* Upper bound, in ns, of bucket @b. */
unsigned long long zbatch_lat_bucket_max(unsigned int b);
/*
 * The @permille-th percentile (500 = p50, 990 = p99) of @counts as a
 * bucket upper bound in ns; 0 when the histogram is empty.
 */
unsigned long long zbatch_lat_percentile(const unsigned long long *counts,
					 unsigned int permille);

#endif /* _ZBATCH_PCT_H */
