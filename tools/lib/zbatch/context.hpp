// SPDX-License-Identifier: GPL-2.0
// Context: everything a command touches outside its own logic, handed to
// every subcommand by main(): the sysfs tree, the module loader, IAA's
// configuration library, the batch device, the workload runner, the clock,
// the user's identity and the console. main() fills it with the real ones
// (tools/zbatch/system.cpp); host tests with fakes (tests/unit/fakes.hpp),
// so each command's logic, output and exit codes are tested on the host.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "zbatch/accel.hpp"
#include "zbatch/console.hpp"
#include "zbatch/device.hpp"
#include "zbatch/kmod.hpp"
#include "zbatch/swapon.hpp"
#include "zbatch/sysfs.hpp"
#include "zbatch/workload.hpp"

namespace zbatch {

struct Context {
	Context(SysfsTree t, Console &c) : tree(std::move(t)), con(c) {}

	SysfsTree tree;
	Console &con;
	bool json = false;	// --json: one JSON document on stdout

	std::function<std::unique_ptr<Modules>()> modules;
	std::function<std::unique_ptr<AccelConfig>()> accel;
	std::function<Result<std::unique_ptr<BatchDevice>>()> open_device;
	std::function<Result<WorkloadResult>(const WorkloadConfig &)> workload;
	std::function<std::unique_ptr<SwapControl>()> swap;	// mkswap, swapon, swapoff
	std::function<void(std::chrono::seconds)> sleep;
	std::function<bool()> is_root;
};

} // namespace zbatch
