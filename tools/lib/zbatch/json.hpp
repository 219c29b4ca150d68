// SPDX-License-Identifier: GPL-2.0
// The one JSON layer: every JSON document the tools print or read goes
// through nlohmann::json (Debian's nlohmann-json3-dev), never through
// string concatenation, so that any value sysfs holds (quotes, control
// characters, unreadable attributes) still gives valid JSON. Objects keep
// their insertion order (ordered_json): the schemas in Documentation/cli.md
// list fields in that order.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace zbatch {

using Json = nlohmann::ordered_json;

// A JSON document as printed: two-space indentation, one trailing newline.
inline std::string json_text(const Json &j)
{
	return j.dump(2) + "\n";
}

// A number read from sysfs text, or null when it is not one (an
// unreadable or garbled attribute: the caller adds an error field).
Json json_number(const std::string &text);

} // namespace zbatch
