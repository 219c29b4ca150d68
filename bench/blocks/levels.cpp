// SPDX-License-Identifier: GPL-2.0
// What zstd's levels and a trained dictionary give on the swap benchmark's
// real data (host only; the figures in Documentation/admin-guide.md,
// compression level): the memory of process 0 of `zbatch swap --pattern
// real -n 2 -s SIZE` compressed block by block at each level and unit
// size, then with a dictionary trained on process 1's memory (other
// bytes of the same mix: what a dictionary trained on one machine's swap
// would meet on the next). A block the codec cannot shrink counts raw.
// Usage: zbatch_levels [SIZE_BYTES (32 MiB)]; one line per measurement:
//   level LEVEL BLOCK RATIO CCTX_BYTES
//   dict DICT_BYTES LEVEL BLOCK RATIO
// (CCTX_BYTES: the compression context zstd sizes for that level and
// block, what bounds a level in the kernel module's fixed workspace.)
#include <cstdio>
#include <cstdlib>
#include <vector>

#define ZSTD_STATIC_LINKING_ONLY	// ZSTD_estimateCCtxSize_usingCParams
#include <zdict.h>
#include <zstd.h>

#include "zbatch/pattern.hpp"
#include "zbatch/workload.hpp"

namespace {

constexpr size_t kPage = 4096;

template <typename F> double ratio(const uint8_t *p, size_t len, size_t block, F &&compress)
{
	size_t out = 0;
	for (size_t off = 0; off + block <= len; off += block) {
		size_t n = compress(p + off, block);
		out += ZSTD_isError(n) || n >= block ? block : n;
	}
	return static_cast<double>(len) / static_cast<double>(out);
}

} // namespace

int main(int argc, char **argv)
{
	size_t size = (argc > 1 ? std::strtoull(argv[1], nullptr, 0) : 32u << 20) / kPage * kPage;
	auto corpus = zbatch::real_corpus();
	if (!corpus || !size) {
		std::fprintf(stderr, "zbatch_levels: %s\n",
			     corpus ? "size: a number of bytes" : corpus.error().message.c_str());
		return 1;
	}
	std::vector<uint8_t> mem(2 * size);
	for (unsigned int id = 0; id < 2; id++)
		for (size_t i = 0; i < size / kPage; i++)
			zbatch::workload_page(**corpus, true, id, i, &mem[id * size + i * kPage]);
	const uint8_t *test = mem.data(), *train = mem.data() + size;
	std::vector<char> buf(ZSTD_compressBound(16 * kPage));
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	for (int level : {-5, -1, 1, 3, 5, 9, 12, 19})
		for (size_t block : {kPage, 4 * kPage, 16 * kPage}) {
			double r = ratio(test, size, block, [&](const uint8_t *p, size_t n) {
				return ZSTD_compressCCtx(cc, buf.data(), buf.size(), p, n, level);
			});
			ZSTD_compressionParameters cp = ZSTD_getCParams(level, block, 0);
			std::printf("level %d %zu %.3f %zu\n", level, block, r,
				    ZSTD_estimateCCtxSize_usingCParams(cp));
		}
	std::vector<size_t> samples(size / kPage, kPage);
	for (size_t cap : {16384, 65536, 112640}) {
		std::vector<char> dict(cap);
		size_t d = ZDICT_trainFromBuffer(dict.data(), cap, train, samples.data(),
						 static_cast<unsigned>(samples.size()));
		if (ZDICT_isError(d)) {
			std::fprintf(stderr, "zbatch_levels: training a %zu-byte dictionary: %s\n", cap,
				     ZDICT_getErrorName(d));
			return 1;
		}
		for (int level : {1, 3, 9})
			for (size_t block : {kPage, 4 * kPage}) {
				ZSTD_CDict *cd = ZSTD_createCDict(dict.data(), d, level);
				double r = ratio(test, size, block, [&](const uint8_t *p, size_t n) {
					return ZSTD_compress_usingCDict(cc, buf.data(), buf.size(), p,
									n, cd);
				});
				ZSTD_freeCDict(cd);
				std::printf("dict %zu %d %zu %.3f\n", d, level, block, r);
			}
	}
	ZSTD_freeCCtx(cc);
	return 0;
}
