// SPDX-License-Identifier: GPL-2.0
// zbatch config get|set|load|save: the runtime tunables.
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/config.hpp"
#include "zbatch/json.hpp"
#include "zbatch/paths.hpp"
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

Result<int> run_config_get(Context &ctx, const std::string &key)
{
	if (auto l = loaded(ctx.tree); !l)
		return std::unexpected(l.error());
	if (key.empty()) {
		auto all = config_snapshot(ctx.tree);
		if (!all)
			return std::unexpected(all.error());
		if (ctx.json) {
			ctx.con.print("{}", config_to_json(*all));
			return kExitOk;
		}
		for (const auto &[k, v] : *all)
			ctx.con.print("{} {}\n", k, v);
		return kExitOk;
	}
	auto v = config_get(ctx.tree, key);
	if (!v)
		return std::unexpected(v.error());
	if (ctx.json)
		ctx.con.print("{}", json_text({{key, *v}}));
	else
		ctx.con.print("{}\n", *v);
	return kExitOk;
}

Result<int> run_config_set(Context &ctx, const std::string &key, const std::string &value)
{
	if (auto l = loaded(ctx.tree); !l)
		return std::unexpected(l.error());
	ctx.con.detail("writing '{}' to {}\n", value, tunable_path(key));
	if (auto r = config_set(ctx.tree, key, value); !r)
		return std::unexpected(r.error());
	return kExitOk;
}

Result<int> run_config_save(Context &ctx, const std::string &file)
{
	if (auto l = loaded(ctx.tree); !l)
		return std::unexpected(l.error());
	auto all = config_snapshot(ctx.tree);
	if (!all)
		return std::unexpected(all.error());
	std::ofstream out(file);
	out << config_to_json(*all);
	out.close();
	if (!out)
		return fail(EIO, fmt::format("cannot write {}", file));
	ctx.con.note("{} tunables saved to {}\n", all->size(), file);
	return kExitOk;
}

Result<int> run_config_load(Context &ctx, const std::string &file)
{
	if (auto l = loaded(ctx.tree); !l)
		return std::unexpected(l.error());
	std::ifstream in(file);
	if (!in)
		return fail(ENOENT, fmt::format("cannot read {}", file));
	std::stringstream ss;
	ss << in.rdbuf();
	auto cfg = config_from_json(ss.str());
	if (!cfg)
		return fail(EINVAL, fmt::format("{}: {}", file, cfg.error().message));
	if (auto r = config_apply(ctx.tree, *cfg); !r)
		return fail(r.error().code, fmt::format("{}: {}", file, r.error().message));
	ctx.con.note("{} tunables applied from {}\n", cfg->size(), file);
	return kExitOk;
}

void add_config(CLI::App &app, Action &action)
{
	auto *sub = app.add_subcommand("config", "Get or set the runtime tunables");
	sub->require_subcommand(1);
	std::string keys;
	for (const auto &t : tunables())
		keys += fmt::format("  {:<20} {}\n", t.name, tunable_help(t));
	sub->footer(fmt::format("Keys ({}/, Documentation/ABI/zbatch):\n", kSysfsDir) + keys +
		    "Examples:\n  zbatch config get codec\n  zbatch config set sync_mode async_irq\n"
		    "  zbatch config save zbatch.json\n  zbatch config load zbatch.json");

	auto key = std::make_shared<std::string>();
	auto value = std::make_shared<std::string>();
	auto file = std::make_shared<std::string>();

	auto *get = sub->add_subcommand("get", "Print one value, or all with no KEY");
	get->add_option("key", *key, "Tunable name");
	get->callback([&action, key] {
		action = [key](Context &ctx) { return run_config_get(ctx, *key); };
	});

	auto *set = sub->add_subcommand("set", "Validate and write one value");
	set->add_option("key", *key, "Tunable name")->required();
	set->add_option("value", *value, "New value")->required();
	set->callback([&action, key, value] {
		action = [key, value](Context &ctx) { return run_config_set(ctx, *key, *value); };
	});

	auto *save = sub->add_subcommand("save", "Write every tunable to a JSON file");
	save->add_option("file", *file, "Output file")->required();
	save->callback([&action, file] {
		action = [file](Context &ctx) { return run_config_save(ctx, *file); };
	});

	auto *load = sub->add_subcommand("load", "Apply a JSON file, all keys or none");
	load->add_option("file", *file, "Input file")->required();
	load->callback([&action, file] {
		action = [file](Context &ctx) { return run_config_load(ctx, *file); };
	});
}

} // namespace zbatch::cli
