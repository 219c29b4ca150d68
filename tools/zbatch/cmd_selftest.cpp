// SPDX-License-Identifier: GPL-2.0
// zbatch selftest: the in-module self-tests, KTAP.
#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/stats.hpp"

namespace zbatch::cli {

void add_selftest(CLI::App &app, const GlobalOptions &g, Action &action)
{
	auto *sub = app.add_subcommand("selftest", "Run the in-module self-tests, print KTAP");
	sub->footer("Writes debugfs zbatch/selftest and prints selftest_results. Exit 0 when\n"
		    "every test passed, 1 otherwise, 77 without the module or root. The tests\n"
		    "change tunables and WQ states briefly; run them on an idle system.\n"
		    "Examples:\n  zbatch selftest");
	sub->callback([&action, &g] {
		action = [&g]() -> Result<int> {
			SysfsTree tree(g.root);
			const std::string dir = kDebugDir;
			if (!tree.exists(dir + "/selftest"))
				return skip(ENOENT, fmt::format("{}/selftest missing: module not loaded, "
								"debugfs not mounted, or not root", dir));
			if (auto w = tree.write(dir + "/selftest", "1"); !w)
				return std::unexpected(w.error());
			auto r = tree.read(dir + "/selftest_results");
			if (!r)
				return std::unexpected(r.error());
			fmt::print("{}\n", *r);
			bool any_ok = r->find("\nok ") != std::string::npos;
			bool any_bad = r->find("\nnot ok ") != std::string::npos;
			return any_ok && !any_bad ? kExitOk : kExitFailure;
		};
	});
}

} // namespace zbatch::cli
