// SPDX-License-Identifier: GPL-2.0
// Subcommand registry of the zbatch CLI: one add_<name>() per file, each
// registering its CLI11 subcommand and the action main() runs for it.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "zbatch/error.hpp"

namespace zbatch::cli {

struct GlobalOptions {
	std::string root = "/";	// where /sys lives; tests point it at a fake tree
	bool json = false;
};

// Returns the process exit code, or an Error that main() prints.
using Action = std::function<Result<int>()>;

void add_status(CLI::App &app, const GlobalOptions &g, Action &action);
void add_bench(CLI::App &app, const GlobalOptions &g, Action &action);
void add_swap(CLI::App &app, const GlobalOptions &g, Action &action);
void add_load(CLI::App &app, const GlobalOptions &g, Action &action);
void add_config(CLI::App &app, const GlobalOptions &g, Action &action);
void add_wq(CLI::App &app, const GlobalOptions &g, Action &action);
void add_stats(CLI::App &app, const GlobalOptions &g, Action &action);
void add_validate(CLI::App &app, const GlobalOptions &g, Action &action);
void add_selftest(CLI::App &app, const GlobalOptions &g, Action &action);
void add_dev(CLI::App &app, const GlobalOptions &g, Action &action);

} // namespace zbatch::cli
