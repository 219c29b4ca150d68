// SPDX-License-Identifier: GPL-2.0
/* Dispatch decisions: see plan.h for the cost model. */
#include "plan.h"

unsigned int zbatch_plan_helpers(unsigned long long work_ns,
				 unsigned long long handoff_ns,
				 unsigned int nr, unsigned int avail)
{
	unsigned long long k;

	if (nr < 2 || !avail || !work_ns)
		return 0;
	if (!handoff_ns)
		return 1;
	k = work_ns / handoff_ns;
	if (k < 2)
		return 0;
	k -= 1;
	if (k > avail)
		k = avail;
	if (k > nr - 1)
		k = nr - 1;
	return (unsigned int)k;
}

void zbatch_plan_split(unsigned int nr, unsigned int helpers,
		       unsigned int *sizes)
{
	unsigned int i, each = nr / (helpers + 1);

	sizes[0] = nr - each * helpers;
	for (i = 1; i <= helpers; i++)
		sizes[i] = each;
}

unsigned int zbatch_plan_batch_size(unsigned long long req_ns,
				    unsigned long long handoff_ns,
				    unsigned int avail, unsigned int max)
{
	unsigned long long n;

	if (!avail || max <= 1)
		return 1;
	if (!req_ns || !handoff_ns)
		n = 4ULL * (avail + 1);
	else
		/* k = n * req / h - 1 >= avail */
		n = ((avail + 1ULL) * handoff_ns + req_ns - 1) / req_ns;
	if (n < avail + 1ULL)
		n = avail + 1ULL;
	return n > max ? max : (unsigned int)n;
}
