// SPDX-License-Identifier: GPL-2.0
// Guest integration tests of the module skeleton. Run by scripts/guest-check
// inside the VM, as root, with kmod/zbatch.ko loaded.
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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


// 100 load/unload cycles leave unreclaimable slab flat (within 512 KiB:
// per-CPU caches and RCU-freed objects wobble; a leak of even one page
// per cycle would exceed it).
// 100 cycles in make check-full / check-debug, 25 in make check: against
// the 512 kB limit, the short form catches a leak of about 21 kB a cycle
// or more, the long form one of about 5.2 kB.
TEST(Module, LoadUnloadCyclesKeepSlabFlat)
{
	const int cycles = full_run() ? 100 : 25;
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
	long before = meminfo_kb("SUnreclaim");
	for (int i = 0; i < cycles; i++)
		ASSERT_EQ(cycle(), "") << "cycle " << i;
	run("sync; echo 3 > /proc/sys/vm/drop_caches");
	long after = meminfo_kb("SUnreclaim");
	ASSERT_GT(before, 0);
	RecordProperty("cycles", std::to_string(cycles));
	RecordProperty("slab_kb_before", std::to_string(before));
	RecordProperty("slab_kb_after", std::to_string(after));
	if (kasan_kernel())
		GTEST_SKIP() << cycles << " cycles ran; SUnreclaim " << before << " -> " << after
			     << " kB not judged: KASAN's quarantine holds freed objects";
	EXPECT_LT(after - before, 512) << "SUnreclaim " << before << " kB -> " << after << " kB over "
				       << cycles << " cycles";
	std::printf("load/unload: %d cycles, SUnreclaim %ld -> %ld kB\n", cycles, before, after);
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

// The series' WQ design in the model: two devices of two WQs each (wq0
// decompress-only, wq1 compress-only with g_comp_wqs_per_iaa=1), compress
// round-robin over the package's devices, decompress on the local device.
TEST(Module, WqDesignTypedWqsDistributedCompressLocalDecompress)
{
	// whatever fails below, the next tests get the module as it was
	struct Reload {
		~Reload()
		{
			sysfs_write(kDbg + "/handoff", "auto");
			run("rmmod zbatch");
			run(kInsmod);
		}
	} reload;
	ASSERT_EQ(run("rmmod zbatch").status, 0);
	auto ins = run(kInsmod + " devices=2 wqs=2 engines=2");
	ASSERT_EQ(ins.status, 0) << ins.output;
	EXPECT_EQ(sysfs_read(kSys + "/dev0/wq0/type"), "decompress");
	EXPECT_EQ(sysfs_read(kSys + "/dev0/wq1/type"), "compress");
	EXPECT_EQ(sysfs_read(kSys + "/distribute_comps"), "1");
	EXPECT_EQ(sysfs_read(kSys + "/distribute_decomps"), "0");
	// every descriptor through the WQs (stats count what the WQs ran);
	// from CPU 0, whose local device is dev0
	ASSERT_EQ(sysfs_write(kDbg + "/handoff", "always"), 0);
	auto r = run("taskset -c 0 " + kCli + " bench --codec lz4 --batch 16 --pages 128 --rounds 2");
	ASSERT_EQ(r.status, 0) << r.output;
	sysfs_write(kDbg + "/handoff", "auto");
	auto calls = [](const std::string &wq, const char *key) {
		auto kv = sysfs_read(kDbg + "/" + wq + "/stats");
		auto p = kv.find(std::string(key) + " ");
		return p == std::string::npos ? -1L : std::stol(kv.substr(p + strlen(key) + 1));
	};
	EXPECT_GT(calls("dev0/wq1", "compress_calls"), 0);
	EXPECT_GT(calls("dev1/wq1", "compress_calls"), 0) << "compress not distributed";
	EXPECT_EQ(calls("dev0/wq0", "compress_calls"), 0) << "compress on a decompress WQ";
	EXPECT_EQ(calls("dev1/wq0", "compress_calls"), 0);
	EXPECT_GT(calls("dev0/wq0", "decompress_calls"), 0);
	EXPECT_EQ(calls("dev1/wq0", "decompress_calls"), 0) << "decompress left the local device";
	EXPECT_EQ(calls("dev0/wq1", "decompress_calls"), 0) << "decompress on a compress WQ";
	// g_comp_wqs_per_iaa=0: every WQ generic
	ASSERT_EQ(sysfs_write(kSys + "/g_comp_wqs_per_iaa", "0"), 0);
	EXPECT_EQ(sysfs_read(kSys + "/dev1/wq1/type"), "generic");
}

// The self-tests change settings while they run (stalled WQs, timeouts,
// modes) and put back exactly what the administrator had.
TEST(Module, SelfTestsLeaveTheAdministratorsStateAlone)
{
	const std::vector<std::pair<std::string, std::string>> set = {
		{kSys + "/sync_mode", "async_irq"}, {kSys + "/verify_compress", "1"},
		{kSys + "/timeout_ms", "777"},      {kSys + "/distribute_comps", "0"},
		{kSys + "/codec", "zstd"},          {kSys + "/dev0/wq0/enabled", "0"},
		{kDbg + "/dev0/wq0/fault", "status 0x20 0x00 9"},
	};
	std::vector<std::string> before;
	for (auto &[f, v] : set) {
		ASSERT_EQ(sysfs_write(f, v), 0) << f;
		before.push_back(sysfs_read(f));
	}
	ASSERT_EQ(sysfs_write(kDbg + "/selftest", "1"), 0);
	auto ktap = sysfs_read(kDbg + "/selftest_results");
	EXPECT_EQ(ktap.find("not ok"), std::string::npos) << ktap;
	for (size_t i = 0; i < set.size(); i++)
		EXPECT_EQ(sysfs_read(set[i].first), before[i]) << set[i].first;
	sysfs_write(kSys + "/sync_mode", "async");
	sysfs_write(kSys + "/verify_compress", "0");
	sysfs_write(kSys + "/timeout_ms", "1000");
	sysfs_write(kSys + "/distribute_comps", "1");
	sysfs_write(kSys + "/codec", "lz4");
	sysfs_write(kSys + "/dev0/wq0/enabled", "1");
	sysfs_write(kDbg + "/dev0/wq0/fault", "none");
}

// An unprivileged user can change nothing: no writable sysfs file of the
// module, no device node, no debugfs file accepts it.
TEST(Module, UnprivilegedUserIsRefusedEverywhere)
{
	ASSERT_EQ(run("command -v setpriv").status, 0) << "setpriv (util-linux) is missing";
	const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
	// every file under /sys/kernel/zbatch with a write bit, and the swap
	// device control files
	auto files = run("find /sys/kernel/zbatch -type f -perm /222");
	ASSERT_EQ(files.status, 0);
	std::istringstream in(files.output);
	std::string f;
	int n = 0;
	while (std::getline(in, f)) {
		if (f.empty())
			continue;
		auto w = run(as_nobody + "sh -c 'echo 1 > " + f + "'");
		EXPECT_NE(w.status, 0) << f << " accepted a write from nobody";
		EXPECT_NE(w.output.find("Permission denied"), std::string::npos) << f << ": " << w.output;
		n++;
	}
	EXPECT_GT(n, 10) << "found too few writable files: " << files.output;
	for (const char *dev : {"/dev/zbatch"}) {
		auto o = run(as_nobody + "sh -c 'exec 3<> " + std::string(dev) + "'");
		EXPECT_NE(o.status, 0) << dev << " opened by nobody";
	}
	auto dbg = run(as_nobody + "ls " + kDbg);
	EXPECT_NE(dbg.status, 0) << "debugfs readable by nobody: " << dbg.output;
	auto cli = run(as_nobody + kCli + " config set codec zstd");
	EXPECT_NE(cli.status, 0) << cli.output;
	EXPECT_EQ(choice(sysfs_read(kSys + "/codec")), "lz4");
}
