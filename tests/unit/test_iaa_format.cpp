// SPDX-License-Identifier: GPL-2.0
// IAA's deflate format rules, on the host: what the hardware test double
// writes is what IAA writes (one final fixed-Huffman block, matches within
// the 4 KiB history) and any inflate reads it; what zbatch's software
// deflate writes (raw, 4 KiB window) is what IAA's decoder accepts; and a
// stream IAA would refuse (a distance beyond 4 KiB) is refused.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "iaa_deflate.h"
}

namespace {

std::vector<uint8_t> page(unsigned kind, size_t len, uint32_t seed)
{
	std::vector<uint8_t> p(len);
	std::mt19937 rng(seed);
	static const char *words[] = {"swap ", "page ", "zbatch ", "folio ", "IAA ",
				      "deflate ", "batch ", "\n"};
	size_t i = 0;

	switch (kind) {
	case 0:	// text
		while (i < len) {
			const char *w = words[rng() % 8];
			for (; *w && i < len; w++)
				p[i++] = static_cast<uint8_t>(*w);
		}
		break;
	case 1:	// random: incompressible
		for (auto &b : p)
			b = static_cast<uint8_t>(rng());
		break;
	case 2:	// zero with sparse words
		for (i = 0; i < len; i += 64 + rng() % 64)
			p[i] = static_cast<uint8_t>(rng());
		break;
	default:	// small alphabet runs
		for (auto &b : p)
			b = static_cast<uint8_t>('a' + rng() % 4);
	}
	return p;
}

// Raw deflate with zlib, the software codec's settings (window 2^wbits).
std::vector<uint8_t> zlib_deflate(const std::vector<uint8_t> &in, int level, int wbits,
				  int strategy = Z_DEFAULT_STRATEGY)
{
	z_stream s{};
	std::vector<uint8_t> out(in.size() * 2 + 64);

	EXPECT_EQ(deflateInit2(&s, level, Z_DEFLATED, -wbits, 8, strategy), Z_OK);
	s.next_in = const_cast<Bytef *>(in.data());
	s.avail_in = static_cast<uInt>(in.size());
	s.next_out = out.data();
	s.avail_out = static_cast<uInt>(out.size());
	EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
	out.resize(s.total_out);
	deflateEnd(&s);
	return out;
}

bool zlib_inflate(const std::vector<uint8_t> &in, std::vector<uint8_t> &out)
{
	z_stream s{};

	if (inflateInit2(&s, -15) != Z_OK)
		return false;
	s.next_in = const_cast<Bytef *>(in.data());
	s.avail_in = static_cast<uInt>(in.size());
	s.next_out = out.data();
	s.avail_out = static_cast<uInt>(out.size());
	int ret = inflate(&s, Z_FINISH);
	out.resize(s.total_out);
	inflateEnd(&s);
	return ret == Z_STREAM_END;
}

std::vector<uint8_t> iaa_compress(const std::vector<uint8_t> &in, int *err)
{
	std::vector<uint8_t> out(in.size() * 2 + 64);
	std::vector<uint8_t> wrk(IAA_FIXED_WRK_SIZE);
	uint32_t dlen = static_cast<uint32_t>(out.size());

	*err = iaa_fixed_compress(in.data(), static_cast<uint32_t>(in.size()), out.data(),
				  &dlen, wrk.data());
	out.resize(*err ? 0 : dlen);
	return out;
}

}  // namespace

TEST(IaaFormat, FixedCompressIsOneFinalFixedBlockThatZlibInflates)
{
	for (unsigned kind = 0; kind < 4; kind++) {
		for (size_t len : {1ul, 100ul, 4096ul, 16384ul, 65536ul}) {
			auto in = page(kind, len, static_cast<uint32_t>(kind * 7 + len));
			int err;
			auto c = iaa_compress(in, &err);
			ASSERT_EQ(err, IAA_OK) << kind << "/" << len;
			// the first three bits: BFINAL=1, BTYPE=01
			EXPECT_EQ(c[0] & 7, 3) << kind << "/" << len;
			std::vector<uint8_t> back(len);
			ASSERT_TRUE(zlib_inflate(c, back)) << kind << "/" << len;
			EXPECT_EQ(back, in);
			// IAA's own decoder agrees, and sees one fixed block
			std::vector<uint8_t> dec(len);
			uint32_t dlen = static_cast<uint32_t>(len), blocks = 0;
			int fixed_only = 0;
			ASSERT_EQ(iaa_inflate(c.data(), static_cast<uint32_t>(c.size()), dec.data(),
					      &dlen, &blocks, &fixed_only), IAA_OK);
			EXPECT_EQ(blocks, 1u);
			EXPECT_EQ(fixed_only, 1);
			EXPECT_EQ(dec, in);
		}
	}
}

TEST(IaaFormat, TextCompressesAndRandomOverflowsASmallBuffer)
{
	auto text = page(0, 4096, 1);
	int err;
	auto c = iaa_compress(text, &err);
	ASSERT_EQ(err, IAA_OK);
	EXPECT_LT(c.size(), 2048u);

	auto rnd = page(1, 4096, 2);
	std::vector<uint8_t> out(4096), wrk(IAA_FIXED_WRK_SIZE);
	uint32_t dlen = 4096;
	EXPECT_EQ(iaa_fixed_compress(rnd.data(), 4096, out.data(), &dlen, wrk.data()),
		  IAA_E_OVERFLOW);
	dlen = 0;
	EXPECT_EQ(iaa_fixed_compress(rnd.data(), 4096, out.data(), &dlen, wrk.data()),
		  IAA_E_OVERFLOW);
}

// zbatch's software deflate: raw, window 2^12, any level. IAA decodes it.
TEST(IaaFormat, SoftwareDeflateWithA4KWindowIsAcceptedByIaa)
{
	for (int level : {1, 6, 9}) {
		for (unsigned kind = 0; kind < 4; kind++) {
			for (size_t len : {4096ul, 16384ul, 65536ul}) {
				auto in = page(kind, len, static_cast<uint32_t>(level + kind + len));
				auto c = zlib_deflate(in, level, 12);
				std::vector<uint8_t> dec(len);
				uint32_t dlen = static_cast<uint32_t>(len);
				ASSERT_EQ(iaa_inflate(c.data(), static_cast<uint32_t>(c.size()),
						      dec.data(), &dlen, nullptr, nullptr), IAA_OK)
					<< "level " << level << " kind " << kind << " len " << len;
				EXPECT_EQ(dec, in);
			}
		}
	}
}

// Fixed blocks from another encoder (zlib's Z_FIXED, several blocks on
// long inputs, lazy matching): the decoder's fixed tables read them
// exactly, and a stream cut anywhere is an error.
TEST(IaaFormat, FixedBlocksOfAnotherEncoderDecodeExactlyAndCutStreamsFail)
{
	for (unsigned kind = 0; kind < 4; kind++) {
		for (size_t len : {1ul, 300ul, 4096ul, 65536ul}) {
			auto in = page(kind, len, static_cast<uint32_t>(kind + 3 * len));
			auto c = zlib_deflate(in, 9, 12, Z_FIXED);
			std::vector<uint8_t> dec(len);
			uint32_t dlen = static_cast<uint32_t>(len), blocks = 0;
			int fixed_only = 0;
			ASSERT_EQ(iaa_inflate(c.data(), static_cast<uint32_t>(c.size()), dec.data(),
					      &dlen, &blocks, &fixed_only), IAA_OK) << kind << "/" << len;
			// random bytes: zlib stores what fixed codes would grow
			EXPECT_TRUE(kind == 1 || fixed_only) << kind << "/" << len;
			EXPECT_EQ(dlen, len);
			EXPECT_EQ(dec, in) << kind << "/" << len;
			if (len != 4096)
				continue;
			for (size_t cut = 0; cut < c.size(); cut++) {
				dlen = static_cast<uint32_t>(len);
				EXPECT_NE(iaa_inflate(c.data(), static_cast<uint32_t>(cut), dec.data(),
						      &dlen, nullptr, nullptr), IAA_OK) << kind << " cut " << cut;
			}
		}
	}
}

// A fixed block, then a stored one (zlib: text, then random bytes it
// stores): the stored block starts at the right byte after the fixed
// block's table-driven decoding.
TEST(IaaFormat, FixedBlockThenStoredBlockDecodeExactly)
{
	int found = 0;
	for (uint32_t seed = 0; seed < 16; seed++) {
		auto in = page(0, 2048, seed);
		auto rnd = page(1, 3000, seed + 100);	// within the window: storable
		in.insert(in.end(), rnd.begin(), rnd.end());
		z_stream z{};
		std::vector<uint8_t> c(in.size() * 2 + 64);
		ASSERT_EQ(deflateInit2(&z, 9, Z_DEFLATED, -12, 8, Z_FIXED), Z_OK);
		z.next_in = in.data();
		z.avail_in = 2048;
		z.next_out = c.data();
		z.avail_out = static_cast<uInt>(c.size());
		ASSERT_EQ(deflate(&z, Z_BLOCK), Z_OK);	// the text's own (fixed) block
		z.avail_in = static_cast<uInt>(in.size() - 2048);
		ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
		c.resize(z.total_out);
		deflateEnd(&z);
		std::vector<uint8_t> dec(in.size());
		uint32_t dlen = static_cast<uint32_t>(in.size()), blocks = 0;
		int fixed_only = 1;
		ASSERT_EQ(iaa_inflate(c.data(), static_cast<uint32_t>(c.size()), dec.data(), &dlen,
				      &blocks, &fixed_only), IAA_OK) << "seed " << seed;
		EXPECT_EQ(dec, in) << "seed " << seed;
		found += !fixed_only && blocks > 1;
	}
	EXPECT_GT(found, 0) << "zlib never stored a block after a fixed one";
}

// The fixed code's distance symbols 30 and 31 and length symbols 286 and
// 287 exist in the code but not in the format: refused.
TEST(IaaFormat, FixedCodesOutsideTheFormatAreRefused)
{
	struct Bits {
		std::vector<uint8_t> b;
		unsigned n = 0;
		void put(uint32_t v, unsigned k)	// LSB first
		{
			for (unsigned i = 0; i < k; i++, n++) {
				if (n % 8 == 0)
					b.push_back(0);
				b.back() |= static_cast<uint8_t>(((v >> i) & 1) << (n % 8));
			}
		}
		void code(uint32_t c, unsigned k)	// a Huffman code, MSB first
		{
			for (unsigned i = k; i-- > 0;)
				put((c >> i) & 1, 1);
		}
	};
	for (unsigned dsym : {29u, 30u, 31u}) {
		Bits w;
		w.put(1, 1);		// BFINAL
		w.put(1, 2);		// fixed
		w.code(0x30 + 'a', 8);	// a literal
		w.code(1, 7);		// length symbol 257: 3
		w.code(dsym, 5);
		w.put(0, 13);		// distance 29's extra bits: 24577, beyond the history
		w.code(0, 7);		// end of block
		std::vector<uint8_t> dec(64);
		uint32_t dlen = 64;
		EXPECT_EQ(iaa_inflate(w.b.data(), static_cast<uint32_t>(w.b.size()), dec.data(),
				      &dlen, nullptr, nullptr),
			  dsym == 29 ? IAA_E_HISTORY : IAA_E_STREAM) << "distance symbol " << dsym;
	}
	for (unsigned lsym : {285u, 286u, 287u}) {
		Bits w;
		w.put(1, 1);
		w.put(1, 2);
		w.code(0x30 + 'a', 8);
		w.code(0xc0 + lsym - 280, 8);	// 280..287: 8-bit codes
		w.code(0, 5);			// distance 1
		w.code(0, 7);
		std::vector<uint8_t> dec(512);
		uint32_t dlen = 512;
		int r = iaa_inflate(w.b.data(), static_cast<uint32_t>(w.b.size()), dec.data(), &dlen,
				    nullptr, nullptr);
		if (lsym == 285) {	// length 258 of 'a', one byte back
			EXPECT_EQ(r, IAA_OK);
			EXPECT_EQ(dlen, 259u);
			EXPECT_EQ(dec[258], 'a');
		} else {
			EXPECT_EQ(r, IAA_E_STREAM) << "length symbol " << lsym;
		}
	}
}

// A 32 KiB window reaches past IAA's history on long inputs: IAA refuses.
TEST(IaaFormat, DistanceBeyondTheHistoryIsRefused)
{
	// 8 KiB of random bytes repeated: the repeat matches 8 KiB back
	auto half = page(1, 8192, 3);
	std::vector<uint8_t> in(half);
	in.insert(in.end(), half.begin(), half.end());
	auto c = zlib_deflate(in, 9, 15);
	ASSERT_LT(c.size(), 12000u) << "zlib should have matched 8 KiB back";
	std::vector<uint8_t> dec(in.size());
	uint32_t dlen = static_cast<uint32_t>(in.size());
	EXPECT_EQ(iaa_inflate(c.data(), static_cast<uint32_t>(c.size()), dec.data(), &dlen,
			      nullptr, nullptr), IAA_E_HISTORY);
	// the same input with a 4 KiB window is fine
	auto c12 = zlib_deflate(in, 9, 12);
	dlen = static_cast<uint32_t>(in.size());
	EXPECT_EQ(iaa_inflate(c12.data(), static_cast<uint32_t>(c12.size()), dec.data(), &dlen,
			      nullptr, nullptr), IAA_OK);
	EXPECT_EQ(dec, in);
}

TEST(IaaFormat, GarbageTruncationAndSmallOutputAreErrorsNotCrashes)
{
	auto in = page(0, 4096, 4);
	int err;
	auto c = iaa_compress(in, &err);
	ASSERT_EQ(err, IAA_OK);
	std::vector<uint8_t> dec(4096);
	uint32_t dlen;

	for (size_t cut = 0; cut < c.size(); cut += 7) {
		dlen = 4096;
		EXPECT_NE(iaa_inflate(c.data(), static_cast<uint32_t>(cut), dec.data(), &dlen,
				      nullptr, nullptr), IAA_OK) << cut;
	}
	dlen = 1000;
	EXPECT_EQ(iaa_inflate(c.data(), static_cast<uint32_t>(c.size()), dec.data(), &dlen,
			      nullptr, nullptr), IAA_E_OVERFLOW);
	std::mt19937 rng(5);
	for (int i = 0; i < 2000; i++) {
		std::vector<uint8_t> g(1 + rng() % 200);
		for (auto &b : g)
			b = static_cast<uint8_t>(rng());
		dlen = 4096;
		(void)iaa_inflate(g.data(), static_cast<uint32_t>(g.size()), dec.data(), &dlen,
				  nullptr, nullptr);
		EXPECT_LE(dlen, 4096u);
	}
	// BTYPE 11 is reserved
	uint8_t bad = 0x07;
	dlen = 4096;
	EXPECT_EQ(iaa_inflate(&bad, 1, dec.data(), &dlen, nullptr, nullptr), IAA_E_STREAM);
}
