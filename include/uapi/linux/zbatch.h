/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * zbatch userspace ABI: shared verbatim by the kernel module and the C++
 * tools. Structures carry their own size so they can grow: the kernel
 * accepts any size from the first published one up to its own, and
 * refuses larger ones whose extra bytes are not zero.
 */
#ifndef _UAPI_LINUX_ZBATCH_H
#define _UAPI_LINUX_ZBATCH_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Module and tools release; both must agree on ZBATCH_ABI_VERSION. */
#define ZBATCH_VERSION		"0.3.0"
#define ZBATCH_ABI_VERSION	1

/* Codecs. ZBATCH_CODEC_DEFAULT means the one set in sysfs. */
enum zbatch_codec {
	ZBATCH_CODEC_DEFAULT = 0,
	ZBATCH_CODEC_DEFLATE,	/* raw deflate, level 6, 4 KiB window (IAA) */
	ZBATCH_CODEC_LZ4,	/* LZ4 block format */
	ZBATCH_CODEC_ZSTD,	/* zstd frame, level 3 */
	ZBATCH_CODEC_LZO,	/* LZO1X-1 */
	ZBATCH_CODEC_NR,
};

/*
 * The codecs' names, index = enum zbatch_codec: as sysfs (codec, swap
 * devices) spells them and the acomp algorithms are named ("NAME-zbatch").
 * Use as an initializer: { ZBATCH_CODEC_NAMES }.
 */
#define ZBATCH_CODEC_NAMES	"default", "deflate", "lz4", "zstd", "lzo"

/* A swap device's compression units (sysfs zbatch/unit), in that order. */
#define ZBATCH_SWAPDEV_UNIT_NAMES	"4k", "16k", "64k"

enum zbatch_op {
	ZBATCH_OP_COMPRESS = 0,
	ZBATCH_OP_DECOMPRESS = 1,
};

/* Limits of one request and one batch. */
#define ZBATCH_MAX_LEN		65536
#define ZBATCH_MAX_BATCH	64

/* Ranges of the runtime tunables (/sys/kernel/zbatch); writes outside: -EINVAL. */
#define ZBATCH_TIMEOUT_MS_MIN	1
#define ZBATCH_TIMEOUT_MS_MAX	60000
#define ZBATCH_MAX_WQS		8	/* WQs per device; g_comp_wqs_per_iaa 0..this */

/* struct zbatch_ioc_batch.flags */
#define ZBATCH_F_NO_FALLBACK	0x1U	/* report -ETIMEDOUT, no sw rerun */
#define ZBATCH_F_ONE_BY_ONE	0x2U	/* submit and wait per request */
#define ZBATCH_F_ALL		(ZBATCH_F_NO_FALLBACK | ZBATCH_F_ONE_BY_ONE)

/* One request of a batch. */
struct zbatch_ioc_req {
	__u64 src;		/* in: user address of the input */
	__u64 dst;		/* in: user address of the output buffer */
	__u32 src_len;		/* in: 1..ZBATCH_MAX_LEN */
	__u32 dst_len;		/* in: capacity (1..ZBATCH_MAX_LEN); out: produced */
	__s32 status;		/* out: 0 or a negative errno for this request */
	__u32 reserved;		/* must be 0 */
};

struct zbatch_ioc_batch {
	__u32 size;		/* sizeof(struct zbatch_ioc_batch) */
	__u32 req_size;		/* sizeof(struct zbatch_ioc_req) */
	__u32 op;		/* enum zbatch_op */
	__u32 codec;		/* enum zbatch_codec */
	__u32 flags;		/* ZBATCH_F_* */
	__u32 nr_reqs;		/* 1..ZBATCH_MAX_BATCH */
	__u64 reqs;		/* user address of nr_reqs struct zbatch_ioc_req */
	__u64 elapsed_ns;	/* out: submit to last completion, in the kernel */
	__u32 nr_done;		/* out: requests with status 0 */
	__u32 reserved;		/* must be 0 */
};

struct zbatch_ioc_info {
	__u32 size;		/* in: sizeof(struct zbatch_ioc_info) */
	__u32 abi_version;	/* out: ZBATCH_ABI_VERSION */
	__u32 max_batch;	/* out: largest nr_reqs accepted */
	__u32 max_len;		/* out: largest src_len / dst_len */
	__u32 batch_size;	/* out: what batching callers should use */
	__u32 default_codec;	/* out: enum zbatch_codec set in sysfs */
};

#define ZBATCH_IOC_MAGIC	0xB7
#define ZBATCH_IOC_INFO		_IOWR(ZBATCH_IOC_MAGIC, 0, struct zbatch_ioc_info)
#define ZBATCH_IOC_SUBMIT	_IOWR(ZBATCH_IOC_MAGIC, 1, struct zbatch_ioc_batch)

#endif /* _UAPI_LINUX_ZBATCH_H */
