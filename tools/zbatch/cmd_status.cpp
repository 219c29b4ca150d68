// SPDX-License-Identifier: GPL-2.0
// zbatch status: what the loaded module is and how it is set up.
#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/status.hpp"

namespace zbatch::cli {

static Result<int> run_status(const GlobalOptions &g)
{
	SysfsTree tree(g.root);
	auto st = read_status(tree);
	if (!st)
		return std::unexpected(st.error());
	if (g.json) {
		fmt::print("{}", status_to_json(*st));
		return kExitOk;
	}
	fmt::print("zbatch module: loaded, version {}\n", st->version);
	fmt::print("settings (/sys/kernel/zbatch):\n");
	for (const auto &[k, v] : st->attributes)
		fmt::print("  {:<20} {}\n", k, v);
	if (!st->params.empty()) {
		fmt::print("load parameters:\n");
		for (const auto &[k, v] : st->params)
			fmt::print("  {:<20} {}\n", k, v);
	}
	fmt::print("layout:\n");
	for (const auto &d : st->devices) {
		fmt::print("  {} (node {}, {} engines, CPUs {})\n", d.name, d.node, d.engines, d.cpus);
		for (const auto &w : d.wqs)
			fmt::print("    {} {} size {} priority {} {}\n", w.name, w.mode, w.size,
				   w.priority, w.enabled == "1" ? "in service" : "OUT OF SERVICE");
	}
	fmt::print("executors:\n");
	for (const auto &r : executor_table(*st))
		fmt::print("  {}: {}{}\n", r.codec, r.executor, r.why.empty() ? "" : " (" + r.why + ")");
	fmt::print("acomp algorithms:\n");
	for (const auto &a : st->algorithms)
		fmt::print("  {:<16} name {:<16} priority {:<4} selftest {}\n", a.driver, a.name,
			   a.priority, a.selftest);
	if (st->zswap_compressor.empty())
		fmt::print("zswap: not available\n");
	else
		fmt::print("zswap: {}, compressor {}{}\n", st->zswap_enabled ? "enabled" : "disabled",
			   st->zswap_compressor, st->zswap_uses_zbatch ? " (zbatch)" : " (not zbatch)");
	return kExitOk;
}

void add_status(CLI::App &app, const GlobalOptions &g, Action &action)
{
	auto *sub = app.add_subcommand("status", "Show the loaded module's version and settings");
	sub->footer("Version, tunables, load parameters, the device/WQ layout, the acomp\n"
		    "algorithms registered (/proc/crypto) and whether zswap uses one of them;\n"
		    "which executor runs each codec (IAA for deflate while iaa/state is\n"
		    "online, else the software engines) and why.\n"
		    "Fails with a hint when the module is not loaded.\n"
		    "Examples:\n  zbatch status\n  zbatch --json status");
	sub->callback([&action, &g] { action = [&g] { return run_status(g); }; });
}

} // namespace zbatch::cli
