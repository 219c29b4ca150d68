// SPDX-License-Identifier: GPL-2.0
// zbatch validate: invariants across the statistics.
#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/json.hpp"
#include "zbatch/stats.hpp"

namespace zbatch::cli {

Result<int> run_validate(Context &ctx)
{
	auto s = read_stats(ctx.tree);
	if (!s)
		return std::unexpected(s.error());
	bool ok = true;
	Json a = Json::array();
	for (const auto &c : validate(*s, ctx.tree)) {
		if (ctx.json)
			a.push_back({{"check", c.what}, {"ok", c.ok}, {"detail", c.detail}});
		else
			ctx.con.print("{:<4} {} ({})\n", c.ok ? ctx.con.good("ok") : ctx.con.bad("FAIL"),
				      c.what, c.detail);
		ok &= c.ok;
	}
	if (ctx.json)
		ctx.con.print("{}", json_text({{"ok", ok}, {"checks", a}}));
	return ok ? kExitOk : kExitFailure;
}

void add_validate(CLI::App &app, Action &action)
{
	auto *sub = app.add_subcommand("validate", "Check invariants across the statistics");
	sub->footer("Checks: calls = completions + errors (global, per device, per WQ); no\n"
		    "timeouts; no verify mismatches; zswap holds no more pages than zbatch\n"
		    "compressed when it uses a zbatch algorithm. Exit 1 when one fails.\n"
		    "Examples:\n  zbatch validate\n  zbatch --json validate");
	sub->callback([&action] { action = run_validate; });
}

} // namespace zbatch::cli
