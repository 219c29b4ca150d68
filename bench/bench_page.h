/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page every benchmark module compresses, so that their figures speak
 * of the same data: a random quarter, text for the rest (ratio about 0.5,
 * about what swap sees).
 */
#ifndef _ZBATCH_BENCH_PAGE_H
#define _ZBATCH_BENCH_PAGE_H

#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/string.h>

static inline void zbatch_bench_fill(u8 *p, u32 seed)
{
	static const char *const w[] = { "swap ", "page ", "the ", "memory ",
		"kernel ", "batch ", "of ", "compress\n" };
	struct rnd_state r;
	unsigned int i;

	prandom_seed_state(&r, seed);
	prandom_bytes_state(&r, p, PAGE_SIZE / 4);
	i = PAGE_SIZE / 4;
	while (i < PAGE_SIZE) {
		const char *s = w[prandom_u32_state(&r) % ARRAY_SIZE(w)];
		unsigned int n = min_t(unsigned int, strlen(s), PAGE_SIZE - i);

		memcpy(p + i, s, n);
		i += n;
	}
}

#endif /* _ZBATCH_BENCH_PAGE_H */
