// SPDX-License-Identifier: GPL-2.0
// zbatch config get|set|load|save: the runtime tunables.
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/config.hpp"
#include "zbatch/status.hpp"

namespace zbatch::cli {

namespace {

Result<void> loaded(const SysfsTree &tree)
{
	if (auto st = read_status(tree); !st)
		return skip(ENOENT, st.error().message);
	return {};
}

} // namespace

void add_config(CLI::App &app, const GlobalOptions &g, Action &action)
{
	auto *sub = app.add_subcommand("config", "Get or set the runtime tunables");
	sub->require_subcommand(1);
	std::string keys;
	for (const auto &t : tunables())
		keys += fmt::format("  {:<16} {}\n", t.name, t.help);
	sub->footer("Keys (/sys/kernel/zbatch/, Documentation/ABI/zbatch):\n" + keys +
		    "Examples:\n  zbatch config get codec\n  zbatch config set sync_mode async_irq\n"
		    "  zbatch config save zbatch.json\n  zbatch config load zbatch.json");

	auto key = std::make_shared<std::string>();
	auto value = std::make_shared<std::string>();
	auto file = std::make_shared<std::string>();

	auto *get = sub->add_subcommand("get", "Print one value, or all with no KEY");
	get->add_option("key", *key, "Tunable name");
	get->callback([&action, &g, key] {
		action = [&g, key]() -> Result<int> {
			SysfsTree tree(g.root);
			if (auto l = loaded(tree); !l)
				return std::unexpected(l.error());
			if (key->empty()) {
				auto all = config_snapshot(tree);
				if (!all)
					return std::unexpected(all.error());
				if (g.json) {
					fmt::print("{}", config_to_json(*all));
					return kExitOk;
				}
				for (const auto &[k, v] : *all)
					fmt::print("{} {}\n", k, v);
				return kExitOk;
			}
			auto v = config_get(tree, *key);
			if (!v)
				return std::unexpected(v.error());
			fmt::print("{}\n", *v);
			return kExitOk;
		};
	});

	auto *set = sub->add_subcommand("set", "Validate and write one value");
	set->add_option("key", *key, "Tunable name")->required();
	set->add_option("value", *value, "New value")->required();
	set->callback([&action, &g, key, value] {
		action = [&g, key, value]() -> Result<int> {
			SysfsTree tree(g.root);
			if (auto l = loaded(tree); !l)
				return std::unexpected(l.error());
			if (auto r = config_set(tree, *key, *value); !r)
				return std::unexpected(r.error());
			return kExitOk;
		};
	});

	auto *save = sub->add_subcommand("save", "Write every tunable to a JSON file");
	save->add_option("file", *file, "Output file")->required();
	save->callback([&action, &g, file] {
		action = [&g, file]() -> Result<int> {
			SysfsTree tree(g.root);
			if (auto l = loaded(tree); !l)
				return std::unexpected(l.error());
			auto all = config_snapshot(tree);
			if (!all)
				return std::unexpected(all.error());
			std::ofstream out(*file);
			out << config_to_json(*all);
			if (!out)
				return fail(EIO, fmt::format("cannot write {}", *file));
			return kExitOk;
		};
	});

	auto *load = sub->add_subcommand("load", "Apply a JSON file, all keys or none");
	load->add_option("file", *file, "Input file")->required();
	load->callback([&action, &g, file] {
		action = [&g, file]() -> Result<int> {
			SysfsTree tree(g.root);
			if (auto l = loaded(tree); !l)
				return std::unexpected(l.error());
			std::ifstream in(*file);
			if (!in)
				return fail(ENOENT, fmt::format("cannot read {}", *file));
			std::stringstream ss;
			ss << in.rdbuf();
			auto cfg = config_from_json(ss.str());
			if (!cfg)
				return fail(EINVAL, fmt::format("{}: {}", *file, cfg.error().message));
			if (auto r = config_apply(tree, *cfg); !r)
				return fail(r.error().code, fmt::format("{}: {}", *file, r.error().message));
			return kExitOk;
		};
	});
}

} // namespace zbatch::cli
