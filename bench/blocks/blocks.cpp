// SPDX-License-Identifier: GPL-2.0
// What the codec itself gives on the swap benchmark's data, in blocks of
// each unit size (make bench, on the host): the bytes every process of
// `zbatch swap --pattern real -n PROCS -s SIZE` writes (workload_page(),
// the real-data corpus of the guest's files: ZBATCH_REAL_CACHE names the
// copy the guests built), compressed block by block as a device with that
// unit could store them at best (a block the codec cannot shrink kept
// raw). lz4 as the kernel's (LZ4_compress_default), zstd at level 3 with
// the parameters for the block's size (ZSTD_compress(), as zbatch's
// kmod/codec.c). The report sets each zbatch unit's stored bytes beside
// this, and the 16k/64k reduction beside the 4k one.
// Usage: zbatch_blocks SIZE_BYTES PROCS...; one line per procs, codec and
// block: "blocks PROCS SIZE CODEC BLOCK IN_BYTES OUT_BYTES".
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <lz4.h>
#include <zstd.h>

#include "zbatch/pattern.hpp"
#include "zbatch/workload.hpp"

namespace {

constexpr size_t kPage = 4096;

size_t packed(const std::string &codec, const uint8_t *in, size_t len, std::vector<char> &buf)
{
	size_t n;

	if (codec == "lz4") {
		buf.resize(LZ4_compressBound(static_cast<int>(len)));
		int r = LZ4_compress_default(reinterpret_cast<const char *>(in), buf.data(),
					     static_cast<int>(len), static_cast<int>(buf.size()));
		n = r > 0 ? static_cast<size_t>(r) : len;
	} else {
		buf.resize(ZSTD_compressBound(len));
		n = ZSTD_compress(buf.data(), buf.size(), in, len, 3);
		if (ZSTD_isError(n))
			n = len;
	}
	return n < len ? n : len;
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 3) {
		std::fprintf(stderr, "usage: zbatch_blocks SIZE_BYTES PROCS...\n");
		return 2;
	}
	size_t size = std::strtoull(argv[1], nullptr, 0) / kPage * kPage;
	auto corpus = zbatch::real_corpus();
	if (!corpus) {
		std::fprintf(stderr, "zbatch_blocks: %s\n", corpus.error().message.c_str());
		return 1;
	}
	std::vector<char> buf;
	for (int a = 2; a < argc; a++) {
		unsigned int procs = static_cast<unsigned int>(std::strtoul(argv[a], nullptr, 0));
		std::vector<uint8_t> mem(size * procs);
		for (unsigned int id = 0; id < procs; id++)
			for (size_t i = 0; i < size / kPage; i++)
				zbatch::workload_page(**corpus, true, id, i, &mem[id * size + i * kPage]);
		for (const char *codec : {"lz4", "zstd"})
			for (size_t block : {kPage, 4 * kPage, 16 * kPage}) {
				size_t out = 0;
				for (size_t off = 0; off + block <= mem.size(); off += block)
					out += packed(codec, &mem[off], block, buf);
				std::printf("blocks %u %zu %s %zu %zu %zu\n", procs, size, codec,
					    block, mem.size(), out);
			}
	}
	return 0;
}
