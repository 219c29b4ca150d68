// SPDX-License-Identifier: GPL-2.0
// zbatch CLI entry point: parses, dispatches to one subcommand, and is the
// single place that turns errors into 'zbatch: error: ...' and exit codes.
#include <cstdio>
#include <string>
#include <vector>

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

	// zbatch help [CMD [SUBCMD]]: the same text as CMD --help
	std::vector<std::string> topic;
	auto *help = app.add_subcommand("help", "Show the help of a command: zbatch help CMD [SUB]");
	help->add_option("command", topic, "A command, and a subcommand of it");
	help->footer("Examples:\n  zbatch help swap\n  zbatch help wq setup-iaa");
	help->callback([&app, &topic, &action] {
		action = [&app, &topic]() -> Result<int> {
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
			fmt::print("{}", a->help());
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
