// SPDX-License-Identifier: GPL-2.0
// LibAccelConfig: the AccelConfig interface on libaccel-config (/sys/bus/dsa).
#include "zbatch/accel.hpp"

#include <cerrno>
#include <cstring>

#include <accel-config/libaccel_config.h>
#include <fmt/core.h>

namespace zbatch {

namespace {

const char *wq_state(enum accfg_wq_state s)
{
	switch (s) {
	case ACCFG_WQ_DISABLED: return "disabled";
	case ACCFG_WQ_ENABLED: return "enabled";
	case ACCFG_WQ_QUIESCING: return "quiescing";
	case ACCFG_WQ_LOCKED: return "locked";
	default: return "unknown";
	}
}

class LibAccelConfig : public AccelConfig {
public:
	LibAccelConfig()
	{
		if (accfg_new(&ctx_) < 0)
			ctx_ = nullptr;
	}
	~LibAccelConfig() override
	{
		if (ctx_)
			accfg_unref(ctx_);
	}

	Result<std::vector<IaaDevice>> devices() override
	{
		if (!ctx_)
			return skip(ENODEV, "libaccel-config: no context (is /sys/bus/dsa there?)");
		std::vector<IaaDevice> out;
		struct accfg_device *d;
		accfg_device_foreach(ctx_, d) {
			std::string name = accfg_device_get_devname(d);
			if (name.rfind("iax", 0) != 0)
				continue;
			IaaDevice dev;
			dev.name = name;
			dev.state = accfg_device_get_state(d) == ACCFG_DEVICE_ENABLED ? "enabled" :
										    "disabled";
			struct accfg_engine *e;
			accfg_engine_foreach(d, e)
				dev.engines++;
			struct accfg_wq *w;
			accfg_wq_foreach(d, w) {
				IaaWq q;
				q.name = accfg_wq_get_devname(w);
				q.mode = accfg_wq_get_mode(w) == ACCFG_WQ_SHARED ? "shared" : "dedicated";
				q.size = accfg_wq_get_size(w);
				q.priority = accfg_wq_get_priority(w);
				q.group = accfg_wq_get_group_id(w);
				const char *t = accfg_wq_get_type_name(w);
				q.type = t ? t : "";
				const char *drv = accfg_wq_get_driver_name(w);
				q.driver = drv ? drv : "";
				q.state = wq_state(accfg_wq_get_state(w));
				dev.wqs.push_back(q);
			}
			out.push_back(dev);
		}
		return out;
	}

	Result<void> configure_wq(const std::string &dev, const std::string &wq,
				  const WqSettings &s) override
	{
		auto w = find_wq(dev, wq);
		if (!w)
			return std::unexpected(w.error());
		int r;
		if ((r = accfg_wq_set_str_mode(*w, s.mode.c_str())) < 0 ||
		    (r = accfg_wq_set_size(*w, s.size)) < 0 ||
		    (r = accfg_wq_set_priority(*w, s.priority)) < 0 ||
		    (r = accfg_wq_set_group_id(*w, s.group)) < 0 ||
		    (r = accfg_wq_set_str_type(*w, "kernel")) < 0 ||
		    (r = accfg_wq_set_str_name(*w, s.name.c_str())) < 0 ||
		    (r = accfg_wq_set_str_driver_name(*w, "crypto")) < 0)
			return fail(-r, fmt::format("{}/{}: configuring failed: {}", dev, wq,
						    std::strerror(-r)));
		return {};
	}

	Result<void> engines_to_group(const std::string &dev, int group) override
	{
		auto d = find_dev(dev);
		if (!d)
			return std::unexpected(d.error());
		struct accfg_engine *e;
		accfg_engine_foreach(*d, e) {
			int r = accfg_engine_set_group_id(e, group);
			if (r < 0)
				return fail(-r, fmt::format("{}: engine to group {}: {}", dev, group,
							    std::strerror(-r)));
		}
		return {};
	}

	Result<void> enable_device(const std::string &dev) override
	{
		auto d = find_dev(dev);
		if (!d)
			return std::unexpected(d.error());
		int r = accfg_device_enable(*d);
		if (r < 0)
			return fail(-r, fmt::format("{}: enabling failed: {}", dev, std::strerror(-r)));
		return {};
	}

	Result<void> enable_wq(const std::string &dev, const std::string &wq) override
	{
		auto w = find_wq(dev, wq);
		if (!w)
			return std::unexpected(w.error());
		int r = accfg_wq_enable(*w);
		if (r < 0)
			return fail(-r, fmt::format("{}/{}: enabling failed: {} (a shared WQ needs "
						    "intel_iommu=on,sm_on)", dev, wq, std::strerror(-r)));
		return {};
	}

	Result<void> disable_wq(const std::string &dev, const std::string &wq) override
	{
		auto w = find_wq(dev, wq);
		if (!w)
			return std::unexpected(w.error());
		int r = accfg_wq_disable(*w, false);
		if (r < 0)
			return fail(-r, fmt::format("{}/{}: disabling failed: {} (in use by zswap?)", dev,
						    wq, std::strerror(-r)));
		return {};
	}

private:
	Result<struct accfg_device *> find_dev(const std::string &dev)
	{
		if (!ctx_)
			return skip(ENODEV, "libaccel-config: no context");
		struct accfg_device *d;
		accfg_device_foreach(ctx_, d)
			if (dev == accfg_device_get_devname(d))
				return d;
		return skip(ENODEV, fmt::format("no IAA device '{}' (see zbatch wq list)", dev));
	}

	Result<struct accfg_wq *> find_wq(const std::string &dev, const std::string &wq)
	{
		auto d = find_dev(dev);
		if (!d)
			return std::unexpected(d.error());
		struct accfg_wq *w;
		accfg_wq_foreach(*d, w)
			if (wq == accfg_wq_get_devname(w))
				return w;
		return fail(ENOENT, fmt::format("{} has no WQ '{}'", dev, wq));
	}

	struct accfg_ctx *ctx_ = nullptr;
};

} // namespace

std::unique_ptr<AccelConfig> make_accel_config()
{
	return std::make_unique<LibAccelConfig>();
}

} // namespace zbatch
