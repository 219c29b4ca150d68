// SPDX-License-Identifier: GPL-2.0
// The zbatch CLI's subcommands. Each file cmd_<name>.cpp has add_<name>(),
// which registers the CLI11 subcommand, and run functions that do the work
// against a Context (zbatch/context.hpp): main() hands them the real
// system, host tests (tests/unit/test_commands.cpp) a fake one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "zbatch/accel.hpp"
#include "zbatch/context.hpp"
#include "zbatch/error.hpp"
#include "zbatch/swapdev.hpp"

namespace zbatch::cli {

// What the chosen subcommand runs: the exit code, or an Error main() prints.
using Action = std::function<Result<int>(Context &)>;

void add_status(CLI::App &app, Action &action);
void add_bench(CLI::App &app, Action &action);
void add_swap(CLI::App &app, Action &action);
void add_load(CLI::App &app, Action &action);
void add_config(CLI::App &app, Action &action);
void add_wq(CLI::App &app, Action &action);
void add_stats(CLI::App &app, Action &action);
void add_validate(CLI::App &app, Action &action);
void add_selftest(CLI::App &app, Action &action);
void add_dev(CLI::App &app, Action &action);

// ---- the run functions, one per (sub)subcommand ----
Result<int> run_status(Context &ctx);

struct LoadOptions {
	std::string module;
	std::vector<std::string> params;	// KEY=VALUE
};
Result<int> run_load(Context &ctx, const LoadOptions &o);
Result<int> run_unload(Context &ctx);

Result<int> run_config_get(Context &ctx, const std::string &key);	// "": all
Result<int> run_config_set(Context &ctx, const std::string &key, const std::string &value);
Result<int> run_config_save(Context &ctx, const std::string &file);
Result<int> run_config_load(Context &ctx, const std::string &file);

Result<int> run_wq_list(Context &ctx);
Result<int> run_wq_enable(Context &ctx, const std::string &dev, const std::string &wq, bool on);
Result<int> run_wq_config(Context &ctx, const std::string &dev, const std::string &wq,
			  const WqSettings &s);
Result<int> run_wq_setup_iaa(Context &ctx, const IaaSetupOptions &o, bool dry_run);

struct StatsOptions {
	unsigned int watch = 0;		// seconds between reports; 0: once
	unsigned int count = 0;		// with watch: reports in all; 0: until interrupted
	bool reset = false;
	bool prometheus = false;	// the text exposition format
	std::string output;		// with prometheus: write this file atomically
};
Result<int> run_stats(Context &ctx, const StatsOptions &o);
Result<int> run_validate(Context &ctx);
Result<int> run_selftest(Context &ctx);

struct BenchOptions {
	std::vector<std::string> codecs;	// default: every codec
	std::vector<unsigned int> batches{16};
	bool sweep = false;
	std::string pattern = "mixed";
	std::string file;
	size_t pages = 512;
	unsigned int rounds = 5;
	bool quick = false;
	std::vector<std::string> modes;
	bool csv = false;
	std::string plot;
};
Result<int> run_bench(Context &ctx, BenchOptions o);

struct SwapOptions {
	unsigned int procs = 1;
	std::string size = "64M";
	std::string pattern = "mixed";
	std::string file;
	unsigned int passes = 2;
	unsigned int sleep_ms = 0;
	std::string cgroup;
	std::string memory_max;
	std::string thp;
	std::string mthp;
	bool pageout = false;
	unsigned int touch_every = 0;
	bool swapin_4k = false;
	std::vector<std::string> snapshots;
	std::string writeback{};	// a device's dir with zram's idle and writeback files
	std::string recompress{};	// a zbatch device's dir: recompress before the read-back
	unsigned int timeout = 600;
};
Result<int> run_swap(Context &ctx, const SwapOptions &o);

struct DevOptions {
	std::string size;
	std::string codec = "lz4";
	std::string unit = "4k";
	int id = -1;
	bool swap = false;	// create --swap: format and swapon too
	int priority = 100;	// with swap
	bool discard = false;	// with swap
	int level = 0;		// the codec's level; 0: its default
	std::string backing{};	// --writeback-device
	std::string mode{};	// dev writeback's
	long long idle_age = -1;	// dev idle --age: s; -1: every page
	std::string recomp_codec{};	// --recomp-algorithm; "": none
	int recomp_level = 0;		// its level; 0: its default
	int recomp_budget = -1;		// percent of a CPU; -1: not set (0)
	int recomp_interval = -1;	// s; -1: not set (60)
};
struct SetupOptions {
	std::string config = "/etc/zbatch/swap.conf";
	bool dry_run = false;
};
Result<int> run_dev_setup(Context &ctx, const SetupOptions &o);
Result<int> run_dev_teardown(Context &ctx);
Result<int> run_dev_create(Context &ctx, const DevOptions &o);
Result<int> run_dev_list(Context &ctx);
Result<int> run_dev_destroy(Context &ctx, int id);
Result<int> run_dev_idle(Context &ctx, int id, long long age);
Result<int> run_dev_writeback(Context &ctx, int id, const std::string &mode);
Result<int> run_dev_recompress(Context &ctx, int id, const RecompressArgs &a);

} // namespace zbatch::cli
