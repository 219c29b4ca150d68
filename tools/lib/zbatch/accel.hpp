// SPDX-License-Identifier: GPL-2.0
// Real IAA devices through libaccel-config (Debian 3.5.3), behind an
// interface: the iaa-crypto set-up recipe is plain logic over it, tested
// with a mock; LibAccelConfig talks to /sys/bus/dsa.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zbatch/error.hpp"

namespace zbatch {

struct IaaWq {
	std::string name;	// "wq1.0"
	std::string mode;	// "dedicated" / "shared"
	uint64_t size = 0;
	int priority = 0;
	int group = -1;
	std::string type;	// "kernel", "user", "none"
	std::string driver;	// "crypto", ...
	std::string state;	// "enabled", "disabled", ...
};

struct IaaDevice {
	std::string name;	// "iax1"
	std::string state;
	std::vector<IaaWq> wqs;
	unsigned int engines = 0;
};

struct WqSettings {
	std::string mode = "dedicated";
	int size = 128;
	int priority = 10;
	int group = 0;
	std::string name = "iaa_crypto";
};

class AccelConfig {
public:
	virtual ~AccelConfig() = default;
	virtual Result<std::vector<IaaDevice>> devices() = 0;
	virtual Result<void> configure_wq(const std::string &dev, const std::string &wq,
					  const WqSettings &s) = 0;
	virtual Result<void> engines_to_group(const std::string &dev, int group) = 0;
	virtual Result<void> enable_device(const std::string &dev) = 0;
	virtual Result<void> enable_wq(const std::string &dev, const std::string &wq) = 0;
	virtual Result<void> disable_wq(const std::string &dev, const std::string &wq) = 0;
};

std::unique_ptr<AccelConfig> make_accel_config();

// The kernel's iaa-crypto recipe for one WQ: validate, configure (kernel
// type, driver 'crypto', mode, size, priority, group), put the device's
// engines in the WQ's group, enable the device if needed, enable the WQ.
// Errors name the device/WQ and what to fix.
Result<void> setup_iaa_crypto_wq(AccelConfig &ac, const std::string &dev,
				 const std::string &wq, const WqSettings &s);

} // namespace zbatch
