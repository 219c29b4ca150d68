// SPDX-License-Identifier: GPL-2.0
// zbatch CLI entry point: parses, dispatches to one subcommand, and is the
// single place that turns errors into 'zbatch: error: ...' and exit codes.
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <linux/zbatch.h>

#include "commands.hpp"
#include "system.hpp"

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

	std::string root = "/";
	bool json = false, quiet = false, verbose = false;
	app.add_option("--root", root, "Directory holding sys/ (for tests; default /)")
		->group("");	// hidden
	app.add_flag("--json", json, "Machine-readable JSON output (schemas: Documentation/cli.md)");
	auto *q = app.add_flag("-q,--quiet", quiet,
			       "Print only data and errors: no notes of what was done, no progress");
	app.add_flag("-v,--verbose", verbose, "Also print each step and write (on stderr)")
		->excludes(q);

	cli::Action action;
	cli::add_load(app, action);
	cli::add_status(app, action);
	cli::add_config(app, action);
	cli::add_wq(app, action);
	cli::add_stats(app, action);
	cli::add_bench(app, action);
	cli::add_swap(app, action);
	cli::add_selftest(app, action);
	cli::add_validate(app, action);
	cli::add_dev(app, action);

	// zbatch help [CMD [SUBCMD]]: the same text as CMD --help
	std::vector<std::string> topic;
	auto *help = app.add_subcommand("help", "Show the help of a command: zbatch help CMD [SUB]");
	help->add_option("command", topic, "A command, and a subcommand of it");
	help->footer("Examples:\n  zbatch help swap\n  zbatch help wq setup-iaa");
	help->callback([&app, &topic, &action] {
		action = [&app, &topic](Context &ctx) -> Result<int> {
			const CLI::App *a = &app;
			for (const auto &name : topic) {
				const CLI::App *next = nullptr;
				for (const auto *sub : a->get_subcommands({}))
					if (sub->get_name() == name)
						next = sub;
				if (!next)
					return fail(EINVAL, fmt::format("no command '{}' (zbatch --help lists them)",
									name));
				a = next;
			}
			ctx.con.print("{}", a->help());
			return kExitOk;
		};
	});

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
	StdConsole con(quiet ? Verbosity::Quiet : verbose ? Verbosity::Verbose : Verbosity::Normal);
	Context ctx(SysfsTree(root), con);
	ctx.json = json;
	cli::use_real_system(ctx);
	try {
		auto rc = action(ctx);
		con.flush();
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
