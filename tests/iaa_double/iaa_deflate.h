/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IAA's deflate format, as the hardware test double needs it. Pure C,
 * built into the double (kernel) and into the host unit tests.
 *
 * Compress: IAA in iaa_crypto's "fixed" mode writes ONE final block
 * (BFINAL=1) with the RFC 1951 fixed Huffman codes (BTYPE=01), no zlib
 * header, and matches no further back than its 4 KiB history.
 * iaa_fixed_compress() writes exactly that (a greedy one-probe matcher:
 * the double models the format, not the hardware's ratio).
 *
 * Decompress: IAA accepts stored, fixed and dynamic blocks, but keeps a
 * history of 4 KiB: a distance above IAA_HISTORY is an error, as is one
 * reaching before the start of the output. iaa_inflate() decodes under
 * those rules (puff-style canonical decoding, exact; fixed blocks through
 * lookup tables), so a stream it accepts is one the device accepts.
 */
#ifndef _IAA_DEFLATE_H
#define _IAA_DEFLATE_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
#endif

#define IAA_HISTORY		4096
#define IAA_HASH_BITS		12
/*
 * Scratch the compressor needs: its hash table, zeroed before the first
 * call and kept between calls (entries are stamped, never cleared).
 */
#define IAA_FIXED_WRK_SIZE	(((1u << IAA_HASH_BITS) + 1) * sizeof(u32))

enum iaa_deflate_err {
	IAA_OK = 0,
	IAA_E_OVERFLOW = -1,	/* output does not fit */
	IAA_E_STREAM = -2,	/* not a valid deflate stream */
	IAA_E_HISTORY = -3,	/* a distance beyond the 4 KiB history */
	IAA_E_TRUNCATED = -4,	/* input ends before the final block does */
};

/*
 * Compress @slen bytes into @dst (capacity *@dlen); *@dlen gets the size.
 * @wrk: IAA_FIXED_WRK_SIZE bytes, zeroed once, then private to one caller
 * at a time.
 */
int iaa_fixed_compress(const u8 *src, u32 slen, u8 *dst, u32 *dlen, void *wrk);

/*
 * Build the fixed-code tables both directions use. The double calls it
 * before it registers (no first use races another); the calls below make
 * it on first use too, for a single-threaded host.
 */
void iaa_deflate_init(void);

/*
 * Decode a raw deflate stream under IAA's rules into @dst (capacity
 * *@dlen); *@dlen gets the size. With @bfinal_out non-NULL it gets how
 * many blocks the stream had and @fixed_only whether they were all fixed
 * Huffman blocks (the shape iaa_fixed_compress() promises).
 */
int iaa_inflate(const u8 *src, u32 slen, u8 *dst, u32 *dlen,
		u32 *blocks, int *fixed_only);

#endif /* _IAA_DEFLATE_H */
