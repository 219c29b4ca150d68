// SPDX-License-Identifier: GPL-2.0
// zbatch selftest: the in-module self-tests, KTAP.
#include <sstream>

#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/json.hpp"
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
	// KTAP: "ok N name [# SKIP why]" / "not ok N name", subtests indented
	Json tests = Json::array();
	bool any_ok = false, any_bad = false;
	std::istringstream in(*r);
	for (std::string line; std::getline(in, line);) {
		bool bad = line.starts_with("not ok ");
		if (!bad && !line.starts_with("ok "))
			continue;
		std::istringstream l(line.substr(bad ? 7 : 3));
		unsigned int n = 0;
		std::string name;
		l >> n;
		std::getline(l >> std::ws, name);
		auto hash = name.find(" # ");
		std::string directive = hash == std::string::npos ? "" : name.substr(hash + 3);
		if (hash != std::string::npos)
			name.erase(hash);
		tests.push_back({{"number", n}, {"name", name}, {"ok", !bad},
				 {"skip", directive.starts_with("SKIP")}});
		(bad ? any_bad : any_ok) = true;
	}
	bool ok = any_ok && !any_bad;
	if (ctx.json)
		ctx.con.print("{}", json_text({{"ok", ok}, {"tests", tests}, {"ktap", *r}}));
	else
		ctx.con.print("{}\n", *r);
	return ok ? kExitOk : kExitFailure;
}

void add_selftest(CLI::App &app, Action &action)
{
	auto *sub = app.add_subcommand("selftest", "Run the in-module self-tests, print KTAP");
	sub->footer("Writes debugfs zbatch/selftest and prints selftest_results. Exit 0 when\n"
		    "every test passed, 1 otherwise, 77 without the module or root. The tests\n"
		    "save and restore the tunables and WQ states they change.\n"
		    "--json: {\"ok\", \"tests\": [{\"number\", \"name\", \"ok\", \"skip\"}], \"ktap\"}\n"
		    "(the top-level results; the whole KTAP text in \"ktap\").\n"
		    "Examples:\n  zbatch selftest\n  zbatch --json selftest");
	sub->callback([&action] { action = run_selftest; });
}

} // namespace zbatch::cli
