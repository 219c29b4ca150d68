/* SPDX-License-Identifier: GPL-2.0 */
/* The batch core's entry points for the rest of the module (batch.c). */
#ifndef _ZBATCH_BATCH_H
#define _ZBATCH_BATCH_H

#include <linux/types.h>
#include <linux/zbatch.h>

/* zbatch_cr_errno() of a record with @status and @error_code */
int zbatch_status_errno(u8 status, u8 error_code, bool compress);
int zbatch_run_inline(struct zbatch_ctx *ctx, struct zbatch_req *req,
		      unsigned int codec, int level);
/*
 * Whether a batch of @nr requests of @op on @bytes of uncompressed data,
 * submitted from this CPU now, would run anywhere but here (IAA, or
 * engines worth their hand-off and @serial_ns, what the caller pays
 * first only to hand the batch over): false means the caller may as
 * well run each request itself, where its data lies (the swap device
 * decompressing straight from zsmalloc instead of copying objects out
 * for the engines: @serial_ns is that copy).
 */
bool zbatch_would_offload(unsigned int codec, enum zbatch_op op,
			  unsigned int nr, u64 bytes, u64 serial_ns);

struct zbatch_exec_device;
struct zbatch_wq;
/* The device executor jobs may go to, or NULL (init and exit only). */
void zbatch_exec_device_set(const struct zbatch_exec_device *d);
/* Whether a device executor runs @codec now. */
bool zbatch_device_serves(unsigned int codec);
/*
 * zbatch_submit() on @wq, a device executor's WQ the caller holds,
 * whatever routing would pick: the executor's own probe of a device it
 * is attaching.
 */
int zbatch_submit_on(struct zbatch_batch *batch, struct zbatch_wq *wq);

#endif /* _ZBATCH_BATCH_H */
