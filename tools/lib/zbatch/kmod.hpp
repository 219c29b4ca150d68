// SPDX-License-Identifier: GPL-2.0
// Loading and unloading kernel modules, behind an interface so the CLI's
// logic is tested with a mock; KmodModules is the libkmod implementation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zbatch/error.hpp"
#include "zbatch/sysfs.hpp"

namespace zbatch {

class Modules {
public:
	virtual ~Modules() = default;
	virtual bool loaded(const std::string &name) = 0;
	// @module: a name (resolved with its dependencies through modules.dep)
	// or a path to a .ko (its modinfo 'depends' are loaded first).
	virtual Result<void> load(const std::string &module, const std::string &params) = 0;
	virtual Result<void> unload(const std::string &name) = 0;
	virtual int refcount(const std::string &name) = 0;		// -1: unknown
	virtual std::vector<std::string> holders(const std::string &name) = 0;
};

std::unique_ptr<Modules> make_kmod_modules();

// What keeps zbatch in use, in words: holder modules and zswap's
// compressor when it is a zbatch algorithm. Empty when nothing is known.
std::vector<std::string> zbatch_users(Modules &mods, const SysfsTree &tree);

} // namespace zbatch
