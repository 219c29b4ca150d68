// SPDX-License-Identifier: GPL-2.0
// zbatch selftest: the in-module self-tests, KTAP.
#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/paths.hpp"

namespace zbatch::cli {

Result<int> run_selftest(Context &ctx)
{
	const std::string run = kDebugDir + "/selftest";
	if (!ctx.tree.exists(run))
		return skip(ENOENT, fmt::format("{} missing: module not loaded, debugfs not mounted, "
						"or not root", run));
	ctx.con.detail("writing 1 to {}\n", run);
	if (auto w = ctx.tree.write(run, "1"); !w)
		return std::unexpected(w.error());
	auto r = ctx.tree.read(kDebugDir + "/selftest_results");
	if (!r)
		return std::unexpected(r.error());
	ctx.con.print("{}\n", *r);
	bool any_ok = r->find("\nok ") != std::string::npos;
	bool any_bad = r->find("\nnot ok ") != std::string::npos;
	return any_ok && !any_bad ? kExitOk : kExitFailure;
}

void add_selftest(CLI::App &app, Action &action)
{
	auto *sub = app.add_subcommand("selftest", "Run the in-module self-tests, print KTAP");
	sub->footer("Writes debugfs zbatch/selftest and prints selftest_results. Exit 0 when\n"
		    "every test passed, 1 otherwise, 77 without the module or root. The tests\n"
		    "save and restore the tunables and WQ states they change.\n"
		    "Examples:\n  zbatch selftest");
	sub->callback([&action] { action = run_selftest; });
}

} // namespace zbatch::cli
