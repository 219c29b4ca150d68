// SPDX-License-Identifier: GPL-2.0
// zbatch load / zbatch unload: the module through the Modules interface
// (libkmod in the real system).
#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/kmod.hpp"
#include "zbatch/status.hpp"

namespace zbatch::cli {

namespace {

Result<void> need_root(const Context &ctx, const char *what)
{
	if (!ctx.is_root())
		return skip(EPERM, fmt::format("{} needs root", what));
	return {};
}

std::string version_of(const Context &ctx)
{
	auto st = read_status(ctx.tree);
	return st ? " (version " + st->version + ")" : "";
}

} // namespace

Result<int> run_load(Context &ctx, const LoadOptions &o)
{
	auto mods = ctx.modules();
	if (mods->loaded("zbatch")) {
		ctx.con.note("zbatch is already loaded{}; 'zbatch unload' first to change load "
			     "parameters\n", version_of(ctx));
		return kExitOk;
	}
	if (auto r = need_root(ctx, "loading a module"); !r)
		return std::unexpected(r.error());
	std::string p;
	for (const auto &kv : o.params) {
		if (kv.find('=') == std::string::npos || kv.front() == '=')
			return fail(EINVAL, fmt::format("--param '{}': expected KEY=VALUE", kv));
		p += (p.empty() ? "" : " ") + kv;
	}
	ctx.con.detail("loading {} with its dependencies, parameters '{}'\n", o.module, p);
	if (auto r = mods->load(o.module, p); !r)
		return std::unexpected(r.error());
	ctx.con.note("zbatch loaded{}\n", version_of(ctx));
	return kExitOk;
}

Result<int> run_unload(Context &ctx)
{
	auto mods = ctx.modules();
	if (!mods->loaded("zbatch")) {
		ctx.con.note("zbatch is not loaded\n");
		return kExitOk;
	}
	if (auto r = need_root(ctx, "unloading a module"); !r)
		return std::unexpected(r.error());
	if (int refs = mods->refcount("zbatch"); refs > 0) {
		std::string who;
		for (const auto &u : zbatch_users(*mods, ctx.tree))
			who += "\n  " + u;
		return fail(EBUSY, fmt::format("zbatch is in use (refcount {}); used by:{}", refs,
					       who.empty() ? "\n  (unknown)" : who));
	}
	if (auto r = mods->unload("zbatch"); !r)
		return std::unexpected(r.error());
	ctx.con.note("zbatch unloaded\n");
	return kExitOk;
}

void add_load(CLI::App &app, Action &action)
{
	auto o = std::make_shared<LoadOptions>();
	o->module = ZBATCH_DEFAULT_KO;	// the built module of this source tree
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
	sub->callback([&action, o] { action = [o](Context &ctx) { return run_load(ctx, *o); }; });

	auto *un = app.add_subcommand("unload", "Unload the zbatch module");
	un->footer("Refused while in use, naming the users (zswap's compressor, holder\n"
		   "modules). Examples:\n  zbatch unload");
	un->callback([&action] { action = run_unload; });
}

} // namespace zbatch::cli
