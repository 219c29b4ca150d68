// SPDX-License-Identifier: GPL-2.0
// ioctl ABI validation (kmod/abi.c), the checks before any memory access.
#include <cerrno>

#include <gtest/gtest.h>

extern "C" {
#include "abi.h"
}

namespace {

zbatch_ioc_batch good_batch()
{
	zbatch_ioc_batch b{};
	b.size = sizeof(b);
	b.req_size = sizeof(zbatch_ioc_req);
	b.op = ZBATCH_OP_COMPRESS;
	b.codec = ZBATCH_CODEC_DEFAULT;
	b.nr_reqs = 1;
	b.reqs = 0x1000;
	return b;
}

zbatch_ioc_req req(uint64_t src, uint32_t slen, uint64_t dst, uint32_t dlen)
{
	zbatch_ioc_req r{};
	r.src = src;
	r.src_len = slen;
	r.dst = dst;
	r.dst_len = dlen;
	return r;
}

} // namespace

TEST(Abi, GoodBatchPasses)
{
	auto b = good_batch();
	EXPECT_EQ(zbatch_abi_check_batch(&b), 0);
	b.op = ZBATCH_OP_DECOMPRESS;
	b.codec = ZBATCH_CODEC_LZO;
	b.flags = ZBATCH_F_ALL;
	b.nr_reqs = ZBATCH_MAX_BATCH;
	EXPECT_EQ(zbatch_abi_check_batch(&b), 0);
}

TEST(Abi, EachBadBatchFieldIsEinval)
{
	auto bad = [](auto mutate) {
		auto b = good_batch();
		mutate(b);
		return zbatch_abi_check_batch(&b);
	};
	EXPECT_EQ(bad([](auto &b) { b.size = 8; }), -EINVAL);
	EXPECT_EQ(bad([](auto &b) { b.req_size = 16; }), -EINVAL);
	EXPECT_EQ(bad([](auto &b) { b.op = 2; }), -EINVAL);
	EXPECT_EQ(bad([](auto &b) { b.codec = ZBATCH_CODEC_NR; }), -EINVAL);
	EXPECT_EQ(bad([](auto &b) { b.flags = 0x4; }), -EINVAL);
	EXPECT_EQ(bad([](auto &b) { b.nr_reqs = 0; }), -EINVAL);
	EXPECT_EQ(bad([](auto &b) { b.nr_reqs = ZBATCH_MAX_BATCH + 1; }), -EINVAL);
	EXPECT_EQ(bad([](auto &b) { b.reserved = 1; }), -EINVAL);
}

TEST(Abi, RequestLengthsAndReserved)
{
	zbatch_ioc_req r = req(0x10000, 4096, 0x20000, 4096);
	EXPECT_EQ(zbatch_abi_check_reqs(&r, 1), 0);
	r.src_len = 0;
	EXPECT_EQ(zbatch_abi_check_reqs(&r, 1), -EINVAL);
	r = req(0x10000, ZBATCH_MAX_LEN + 1, 0x100000, 4096);
	EXPECT_EQ(zbatch_abi_check_reqs(&r, 1), -EINVAL);
	r = req(0x10000, 4096, 0x20000, 0);
	EXPECT_EQ(zbatch_abi_check_reqs(&r, 1), -EINVAL);
	r = req(0x10000, 4096, 0x20000, 4096);
	r.reserved = 1;
	EXPECT_EQ(zbatch_abi_check_reqs(&r, 1), -EINVAL);
}

TEST(Abi, OverlapsAreRefusedAdjacentIsFine)
{
	zbatch_ioc_req r = req(0x10000, 4096, 0x10fff, 4096);	// one byte shared
	EXPECT_EQ(zbatch_abi_check_reqs(&r, 1), -EINVAL);
	r = req(0x10000, 4096, 0x11000, 4096);			// adjacent
	EXPECT_EQ(zbatch_abi_check_reqs(&r, 1), 0);
	// two requests: same source is fine (read only), shared output is not
	zbatch_ioc_req two[2] = {req(0x10000, 4096, 0x20000, 4096),
				 req(0x10000, 4096, 0x21000, 4096)};
	EXPECT_EQ(zbatch_abi_check_reqs(two, 2), 0);
	two[1].dst = 0x20800;
	EXPECT_EQ(zbatch_abi_check_reqs(two, 2), -EINVAL);
	// one request's output is another's input
	two[1] = req(0x20000, 100, 0x30000, 4096);
	EXPECT_EQ(zbatch_abi_check_reqs(two, 2), -EINVAL);
}

TEST(Abi, WrappingRangesAreRefused)
{
	zbatch_ioc_req r = req(~0ull - 10, 4096, 0x20000, 4096);
	EXPECT_EQ(zbatch_abi_check_reqs(&r, 1), -EINVAL);
}
