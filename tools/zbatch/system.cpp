// SPDX-License-Identifier: GPL-2.0
#include "system.hpp"

#include <thread>
#include <unistd.h>

namespace zbatch::cli {

void use_real_system(Context &ctx)
{
	ctx.modules = make_kmod_modules;
	ctx.accel = make_accel_config;
	ctx.open_device = []() -> Result<std::unique_ptr<BatchDevice>> {
		auto d = Device::open(kDevicePath);
		if (!d)
			return std::unexpected(d.error());
		return std::make_unique<Device>(std::move(*d));
	};
	ctx.workload = run_workload;
	ctx.swap = make_swap_control;
	ctx.sleep = [](std::chrono::seconds s) { std::this_thread::sleep_for(s); };
	ctx.is_root = [] { return geteuid() == 0; };
}

} // namespace zbatch::cli
