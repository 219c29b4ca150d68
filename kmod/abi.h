/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Validation of the ioctl ABI: pure functions over the uapi structures,
 * built into the module and into the host unit tests.
 */
#ifndef _ZBATCH_ABI_H
#define _ZBATCH_ABI_H

#include <linux/zbatch.h>

/* The first published sizes: anything shorter is refused. */
#define ZBATCH_BATCH_V1_SIZE	48
#define ZBATCH_INFO_V1_SIZE	24

/* 0, or -EINVAL for a batch header no request should be read for. */
int zbatch_abi_check_batch(const struct zbatch_ioc_batch *b);

/*
 * 0, or -EINVAL when a request has a bad length or reserved field, its
 * source and destination overlap, or a destination overlaps any other
 * request's buffer. Pointers are checked for access by the caller.
 */
int zbatch_abi_check_reqs(const struct zbatch_ioc_req *r, unsigned int n);

#endif /* _ZBATCH_ABI_H */
