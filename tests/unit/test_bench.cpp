// SPDX-License-Identifier: GPL-2.0
// Pure pieces of the benchmark and data library.
#include <gtest/gtest.h>

#include "zbatch/bench.hpp"
#include "zbatch/pattern.hpp"
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
