// SPDX-License-Identifier: GPL-2.0
// zbatch wq list|config|enable|disable: zbatch's modelled WQs (sysfs) and
// real IAA WQs (libaccel-config).
#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/accel.hpp"
#include "zbatch/sysfs.hpp"

namespace zbatch::cli {

namespace {

const std::string kSys = "/sys/kernel/zbatch";

bool is_iaa(const std::string &dev)
{
	return dev.rfind("iax", 0) == 0;
}

Result<int> list(const GlobalOptions &g)
{
	SysfsTree tree(g.root);
	if (tree.exists(kSys)) {
		fmt::print("zbatch engine model ({}):\n", kSys);
		fmt::print("  {:<10} {:>4} {:>7}  {:<9} {:>5} {:>4} {:>6} {:>7}  {}\n", "wq", "node",
			   "engines", "mode", "size", "prio", "queued", "enabled", "cpus");
		for (const auto &d : tree.list(kSys).value_or(std::vector<std::string>{})) {
			if (d.rfind("dev", 0) != 0)
				continue;
			auto rd = [&](const std::string &f) {
				return tree.read(kSys + "/" + d + "/" + f).value_or("?");
			};
			for (const auto &w : tree.list(kSys + "/" + d).value_or(std::vector<std::string>{})) {
				if (w.rfind("wq", 0) != 0)
					continue;
				fmt::print("  {:<10} {:>4} {:>7}  {:<9} {:>5} {:>4} {:>6} {:>7}  {}\n",
					   d + "/" + w, rd("node"), rd("engines"), rd(w + "/mode"),
					   rd(w + "/size"), rd(w + "/priority"), rd(w + "/queued"),
					   rd(w + "/enabled"), rd("cpus"));
			}
		}
	} else {
		fmt::print("zbatch engine model: module not loaded\n");
	}
	auto ac = make_accel_config();
	auto devs = ac->devices();
	if (!devs || devs->empty()) {
		fmt::print("IAA hardware: none found (libaccel-config sees no iax device); "
			   "zbatch runs on its software engines\n");
		return kExitOk;
	}
	fmt::print("IAA hardware (libaccel-config):\n");
	for (const auto &d : *devs) {
		fmt::print("  {} ({}, {} engines)\n", d.name, d.state, d.engines);
		for (const auto &q : d.wqs)
			fmt::print("    {:<8} {:<9} size {:>3} prio {:>2} group {:>2} type {:<6} "
				   "driver {:<7} {}\n", q.name, q.mode, q.size, q.priority, q.group,
				   q.type.empty() ? "-" : q.type, q.driver.empty() ? "-" : q.driver,
				   q.state);
	}
	return kExitOk;
}

Result<int> set_enabled(const GlobalOptions &g, const std::string &dev, const std::string &wq,
			bool on)
{
	if (is_iaa(dev)) {
		auto ac = make_accel_config();
		auto r = on ? ac->enable_wq(dev, wq) : ac->disable_wq(dev, wq);
		if (!r)
			return std::unexpected(r.error());
		return kExitOk;
	}
	SysfsTree tree(g.root);
	const std::string path = kSys + "/" + dev + "/" + wq + "/enabled";
	if (!tree.exists(path))
		return fail(ENOENT, fmt::format("no WQ {}/{} (see zbatch wq list)", dev, wq));
	if (auto r = tree.write(path, on ? "1" : "0"); !r)
		return std::unexpected(r.error());
	return kExitOk;
}

} // namespace

void add_wq(CLI::App &app, const GlobalOptions &g, Action &action)
{
	auto *sub = app.add_subcommand("wq", "Work queues: zbatch's model and real IAA devices");
	sub->require_subcommand(1);
	sub->footer("zbatch's WQs are named devN wqM (sysfs); IAA WQs iaxN wqN.M\n"
		    "(libaccel-config, /sys/bus/dsa). On a machine without IAA, 'list' says so\n"
		    "and the other subcommands work on zbatch's WQs.\n"
		    "Examples:\n  zbatch wq list\n  zbatch wq disable dev0 wq0\n"
		    "  zbatch wq config iax1 wq1.0 --mode dedicated --size 128 --priority 10\n"
		    "  zbatch wq enable iax1 wq1.0\n"
		    "  zbatch wq setup-iaa --dry-run");
	sub->add_subcommand("list", "Show the WQ layout")->callback([&action, &g] {
		action = [&g] { return list(g); };
	});
	auto dev = std::make_shared<std::string>();
	auto wq = std::make_shared<std::string>();
	for (bool on : {true, false}) {
		auto *s = sub->add_subcommand(on ? "enable" : "disable",
					      on ? "Put a WQ in service" : "Take a WQ out of service");
		s->add_option("device", *dev, "devN or iaxN")->required();
		s->add_option("wq", *wq, "wqM or wqN.M")->required();
		s->callback([&action, &g, dev, wq, on] {
			action = [&g, dev, wq, on] { return set_enabled(g, *dev, *wq, on); };
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
	setup->callback([&action, so, dry, &g] {
		action = [so, dry, &g]() -> Result<int> {
			SysfsTree tree(g.root);
			auto ac = make_accel_config();
			auto plan = plan_iaa_setup(*ac, tree, *so);
			if (!plan)
				return std::unexpected(plan.error());
			for (const auto &step : *plan) {
				fmt::print("{}{}\n", *dry ? "would " : "", step.what);
				if (*dry)
					continue;
				if (auto r = step.run(); !r)
					return fail(r.error().code, fmt::format("{}: {}", step.what,
										r.error().message));
			}
			if (*dry)
				fmt::print("dry run: nothing written ({} steps)\n", plan->size());
			else
				fmt::print("IAA set up ({} steps); zbatch status shows the executor\n",
					   plan->size());
			return kExitOk;
		};
	});
	cfg->callback([&action, dev, wq, st] {
		action = [dev, wq, st]() -> Result<int> {
			if (!is_iaa(*dev))
				return fail(EINVAL, fmt::format("'{}' is not an IAA device (iaxN); zbatch's "
								"WQs are shaped by load parameters", *dev));
			auto ac = make_accel_config();
			if (auto r = setup_iaa_crypto_wq(*ac, *dev, *wq, *st); !r)
				return std::unexpected(r.error());
			fmt::print("{}/{} configured and enabled; deflate-iaa is then available to "
				   "zswap\n", *dev, *wq);
			return kExitOk;
		};
	});
}

} // namespace zbatch::cli
