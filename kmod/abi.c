// SPDX-License-Identifier: GPL-2.0
/* ioctl ABI validation; see abi.h. No kernel dependency beyond uapi types. */
#include "abi.h"

#ifdef __KERNEL__
#include <linux/errno.h>
#else
#include <errno.h>
#endif

int zbatch_abi_check_batch(const struct zbatch_ioc_batch *b)
{
	if (b->size < ZBATCH_BATCH_V1_SIZE ||
	    b->req_size != sizeof(struct zbatch_ioc_req) || b->reserved)
		return -EINVAL;
	if (b->op != ZBATCH_OP_COMPRESS && b->op != ZBATCH_OP_DECOMPRESS)
		return -EINVAL;
	if (b->codec >= ZBATCH_CODEC_NR || (b->flags & ~ZBATCH_F_ALL))
		return -EINVAL;
	if (!b->nr_reqs || b->nr_reqs > ZBATCH_MAX_BATCH)
		return -EINVAL;
	return 0;
}

/* Ranges [a, a + alen) and [b, b + blen) share a byte (or wrap around). */
static int overlaps(__u64 a, __u32 alen, __u64 b, __u32 blen)
{
	if (a + alen < a || b + blen < b)
		return 1;
	return a < b + blen && b < a + alen;
}

int zbatch_abi_check_reqs(const struct zbatch_ioc_req *r, unsigned int n)
{
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		if (r[i].reserved || !r[i].src_len || !r[i].dst_len ||
		    r[i].src_len > ZBATCH_MAX_LEN || r[i].dst_len > ZBATCH_MAX_LEN)
			return -EINVAL;
		if (overlaps(r[i].src, r[i].src_len, r[i].dst, r[i].dst_len))
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (overlaps(r[i].dst, r[i].dst_len, r[j].dst, r[j].dst_len) ||
			    overlaps(r[i].dst, r[i].dst_len, r[j].src, r[j].src_len) ||
			    overlaps(r[j].dst, r[j].dst_len, r[i].src, r[i].src_len))
				return -EINVAL;
	}
	return 0;
}

_Static_assert(sizeof(struct zbatch_ioc_batch) == ZBATCH_BATCH_V1_SIZE,
	       "a new field needs a new size constant, the V1 one stays");
_Static_assert(sizeof(struct zbatch_ioc_info) == ZBATCH_INFO_V1_SIZE,
	       "a new field needs a new size constant, the V1 one stays");
