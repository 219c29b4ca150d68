// SPDX-License-Identifier: GPL-2.0
// Reference codecs from the userspace libraries (zlib, liblz4, libzstd,
// liblzo2), in the formats the module uses: raw deflate with a 4 KiB
// window, LZ4 block, zstd frame, LZO1X-1. Used to cross-check the module.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zbatch/error.hpp"

namespace zbatch::ref {

Result<std::vector<uint8_t>> compress(unsigned int codec, std::span<const uint8_t> in);
// expected: the exact decompressed size (all formats here need a bound)
Result<std::vector<uint8_t>> decompress(unsigned int codec, std::span<const uint8_t> in,
					size_t expected);

} // namespace zbatch::ref
