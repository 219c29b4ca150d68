// SPDX-License-Identifier: GPL-2.0
// A file replaced whole or not at all, for readers that may look at any
// moment (node_exporter's textfile collector, zbatch dev teardown).
#pragma once

#include <string>

#include "zbatch/error.hpp"

namespace zbatch {

// Writes @text to a temporary file beside @path, then renames it over @path.
Result<void> write_file_atomic(const std::string &path, const std::string &text);

} // namespace zbatch
