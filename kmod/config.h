/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tunables: zbatch_cfg (defined in main.c) and zbatch_acomp_inline
 * (acomp.c), written by sysfs.c. zbatch_cfg_lock: lock order in locks.h.
 */
#ifndef _ZBATCH_CONFIG_H
#define _ZBATCH_CONFIG_H

#include <linux/mutex.h>
#include <linux/types.h>

enum zbatch_sync_mode {
	ZBATCH_SYNC = 0,	/* submit, then help, spin 1 ms, sleep until done */
	ZBATCH_ASYNC,		/* submit returns; the caller polls */
	ZBATCH_ASYNC_IRQ,	/* submit returns; engines wake the waiter */
};

struct zbatch_config {
	unsigned int codec;		/* enum zbatch_codec, never DEFAULT */
	unsigned int sync_mode;
	/* the series' WQ design (map.h): iaa_crypto's names and meanings */
	bool distribute_comps;		/* compress round-robins over the package */
	bool distribute_decomps;	/* decompress too (default: local) */
	unsigned int g_comp_wqs;	/* g_comp_wqs_per_iaa: compress-only WQs */
	bool verify;
	unsigned int timeout_ms;
};

extern struct mutex zbatch_cfg_lock;
extern struct zbatch_config zbatch_cfg;
extern bool zbatch_acomp_inline;

#endif /* _ZBATCH_CONFIG_H */
