// SPDX-License-Identifier: GPL-2.0
// Guest integration tests of the module skeleton. Run by scripts/guest-check
// inside the VM, as root, with kmod/zbatch.ko loaded.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <linux/zbatch.h>

#include "vm_util.hpp"
#include "zbatch/sysfs.hpp"

using namespace vmtest;

TEST(Module, VersionInSysfsMatchesAbiHeader)
{
	zbatch::SysfsTree tree;
	auto v = tree.read("/sys/kernel/zbatch/version");
	ASSERT_TRUE(v.has_value()) << v.error().message;
	EXPECT_EQ(*v, ZBATCH_VERSION);
}

TEST(Module, CliStatusShowsVersion)
{
	auto r = run(kCli + " status");
	EXPECT_EQ(r.status, 0) << r.output;
	EXPECT_NE(r.output.find(std::string("version ") + ZBATCH_VERSION), std::string::npos)
		<< r.output;
}

static long slab_unreclaimable_kb()
{
	std::ifstream f("/proc/meminfo");
	std::string line;
	while (std::getline(f, line))
		if (line.rfind("SUnreclaim:", 0) == 0)
			return std::stol(line.substr(11));
	return -1;
}

// 100 load/unload cycles leave unreclaimable slab flat (within 512 KiB:
// per-CPU caches and RCU-freed objects wobble; a leak of even one page
// per cycle would exceed it).
TEST(Module, HundredLoadUnloadCyclesKeepSlabFlat)
{
	auto cycle = [] {
		auto rm = run("rmmod zbatch");
		if (rm.status != 0)
			return rm.output;
		auto ins = run(kInsmod);
		return ins.status == 0 ? std::string() : ins.output;
	};
	for (int i = 0; i < 5; i++)
		ASSERT_EQ(cycle(), "");
	run("sync; echo 3 > /proc/sys/vm/drop_caches");
	long before = slab_unreclaimable_kb();
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(cycle(), "") << "cycle " << i;
	run("sync; echo 3 > /proc/sys/vm/drop_caches");
	long after = slab_unreclaimable_kb();
	ASSERT_GT(before, 0);
	EXPECT_LT(after - before, 512) << "SUnreclaim " << before << " kB -> " << after << " kB";
}

TEST(Module, UnloadReloadCycles)
{
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(run("rmmod zbatch").status, 0);
		auto r = run(kCli + " status");
		EXPECT_EQ(r.status, 1) << r.output;
		EXPECT_NE(r.output.find("zbatch: error: module zbatch is not loaded"),
			  std::string::npos) << r.output;
		auto ins = run(kInsmod);
		ASSERT_EQ(ins.status, 0) << ins.output;
	}
	EXPECT_EQ(run(kCli + " status").status, 0);
}
