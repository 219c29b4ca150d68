// SPDX-License-Identifier: GPL-2.0
// Numbers from text without exceptions: std::from_chars, the whole text
// must be the number, and an error names where the text came from.
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/core.h>

#include "zbatch/error.hpp"

namespace zbatch {

// @text as a T; on failure EINVAL (ERANGE when out of range) saying
// "@where: '@text' is not a number" (or "is out of range").
template <typename T>
Result<T> parse_number(std::string_view text, std::string_view where)
{
	T v{};
	auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
	if (ec == std::errc::result_out_of_range)
		return fail(ERANGE, fmt::format("{}: '{}' is out of range", where, text));
	if (ec != std::errc() || p != text.data() + text.size() || text.empty())
		return fail(EINVAL, fmt::format("{}: '{}' is not a number", where, text));
	return v;
}

} // namespace zbatch
