// SPDX-License-Identifier: GPL-2.0
#include "zbatch/json.hpp"

#include <charconv>
#include <cstdint>

namespace zbatch {

Json json_number(const std::string &text)
{
	int64_t v = 0;
	auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
	if (ec != std::errc() || p != text.data() + text.size() || text.empty())
		return nullptr;
	return v;
}

} // namespace zbatch
