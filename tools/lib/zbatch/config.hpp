// SPDX-License-Identifier: GPL-2.0
// The module's runtime tunables (/sys/kernel/zbatch): get, set with
// validation, and whole configurations as flat JSON files.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "zbatch/sysfs.hpp"

namespace zbatch {

enum class TunableKind { Choice, Bool, Uint };

struct Tunable {
	const char *name;
	TunableKind kind;
	unsigned long min = 0, max = 0;	// Uint
	const char *help;
};

const std::vector<Tunable> &tunables();
const Tunable *find_tunable(const std::string &key);
// The help text, with the range of a number ("descriptor timeout (1..60000)").
std::string tunable_help(const Tunable &t);

// The value as a user writes it: "lz4" for "deflate [lz4] zstd lzo".
Result<std::string> config_get(const SysfsTree &tree, const std::string &key);
// The choices a Choice tunable offers now ("deflate", "lz4", ...).
Result<std::vector<std::string>> config_choices(const SysfsTree &tree, const std::string &key);
// Validates (unknown key, value not among the choices, out of range) and
// writes; the error names the key, the value and what is allowed.
Result<void> config_set(const SysfsTree &tree, const std::string &key, const std::string &value);

using Config = std::map<std::string, std::string>;
Result<Config> config_snapshot(const SysfsTree &tree);
// All keys validated first; then written in order; on a failed write the
// ones already written are put back, so a file applies whole or not at all.
Result<void> config_apply(const SysfsTree &tree, const Config &cfg);

std::string config_to_json(const Config &cfg);
// A flat JSON object of string, number or boolean values.
Result<Config> config_from_json(const std::string &text);

} // namespace zbatch
