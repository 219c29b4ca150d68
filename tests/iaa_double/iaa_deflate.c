// SPDX-License-Identifier: GPL-2.0
/*
 * IAA's deflate format: a fixed-Huffman compressor and a decoder that
 * enforces the device's 4 KiB history (see iaa_deflate.h). The decoder is
 * in the style of zlib's contrib/puff: canonical codes decoded bit by bit,
 * except the fixed codes (the double's own output), looked up in tables.
 */
#ifdef __KERNEL__
#include <linux/string.h>
#else
#include <string.h>
#endif

#include "iaa_deflate.h"

#define MAXBITS		15
#define MAXLCODES	286
#define MAXDCODES	30
#define FIXLCODES	288

static const u16 len_base[29] = {
	3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
	35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const u8 len_extra[29] = {
	0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
	3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0 };
static const u16 dist_base[30] = {
	1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
	257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
	8193, 12289, 16385, 24577 };
static const u8 dist_extra[30] = {
	0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
	7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13 };

/* ---- compress ---- */
/*
 * Tables built once: the fixed codes bit-reversed (Huffman codes go most
 * significant bit first into an LSB-first stream), the length and
 * distance symbols of every length and distance IAA can emit.
 */
static struct {
	int ready;
	u16 lcode[288];		/* reversed literal/length codes */
	u8 llen[288];
	u8 dcode[30];		/* reversed 5-bit distance codes */
	u8 lsym[259];		/* length 3..258 -> length symbol - 257 */
	u8 dsym[IAA_HISTORY + 1];	/* distance 1..4096 -> distance code */
	/*
	 * The decoder's fixed codes: the next 9 (5) bits of the stream ->
	 * (code length << 9) | symbol. Every fixed code is at most 9 bits,
	 * so a fixed block never takes the bit-by-bit path.
	 */
	u16 dlit[1u << 9];
	u16 ddist[1u << 5];
} fx;

static u32 reverse(u32 code, unsigned int len)
{
	u32 r = 0;
	unsigned int i;

	for (i = 0; i < len; i++) {
		r = (r << 1) | (code & 1);
		code >>= 1;
	}
	return r;
}

void iaa_deflate_init(void)
{
	unsigned int sym, i, len;

	if (__atomic_load_n(&fx.ready, __ATOMIC_ACQUIRE))
		return;
	for (sym = 0; sym < 288; sym++) {
		u32 code;

		if (sym < 144) {
			code = 0x30 + sym;
			len = 8;
		} else if (sym < 256) {
			code = 0x190 + sym - 144;
			len = 9;
		} else if (sym < 280) {
			code = sym - 256;
			len = 7;
		} else {
			code = 0xc0 + sym - 280;
			len = 8;
		}
		fx.lcode[sym] = (u16)reverse(code, len);
		fx.llen[sym] = (u8)len;
	}
	for (i = 0; i < 30; i++)
		fx.dcode[i] = (u8)reverse(i, 5);
	for (len = 3, i = 0; len <= 258; len++) {
		while (i < 28 && len_base[i + 1] <= len)
			i++;
		fx.lsym[len] = (u8)i;
	}
	for (len = 1, i = 0; len <= IAA_HISTORY; len++) {
		while (i < 29 && dist_base[i + 1] <= len)
			i++;
		fx.dsym[len] = (u8)i;
	}
	for (sym = 0; sym < 288; sym++)
		for (i = fx.lcode[sym]; i < 1u << 9; i += 1u << fx.llen[sym])
			fx.dlit[i] = (u16)(fx.llen[sym] << 9 | sym);
	for (sym = 0; sym < 32; sym++)	/* 30 and 31 decode, then are refused */
		fx.ddist[reverse(sym, 5)] = (u16)(5 << 9 | sym);
	/* tables written before the flag (the double builds them at load) */
	__atomic_store_n(&fx.ready, 1, __ATOMIC_RELEASE);
}

struct bitw {
	u8 *out;
	u32 cap, pos;
	unsigned long long buf;
	unsigned int cnt;
	int overflow;
};

static void put(struct bitw *w, u32 bits, unsigned int n)
{
	w->buf |= (unsigned long long)bits << w->cnt;
	w->cnt += n;
	if (w->cnt < 32)
		return;
	if (w->cap - w->pos >= 4) {
		u32 v = (u32)w->buf;

		memcpy(w->out + w->pos, &v, 4);	/* little-endian targets */
		w->pos += 4;
	} else {
		w->overflow = 1;
	}
	w->buf >>= 32;
	w->cnt -= 32;
}

static void put_sym(struct bitw *w, unsigned int sym)
{
	put(w, fx.lcode[sym], fx.llen[sym]);
}

static void put_match(struct bitw *w, u32 len, u32 dist)
{
	unsigned int ls = fx.lsym[len], ds = fx.dsym[dist];

	put(w, fx.lcode[257 + ls], fx.llen[257 + ls]);
	put(w, len - len_base[ls], len_extra[ls]);
	put(w, fx.dcode[ds], 5);
	put(w, dist - dist_base[ds], dist_extra[ds]);
}

static u32 load32(const u8 *p)
{
	u32 v;

	memcpy(&v, p, 4);
	return v;
}

static u32 hash4(u32 v)
{
	return (v * 2654435761u) >> (32 - IAA_HASH_BITS);
}

/* Bytes equal at @a and @b, up to @max. */
static u32 match_len(const u8 *a, const u8 *b, u32 max)
{
	u32 n = 0;

	while (n + 8 <= max) {
		unsigned long long x, y;

		memcpy(&x, a + n, 8);
		memcpy(&y, b + n, 8);
		if (x != y)
			return n + (u32)(__builtin_ctzll(x ^ y) >> 3);
		n += 8;
	}
	while (n < max && a[n] == b[n])
		n++;
	return n;
}

int iaa_fixed_compress(const u8 *src, u32 slen, u8 *dst, u32 *dlen, void *wrk)
{
	struct bitw w = { .out = dst, .cap = *dlen };
	struct iaa_fixed_wrk { u32 base; u32 tab[1u << IAA_HASH_BITS]; } *k = wrk;
	u32 i = 0, misses = 0, base;

	iaa_deflate_init();
	/* positions are stamped base + i: no clearing between calls */
	if (k->base == 0 || k->base > 0xf0000000u) {
		memset(k, 0, sizeof(*k));
		k->base = 1;
	}
	base = k->base;
	k->base += slen + 1;
	put(&w, 1, 1);		/* BFINAL */
	put(&w, 1, 2);		/* BTYPE 01: fixed Huffman codes */
	while (i < slen) {
		if (slen - i >= 4) {
			u32 h = hash4(load32(src + i)), c = k->tab[h];

			k->tab[h] = base + i;
			if (c >= base && i - (c - base) <= IAA_HISTORY) {
				u32 cand = c - base;
				u32 max = slen - i < 258 ? slen - i : 258;
				u32 len = match_len(src + cand, src + i, max);

				if (len >= 3) {
					put_match(&w, len, i - cand);
					/* one more entry inside the match helps the next */
					if (len > 4 && slen - (i + len - 2) >= 4)
						k->tab[hash4(load32(src + i + len - 2))] =
							base + i + len - 2;
					i += len;
					misses = 0;
					continue;
				}
			}
			/* incompressible stretches: look less often, as LZ4 does */
			if (++misses > 8) {
				u32 step = 1 + ((misses - 8) >> 2), j;

				for (j = 0; j < step && i < slen; j++)
					put_sym(&w, src[i++]);
				continue;
			}
		}
		put_sym(&w, src[i++]);
	}
	put_sym(&w, 256);
	while (w.cnt > 0) {
		if (w.pos < w.cap)
			w.out[w.pos++] = (u8)w.buf;
		else
			w.overflow = 1;
		w.buf >>= 8;
		w.cnt = w.cnt > 8 ? w.cnt - 8 : 0;
	}
	if (w.overflow)
		return IAA_E_OVERFLOW;
	*dlen = w.pos;
	return IAA_OK;
}

/* ---- decompress ---- */
struct state {
	const u8 *in;
	u32 inlen, incnt;
	u32 bitbuf;
	unsigned int bitcnt;
	u8 *out;
	u32 outlen, outcnt;
};

struct huffman {
	u16 count[MAXBITS + 1];
	u16 symbol[FIXLCODES];
};

static int bits(struct state *s, unsigned int need, u32 *val)
{
	u32 v = s->bitbuf;

	while (s->bitcnt < need) {
		if (s->incnt == s->inlen)
			return IAA_E_TRUNCATED;
		v |= (u32)s->in[s->incnt++] << s->bitcnt;
		s->bitcnt += 8;
	}
	s->bitbuf = need < 32 ? v >> need : 0;
	s->bitcnt -= need;
	*val = v & ((1u << need) - 1);
	return IAA_OK;
}

static int decode(struct state *s, const struct huffman *h)
{
	int code = 0, first = 0, index = 0, len, ret;
	u32 bit;

	for (len = 1; len <= MAXBITS; len++) {
		int count = h->count[len];

		ret = bits(s, 1, &bit);
		if (ret)
			return ret;
		code |= (int)bit;
		if (code - count < first)
			return h->symbol[index + (code - first)];
		index += count;
		first += count;
		first <<= 1;
		code <<= 1;
	}
	return IAA_E_STREAM;	/* ran out of codes */
}

/*
 * A symbol of a fixed block: @tab (fx.dlit or fx.ddist) maps the next
 * @n bits to the code's length and symbol; bits past the input's end
 * read as zeros and must not be part of the code.
 */
static int decode_fixed(struct state *s, const u16 *tab, unsigned int n)
{
	unsigned int len;
	u16 e;

	while (s->bitcnt < n && s->incnt < s->inlen) {
		s->bitbuf |= (u32)s->in[s->incnt++] << s->bitcnt;
		s->bitcnt += 8;
	}
	e = tab[s->bitbuf & ((1u << n) - 1)];
	len = e >> 9;
	if (len > s->bitcnt)
		return IAA_E_TRUNCATED;
	s->bitbuf >>= len;
	s->bitcnt -= len;
	return e & 0x1ff;
}

/* Build a canonical code; incomplete codes are allowed (puff's rule). */
static int construct(struct huffman *h, const u16 *length, int n)
{
	u16 offs[MAXBITS + 1];
	int sym, len, left = 1;

	memset(h->count, 0, sizeof(h->count));
	for (sym = 0; sym < n; sym++)
		h->count[length[sym]]++;
	if (h->count[0] == n)
		return 0;
	for (len = 1; len <= MAXBITS; len++) {
		left <<= 1;
		left -= h->count[len];
		if (left < 0)
			return IAA_E_STREAM;	/* over-subscribed */
	}
	offs[1] = 0;
	for (len = 1; len < MAXBITS; len++)
		offs[len + 1] = offs[len] + h->count[len];
	for (sym = 0; sym < n; sym++)
		if (length[sym])
			h->symbol[offs[length[sym]]++] = (u16)sym;
	return left;
}

static int stored(struct state *s)
{
	u32 len;

	/*
	 * Whole bytes read ahead go back, the rest is padding. None today:
	 * decode_fixed() leaves at most 9 bits after an end of block, 6
	 * after the next header; this keeps stored() right if that changes.
	 */
	s->incnt -= s->bitcnt >> 3;
	s->bitbuf = 0;
	s->bitcnt = 0;
	if (s->inlen - s->incnt < 4)
		return IAA_E_TRUNCATED;
	len = s->in[s->incnt] | (u32)s->in[s->incnt + 1] << 8;
	if (s->in[s->incnt + 2] != (u8)~len || s->in[s->incnt + 3] != (u8)(~len >> 8))
		return IAA_E_STREAM;
	s->incnt += 4;
	if (s->inlen - s->incnt < len)
		return IAA_E_TRUNCATED;
	if (s->outlen - s->outcnt < len)
		return IAA_E_OVERFLOW;
	memcpy(s->out + s->outcnt, s->in + s->incnt, len);
	s->outcnt += len;
	s->incnt += len;
	return IAA_OK;
}

/* The symbols of a block; NULL codes: the fixed ones, from fx's tables. */
static int codes(struct state *s, const struct huffman *lencode,
		 const struct huffman *distcode)
{
	int sym, ret;
	u32 len, dist, extra;

	for (;;) {
		sym = lencode ? decode(s, lencode) : decode_fixed(s, fx.dlit, 9);
		if (sym < 0)
			return sym;
		if (sym < 256) {
			if (s->outcnt == s->outlen)
				return IAA_E_OVERFLOW;
			s->out[s->outcnt++] = (u8)sym;
			continue;
		}
		if (sym == 256)
			return IAA_OK;
		sym -= 257;
		if (sym >= 29)
			return IAA_E_STREAM;
		ret = bits(s, len_extra[sym], &extra);
		if (ret)
			return ret;
		len = len_base[sym] + extra;
		sym = distcode ? decode(s, distcode) : decode_fixed(s, fx.ddist, 5);
		if (sym < 0)
			return sym;
		if (sym >= 30)
			return IAA_E_STREAM;
		ret = bits(s, dist_extra[sym], &extra);
		if (ret)
			return ret;
		dist = dist_base[sym] + extra;
		if (dist > IAA_HISTORY)
			return IAA_E_HISTORY;
		if (dist > s->outcnt)
			return IAA_E_STREAM;
		if (s->outlen - s->outcnt < len)
			return IAA_E_OVERFLOW;
		while (len--) {
			s->out[s->outcnt] = s->out[s->outcnt - dist];
			s->outcnt++;
		}
	}
}

static int fixed(struct state *s)
{
	iaa_deflate_init();
	return codes(s, NULL, NULL);
}

static int dynamic(struct state *s)
{
	static const u8 order[19] = {
		16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };
	struct huffman lencode, distcode;
	u16 lengths[MAXLCODES + MAXDCODES];
	u32 nlen, ndist, ncode, v;
	u32 index;
	int ret, err;

	if (bits(s, 5, &nlen) || bits(s, 5, &ndist) || bits(s, 4, &ncode))
		return IAA_E_TRUNCATED;
	nlen += 257;
	ndist += 1;
	ncode += 4;
	if (nlen > MAXLCODES || ndist > MAXDCODES)
		return IAA_E_STREAM;
	for (index = 0; index < 19; index++) {
		v = 0;
		if (index < ncode && bits(s, 3, &v))
			return IAA_E_TRUNCATED;
		lengths[order[index]] = (u16)v;
	}
	if (construct(&lencode, lengths, 19) != 0)
		return IAA_E_STREAM;	/* must be complete */
	index = 0;
	while (index < nlen + ndist) {
		int sym = decode(s, &lencode);
		u32 len = 0, rep;

		if (sym < 0)
			return sym;
		if (sym < 16) {
			lengths[index++] = (u16)sym;
			continue;
		}
		if (sym == 16) {
			if (index == 0)
				return IAA_E_STREAM;
			len = lengths[index - 1];
			err = bits(s, 2, &rep);
			rep += 3;
		} else if (sym == 17) {
			err = bits(s, 3, &rep);
			rep += 3;
		} else {
			err = bits(s, 7, &rep);
			rep += 11;
		}
		if (err)
			return err;
		if (index + rep > nlen + ndist)
			return IAA_E_STREAM;
		while (rep--)
			lengths[index++] = (u16)len;
	}
	if (lengths[256] == 0)
		return IAA_E_STREAM;
	ret = construct(&lencode, lengths, (int)nlen);
	if (ret < 0 || (ret > 0 && nlen - lencode.count[0] != 1))
		return IAA_E_STREAM;
	ret = construct(&distcode, lengths + nlen, (int)ndist);
	if (ret < 0 || (ret > 0 && ndist - distcode.count[0] != 1))
		return IAA_E_STREAM;
	return codes(s, &lencode, &distcode);
}

int iaa_inflate(const u8 *src, u32 slen, u8 *dst, u32 *dlen,
		u32 *blocks, int *fixed_only)
{
	struct state s = { .in = src, .inlen = slen, .out = dst, .outlen = *dlen };
	u32 last, type, nblocks = 0;
	int ret, all_fixed = 1;

	do {
		if (bits(&s, 1, &last) || bits(&s, 2, &type))
			return IAA_E_TRUNCATED;
		nblocks++;
		if (type != 1)
			all_fixed = 0;
		if (type == 0)
			ret = stored(&s);
		else if (type == 1)
			ret = fixed(&s);
		else if (type == 2)
			ret = dynamic(&s);
		else
			ret = IAA_E_STREAM;
		if (ret)
			return ret;
	} while (!last);
	*dlen = s.outcnt;
	if (blocks)
		*blocks = nblocks;
	if (fixed_only)
		*fixed_only = all_fixed;
	return IAA_OK;
}
