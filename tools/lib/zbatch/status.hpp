// SPDX-License-Identifier: GPL-2.0
// The module's state as sysfs shows it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "zbatch/sysfs.hpp"
#include "zbatch/paths.hpp"

namespace zbatch {


struct WqStatus {
	std::string name, mode, size, priority, enabled, queued;
};

struct DeviceStatus {
	std::string name, node, engines, cpus;
	std::vector<WqStatus> wqs;
};

struct CryptoAlg {
	std::string name, driver, priority, selftest;
};

// The IAA executor (/sys/kernel/zbatch/iaa): absent on older modules.
struct IaaStatus {
	bool present = false;
	std::string driver, state, reason;
	// what the attached driver compresses ("deflate" on modules without iaa/codec)
	std::string codec = "deflate";
};

// Which executor runs a codec's descriptors, and why.
struct ExecutorRow {
	std::string codec, executor, why;
};

struct ModuleStatus {
	std::string version;
	// Attributes that could not be read: path and why. In JSON their
	// values are null and this list says why; in text they print as "?".
	std::vector<std::pair<std::string, std::string>> errors;
	// Every other readable attribute of /sys/kernel/zbatch, by name.
	std::map<std::string, std::string> attributes;
	std::map<std::string, std::string> params;	// /sys/module/zbatch/parameters
	std::vector<DeviceStatus> devices;
	std::vector<CryptoAlg> algorithms;		// /proc/crypto, module zbatch
	std::string zswap_compressor;			// "" when zswap is absent
	bool zswap_enabled = false;
	bool zswap_uses_zbatch = false;
	IaaStatus iaa;
};

// One row per codec of the module's codec list: IAA runs deflate while
// it is online, the software engines everything else.
std::vector<ExecutorRow> executor_table(const ModuleStatus &st);

// ENOENT with a hint to load the module when it is not loaded.
Result<ModuleStatus> read_status(const SysfsTree &tree);

// /proc/crypto blocks whose module is @module.
std::vector<CryptoAlg> parse_proc_crypto(const std::string &text, const std::string &module);

std::string status_to_json(const ModuleStatus &st);

} // namespace zbatch
