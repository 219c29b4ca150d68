// SPDX-License-Identifier: GPL-2.0
// The codecs' names: the uapi header's ZBATCH_CODEC_NAMES, the one list the
// module's sysfs, its acomp algorithms and every tool spell them from.
#pragma once

#include <string>
#include <vector>

#include <linux/zbatch.h>

#include "zbatch/error.hpp"

namespace zbatch {

// index = enum zbatch_codec; "default" (the one sysfs sets) is index 0.
std::string codec_name(unsigned int codec);
Result<unsigned int> codec_from_name(const std::string &name);
// The real codecs, in enum order: "deflate", "lz4", "zstd", "lzo".
const std::vector<std::string> &codec_names();
// The same, for messages: "deflate, lz4, zstd, lzo".
std::string codec_list();

} // namespace zbatch
