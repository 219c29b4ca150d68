// SPDX-License-Identifier: GPL-2.0
// zbatch validate: invariants across the statistics.
#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/stats.hpp"

namespace zbatch::cli {

void add_validate(CLI::App &app, const GlobalOptions &g, Action &action)
{
	auto *sub = app.add_subcommand("validate", "Check invariants across the statistics");
	sub->footer("Checks: calls = completions + errors (global, per device, per WQ); no\n"
		    "timeouts; no verify mismatches; zswap holds no more pages than zbatch\n"
		    "compressed when it uses a zbatch algorithm. Exit 1 when one fails.\n"
		    "Examples:\n  zbatch validate");
	sub->callback([&action, &g] {
		action = [&g]() -> Result<int> {
			SysfsTree tree(g.root);
			auto s = read_stats(tree);
			if (!s)
				return std::unexpected(s.error());
			bool ok = true;
			for (const auto &c : validate(*s, tree)) {
				fmt::print("{:<4} {} ({})\n", c.ok ? "ok" : "FAIL", c.what, c.detail);
				ok &= c.ok;
			}
			return ok ? kExitOk : kExitFailure;
		};
	});
}

} // namespace zbatch::cli
