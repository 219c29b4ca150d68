// SPDX-License-Identifier: GPL-2.0
// zbatch CLI entry point: parses, dispatches to one subcommand, and is the
// single place that turns errors into 'zbatch: error: ...' and exit codes.
#include <cstdio>

#include <fmt/core.h>
#include <linux/zbatch.h>

#include "commands.hpp"

int main(int argc, char **argv)
{
	using namespace zbatch;
	CLI::App app{"zbatch: compression batching for stock kernels "
		     "(kernel module zbatch.ko and its tools)"};
	app.footer("Exit codes: 0 ok, 1 failure, 2 usage error, 77 skipped "
		   "(no module, no hardware or not root).\n"
		   "Each subcommand has --help. Documentation/cli.md has the details.\n"
		   "Examples:\n  zbatch status\n  zbatch --version");
	app.set_version_flag("-V,--version", std::string("zbatch ") + ZBATCH_VERSION);
	app.require_subcommand(1);

	cli::GlobalOptions g;
	app.add_option("--root", g.root, "Directory holding sys/ (for tests; default /)")
		->group("");	// hidden
	app.add_flag("--json", g.json, "Machine-readable JSON output where supported");

	cli::Action action;
	cli::add_load(app, g, action);
	cli::add_status(app, g, action);
	cli::add_config(app, g, action);
	cli::add_wq(app, g, action);
	cli::add_stats(app, g, action);
	cli::add_bench(app, g, action);
	cli::add_swap(app, g, action);
	cli::add_selftest(app, g, action);
	cli::add_validate(app, g, action);
	cli::add_dev(app, g, action);

	try {
		app.parse(argc, argv);
	} catch (const CLI::Success &e) {
		return app.exit(e);
	} catch (const CLI::ParseError &e) {
		if (e.get_exit_code() == 0)
			return app.exit(e);
		fmt::print(stderr, "zbatch: error: {}\n", e.what());
		fmt::print(stderr, "Run 'zbatch --help' for usage.\n");
		return kExitUsage;
	}
	if (!action) {
		fmt::print(stderr, "zbatch: error: no subcommand given\n");
		return kExitUsage;
	}
	try {
		auto rc = action();
		if (!rc) {
			fmt::print(stderr, "zbatch: {}: {}\n",
				   rc.error().exit == kExitSkipped ? "skipped" : "error",
				   rc.error().message);
			return rc.error().exit;
		}
		return *rc;
	} catch (const std::exception &e) {
		fmt::print(stderr, "zbatch: error: {}\n", e.what());
		return kExitFailure;
	}
}
