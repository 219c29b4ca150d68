// SPDX-License-Identifier: GPL-2.0
// Guest tests: zbatch as zswap's compressor under real swap pressure.
// Run by scripts/guest-zswap in a small guest (256 MiB) with a swap disk,
// zswap enabled and kmod/zbatch.ko loaded.
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "vm_util.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/workload.hpp"

using namespace vmtest;

namespace {

const std::string kZswapParam = "/sys/module/zswap/parameters/compressor";
const std::string kZswapDbg = "/sys/kernel/debug/zswap";

zbatch::WorkloadConfig workload(size_t mib)
{
	zbatch::WorkloadConfig c;
	c.procs = 2;
	c.bytes_per_proc = (mib << 20) / 2;
	c.pattern = zbatch::Pattern::Mixed;
	c.passes = 1;
	c.timeout_s = 300 * vmtest::slow_factor();
	// 4 KiB folios: zswap in 6.12 refuses large ones, and clearing huge
	// pages under TCG is slow enough to trip the soft-lockup detector
	c.thp = "never";
	return c;
}

// Swap pressure from a small workload: the processes in a memory cgroup
// of @max_mib, so that memcg reclaim swaps out (through zswap) what they
// write beyond it, instead of a workload larger than the guest: fewer
// pages through the same path (these tests run deflate through the
// engines, the slowest codec under TCG). zswap charges its pool to the
// group: @max_mib must hold all @mib compressed (deflate keeps about half
// of the mixed pattern) or the group OOMs; it then swaps out at least
// (mib - max_mib) / 0.5.
zbatch::WorkloadConfig pressed(size_t mib, size_t max_mib)
{
	auto c = workload(mib);
	// the memory controller for the root's children (once per boot); a
	// guest without it cannot press: say so before the workload fails
	if (sysfs_read(zbatch::kCgroupDir + "/cgroup.controllers").find("memory") ==
	    std::string::npos)
		ADD_FAILURE() << "no memory controller in " << zbatch::kCgroupDir
			      << "/cgroup.controllers: the guest kernel cannot limit the workload";
	else if (int e = sysfs_write(zbatch::kCgroupDir + "/cgroup.subtree_control", "+memory"))
		ADD_FAILURE() << "cannot enable the memory controller for the root's children: "
			      << std::strerror(e);
	c.cgroup = "zbatch-zswap-test";
	c.memory_max = std::to_string(max_mib) + "M";
	return c;
}

std::string proc_crypto_block(const std::string &driver)
{
	std::ifstream f("/proc/crypto");
	std::string line, block, found;
	while (std::getline(f, line)) {
		if (line.empty()) {
			if (block.find("driver       : " + driver + "\n") != std::string::npos)
				found = block;
			block.clear();
		} else {
			block += line + "\n";
		}
	}
	return found;
}

// In the zswap-iaa tier deflate runs on the IAA executor (the test
// double), which takes it whatever the engine tunables say.
bool iaa_runs_deflate()
{
	return sysfs_read(kSys + "/iaa/state").find("[online]") != std::string::npos;
}

} // namespace

class ZswapAlg : public ::testing::TestWithParam<std::string> {};

// The workload swaps several times more than fits; not one byte differs,
// and every page zswap stored went through zbatch.
TEST_P(ZswapAlg, SwapWorkloadIntactAndAccounted)
{
	const std::string alg = GetParam() + "-zbatch";
	ASSERT_EQ(sysfs_write(kZswapParam, alg), 0);
	ASSERT_EQ(sysfs_read(kZswapParam), alg);
	bool verify = GetParam() == "deflate";	// one codec runs with verify on
	ASSERT_EQ(sysfs_write(kSys + "/verify_compress", verify ? "1" : "0"), 0);
	auto before = debug_stats();
	int64_t stored = 0, pool = 0;
	auto cfg = workload(160);
	cfg.between = [&]() -> zbatch::Result<void> {
		stored = std::stoll(sysfs_read(kZswapDbg + "/stored_pages"));
		pool = std::stoll(sysfs_read(kZswapDbg + "/pool_total_size"));
		return {};
	};
	auto r = zbatch::run_workload(cfg);
	sysfs_write(kSys + "/verify_compress", "0");
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u);
	auto after = debug_stats();
	auto d = [&](const char *k) { return after[k] - before[k]; };
	int64_t zswpout = r->vmstat_delta["zswpout"], zswpin = r->vmstat_delta["zswpin"];
	EXPECT_GT(zswpout, 10000) << "the workload did not swap through zswap";
	EXPECT_GT(zswpin, 5000);
	EXPECT_GT(stored, 5000) << "zswap held few pages between write and read";
	// every zswap store compresses once, every load or writeback decompresses
	EXPECT_GE(d("compress_calls"), zswpout);
	EXPECT_GE(d("decompress_calls"), zswpin);
	EXPECT_EQ(d("err_verify"), 0);
	EXPECT_EQ(d("err_badmsg"), 0);
	EXPECT_EQ(d("timeouts"), 0);
	RecordProperty("zswpout", std::to_string(zswpout));
	RecordProperty("ratio_permille", std::to_string(stored ? pool * 1000 / (stored * 4096) : 0));
}

INSTANTIATE_TEST_SUITE_P(AllCodecs, ZswapAlg,
			 ::testing::Values("deflate", "lz4", "zstd", "lzo"),
			 [](const auto &info) { return info.param; });

// acomp_inline=0: zswap's pages go through the WQs and engines instead.
// Only deflate-zbatch can: it is asynchronous (IAA may run it), so zswap
// calls it where it may sleep (decompress after copying the object out of
// zsmalloc).
TEST(Zswap, EnginePathUnderSwapPressure)
{
	if (iaa_runs_deflate())
		GTEST_SKIP() << "deflate runs on the IAA executor in this tier; the zswap tier tests the engines";
	ASSERT_EQ(sysfs_write(kZswapParam, "deflate-zbatch"), 0);
	ASSERT_EQ(sysfs_write(kSys + "/acomp_inline", "0"), 0);
	// one page is a batch of one, which dispatch keeps inline: force the
	// hand-off so that the engines run under swap pressure
	ASSERT_EQ(sysfs_write(kDbg + "/handoff", "always"), 0);
	auto before = debug_stats();
	auto r = zbatch::run_workload(pressed(48, 36));
	sysfs_write(kDbg + "/handoff", "auto");
	sysfs_write(kSys + "/acomp_inline", "1");
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u);
	auto after = debug_stats();
	int64_t zswpout = r->vmstat_delta["zswpout"];
	EXPECT_GT(zswpout, 5000);
	auto d = [&](const char *k) { return after[k] - before[k]; };
	EXPECT_LT(d("inline_runs"), zswpout / 10);
	EXPECT_EQ(d("inline_atomic"), 0) << "an asynchronous algorithm was called atomically";
	EXPECT_GE(d("compress_calls"), zswpout);
	EXPECT_GE(d("handoffs"), zswpout / 2);
	EXPECT_EQ(d("err_badmsg"), 0);
}

// lz4-zbatch, zstd-zbatch and lzo-zbatch are synchronous, as the stock
// algorithms: zswap decompresses them straight from zsmalloc's mapping
// (preemption off) instead of copying each object out first, and sets no
// CRYPTO_TFM_REQ_MAY_SLEEP, so they run inline and never sleep, whatever
// the tunables that send a sleeping caller to the engines say. Under
// DEBUG_ATOMIC_SLEEP (make check-debug) a sleep there is a kernel report.
TEST(Zswap, SynchronousAlgorithmsRunInlineFromTheMapping)
{
	for (const char *alg : {"lz4-zbatch", "zstd-zbatch"}) {
		ASSERT_EQ(sysfs_write(kZswapParam, alg), 0);
		ASSERT_EQ(sysfs_write(kSys + "/acomp_inline", "0"), 0);
		ASSERT_EQ(sysfs_write(kDbg + "/handoff", "always"), 0);
		auto before = debug_stats();
		auto r = zbatch::run_workload(workload(128));
		sysfs_write(kDbg + "/handoff", "auto");
		sysfs_write(kSys + "/acomp_inline", "1");
		ASSERT_TRUE(r) << r.error().message;
		EXPECT_EQ(r->bad_bytes, 0u) << alg;
		auto after = debug_stats();
		auto d = [&](const char *k) { return after[k] - before[k]; };
		int64_t zswpout = r->vmstat_delta["zswpout"], zswpin = r->vmstat_delta["zswpin"];
		EXPECT_GT(zswpin, 2000) << alg << ": no swap-in through zswap";
		// pages an earlier test left in a deflate-zbatch pool still load
		// through it (zswap keeps the old pool until they are gone): a
		// few hand-offs, nothing like one per page
		EXPECT_LT(d("handoffs"), zswpin / 100) << alg << ": synchronous calls reached the engines";
		EXPECT_GE(d("inline_runs") + d("handoffs"), zswpout + zswpin) << alg;
		// every load decompresses inside the mapping: zswap made no copy
		EXPECT_GE(d("inline_atomic"), zswpin) << alg;
		EXPECT_EQ(d("err_badmsg"), 0) << alg;
	}
}

// Faults on the engine path (acomp_inline=0) under swap pressure: every
// byte comes back, zswap never reaches its decompress-failure BUG (a
// failed decompress is redone inline), errors are counted.
class ZswapFault : public ::testing::TestWithParam<std::string> {};

TEST_P(ZswapFault, EnginePathLosesNothing)
{
	const std::string f = GetParam();
	if (iaa_runs_deflate())
		GTEST_SKIP() << "deflate runs on the IAA executor in this tier; the zswap tier tests the engines";
	ASSERT_EQ(sysfs_write(kZswapParam, "deflate-zbatch"), 0);
	ASSERT_EQ(sysfs_write(kSys + "/acomp_inline", "0"), 0);
	ASSERT_EQ(sysfs_write(kDbg + "/handoff", f == "nomem" ? "auto" : "always"), 0);
	if (f == "nomem")
		ASSERT_EQ(sysfs_write(kDbg + "/fault_nomem", "3"), 0);
	else
		ASSERT_EQ(sysfs_write(kDbg + "/dev0/wq0/fault", f), 0);
	auto before = debug_stats();
	auto r = zbatch::run_workload(pressed(32, 24));
	sysfs_write(kDbg + "/dev0/wq0/fault", "none");
	sysfs_write(kDbg + "/fault_nomem", "0");
	sysfs_write(kDbg + "/handoff", "auto");
	sysfs_write(kSys + "/acomp_inline", "1");
	sysfs_write(kSys + "/dev0/wq0/enabled", "1");
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u) << f;
	EXPECT_GT(r->vmstat_delta["zswpout"], 1000) << "no swap pressure";
	auto after = debug_stats();
	auto d = [&](const char *k) { return after[k] - before[k]; };
	if (f == "full")
		EXPECT_GT(d("enqueue_retries"), 0);
	else if (f == "nomem")
		EXPECT_GT(d("err_other"), 0) << "no allocation failure met";
	else
		EXPECT_GT(d("device_errors"), 0) << f;
}

// a device status, an impossible record, no memory; the vm tier runs every
// status and the full WQ through /dev/zbatch, the swap device tier all
INSTANTIATE_TEST_SUITE_P(Faults, ZswapFault,
			 ::testing::Values("status 0x20 0 4", "corrupt 4", "nomem"),
			 [](const auto &info) {
				 std::string n;
				 for (char c : info.param)
					 n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
				 return n;
			 });

// While pages are stored, zswap's compressor changes away and back; the
// old pool stays until its pages are gone, and nothing is lost. zbatch
// cannot be unloaded while zswap holds one of its algorithms.
TEST(Zswap, CompressorSwitchWhileStoredLosesNothing)
{
	ASSERT_EQ(sysfs_write(kZswapParam, "lz4-zbatch"), 0);
	auto cfg = workload(160);
	std::string rmmod_out;
	int rmmod_status = -1;
	cfg.between = [&]() -> zbatch::Result<void> {
		for (const char *c : {"lzo", "zstd-zbatch", "deflate", "lz4-zbatch"})
			if (sysfs_write(kZswapParam, c))
				return zbatch::fail(EINVAL, std::string("cannot switch to ") + c);
		auto rm = run(kCli + " unload");
		rmmod_status = rm.status;
		rmmod_out = rm.output;
		return {};
	};
	auto r = zbatch::run_workload(cfg);
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u);
	EXPECT_GT(r->vmstat_delta["zswpin"], 5000);
	EXPECT_EQ(rmmod_status, 1) << "unload succeeded while zswap used zbatch";
	EXPECT_NE(rmmod_out.find("zbatch is in use"), std::string::npos) << rmmod_out;
	EXPECT_NE(rmmod_out.find("zswap (compressor lz4-zbatch"), std::string::npos) << rmmod_out;
}

// The default names never take over the system's algorithms. The crypto
// manager has no vectors for the private names ("No test for", and
// /proc/crypto then says "passed" without having run anything): their
// correctness is this suite's and the self-tests' business; the vectors
// run on the base names (ZswapUnload below).
TEST(Zswap, DefaultRegistrationUsesPrivateNames)
{
	auto dm = run("dmesg");
	for (const char *c : {"deflate", "lz4", "zstd", "lzo"}) {
		auto b = proc_crypto_block(std::string(c) + "-zbatch");
		ASSERT_FALSE(b.empty()) << c;
		EXPECT_NE(b.find(std::string("name         : ") + c + "-zbatch\n"), std::string::npos) << b;
		EXPECT_NE(b.find("module       : zbatch\n"), std::string::npos) << b;
		EXPECT_NE(dm.output.find(std::string("alg: No test for ") + c + "-zbatch"),
			  std::string::npos) << c << ": the crypto manager ran something unexpected";
	}
}

// Unload once zswap let go: its compressor switched away and the pages
// compressed by zbatch gone (swapoff brings them all back in). Then, with
// acomp_priority, the base names are registered and the crypto manager's
// vectors for them pass. Runs last (scripts/guest-zswap).
TEST(ZswapUnload, AfterSwitchAwayAndSwapoffThenCryptoManagerVectors)
{
	const char *disk = getenv("ZBATCH_DISK");
	ASSERT_NE(disk, nullptr);
	ASSERT_EQ(sysfs_write(kZswapParam, "lzo"), 0);
	auto off = run(std::string("swapoff ") + disk);
	ASSERT_EQ(off.status, 0) << off.output;
	// zswap frees an unused pool asynchronously: retry for up to 30 s
	Cmd rm{1, ""};
	for (int i = 0; i < 150 && rm.status; i++) {
		rm = run("rmmod zbatch");
		if (rm.status)
			std::this_thread::sleep_for(std::chrono::milliseconds(200));
	}
	ASSERT_EQ(rm.status, 0) << rm.output;
	auto ins = run(kInsmod + " acomp_priority=300");
	ASSERT_EQ(ins.status, 0) << ins.output;
	for (const char *c : {"deflate", "lz4", "zstd", "lzo"}) {
		auto b = proc_crypto_block(std::string(c) + "-zbatch");
		// the crypto manager may still be testing it ("unknown"): its
		// verdict within 10 s
		for (int i = 0; i < 100 && b.find("selftest     : unknown\n") != std::string::npos;
		     i++) {
			std::this_thread::sleep_for(std::chrono::milliseconds(100));
			b = proc_crypto_block(std::string(c) + "-zbatch");
		}
		EXPECT_NE(b.find(std::string("name         : ") + c + "\n"), std::string::npos) << b;
		EXPECT_NE(b.find("priority     : 300\n"), std::string::npos) << b;
		EXPECT_NE(b.find("selftest     : passed\n"), std::string::npos) << b;
	}
	EXPECT_EQ(run("rmmod zbatch").status, 0);
	EXPECT_EQ(run(kInsmod + " acomp_priority=5000").status, 1) << "bad priority accepted";
	ins = run(kInsmod);
	EXPECT_EQ(ins.status, 0) << ins.output;
	EXPECT_EQ(run(std::string("swapon ") + disk).status, 0);
}
