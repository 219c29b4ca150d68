// SPDX-License-Identifier: GPL-2.0
// The module's state as sysfs shows it.
#pragma once

#include <map>
#include <string>

#include "zbatch/sysfs.hpp"

namespace zbatch {

inline constexpr const char *kSysfsDir = "/sys/kernel/zbatch";

struct ModuleStatus {
	std::string version;
	// Every other readable attribute of /sys/kernel/zbatch, by name.
	std::map<std::string, std::string> attributes;
};

// ENOENT with a hint to load the module when it is not loaded.
Result<ModuleStatus> read_status(const SysfsTree &tree);

} // namespace zbatch
