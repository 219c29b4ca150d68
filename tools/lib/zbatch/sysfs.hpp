// SPDX-License-Identifier: GPL-2.0
// SysfsTree: reads and writes sysfs/debugfs attribute files under a root
// directory that tests replace with a fake tree.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "zbatch/error.hpp"

namespace zbatch {

class SysfsTree {
public:
	// root is "/" on a real system; paths below are absolute-looking
	// ("/sys/kernel/zbatch/version") and are resolved under root.
	explicit SysfsTree(std::filesystem::path root = "/");

	const std::filesystem::path &root() const { return root_; }
	std::filesystem::path resolve(const std::string &path) const;
	bool exists(const std::string &path) const;
	// The file's content without the trailing newline.
	Result<std::string> read(const std::string &path) const;
	Result<void> write(const std::string &path, const std::string &value) const;
	// Names of the entries of a directory, sorted.
	Result<std::vector<std::string>> list(const std::string &path) const;

	// The selected entry of a choice file ("a [b] c" -> "b"), or "" when
	// the file is unreadable or has no bracketed entry.
	std::string read_choice(const std::string &path) const;

private:
	std::filesystem::path root_;
};

} // namespace zbatch
