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
		fmt::print("{{\"loaded\": true, \"version\": \"{}\"", st->version);
		for (const auto &[k, v] : st->attributes)
			fmt::print(", \"{}\": \"{}\"", k, v);
		fmt::print("}}\n");
		return kExitOk;
	}
	fmt::print("zbatch module: loaded, version {}\n", st->version);
	for (const auto &[k, v] : st->attributes)
		fmt::print("  {:<20} {}\n", k, v);
	return kExitOk;
}

void add_status(CLI::App &app, const GlobalOptions &g, Action &action)
{
	auto *sub = app.add_subcommand("status", "Show the loaded module's version and settings");
	sub->footer("Reads /sys/kernel/zbatch. Fails with a hint when the module is "
		    "not loaded.\nExamples:\n  zbatch status\n  zbatch --json status");
	sub->callback([&action, &g] { action = [&g] { return run_status(g); }; });
}

} // namespace zbatch::cli
