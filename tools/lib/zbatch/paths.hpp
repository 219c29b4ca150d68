// SPDX-License-Identifier: GPL-2.0
// Every file the tools read or write, in one place: the module's own
// interfaces (Documentation/ABI/zbatch) and the kernel's that zbatch
// works with. Paths are absolute-looking; SysfsTree resolves them under
// its root, which host tests point at a fake tree.
#pragma once

#include <string>

#include <fmt/core.h>

namespace zbatch {

// ---- the module's ----
inline const std::string kSysfsDir = "/sys/kernel/zbatch";	// tunables, devN/wqM
inline const std::string kDebugDir = "/sys/kernel/debug/zbatch";	// statistics, faults
inline const std::string kParamsDir = "/sys/module/zbatch/parameters";
inline const std::string kIaaDir = kSysfsDir + "/iaa";		// the IAA executor
inline const std::string kSwapdevCtl = kSysfsDir + "/swapdev";	// create/destroy
inline const std::string kDevicePath = "/dev/zbatch";		// the batch ioctl device
inline const std::string kSwapdevPrefix = "zbatchswap";		// /dev/zbatchswapN

// /sys/kernel/zbatch/NAME: one runtime tunable.
inline std::string tunable_path(const std::string &name)
{
	return kSysfsDir + "/" + name;
}

// zbatchswapN, its node and its sysfs directory of zbatch attributes.
inline std::string swapdev_name(int id)
{
	return fmt::format("{}{}", kSwapdevPrefix, id);
}

inline std::string swapdev_node(int id)
{
	return "/dev/" + swapdev_name(id);
}

inline std::string swapdev_dir(int id)
{
	return "/sys/block/" + swapdev_name(id) + "/zbatch";
}

// ---- the kernel's ----
inline const std::string kZswapParamsDir = "/sys/module/zswap/parameters";
inline const std::string kZswapDebugDir = "/sys/kernel/debug/zswap";
inline const std::string kIaaCryptoDir = "/sys/bus/dsa/drivers/crypto";	// iaa_crypto
inline const std::string kSysBlockDir = "/sys/block";
inline const std::string kThpDir = "/sys/kernel/mm/transparent_hugepage";
inline const std::string kCgroupDir = "/sys/fs/cgroup";
inline const std::string kProcCrypto = "/proc/crypto";
inline const std::string kProcSwaps = "/proc/swaps";
inline const std::string kProcVmstat = "/proc/vmstat";
inline const std::string kProcMeminfo = "/proc/meminfo";

} // namespace zbatch
