/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dispatch decisions from measured costs: pure functions built into the
 * module and into the host unit tests (no kernel headers).
 *
 * The model: the submitter starts at once; a helper engine starts after
 * the hand-off latency h (post to first claim, measured); from then on
 * every participant claims descriptors until none is left (work
 * stealing). A job of W ns of work handed to k helpers takes about
 * h + (W - h) / (k + 1) instead of W. The rule is k = W / h - 1: no
 * hand-off below W = 2h (where one helper would gain under 25% and its
 * wake-up costs CPU time), one more helper for every further h of work.
 */
#ifndef _ZBATCH_PLAN_H
#define _ZBATCH_PLAN_H

/*
 * Helpers for a job of @nr descriptors, @work_ns of work in all, given
 * the hand-off latency @handoff_ns (0: not measured yet, hand off to one
 * helper so that it gets measured) and @avail engines able to help.
 */
unsigned int zbatch_plan_helpers(unsigned long long work_ns,
				 unsigned long long handoff_ns,
				 unsigned int nr, unsigned int avail);

/*
 * Cut @nr descriptors between the submitter (sizes[0]) and @helpers
 * others (sizes[1..helpers]): each of them gets nr / (helpers + 1), the
 * submitter, who starts first, the rest.
 */
void zbatch_plan_split(unsigned int nr, unsigned int helpers,
		       unsigned int *sizes);

/*
 * The batch size worth asking callers for: the smallest batch of
 * @req_ns requests handed to all @avail helpers, within 1..@max. With no
 * helper it is 1; with no measured cost yet, 4 per participant.
 */
unsigned int zbatch_plan_batch_size(unsigned long long req_ns,
				    unsigned long long handoff_ns,
				    unsigned int avail, unsigned int max);

#endif /* _ZBATCH_PLAN_H */
