// SPDX-License-Identifier: GPL-2.0
// The iaa-crypto set-up recipe: plain logic over the AccelConfig interface.
#include "zbatch/accel.hpp"
#include "zbatch/paths.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/core.h>

namespace zbatch {

Result<void> setup_iaa_crypto_wq(AccelConfig &ac, const std::string &dev,
				 const std::string &wq, const WqSettings &s)
{
	if (s.mode != "dedicated" && s.mode != "shared")
		return fail(EINVAL, fmt::format("--mode '{}': dedicated or shared", s.mode));
	if (s.size < 1 || s.size > 128)
		return fail(EINVAL, fmt::format("--size {}: 1..128 descriptors", s.size));
	if (s.priority < 1 || s.priority > 15)
		return fail(EINVAL, fmt::format("--priority {}: 1..15", s.priority));
	if (s.group < 0 || s.group > 3)
		return fail(EINVAL, fmt::format("--group {}: 0..3", s.group));
	auto devs = ac.devices();
	if (!devs)
		return std::unexpected(devs.error());
	const IaaDevice *d = nullptr;
	for (const auto &x : *devs)
		if (x.name == dev)
			d = &x;
	if (!d)
		return skip(ENODEV, fmt::format("no IAA device '{}' ({} found)", dev, devs->size()));
	const IaaWq *q = nullptr;
	for (const auto &x : d->wqs)
		if (x.name == wq)
			q = &x;
	if (!q)
		return fail(ENOENT, fmt::format("{} has no WQ '{}'", dev, wq));
	if (q->state == "enabled")
		return fail(EBUSY, fmt::format("{} is enabled: disable it first (zbatch wq disable {} {})",
					       wq, dev, wq));
	if (auto r = ac.configure_wq(dev, wq, s); !r)
		return r;
	if (auto r = ac.engines_to_group(dev, s.group); !r)
		return r;
	if (d->state != "enabled")
		if (auto r = ac.enable_device(dev); !r)
			return r;
	return ac.enable_wq(dev, wq);
}

Result<std::vector<IaaStep>> plan_iaa_setup(AccelConfig &ac, const SysfsTree &tree,
					    const IaaSetupOptions &o)
{
	if (o.wqs < 1 || o.wqs > 8)
		return fail(EINVAL, fmt::format("--wqs {}: 1..8 WQs per device", o.wqs));
	if (o.sync_mode != "sync" && o.sync_mode != "async" && o.sync_mode != "async_irq")
		return fail(EINVAL, fmt::format("sync_mode '{}': sync, async or async_irq", o.sync_mode));
	auto devs = ac.devices();
	if (!devs)
		return std::unexpected(devs.error());
	if (devs->empty())
		return skip(ENODEV, "no IAA device found (libaccel-config, /sys/bus/dsa): nothing to "
				    "set up; is idxd loaded and the IOMMU on (intel_iommu=on,sm_on)?");
	const std::string drv = kIaaCryptoDir;
	if (!tree.exists(drv + "/sync_mode"))
		return skip(ENOENT, fmt::format("{} is missing: iaa_crypto is not loaded "
						"(modprobe iaa_crypto)", drv));

	std::vector<IaaStep> plan;
	auto write = [&tree](const std::string &path, const std::string &value) {
		// as read while planning (SysfsTree::read() drops the newline)
		std::string old = tree.read(path).value_or("");
		std::function<Result<void>()> undo;
		if (!old.empty())
			undo = [&tree, path, old]() -> Result<void> { return tree.write(path, old); };
		return IaaStep{fmt::format("write {} = {}", path, value),
			       [&tree, path, value]() -> Result<void> { return tree.write(path, value); },
			       undo};
	};

	// iaa_crypto's attributes: writable only while no WQ is bound to it
	std::vector<std::string> bound;
	for (const auto &d : *devs)
		for (const auto &q : d.wqs)
			if (q.state == "enabled" && q.driver == "crypto")
				bound.push_back(d.name + "/" + q.name);
	const std::string verify = o.verify_compress ? "1" : "0";
	auto cur_mode = tree.read(drv + "/sync_mode").value_or("");
	auto cur_verify = tree.read(drv + "/verify_compress").value_or("");
	bool mode_ok = cur_mode == o.sync_mode, verify_ok = cur_verify == verify;
	if ((!mode_ok || !verify_ok) && !bound.empty()) {
		std::string list;
		for (const auto &b : bound)
			list += (list.empty() ? "" : ", ") + b;
		return fail(EBUSY, fmt::format(
			"iaa_crypto's sync_mode is '{}' and verify_compress '{}' (want '{}' and '{}'), and "
			"they can only change while no WQ is bound to it: {} bound. Disable them "
			"(zbatch wq disable DEV WQ), or reload iaa_crypto, then run this again",
			cur_mode, cur_verify, o.sync_mode, verify, list));
	}
	if (!mode_ok)
		plan.push_back(write(drv + "/sync_mode", o.sync_mode));
	if (!verify_ok)
		plan.push_back(write(drv + "/verify_compress", verify));

	unsigned int n = o.devices ? std::min<unsigned int>(o.devices,
							    static_cast<unsigned int>(devs->size()))
				   : static_cast<unsigned int>(devs->size());
	for (unsigned int i = 0; i < n; i++) {
		const auto &d = (*devs)[i];
		if (d.wqs.size() < o.wqs)
			return fail(EINVAL, fmt::format("{} has {} WQs, --wqs {} asked", d.name,
							d.wqs.size(), o.wqs));
		WqSettings ws;
		ws.size = 128 / static_cast<int>(o.wqs);
		std::vector<std::string> todo;
		for (unsigned int w = 0; w < o.wqs; w++) {
			const auto &q = d.wqs[w];
			if (q.state == "enabled") {
				if (q.driver != "crypto")
					return fail(EBUSY, fmt::format(
						"{}/{} is enabled for driver '{}', not iaa_crypto's 'crypto': "
						"disable it first (zbatch wq disable {} {})",
						d.name, q.name, q.driver, d.name, q.name));
				continue;	/* already serving iaa_crypto */
			}
			todo.push_back(q.name);
		}
		for (const auto &q : todo)
			plan.push_back({fmt::format("configure {}/{}: dedicated, kernel, driver crypto, "
						    "size {}, priority {}, group {}", d.name, q,
						    ws.size, ws.priority, ws.group),
					[&ac, dev = d.name, q, ws] { return ac.configure_wq(dev, q, ws); }});
		if (todo.empty())
			continue;
		plan.push_back({fmt::format("{}: its {} engines into group {}", d.name, d.engines,
					    ws.group),
				[&ac, dev = d.name, g = ws.group] { return ac.engines_to_group(dev, g); }});
		if (d.state != "enabled")
			plan.push_back({fmt::format("enable {}", d.name),
					[&ac, dev = d.name] { return ac.enable_device(dev); }});
		for (const auto &q : todo)
			plan.push_back({fmt::format("enable {}/{} (binds it to iaa_crypto: deflate-iaa "
						    "appears with the first)", d.name, q),
					[&ac, dev = d.name, q] { return ac.enable_wq(dev, q); },
					[&ac, dev = d.name, q] { return ac.disable_wq(dev, q); }});
	}
	if (tree.exists(kIaaDir + "/driver"))
		plan.push_back(write(kIaaDir + "/driver", "deflate-iaa"));
	if (!o.zswap.empty() && tree.exists(kZswapParamsDir + "/compressor"))
		plan.push_back(write(kZswapParamsDir + "/compressor", o.zswap));
	return plan;
}

} // namespace zbatch
