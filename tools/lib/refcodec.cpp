// SPDX-License-Identifier: GPL-2.0
#include "zbatch/refcodec.hpp"

#include <cerrno>

#include <fmt/core.h>
#include <linux/zbatch.h>
#include <lz4.h>
#include <lzo/lzo1x.h>
#include <zlib.h>
#include <zstd.h>

namespace zbatch::ref {

Result<std::vector<uint8_t>> compress(unsigned int codec, std::span<const uint8_t> in)
{
	std::vector<uint8_t> out(in.size() + in.size() / 8 + 1024);
	size_t n = 0;

	switch (codec) {
	case ZBATCH_CODEC_DEFLATE: {
		z_stream s{};
		if (deflateInit2(&s, 1, Z_DEFLATED, -12, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return fail(EINVAL, "zlib deflateInit2 failed");
		s.next_in = const_cast<Bytef *>(in.data());
		s.avail_in = static_cast<uInt>(in.size());
		s.next_out = out.data();
		s.avail_out = static_cast<uInt>(out.size());
		int r = deflate(&s, Z_FINISH);
		n = s.total_out;
		deflateEnd(&s);
		if (r != Z_STREAM_END)
			return fail(EINVAL, "zlib deflate failed");
		break;
	}
	case ZBATCH_CODEC_LZ4: {
		int r = LZ4_compress_default(reinterpret_cast<const char *>(in.data()),
					     reinterpret_cast<char *>(out.data()),
					     static_cast<int>(in.size()), static_cast<int>(out.size()));
		if (r <= 0)
			return fail(EINVAL, "LZ4_compress_default failed");
		n = static_cast<size_t>(r);
		break;
	}
	case ZBATCH_CODEC_ZSTD: {
		n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 1);
		if (ZSTD_isError(n))
			return fail(EINVAL, fmt::format("ZSTD_compress: {}", ZSTD_getErrorName(n)));
		break;
	}
	case ZBATCH_CODEC_LZO: {
		std::vector<uint8_t> wrk(LZO1X_1_MEM_COMPRESS);
		lzo_uint len = 0;
		if (lzo_init() != LZO_E_OK ||
		    lzo1x_1_compress(in.data(), in.size(), out.data(), &len, wrk.data()) != LZO_E_OK)
			return fail(EINVAL, "lzo1x_1_compress failed");
		n = len;
		break;
	}
	default:
		return fail(EINVAL, fmt::format("no reference codec {}", codec));
	}
	out.resize(n);
	return out;
}

Result<std::vector<uint8_t>> decompress(unsigned int codec, std::span<const uint8_t> in,
					size_t expected)
{
	std::vector<uint8_t> out(expected + 64);
	size_t n = 0;

	switch (codec) {
	case ZBATCH_CODEC_DEFLATE: {
		z_stream s{};
		if (inflateInit2(&s, -15) != Z_OK)
			return fail(EINVAL, "zlib inflateInit2 failed");
		s.next_in = const_cast<Bytef *>(in.data());
		s.avail_in = static_cast<uInt>(in.size());
		s.next_out = out.data();
		s.avail_out = static_cast<uInt>(out.size());
		int r = inflate(&s, Z_FINISH);
		n = s.total_out;
		inflateEnd(&s);
		if (r != Z_STREAM_END)
			return fail(EBADMSG, fmt::format("zlib inflate: {}", r));
		break;
	}
	case ZBATCH_CODEC_LZ4: {
		int r = LZ4_decompress_safe(reinterpret_cast<const char *>(in.data()),
					    reinterpret_cast<char *>(out.data()),
					    static_cast<int>(in.size()), static_cast<int>(out.size()));
		if (r < 0)
			return fail(EBADMSG, "LZ4_decompress_safe failed");
		n = static_cast<size_t>(r);
		break;
	}
	case ZBATCH_CODEC_ZSTD: {
		n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
		if (ZSTD_isError(n))
			return fail(EBADMSG, fmt::format("ZSTD_decompress: {}", ZSTD_getErrorName(n)));
		break;
	}
	case ZBATCH_CODEC_LZO: {
		lzo_uint len = out.size();
		if (lzo_init() != LZO_E_OK ||
		    lzo1x_decompress_safe(in.data(), in.size(), out.data(), &len, nullptr) != LZO_E_OK)
			return fail(EBADMSG, "lzo1x_decompress_safe failed");
		n = len;
		break;
	}
	default:
		return fail(EINVAL, fmt::format("no reference codec {}", codec));
	}
	out.resize(n);
	return out;
}

} // namespace zbatch::ref
