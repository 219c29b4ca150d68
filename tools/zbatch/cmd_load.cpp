// SPDX-License-Identifier: GPL-2.0
// zbatch load / zbatch unload: the module through libkmod.
#include <unistd.h>

#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/kmod.hpp"
#include "zbatch/status.hpp"

namespace zbatch::cli {

namespace {

Result<void> need_root(const char *what)
{
	if (geteuid() != 0)
		return skip(EPERM, fmt::format("{} needs root", what));
	return {};
}

// The built module next to this binary's source tree, if any.
std::string default_module()
{
	return ZBATCH_DEFAULT_KO;
}

Result<int> run_load(const GlobalOptions &g, const std::string &module,
		     const std::vector<std::string> &params)
{
	SysfsTree tree(g.root);
	auto mods = make_kmod_modules();
	if (mods->loaded("zbatch")) {
		auto st = read_status(tree);
		fmt::print("zbatch is already loaded{}; 'zbatch unload' first to change load "
			   "parameters\n", st ? " (version " + st->version + ")" : "");
		return kExitOk;
	}
	if (auto r = need_root("loading a module"); !r)
		return std::unexpected(r.error());
	std::string p;
	for (const auto &kv : params) {
		if (kv.find('=') == std::string::npos || kv.front() == '=')
			return fail(EINVAL, fmt::format("--param '{}': expected KEY=VALUE", kv));
		p += (p.empty() ? "" : " ") + kv;
	}
	auto r = mods->load(module, p);
	if (!r)
		return std::unexpected(r.error());
	auto st = read_status(tree);
	fmt::print("zbatch loaded{}\n", st ? " (version " + st->version + ")" : "");
	return kExitOk;
}

Result<int> run_unload(const GlobalOptions &g)
{
	SysfsTree tree(g.root);
	auto mods = make_kmod_modules();
	if (!mods->loaded("zbatch")) {
		fmt::print("zbatch is not loaded\n");
		return kExitOk;
	}
	if (auto r = need_root("unloading a module"); !r)
		return std::unexpected(r.error());
	if (mods->refcount("zbatch") > 0) {
		std::string who;
		for (const auto &u : zbatch_users(*mods, tree))
			who += "\n  " + u;
		return fail(EBUSY, fmt::format("zbatch is in use (refcount {}); used by:{}",
					       mods->refcount("zbatch"),
					       who.empty() ? "\n  (unknown)" : who));
	}
	auto r = mods->unload("zbatch");
	if (!r)
		return std::unexpected(r.error());
	fmt::print("zbatch unloaded\n");
	return kExitOk;
}

} // namespace

void add_load(CLI::App &app, const GlobalOptions &g, Action &action)
{
	struct Opts {
		std::string module = default_module();
		std::vector<std::string> params;
	};
	auto o = std::make_shared<Opts>();
	auto *sub = app.add_subcommand("load", "Load the zbatch module (libkmod)");
	sub->add_option("module", o->module,
			"Path to zbatch.ko, or a module name installed in /lib/modules")
		->capture_default_str();
	sub->add_option("-p,--param", o->params, "Load parameter KEY=VALUE (repeatable)");
	sub->footer("Loads the module's dependencies (modinfo 'depends') first. Says so and\n"
		    "exits 0 when zbatch is already loaded. Parameters: "
		    "Documentation/admin-guide.md.\nExamples:\n  zbatch load\n"
		    "  zbatch load kmod/zbatch.ko -p devices=2 -p engines=4\n"
		    "  zbatch load -p acomp_priority=300");
	sub->callback([&action, &g, o] {
		action = [&g, o] { return run_load(g, o->module, o->params); };
	});

	auto *un = app.add_subcommand("unload", "Unload the zbatch module");
	un->footer("Refused while in use, naming the users (zswap's compressor, holder\n"
		   "modules). Examples:\n  zbatch unload");
	un->callback([&action, &g] { action = [&g] { return run_unload(g); }; });
}

} // namespace zbatch::cli
