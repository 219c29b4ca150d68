// SPDX-License-Identifier: GPL-2.0
// zbatch status: what the loaded module is and how it is set up.
#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/status.hpp"

namespace zbatch::cli {

Result<int> run_status(Context &ctx)
{
	auto &con = ctx.con;
	auto st = read_status(ctx.tree);
	if (!st)
		return std::unexpected(st.error());
	if (ctx.json) {
		con.print("{}", status_to_json(*st));
		return kExitOk;
	}
	con.print("zbatch module: loaded, version {}\n", st->version);
	con.print("settings ({}):\n", kSysfsDir);
	for (const auto &[k, v] : st->attributes)
		con.print("  {:<20} {}\n", k, v);
	if (!st->params.empty()) {
		con.print("load parameters:\n");
		for (const auto &[k, v] : st->params)
			con.print("  {:<20} {}\n", k, v);
	}
	con.print("layout:\n");
	for (const auto &d : st->devices) {
		con.print("  {} (node {}, {} engines, CPUs {})\n", d.name, d.node, d.engines, d.cpus);
		for (const auto &w : d.wqs)
			con.print("    {} {} size {} priority {} {}\n", w.name, w.mode, w.size,
				   w.priority,
				  w.enabled == "1" ? con.good("in service") : con.bad("OUT OF SERVICE"));
	}
	con.print("executors:\n");
	for (const auto &r : executor_table(*st))
		con.print("  {}: {}{}\n", r.codec, r.executor, r.why.empty() ? "" : " (" + r.why + ")");
	con.print("acomp algorithms:\n");
	for (const auto &a : st->algorithms)
		con.print("  {:<16} name {:<16} priority {:<4} selftest {}\n", a.driver, a.name,
			   a.priority, a.selftest);
	if (st->zswap_compressor.empty())
		con.print("zswap: not available\n");
	else
		con.print("zswap: {}, compressor {}{}\n", st->zswap_enabled ? "enabled" : "disabled",
			   st->zswap_compressor, st->zswap_uses_zbatch ? " (zbatch)" : " (not zbatch)");
	return kExitOk;
}

void add_status(CLI::App &app, Action &action)
{
	auto *sub = app.add_subcommand("status", "Show the loaded module's version and settings");
	sub->footer("Version, tunables, load parameters, the device/WQ layout, the acomp\n"
		    "algorithms registered (/proc/crypto) and whether zswap uses one of them;\n"
		    "which executor runs each codec (IAA for deflate while iaa/state is\n"
		    "online, else the software engines) and why.\n"
		    "Fails with a hint when the module is not loaded.\n"
		    "Examples:\n  zbatch status\n  zbatch --json status");
	sub->callback([&action] { action = run_status; });
}

} // namespace zbatch::cli
