// SPDX-License-Identifier: GPL-2.0
// zbatch wq list|config|enable|disable|setup-iaa: zbatch's modelled WQs
// (sysfs) and real IAA WQs (the AccelConfig interface: libaccel-config).
#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/accel.hpp"
#include "zbatch/json.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/sysfs.hpp"

namespace zbatch::cli {

namespace {

bool is_iaa(const std::string &dev)
{
	return dev.rfind("iax", 0) == 0;
}

// One modelled WQ, every attribute as read (std::nullopt: unreadable).
struct ModelWq {
	std::string name;	// devN/wqM
	std::vector<std::pair<std::string, std::optional<std::string>>> attrs;
};

std::vector<ModelWq> model_wqs(const SysfsTree &tree)
{
	std::vector<ModelWq> out;
	for (const auto &d : tree.list(kSysfsDir).value_or(std::vector<std::string>{})) {
		if (d.rfind("dev", 0) != 0)
			continue;
		const std::string dir = kSysfsDir + "/" + d;
		auto rd = [&](const std::string &f) -> std::optional<std::string> {
			auto v = tree.read(dir + "/" + f);
			return v ? std::optional(*v) : std::nullopt;
		};
		for (const auto &w : tree.list(dir).value_or(std::vector<std::string>{})) {
			if (w.rfind("wq", 0) != 0)
				continue;
			out.push_back({d + "/" + w,
				       {{"node", rd("node")}, {"engines", rd("engines")},
					{"mode", rd(w + "/mode")}, {"type", rd(w + "/type")},
					{"size", rd(w + "/size")}, {"priority", rd(w + "/priority")},
					{"queued", rd(w + "/queued")}, {"enabled", rd(w + "/enabled")},
					{"cpus", rd("cpus")}}});
		}
	}
	return out;
}

Json iaa_to_json(const std::vector<IaaDevice> &devs)
{
	Json a = Json::array();
	for (const auto &d : devs) {
		Json wqs = Json::array();
		for (const auto &q : d.wqs)
			wqs.push_back({{"name", q.name}, {"mode", q.mode}, {"size", q.size},
				       {"priority", q.priority}, {"group", q.group}, {"type", q.type},
				       {"driver", q.driver}, {"state", q.state}});
		a.push_back({{"name", d.name}, {"state", d.state}, {"engines", d.engines},
			     {"wqs", wqs}});
	}
	return a;
}

} // namespace

Result<int> run_wq_list(Context &ctx)
{
	auto &con = ctx.con;
	const bool loaded = ctx.tree.exists(kSysfsDir);
	auto model = model_wqs(ctx.tree);
	auto devs = ctx.accel()->devices();
	std::vector<IaaDevice> iaa = devs ? *devs : std::vector<IaaDevice>{};
	if (ctx.json) {
		Json m = Json::array();
		for (const auto &w : model) {
			Json o = {{"wq", w.name}};
			for (const auto &[k, v] : w.attrs)
				o[k] = v ? Json(*v) : Json(nullptr);
			m.push_back(o);
		}
		Json j = {{"model", loaded ? m : Json(nullptr)}, {"iaa", iaa_to_json(iaa)}};
		if (!devs)
			j["iaa_error"] = devs.error().message;
		con.print("{}", json_text(j));
		return kExitOk;
	}
	if (loaded) {
		con.print("zbatch engine model ({}):\n", kSysfsDir);
		con.print("  {:<10} {:>4} {:>7}  {:<9} {:<8} {:>5} {:>4} {:>6} {:>7}  {}\n", "wq", "node",
			  "engines", "mode", "type", "size", "prio", "queued", "enabled", "cpus");
		for (const auto &w : model) {
			std::vector<std::string> v;
			for (const auto &a : w.attrs)
				v.push_back(a.second.value_or("?"));
			con.print("  {:<10} {:>4} {:>7}  {:<9} {:<8} {:>5} {:>4} {:>6} {:>7}  {}\n",
				  w.name, v[0], v[1], v[2], v[3], v[4], v[5], v[6],
				  v[7] == "1" ? v[7] : con.bad(v[7]), v[8]);
		}
	} else {
		con.print("zbatch engine model: module not loaded\n");
	}
	if (iaa.empty()) {
		con.print("IAA hardware: none found (libaccel-config sees no iax device{}); "
			  "zbatch runs on its software engines\n",
			  devs ? "" : ": " + devs.error().message);
		return kExitOk;
	}
	con.print("IAA hardware (libaccel-config):\n");
	for (const auto &d : iaa) {
		con.print("  {} ({}, {} engines)\n", d.name, d.state, d.engines);
		for (const auto &q : d.wqs)
			con.print("    {:<8} {:<9} size {:>3} prio {:>2} group {:>2} type {:<6} "
				  "driver {:<7} {}\n", q.name, q.mode, q.size, q.priority, q.group,
				  q.type.empty() ? "-" : q.type, q.driver.empty() ? "-" : q.driver,
				  q.state);
	}
	return kExitOk;
}

Result<int> run_wq_enable(Context &ctx, const std::string &dev, const std::string &wq, bool on)
{
	if (is_iaa(dev)) {
		auto ac = ctx.accel();
		auto r = on ? ac->enable_wq(dev, wq) : ac->disable_wq(dev, wq);
		if (!r)
			return std::unexpected(r.error());
	} else {
		const std::string path = kSysfsDir + "/" + dev + "/" + wq + "/enabled";
		if (!ctx.tree.exists(path))
			return fail(ENOENT, fmt::format("no WQ {}/{} (see zbatch wq list)", dev, wq));
		ctx.con.detail("writing {} to {}\n", on ? 1 : 0, path);
		if (auto r = ctx.tree.write(path, on ? "1" : "0"); !r)
			return std::unexpected(r.error());
	}
	ctx.con.note("{}/{} {}\n", dev, wq, on ? "in service" : "out of service");
	return kExitOk;
}

Result<int> run_wq_config(Context &ctx, const std::string &dev, const std::string &wq,
			  const WqSettings &s)
{
	if (!is_iaa(dev))
		return fail(EINVAL, fmt::format("'{}' is not an IAA device (iaxN); zbatch's "
						"WQs are shaped by load parameters", dev));
	auto ac = ctx.accel();
	if (auto r = setup_iaa_crypto_wq(*ac, dev, wq, s); !r)
		return std::unexpected(r.error());
	ctx.con.note("{}/{} configured and enabled; deflate-iaa is then available to zswap\n", dev,
		     wq);
	return kExitOk;
}

Result<int> run_wq_setup_iaa(Context &ctx, const IaaSetupOptions &o, bool dry_run)
{
	auto ac = ctx.accel();
	auto plan = plan_iaa_setup(*ac, ctx.tree, o);
	if (!plan)
		return std::unexpected(plan.error());
	Json steps = Json::array();
	// a step that fails undoes those done before it, last first: the
	// WQs enabled are disabled again (unbinding them from iaa_crypto),
	// then the attributes written get their old values back. Says what
	// it undid, and what it could not.
	std::vector<const IaaStep *> done;
	auto roll_back = [&done] {
		unsigned int undone = 0;
		std::string failed;
		for (auto it = done.rbegin(); it != done.rend(); ++it) {
			if (!(*it)->undo)
				continue;
			if (auto u = (*it)->undo(); u)
				undone++;
			else
				failed += fmt::format("; undoing '{}' failed: {}", (*it)->what,
						      u.error().message);
		}
		return fmt::format("{} earlier step(s) undone, WQ settings and devices enabled "
				   "left{}", undone, failed);
	};
	for (const auto &step : *plan) {
		steps.push_back(step.what);
		if (dry_run) {
			if (!ctx.json)
				ctx.con.print("would {}\n", step.what);
			continue;
		}
		if (!ctx.json)
			ctx.con.note("{}\n", step.what);
		if (auto r = step.run(); !r)
			return fail(r.error().code, fmt::format("{}: {} ({})", step.what,
								r.error().message, roll_back()));
		done.push_back(&step);
	}
	if (ctx.json)
		ctx.con.print("{}", json_text({{"dry_run", dry_run}, {"steps", steps}}));
	else if (dry_run)
		ctx.con.print("dry run: nothing written ({} steps)\n", plan->size());
	else
		ctx.con.note("IAA set up ({} steps); zbatch status shows the executor\n", plan->size());
	return kExitOk;
}

void add_wq(CLI::App &app, Action &action)
{
	auto *sub = app.add_subcommand("wq", "Work queues: zbatch's model and real IAA devices");
	sub->require_subcommand(1);
	sub->footer("zbatch's WQs are named devN wqM (sysfs); IAA WQs iaxN wqN.M\n"
		    "(libaccel-config, /sys/bus/dsa). On a machine without IAA, 'list' says so\n"
		    "and the other subcommands work on zbatch's WQs.\n"
		    "Examples:\n  zbatch wq list\n  zbatch --json wq list\n"
		    "  zbatch wq disable dev0 wq0\n"
		    "  zbatch wq config iax1 wq1.0 --mode dedicated --size 128 --priority 10\n"
		    "  zbatch wq enable iax1 wq1.0\n"
		    "  zbatch wq setup-iaa --dry-run");
	sub->add_subcommand("list", "Show the WQ layout")->callback([&action] {
		action = run_wq_list;
	});
	auto dev = std::make_shared<std::string>();
	auto wq = std::make_shared<std::string>();
	for (bool on : {true, false}) {
		auto *s = sub->add_subcommand(on ? "enable" : "disable",
					      on ? "Put a WQ in service" : "Take a WQ out of service");
		s->add_option("device", *dev, "devN or iaxN")->required();
		s->add_option("wq", *wq, "wqM or wqN.M")->required();
		s->callback([&action, dev, wq, on] {
			action = [dev, wq, on](Context &ctx) {
				return run_wq_enable(ctx, *dev, *wq, on);
			};
		});
	}
	auto st = std::make_shared<WqSettings>();
	auto *cfg = sub->add_subcommand("config", "Set up an IAA WQ for iaa_crypto and enable it");
	cfg->add_option("device", *dev, "iaxN")->required();
	cfg->add_option("wq", *wq, "wqN.M")->required();
	cfg->add_option("--mode", st->mode, "dedicated or shared (shared needs intel_iommu=on,sm_on)")
		->capture_default_str();
	cfg->add_option("--size", st->size, "Descriptors, 1..128")->capture_default_str();
	cfg->add_option("--priority", st->priority, "1..15")->capture_default_str();
	cfg->add_option("--group", st->group, "Group 0..3; the device's engines join it")
		->capture_default_str();
	cfg->add_option("--name", st->name, "WQ name")->capture_default_str();
	cfg->footer("Follows the kernel's iaa-crypto recipe: type kernel, driver 'crypto',\n"
		    "engines in the WQ's group, device enabled, then the WQ. zbatch's own WQs\n"
		    "are shaped at load time instead (zbatch load -p wqs=2 -p wq_size=64).");
	cfg->callback([&action, dev, wq, st] {
		action = [dev, wq, st](Context &ctx) { return run_wq_config(ctx, *dev, *wq, *st); };
	});
	auto so = std::make_shared<IaaSetupOptions>();
	auto dry = std::make_shared<bool>(false);
	auto *setup = sub->add_subcommand("setup-iaa",
					  "Set up every IAA device for iaa_crypto and zbatch");
	setup->add_option("--devices", so->devices, "First N IAA devices (default: all)");
	setup->add_option("--wqs", so->wqs, "WQs per device, 1..8, sharing its 128 descriptors")
		->capture_default_str();
	setup->add_option("--zswap", so->zswap, "zswap compressor to select (\"\": leave it)")
		->capture_default_str();
	setup->add_flag("--dry-run", *dry, "Print every write, do nothing");
	setup->footer("The kernel's iaa-crypto recipe for a whole server: iaa_crypto's\n"
		      "sync_mode=async_irq and verify_compress=0 first (they can only change while\n"
		      "no WQ is bound: EBUSY names the bound WQs), then per device dedicated kernel\n"
		      "WQs for driver 'crypto', its engines in group 0, the device enabled, its WQs\n"
		      "enabled (deflate-iaa appears), zbatch's IAA executor pointed at deflate-iaa\n"
		      "and zswap's compressor set to deflate-zbatch. Needs root, idxd, iaa_crypto\n"
		      "and the IOMMU in scalable mode. Documentation/iaa.md has the details.\n"
		      "Examples:\n  zbatch wq setup-iaa --dry-run\n  zbatch wq setup-iaa --devices 4 --wqs 2");
	setup->callback([&action, so, dry] {
		action = [so, dry](Context &ctx) { return run_wq_setup_iaa(ctx, *so, *dry); };
	});
}

} // namespace zbatch::cli
