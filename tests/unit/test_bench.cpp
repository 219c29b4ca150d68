// SPDX-License-Identifier: GPL-2.0
// Pure pieces of the benchmark and data library.
#include <algorithm>
#include <cstring>
#include <iostream>
#include <span>

#include <gtest/gtest.h>

#include "zbatch/bench.hpp"
#include "zbatch/pattern.hpp"
#include "zbatch/workload.hpp"
#include "zbatch/refcodec.hpp"

TEST(Bench, SpreadMedianMinMax)
{
	auto s = zbatch::spread_of({5, 1, 3});
	EXPECT_DOUBLE_EQ(s.median, 3);
	EXPECT_DOUBLE_EQ(s.min, 1);
	EXPECT_DOUBLE_EQ(s.max, 5);
	EXPECT_DOUBLE_EQ(zbatch::spread_of({1, 2, 3, 10}).median, 2.5);
	EXPECT_DOUBLE_EQ(zbatch::spread_of({}).median, 0);
}

TEST(Pattern, DeterministicAndDistinct)
{
	using zbatch::Pattern;
	EXPECT_EQ(zbatch::generate(Pattern::Text, 4096, 1), zbatch::generate(Pattern::Text, 4096, 1));
	EXPECT_NE(zbatch::generate(Pattern::Text, 4096, 1), zbatch::generate(Pattern::Text, 4096, 2));
	auto z = zbatch::generate(Pattern::Zeros, 100, 1);
	EXPECT_EQ(z, std::vector<uint8_t>(100, 0));
	EXPECT_FALSE(zbatch::pattern_from_name("nope").has_value());
	EXPECT_EQ(zbatch::pattern_name(*zbatch::pattern_from_name("mixed")), "mixed");
	EXPECT_EQ(zbatch::pattern_name(*zbatch::pattern_from_name("same")), "same");
}

// --pattern same: every page one nonzero word repeated (a device's
// same-filled page, never a zero page the kernel keeps off swap), a
// different word for every page, in generate() and in the workload's pages.
TEST(Pattern, SameFillsEachPageWithOneNonzeroWord)
{
	auto check = [](const uint8_t *p, uint64_t *word) {
		uint64_t w, x;
		std::memcpy(&w, p, sizeof(w));
		EXPECT_NE(w, 0u);
		for (size_t off = 8; off < 4096; off += 8) {
			std::memcpy(&x, p + off, sizeof(x));
			ASSERT_EQ(x, w) << "offset " << off;
		}
		*word = w;
	};
	auto v = zbatch::generate(zbatch::Pattern::Same, 3 * 4096, 5);
	uint64_t w[3];
	for (int i = 0; i < 3; i++)
		check(v.data() + i * 4096, &w[i]);
	EXPECT_NE(w[0], w[1]);
	EXPECT_NE(w[1], w[2]);
	std::vector<uint8_t> page(4096);
	uint64_t a, b, c;
	zbatch::same_page(0, 0, page.data());
	check(page.data(), &a);
	zbatch::same_page(0, 1, page.data());
	check(page.data(), &b);
	zbatch::same_page(1, 0, page.data());
	check(page.data(), &c);
	EXPECT_NE(a, b);
	EXPECT_NE(a, c);
}

TEST(RefCodec, EveryCodecRoundTripsAndCompressesText)
{
	auto text = zbatch::generate(zbatch::Pattern::Text, 4096, 3);
	for (unsigned int c = 1; c < ZBATCH_CODEC_NR; c++) {
		auto comp = zbatch::ref::compress(c, text);
		ASSERT_TRUE(comp) << c;
		EXPECT_LT(comp->size(), text.size() / 2) << c;
		auto back = zbatch::ref::decompress(c, *comp, text.size());
		ASSERT_TRUE(back) << c;
		EXPECT_EQ(*back, text) << c;
	}
	EXPECT_FALSE(zbatch::ref::compress(0, text).has_value());
}

// Real data: built from this system's files, the same every time, each
// kind present, and compressible as memory is (neither text-like nor
// random: binaries, a heap and compressed files bring it between).
TEST(RealData, CorpusIsDeterministicMixedAndRealisticallyCompressible)
{
	auto c = zbatch::real_corpus();
	if (!c)
		GTEST_SKIP() << c.error().message;
	const auto &d = **c;
	ASSERT_GE(d.size(), 8u << 20) << "less than 8 MiB of real data";
	EXPECT_EQ(d.size() % 4096, 0u);
	for (auto &[kind, bytes] : zbatch::real_corpus_mix())
		EXPECT_GT(bytes, 0u) << kind;
	EXPECT_EQ(zbatch::generate(zbatch::Pattern::Real, 65536, 3),
		  zbatch::generate(zbatch::Pattern::Real, 65536, 3));
	EXPECT_NE(zbatch::generate(zbatch::Pattern::Real, 65536, 3),
		  zbatch::generate(zbatch::Pattern::Real, 65536, 4));
	// an ELF header somewhere, zero pages, and both compressible and
	// incompressible pages, as in a process's memory
	size_t elf = 0, zero = 0;
	for (size_t off = 0; off + 4096 <= d.size(); off += 4096) {
		elf += std::memcmp(&d[off], "\x7f" "ELF", 4) == 0;
		zero += std::all_of(d.begin() + off, d.begin() + off + 4096,
				    [](uint8_t b) { return b == 0; });
	}
	EXPECT_GT(elf, 10u);
	EXPECT_GT(zero, 64u);
	// lz4 a page at a time, as zram stores it (a page that does not
	// shrink is kept whole)
	size_t stored = 0;
	for (size_t off = 0; off + 4096 <= d.size(); off += 4096) {
		auto z = zbatch::ref::compress(ZBATCH_CODEC_LZ4,
					       std::span<const uint8_t>(&d[off], 4096));
		ASSERT_TRUE(z) << z.error().message;
		stored += std::min<size_t>(z->size(), 4096);
	}
	double ratio = double(d.size()) / double(stored);
	std::cout << "real data: " << d.size() / 4096 << " pages, lz4 per page " << ratio << "x\n";
	EXPECT_GT(ratio, 1.5) << "real memory compresses better than this";
	EXPECT_LT(ratio, 8.0) << "real memory compresses worse than this";
}
