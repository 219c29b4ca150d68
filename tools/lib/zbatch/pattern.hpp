// SPDX-License-Identifier: GPL-2.0
// Test and benchmark data: generated patterns or a corpus file, in pages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zbatch/error.hpp"

namespace zbatch {

enum class Pattern { Text, Zeros, Random, Mixed };

Result<Pattern> pattern_from_name(const std::string &name);
std::string pattern_name(Pattern p);

// @len bytes of @p, deterministic for a given @seed.
std::vector<uint8_t> generate(Pattern p, size_t len, uint64_t seed);

// The first @len bytes of @path, repeated when the file is shorter.
Result<std::vector<uint8_t>> load_corpus(const std::string &path, size_t len);

} // namespace zbatch
