// SPDX-License-Identifier: GPL-2.0
// Real IAA devices through libaccel-config (Debian 3.5.3), behind an
// interface: the iaa-crypto set-up recipe is plain logic over it, tested
// with a mock; LibAccelConfig talks to /sys/bus/dsa.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "zbatch/error.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/sysfs.hpp"

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

// zbatch wq setup-iaa: the whole server, as the kernel's iaa-crypto
// document does it by hand.
struct IaaSetupOptions {
	unsigned int devices = 0;	// first N IAA devices; 0: all
	unsigned int wqs = 1;		// WQs per device, 1..8, sharing 128 descriptors
	std::string sync_mode = "async_irq";	// iaa_crypto's, for batching
	bool verify_compress = false;	// iaa_crypto's; on, every compress is read back
	std::string zswap = "deflate-zbatch";	// zswap's compressor; "" leaves it
};

// One write of the plan: what it does in words, doing it, and undoing it
// when a later step fails (empty: nothing to undo that matters, e.g. the
// settings of a WQ left disabled, a device enabled with no WQ in it).
struct IaaStep {
	std::string what;
	std::function<Result<void>()> run;
	std::function<Result<void>()> undo = {};
};


// Every step, in order: iaa_crypto's sync_mode and verify_compress while no
// WQ is bound (already right: not written; bound WQs: EBUSY naming them and
// what to do), per device each WQ configured (dedicated, kernel, driver
// crypto), engines to group 0, the device enabled, its WQs enabled; then
// zbatch's IAA executor pointed at deflate-iaa (when zbatch is loaded) and
// zswap's compressor (when zswap exists). Nothing is written while
// planning: 'zbatch wq setup-iaa --dry-run' prints the plan. A write's
// undo puts back the value read while planning; a WQ's enable is undone
// by disabling it.
Result<std::vector<IaaStep>> plan_iaa_setup(AccelConfig &ac, const SysfsTree &tree,
					    const IaaSetupOptions &o);

} // namespace zbatch
