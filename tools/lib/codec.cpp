// SPDX-License-Identifier: GPL-2.0
#include "zbatch/codec.hpp"

#include <array>
#include <cerrno>

#include <fmt/core.h>
#include <fmt/ranges.h>

namespace zbatch {

static constexpr std::array<const char *, ZBATCH_CODEC_NR> kNames = {ZBATCH_CODEC_NAMES};

std::string codec_name(unsigned int codec)
{
	return codec < kNames.size() ? kNames[codec] : fmt::format("codec{}", codec);
}

const std::vector<std::string> &codec_names()
{
	static const std::vector<std::string> names(kNames.begin() + 1, kNames.end());
	return names;
}

std::string codec_list()
{
	return fmt::format("{}", fmt::join(codec_names(), ", "));
}

Result<unsigned int> codec_from_name(const std::string &name)
{
	for (unsigned int i = 0; i < kNames.size(); i++)
		if (name == kNames[i])
			return i;
	return fail(EINVAL, fmt::format("unknown codec '{}' ({})", name, codec_list()));
}

} // namespace zbatch
