// SPDX-License-Identifier: GPL-2.0
// The swap device in the guest (scripts/guest-swapdev): a guest where zswap
// was never enabled, so that large folios are swapped in whole.
#include <cctype>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "vm_util.hpp"
#include "zbatch/device.hpp"
#include "zbatch/json.hpp"
#include "zbatch/pattern.hpp"
#include "zbatch/swapdev.hpp"
#include "zbatch/workload.hpp"

using namespace vmtest;

namespace {

// The codec of most devices here; the IAA tier runs them with deflate.
const std::string kCodec =
	std::getenv("ZBATCH_SWAPDEV_CODEC") ? std::getenv("ZBATCH_SWAPDEV_CODEC") : "lz4";

struct Dev {
	int id = -1;
	std::string path;
};

Dev create(const std::string &size, const std::string &codec, const std::string &unit)
{
	auto r = run(kCli + " --json dev create --size " + size + " --codec " + codec +
		     " --unit " + unit);
	EXPECT_EQ(r.status, 0) << r.output;
	Dev d;
	auto p = r.output.find("\"id\": ");
	if (p != std::string::npos)
		d.id = std::stoi(r.output.substr(p + 6));
	d.path = "/dev/zbatchswap" + std::to_string(d.id);
	return d;
}

void destroy(const Dev &d)
{
	auto r = run(kCli + " dev destroy " + std::to_string(d.id));
	EXPECT_EQ(r.status, 0) << r.output;
}

zbatch::SwapdevInfo info(const Dev &d)
{
	zbatch::SysfsTree t;
	auto l = zbatch::swapdev_list(t);
	if (l)
		for (auto &x : *l)
			if (x.id == d.id)
				return x;
	ADD_FAILURE() << "device " << d.id << " not listed";
	return {};
}

void swapon(const Dev &d)
{
	auto r = run("mkswap " + d.path + " >/dev/null && swapon -p 100 " + d.path);
	ASSERT_EQ(r.status, 0) << r.output;
}

void swapoff(const Dev &d)
{
	auto r = run("swapoff " + d.path);
	ASSERT_EQ(r.status, 0) << r.output;
}

zbatch::WorkloadConfig pageout(size_t mib, zbatch::Pattern p, const std::string &mthp)
{
	zbatch::WorkloadConfig c;
	c.procs = 2;
	c.bytes_per_proc = mib << 20;
	c.pattern = p;
	c.passes = 2;
	c.pageout = true;
	c.mthp = mthp;
	c.timeout_s = 600 * vmtest::slow_factor();
	return c;
}

// Runs @cfg on device @d (swapped on), then swaps it off and destroys it;
// *@after (if given) is the device as swapoff left it.
zbatch::Result<zbatch::WorkloadResult> swap_through(const Dev &d,
						    const zbatch::WorkloadConfig &cfg,
						    zbatch::SwapdevInfo *after = nullptr)
{
	auto r = zbatch::run_workload(cfg);
	swapoff(d);
	if (after)
		*after = info(d);
	destroy(d);
	return r;
}

int64_t us(const zbatch::SwapdevInfo &i, const char *k)
{
	auto it = i.unit_stat.find(k);
	return it == i.unit_stat.end() ? 0 : it->second;
}

} // namespace

// Every unit size with 16K and 64K mTHP: large folios go out and come
// back whole, as batches of (folio / unit) requests; every byte checked
// twice.
class SwapdevUnit : public ::testing::TestWithParam<std::pair<const char *, const char *>> {};

TEST_P(SwapdevUnit, MthpSwapIsBatchedAndIntact)
{
	std::string unit = GetParam().first, mthp = GetParam().second;
	unsigned int per_folio = (mthp == "64kB" ? 16 : 4) / (unit == "4k" ? 1 : unit == "16k" ? 4 : 16);
	auto d = create("512M", kCodec, unit);
	ASSERT_GE(d.id, 0);
	swapon(d);
	zbatch::SwapdevInfo mid;
	auto cfg = pageout(48, zbatch::Pattern::Mixed, mthp);
	cfg.between = [&]() -> zbatch::Result<void> {
		mid = info(d);
		return {};
	};
	zbatch::SwapdevInfo after;
	auto r = swap_through(d, cfg, &after);
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u);
	EXPECT_GT(r->vmstat_delta["pswpout"], 10000) << "the region did not swap out";
	EXPECT_GT(mid.orig_bytes, 60ull << 20) << "pages stored while swapped out";
	EXPECT_LT(mid.used_bytes, mid.orig_bytes) << "nothing was compressed";
	if (per_folio > 1) {
		// a folio is a batch of per_folio requests: batches of one fail this
		auto it = after.batches.find(per_folio);
		ASSERT_NE(it, after.batches.end()) << "no batch of " << per_folio << " requests";
		EXPECT_GT(it->second.first, 100u) << "large folios were not written as batches";
		// back as batches, or straight from zsmalloc object by object
		// when dispatch would have run the batch inline anyway
		EXPECT_TRUE(it->second.second > 50u || us(after, "direct_bios") > 50)
			<< "large folios came back neither as batches (" << it->second.second
			<< ") nor straight from zsmalloc (" << us(after, "direct_bios") << ")";
		// a read handing its batch over copied its objects out first:
		// that copy is sampled (dispatch weighs it against reading here)
		if (it->second.second > 50u) {
			EXPECT_GT(us(after, "copy_ns_per_4k"), 0)
				<< it->second.second << " read batches, no copy measured";
		}
	}
	if (unit != "4k") {
		EXPECT_GT(us(mid, "units"), 100)
			<< "no " << unit << " units stored (units_declined "
			<< us(mid, "units_declined") << ", unit reads whole "
			<< us(mid, "unit_reads_whole") << ", in part "
			<< us(mid, "unit_reads_part") << ")";
	}
	EXPECT_EQ(after.failed_reads, 0u);
	EXPECT_EQ(after.failed_writes, 0u);
	// swapoff read everything back and freed it; mkswap's header page
	// (page 0, not a swap slot) stays
	EXPECT_LE(after.orig_bytes, 4096u);
	EXPECT_EQ(us(after, "units"), 0);
}

INSTANTIATE_TEST_SUITE_P(Units, SwapdevUnit,
			 ::testing::Values(std::pair{"4k", "64kB"}, std::pair{"16k", "64kB"},
					   std::pair{"64k", "64kB"}, std::pair{"4k", "16kB"},
					   std::pair{"16k", "16kB"}));

// Partial swap-in: 64K folios go out as 64k units, come back 4 KiB at a
// time (mTHP off before the read-back), one page in 16 touched first;
// every swap-in reads a part of a unit, every byte is checked twice.
TEST(Swapdev, PartialSwapInOfUnitsIsIntact)
{
	auto d = create("512M", kCodec, "64k");
	ASSERT_GE(d.id, 0);
	swapon(d);
	auto cfg = pageout(32, zbatch::Pattern::Real, "64kB");
	cfg.swapin_4k = true;
	cfg.touch_every = 16;
	auto r = zbatch::run_workload(cfg);
	auto after = info(d);
	swapoff(d);
	destroy(d);
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u);
	EXPECT_GT(r->touch_s, 0.0);
	EXPECT_GT(us(after, "partial_reads"), 1000) << "swap-in did not read parts of units";
	EXPECT_EQ(after.failed_reads, 0u);
}

// Units only while they pay: a 16k device whose pages come back 4 KiB at a
// time (a partial swap-in decompresses a whole unit for each page) stores
// pages, not units, at its next swap-out (units_declined; 1 unit in 16
// still written), and units again once large folios came back whole for
// a while; with unit_adapt off it keeps units.
// Every byte of every round checked.
TEST(Swapdev, UnitsGiveWayToPagesWhileReadsTakeThemInPart)
{
	auto d = create("256M", kCodec, "16k");
	ASSERT_GE(d.id, 0);
	const std::string adapt = "/sys/block/zbatchswap" + std::to_string(d.id) + "/zbatch/unit_adapt";
	EXPECT_EQ(sysfs_read(adapt), "1") << "on by default";
	swapon(d);
	// one swap-out and back: what was stored while swapped out
	auto round = [&](bool partial) {
		auto cfg = pageout(16, zbatch::Pattern::Real, "64kB");
		cfg.passes = 1;
		cfg.swapin_4k = partial;
		cfg.touch_every = partial ? 16 : 0;
		zbatch::SwapdevInfo mid;
		cfg.between = [&]() -> zbatch::Result<void> {
			mid = info(d);
			return {};
		};
		auto r = zbatch::run_workload(cfg);
		if (!r)
			ADD_FAILURE() << r.error().message;
		else
			EXPECT_EQ(r->bad_bytes, 0u);
		return mid;
	};
	ASSERT_EQ(sysfs_write(adapt, "0"), 0);
	round(true);
	auto fixed = round(true);
	EXPECT_GT(us(fixed, "units"), 100) << "unit_adapt 0 must keep units";
	EXPECT_EQ(us(fixed, "units_declined"), 0);
	EXPECT_GT(us(fixed, "unit_reads_part"), 1000) << "partial reads not counted";
	ASSERT_EQ(sysfs_write(adapt, "1"), 0);
	auto declined = round(true);
	EXPECT_GT(us(declined, "units_declined"), 100) << "units kept while read in part";
	EXPECT_LT(us(declined, "units"), us(fixed, "units") / 4);
	// about 130 whole reads of the 1 unit in 16 still written turn units
	// on again: two rounds of this size give about 230
	round(false);
	round(false);
	auto back = round(false);
	printf("units stored: adapt off %ld, adapt on after partial reads %ld (declined %ld), "
	       "after whole reads %ld; unit reads whole %ld, part %ld\n",
	       (long)us(fixed, "units"), (long)us(declined, "units"),
	       (long)us(declined, "units_declined"), (long)us(back, "units"),
	       (long)us(back, "unit_reads_whole"), (long)us(back, "unit_reads_part"));
	EXPECT_GT(us(back, "units"), 100) << "units not back once folios came back whole";
	EXPECT_GT(us(back, "unit_reads_whole"), 130) << "whole reads of units not counted";
	swapoff(d);
	auto after = info(d);
	destroy(d);
	EXPECT_EQ(after.failed_reads + after.failed_writes, 0u);
}

// Base pages only: every bio is one page; 16K units then store pages alone.
TEST(Swapdev, BasePagesInUnitDeviceStayIntact)
{
	auto d = create("256M", "zstd", "16k");
	swapon(d);
	auto r = zbatch::run_workload(pageout(24, zbatch::Pattern::Text, ""));
	auto i = info(d);
	swapoff(d);
	destroy(d);
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u);
	EXPECT_EQ(i.failed_reads + i.failed_writes, 0u);
}

// Zeros cost no memory; random data is kept raw.
TEST(Swapdev, SameFilledAndIncompressible)
{
	auto d = create("256M", kCodec, "4k");
	swapon(d);
	zbatch::SwapdevInfo z, rnd;
	auto cz = pageout(16, zbatch::Pattern::Zeros, "");
	cz.between = [&]() -> zbatch::Result<void> { z = info(d); return {}; };
	auto r1 = zbatch::run_workload(cz);
	auto cr = pageout(16, zbatch::Pattern::Random, "64kB");
	cr.between = [&]() -> zbatch::Result<void> { rnd = info(d); return {}; };
	auto r2 = zbatch::run_workload(cr);
	swapoff(d);
	destroy(d);
	ASSERT_TRUE(r1) << r1.error().message;
	ASSERT_TRUE(r2) << r2.error().message;
	EXPECT_EQ(r1->bad_bytes + r2->bad_bytes, 0u);
	// zeros pages carry an 8-byte tag: same-filled only where untagged,
	// so check they compressed to (almost) nothing instead
	EXPECT_LT(z.used_bytes, z.orig_bytes / 8);
	EXPECT_GT(rnd.huge_pages, 1000u) << "random pages were not kept raw";
}

// Discard and swapoff give the memory back.
TEST(Swapdev, DiscardAndSwapoffFreeEverything)
{
	auto d = create("256M", kCodec, "16k");
	auto w0 = run("head -c 1048576 /usr/lib/x86_64-linux-gnu/libc.so.6 | dd of=" + d.path +
		      " bs=64k iflag=fullblock oflag=direct status=none");
	ASSERT_EQ(w0.status, 0) << w0.output;
	EXPECT_GE(info(d).orig_bytes, 1ull << 20);
	auto dc = run("blkdiscard " + d.path);
	ASSERT_EQ(dc.status, 0) << dc.output;
	EXPECT_EQ(info(d).orig_bytes, 0u) << "discard left pages stored";
	auto r = run("mkswap " + d.path + " >/dev/null && swapon --discard -p 100 " + d.path);
	ASSERT_EQ(r.status, 0) << r.output;
	zbatch::SwapdevInfo mid;
	auto c = pageout(24, zbatch::Pattern::Mixed, "16kB");
	c.between = [&]() -> zbatch::Result<void> { mid = info(d); return {}; };
	auto w = zbatch::run_workload(c);
	swapoff(d);
	auto after = info(d);
	destroy(d);
	ASSERT_TRUE(w) << w.error().message;
	EXPECT_GT(mid.used_bytes, 4ull << 20);
	EXPECT_LE(after.orig_bytes, 4096u);	/* mkswap's header */
	EXPECT_LE(after.compr_bytes, 4096u);
	EXPECT_LT(after.used_bytes, mid.used_bytes / 4);
}

// A device at its memory limit refuses writes with EIO; what it stored
// before reads back intact.
TEST(Swapdev, FullDeviceRefusesWritesLosesNothing)
{
	auto d = create("64M", kCodec, "4k");
	zbatch::SysfsTree t;
	ASSERT_TRUE(t.write("/sys/block/zbatchswap" + std::to_string(d.id) + "/zbatch/mem_limit",
			    "1M"));
	auto page = zbatch::generate(zbatch::Pattern::Random, 4096, 3);
	int fd = ::open(d.path.c_str(), O_RDWR | O_DIRECT);
	ASSERT_GE(fd, 0);
	void *buf;
	ASSERT_EQ(posix_memalign(&buf, 4096, 4096), 0);
	unsigned int written = 0;
	int err = 0;
	for (unsigned int i = 0; i < 4096; i++) {
		auto *p = static_cast<uint8_t *>(buf);
		std::copy(page.begin(), page.end(), p);
		std::memcpy(p, &i, sizeof(i));
		if (::pwrite(fd, buf, 4096, off_t(i) * 4096) != 4096) {
			err = errno;
			break;
		}
		written++;
	}
	EXPECT_EQ(err, EIO);
	EXPECT_GT(written, 100u);
	EXPECT_LT(written, 4096u);
	for (unsigned int i = 0; i < written; i++) {
		ASSERT_EQ(::pread(fd, buf, 4096, off_t(i) * 4096), 4096);
		auto *p = static_cast<uint8_t *>(buf);
		unsigned int tag;
		std::memcpy(&tag, p, sizeof(tag));
		ASSERT_EQ(tag, i);
		ASSERT_EQ(std::memcmp(p + 4, page.data() + 4, 4092), 0) << "block " << i;
	}
	free(buf);
	::close(fd);
	auto i = info(d);
	EXPECT_GT(i.failed_writes, 0u);
	EXPECT_GT(us(i, "limit_refused"), 0);
	destroy(d);
}

// Plain block device: a file system on it.
TEST(Swapdev, Ext4RoundTrip)
{
	if (run("command -v mkfs.ext4").status)
		GTEST_SKIP() << "mkfs.ext4 not installed in the guest userland";
	auto d = create("128M", "zstd", "16k");
	auto r = run("mkfs.ext4 -q -F " + d.path + " && mkdir -p /mnt/zb && mount " + d.path +
		     " /mnt/zb && head -c 20000000 /usr/lib/x86_64-linux-gnu/libc.so.6 > "
		     "/mnt/zb/f && sync && umount /mnt/zb && echo 3 > /proc/sys/vm/drop_caches && "
		     "mount " + d.path + " /mnt/zb && head -c 20000000 "
		     "/usr/lib/x86_64-linux-gnu/libc.so.6 | cmp - /mnt/zb/f && umount /mnt/zb");
	EXPECT_EQ(r.status, 0) << r.output;
	destroy(d);
}

// Devices come and go while another is swapped on and busy.
TEST(Swapdev, CreateDestroyUnderLoad)
{
	auto d = create("256M", kCodec, "4k");
	swapon(d);
	std::atomic<bool> done{false};
	zbatch::Result<zbatch::WorkloadResult> r = zbatch::fail(EINVAL, "not run");
	std::thread load([&] {
		r = zbatch::run_workload(pageout(32, zbatch::Pattern::Mixed, "64kB"));
		done = true;
	});
	unsigned int cycles = 0;
	while (!done && cycles < 50) {
		auto e = create("32M", "deflate", cycles % 2 ? "64k" : "16k");
		auto w = run("dd if=/dev/urandom of=" + e.path + " bs=64k count=8 oflag=direct "
			     "status=none && dd if=" + e.path + " of=/dev/null bs=64k count=8 "
			     "iflag=direct status=none");
		EXPECT_EQ(w.status, 0) << w.output;
		destroy(e);
		cycles++;
	}
	load.join();
	swapoff(d);
	destroy(d);
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u);
	EXPECT_GT(cycles, 0u);
}

// Refusals name the reason.
TEST(Swapdev, RefusalsSayWhy)
{
	auto d = create("64M", kCodec, "4k");
	swapon(d);
	auto r = run(kCli + " dev destroy " + std::to_string(d.id));
	EXPECT_EQ(r.status, 1);
	EXPECT_NE(r.output.find("in use as swap"), std::string::npos) << r.output;
	auto u = run(kCli + " unload");
	EXPECT_NE(u.status, 0);
	EXPECT_NE(u.output.find("zbatchswap"), std::string::npos) << u.output;
	EXPECT_NE(run("rmmod zbatch").status, 0) << "unloaded under a swap device";
	// fixed while in use
	EXPECT_EQ(sysfs_write("/sys/block/zbatchswap" + std::to_string(d.id) + "/zbatch/unit",
			      "64k"), EBUSY);
	swapoff(d);
	destroy(d);
	auto bad = run(kCli + " dev create --size 1M --unit 8k");
	EXPECT_EQ(bad.status, 1);
	EXPECT_NE(bad.output.find("one of 4k, 16k, 64k"), std::string::npos) << bad.output;
	auto none = run(kCli + " dev destroy 31");
	EXPECT_EQ(none.status, 1);
	EXPECT_NE(none.output.find("no device"), std::string::npos) << none.output;
}

namespace {

Dev create_wb(const std::string &size, const std::string &unit, const std::string &backing)
{
	auto r = run(kCli + " --json dev create --size " + size + " --codec " + kCodec +
		     " --unit " + unit + " --writeback-device " + backing);
	EXPECT_EQ(r.status, 0) << r.output;
	Dev d;
	auto p = r.output.find("\"id\": ");
	if (p != std::string::npos)
		d.id = std::stoi(r.output.substr(p + 6));
	d.path = "/dev/zbatchswap" + std::to_string(d.id);
	return d;
}

// Writes @data at the start of @path with O_DIRECT from a huge page, so
// that the bio carries it as one multi-page bvec: the device stores units
// only from contiguous memory, as large folios give it.
void write_contiguous(const std::string &path, const std::vector<uint8_t> &data)
{
	ThpMadvise thp;
	const size_t huge = 2 << 20;
	void *m = mmap(nullptr, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	ASSERT_NE(m, MAP_FAILED);
	auto *p = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(m) + huge - 1) &
					      ~(huge - 1));
	madvise(p, huge, MADV_HUGEPAGE);
	memcpy(p, data.data(), data.size());
	int fd = open(path.c_str(), O_WRONLY | O_DIRECT);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(pwrite(fd, p, data.size(), 0), static_cast<ssize_t>(data.size()));
	close(fd);
	munmap(m, 2 * huge);
}

std::string wb_dir(const Dev &d)
{
	return "/sys/block/zbatchswap" + std::to_string(d.id) + "/zbatch";
}

} // namespace

// Writeback under swap, as an operator runs it: 64K folios of real data
// swapped out into 16k units, every page marked idle and written back to
// a RAM disk (the memory the device held goes), then every byte swapped
// back in from the disk, whole folios reading written-back pages in one
// bio, and checked; swapoff frees every block.
TEST(Swapdev, WritebackMovesSwappedPagesToDiskAndBack)
{
	auto disk = backing_disk(131072);
	ASSERT_FALSE(disk.empty()) << "no block device to write back to";
	auto d = create_wb("512M", "16k", disk);
	ASSERT_GE(d.id, 0);
	swapon(d);
	zbatch::SwapdevInfo before, mid;
	auto cfg = pageout(24, zbatch::Pattern::Real, "64kB");
	cfg.between = [&]() -> zbatch::Result<void> {
		before = info(d);
		for (const char *cmd : {" dev idle ", " dev writeback "}) {
			auto r = run(kCli + cmd + std::to_string(d.id) +
				     (std::string(cmd) == " dev idle " ? "" : " idle"));
			if (r.status)
				return zbatch::fail(EIO, r.output);
			std::cout << r.output;
		}
		mid = info(d);
		return {};
	};
	zbatch::SwapdevInfo after;
	auto r = swap_through(d, cfg, &after);
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u);
	std::cout << "before writeback: " << before.orig_bytes / 4096 << " pages, "
		  << before.used_bytes / 4096 << " pages of memory; after: " << mid.bd_count
		  << " pages on disk, " << mid.used_bytes / 4096 << " pages of memory; read back "
		  << after.bd_reads << "\n";
	EXPECT_GT(before.orig_bytes / 4096, 5000u) << "the region did not swap out";
	// every page stored compressed was idle: nothing read it since
	EXPECT_GE(mid.bd_count + mid.same_pages + 16, before.orig_bytes / 4096 -
						       before.same_pages);
	EXPECT_LT(mid.used_bytes, before.used_bytes / 4) << "the memory did not go";
	EXPECT_GE(after.bd_reads + 16, mid.bd_count) << "pages did not come back from the disk";
	EXPECT_EQ(after.failed_reads, 0u);
	EXPECT_EQ(after.failed_writes, 0u);
	EXPECT_LE(after.bd_count, 1u) << "swapoff left blocks on the disk";
}

// What writeback refuses, and why, through the CLI and sysfs; the limit
// (zram's writeback_limit) stops it at exactly the pages allowed; pages
// written back read back byte for byte.
TEST(Swapdev, WritebackRefusalsAndLimit)
{
	auto disk = backing_disk(131072);
	ASSERT_FALSE(disk.empty()) << "no block device to write back to";
	auto refused = [](const std::string &backing, const std::string &why) {
		auto r = run(kCli + " dev create --size 16M --writeback-device " + backing);
		EXPECT_EQ(r.status, 1) << backing;
		EXPECT_NE(r.output.find(why), std::string::npos) << r.output;
	};
	refused("/dev/nonexistent", "no such device");
	refused("/etc/passwd", "not a block device");
	auto plain = create("16M", kCodec, "4k");
	refused(plain.path, "a zbatch swap device");
	auto nowb = run(kCli + " dev writeback " + std::to_string(plain.id) + " idle");
	EXPECT_EQ(nowb.status, 1);
	EXPECT_NE(nowb.output.find("has no writeback device"), std::string::npos) << nowb.output;
	auto d = create_wb("16M", "16k", disk);
	refused(disk, "in use");
	auto dir = wb_dir(d);
	EXPECT_EQ(sysfs_write(dir + "/backing_dev", disk), EBUSY) << "after disksize";
	EXPECT_EQ(sysfs_write(dir + "/writeback", "incompressible"), 0) << "none found: nothing";
	EXPECT_EQ(sysfs_write(dir + "/writeback", "cold"), EINVAL);
	EXPECT_EQ(sysfs_write(dir + "/writeback", "page_index=4096"), EINVAL) << "past the end";
	EXPECT_EQ(sysfs_write(dir + "/idle", "-1"), EINVAL);
	EXPECT_EQ(sysfs_write(dir + "/idle", "soon"), EINVAL);
	// 64 pages of text, 5 may go, then 5 more
	auto text = zbatch::generate(zbatch::Pattern::Text, 64 * 4096, 7);
	{
		std::ofstream f("/tmp/wb.in", std::ios::binary);
		f.write(reinterpret_cast<const char *>(text.data()), text.size());
	}
	ASSERT_EQ(run("dd if=/tmp/wb.in of=" + d.path + " bs=64k oflag=direct status=none").status,
		  0);
	EXPECT_EQ(sysfs_write(dir + "/writeback_limit", "5"), 0);
	EXPECT_EQ(sysfs_write(dir + "/writeback_limit_enable", "1"), 0);
	ASSERT_EQ(run(kCli + " dev idle " + std::to_string(d.id)).status, 0);
	// the kernel says EIO at the limit, as zram; the CLI says how far it got
	EXPECT_EQ(sysfs_write(dir + "/writeback", "idle"), EIO) << "the limit is spent";
	EXPECT_EQ(sysfs_write(dir + "/writeback_limit", "5"), 0);
	auto idle_again = run(kCli + " dev idle " + std::to_string(d.id));
	ASSERT_EQ(idle_again.status, 0) << idle_again.output;
	auto lim = run(kCli + " dev writeback " + std::to_string(d.id) + " idle");
	EXPECT_EQ(lim.status, 0) << lim.output;
	EXPECT_NE(lim.output.find("5 pages written back (idle), then writeback_limit was reached"),
		  std::string::npos) << lim.output;
	EXPECT_EQ(sysfs_read(dir + "/writeback_limit"), "0");
	auto i = info(d);
	EXPECT_EQ(i.bd_writes, 10u);
	EXPECT_EQ(i.bd_count, 10u);
	EXPECT_EQ(i.backing_dev, disk);
	auto js = run(kCli + " --json dev list");
	EXPECT_NE(js.output.find("\"bd_writes\": 10"), std::string::npos) << js.output;
	// the limit off: the rest goes, by page and by mode
	EXPECT_EQ(sysfs_write(dir + "/writeback_limit_enable", "0"), 0);
	ASSERT_EQ(run(kCli + " dev writeback " + std::to_string(d.id) + " page_index=40").status, 0);
	ASSERT_EQ(run(kCli + " dev writeback " + std::to_string(d.id) + " idle").status, 0);
	EXPECT_EQ(info(d).bd_count, 64u);
	EXPECT_EQ(info(d).orig_bytes, 64u * 4096);
	ASSERT_EQ(run("dd if=" + d.path + " of=/tmp/wb.out bs=64k count=4 iflag=direct "
		      "status=none && cmp /tmp/wb.in /tmp/wb.out").status, 0)
		<< "written-back pages did not read back";
	EXPECT_EQ(info(d).bd_reads, 64u);
	destroy(d);
	destroy(plain);
	// a unit's pages go together: of 4 idle 16k units, the one a page of
	// which was read since stays whole in memory
	auto u = create_wb("16M", "16k", disk);
	ASSERT_EQ(sysfs_write(wb_dir(u) + "/unit_adapt", "0"), 0);	/* units, always */
	write_contiguous(u.path, std::vector<uint8_t>(text.begin(), text.begin() + 65536));
	ASSERT_EQ(info(u).unit_stat["units"], 4) << "no THP for the buffer?\n"
						 << sysfs_read(wb_dir(u) + "/unit_stat");
	ASSERT_EQ(run(kCli + " dev idle " + std::to_string(u.id)).status, 0);
	ASSERT_EQ(run("dd if=" + u.path + " of=/dev/null bs=4k skip=5 count=1 iflag=direct "
		      "status=none").status, 0);
	ASSERT_EQ(run(kCli + " dev writeback " + std::to_string(u.id) + " idle").status, 0);
	auto ui = info(u);
	EXPECT_EQ(ui.bd_writes, 12u) << "units 0, 2 and 3";
	EXPECT_EQ(ui.unit_stat["units"], 1) << "unit 1 stays";
	ASSERT_EQ(run("dd if=" + u.path + " of=/tmp/wb.out bs=64k count=1 iflag=direct "
		      "status=none && cmp -n 65536 /tmp/wb.in /tmp/wb.out").status, 0);
	destroy(u);
}

// "idle N" (zram's, by age): pages written 8 s ago are idle at 5 s, pages
// written just now (up to 3 s on a loaded host) are not, nor one of the old ones read just now; a
// larger age unmarks what "all" marked; 0 marks every page, as "all".
// What writeback idle then takes says which pages were marked.
TEST(Swapdev, IdleByAgeMarksOnlyPagesNotTouchedSince)
{
	auto disk = backing_disk(256);
	ASSERT_FALSE(disk.empty()) << "no block device to write back to";
	auto d = create_wb("4M", "4k", disk);
	auto dir = wb_dir(d);
	auto id = std::to_string(d.id);
	auto text = zbatch::generate(zbatch::Pattern::Text, 16 * 4096, 11);
	{
		std::ofstream f("/tmp/age.in", std::ios::binary);
		f.write(reinterpret_cast<const char *>(text.data()), text.size());
	}
	// pages 0-7 now, 8-15 eight seconds later (to the second: 7 at least)
	ASSERT_EQ(run("dd if=/tmp/age.in of=" + d.path + " bs=32k count=1 oflag=direct "
		      "status=none").status, 0);
	sleep(8);
	ASSERT_EQ(run("dd if=/tmp/age.in of=" + d.path + " bs=32k skip=1 seek=1 count=1 "
		      "oflag=direct status=none").status, 0);
	ASSERT_EQ(run("dd if=" + d.path + " of=/dev/null bs=4k skip=2 count=1 iflag=direct "
		      "status=none").status, 0);
	auto aged = run(kCli + " --json dev idle " + id + " --age 5");
	ASSERT_EQ(aged.status, 0) << aged.output;
	EXPECT_NE(aged.output.find("\"age_s\": 5"), std::string::npos) << aged.output;
	ASSERT_EQ(run(kCli + " dev writeback " + id + " idle").status, 0);
	EXPECT_EQ(info(d).bd_writes, 7u) << "pages 0-7 but page 2 (read since)";
	// every page idle, then an age no page has: none is
	ASSERT_EQ(run(kCli + " dev idle " + id).status, 0);
	auto none = run(kCli + " dev idle " + id + " --age 3600");
	ASSERT_EQ(none.status, 0) << none.output;
	EXPECT_NE(none.output.find("not written or read in the last 3600 s"), std::string::npos)
		<< none.output;
	ASSERT_EQ(run(kCli + " dev writeback " + id + " idle").status, 0);
	EXPECT_EQ(info(d).bd_writes, 7u) << "idle 3600 left marks of idle all";
	EXPECT_EQ(sysfs_write(dir + "/idle", "0"), 0);
	ASSERT_EQ(run(kCli + " dev writeback " + id + " idle").status, 0);
	EXPECT_EQ(info(d).bd_writes, 16u) << "idle 0: every page";
	auto bad = run(kCli + " dev idle " + id + " --age -5");
	EXPECT_NE(bad.status, 0);
	EXPECT_EQ(sysfs_write(dir + "/idle", "0x10"), 0) << "zram's parse: any base";
	ASSERT_EQ(run("dd if=" + d.path + " of=/tmp/age.out bs=64k count=1 iflag=direct "
		      "status=none && cmp /tmp/age.in /tmp/age.out").status, 0)
		<< "written-back pages did not read back";
	destroy(d);
}

// A writeback that takes seconds (a backing device completing each I/O
// after 200 ms: null_blk) does not hold up a suspend: the freezer's test
// mode ("freezer": freeze every task, wait 1 s, thaw) with a 2 s timeout
// succeeds while it runs (the run ends between batches and its write is
// restarted after the thaw), and the restarted write finishes the job:
// every page written back, pages read back from the disk. Without the signal
// check the freeze fails (EBUSY: a task refused to freeze).
TEST(Swapdev, ASuspendDoesNotWaitForAWriteback)
{
	if (access("/sys/power/pm_test", W_OK))
		GTEST_SKIP() << "no /sys/power/pm_test (CONFIG_PM_DEBUG off): cannot freeze";
	NullBlk nb("zbwbslow", {{"memory_backed", "1"}, {"size", "64"}, {"blocksize", "4096"},
				{"irqmode", "2"}, {"completion_nsec", "200000000"}});
	if (!nb.available())
		GTEST_SKIP() << "no null_blk with configfs in this kernel (the debug kernel "
				"builds only its guests' modules): no slow disk to test with";
	ASSERT_TRUE(nb.ok()) << nb.error();
	{
		auto d = create_wb("32M", "4k", "/dev/zbwbslow");
		auto text = zbatch::generate(zbatch::Pattern::Text, 8 << 20, 17);
		{
			std::ofstream f("/tmp/frz.in", std::ios::binary);
			f.write(reinterpret_cast<const char *>(text.data()), text.size());
		}
		ASSERT_EQ(run("dd if=/tmp/frz.in of=" + d.path + " bs=64k oflag=direct "
			      "status=none").status, 0);
		ASSERT_EQ(sysfs_write(wb_dir(d) + "/idle", "all"), 0);
		int wb_err = -1;
		auto t0 = std::chrono::steady_clock::now();
		std::thread wb([&] { wb_err = sysfs_write(wb_dir(d) + "/writeback", "idle"); });
		std::this_thread::sleep_for(std::chrono::milliseconds(500));
		int frz = pm_test_freeze();
		wb.join();
		double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
				   .count();
		std::cout << "writeback of 2048 pages took " << s << " s across the freeze\n";
		EXPECT_EQ(frz, 0) << "the freeze failed (EBUSY: the writeback refused to freeze)";
		EXPECT_EQ(wb_err, 0) << "the restarted writeback failed";
		EXPECT_GT(s, 2.5) << "the writeback was too short to test the freeze";
		EXPECT_EQ(info(d).bd_count, 2048u) << "the restarted write left pages behind";
		// 200 ms a read too: the first and the last 256 KiB
		ASSERT_EQ(run("dd if=" + d.path + " of=/tmp/frz.out bs=256k count=1 iflag=direct "
			      "status=none && cmp -n 262144 /tmp/frz.in /tmp/frz.out && "
			      "dd if=" + d.path + " of=/tmp/frz.out bs=256k skip=31 count=1 "
			      "iflag=direct status=none && tail -c 262144 /tmp/frz.in | "
			      "cmp - /tmp/frz.out").status, 0)
			<< "written-back pages did not read back";
		destroy(d);
	}
}

// A writeback batch's bios are in flight together: on a backing device
// that completes each I/O 200 ms after it came (null_blk) and holds 256
// blocks, every page written back once (contiguous blocks: a bio a
// batch; then nothing is left to write: 0, not ENOSPC), then the even
// pages rewritten (their blocks freed) and written back again, into the
// freed blocks 0, 2, 4, ...: 128 pages in 2 batches of 64 one-page bios.
// One after another they take 25.6 s; together, a few I/O times. Every
// page reads back (from the disk); with the disk full again, a page that
// could go makes writeback's answer ENOSPC.
TEST(Swapdev, AWritebackBatchWritesItsBiosTogether)
{
	NullBlk nb("zbwbscatter", {{"memory_backed", "1"}, {"size", "1"}, {"blocksize", "4096"},
				   {"irqmode", "2"}, {"completion_nsec", "200000000"}});
	if (!nb.available())
		GTEST_SKIP() << "no null_blk with configfs in this kernel (the debug kernel "
				"builds only its guests' modules): no slow disk to test with";
	ASSERT_TRUE(nb.ok()) << nb.error();
	auto d = create_wb("4M", "4k", "/dev/zbwbscatter");
	auto dir = wb_dir(d);
	auto text = zbatch::generate(zbatch::Pattern::Text, 256 * 4096, 23);
	auto second = zbatch::generate(zbatch::Pattern::Text, 256 * 4096, 24);
	int fd = open(d.path.c_str(), O_RDWR | O_DIRECT);
	ASSERT_GE(fd, 0);
	void *buf = aligned_alloc(4096, 256 * 4096);
	memcpy(buf, text.data(), 256 * 4096);
	ASSERT_EQ(pwrite(fd, buf, 256 * 4096, 0), 256 * 4096);
	ASSERT_EQ(sysfs_write(dir + "/idle", "all"), 0);
	// the disk full, nothing else to write: done, not ENOSPC
	ASSERT_EQ(sysfs_write(dir + "/writeback", "idle"), 0);
	ASSERT_EQ(info(d).bd_count, 256u) << "the disk's 256 blocks, all written";
	auto *p = static_cast<char *>(buf);
	for (unsigned int i = 0; i < 256; i += 2) {
		memcpy(p + i * 4096, second.data() + i * 4096, 4096);
		ASSERT_EQ(pwrite(fd, p + i * 4096, 4096, i * 4096), 4096);
	}
	ASSERT_EQ(sysfs_write(dir + "/idle", "all"), 0);
	auto t0 = std::chrono::steady_clock::now();
	ASSERT_EQ(sysfs_write(dir + "/writeback", "idle"), 0);
	double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	std::cout << "writeback of 128 pages into scattered blocks took " << s << " s\n";
	EXPECT_EQ(info(d).bd_count, 256u);
	EXPECT_EQ(info(d).bd_writes, 384u);
	EXPECT_LT(s, 6.0) << "the bios of a batch were written one after another "
			     "(2 batches of 64 one-page bios at 200 ms an I/O: 25.6 s)";
	void *got = aligned_alloc(4096, 256 * 4096);
	ASSERT_EQ(pread(fd, got, 256 * 4096, 0), 256 * 4096);
	EXPECT_EQ(memcmp(got, buf, 256 * 4096), 0) << "written-back pages did not read back";
	// full again, and a page that could go: ENOSPC
	ASSERT_EQ(pwrite(fd, buf, 4096, 300 * 4096), 4096);
	ASSERT_EQ(sysfs_write(dir + "/idle", "all"), 0);
	EXPECT_EQ(sysfs_write(dir + "/writeback", "idle"), ENOSPC);
	close(fd);
	free(buf);
	free(got);
	destroy(d);
}

// A backing device of one block, a read of a written-back page held in
// its I/O for 300 ms (debugfs fault_bd_read_delay_ms), and meanwhile the
// page rewritten (its block freed) and another page written back, which
// can only take that block: it must wait until the read is done, so the
// read returns the page's old or new contents, never the other page's.
TEST(Swapdev, WritebackNeverReusesABlockUnderARead)
{
	auto disk = backing_disk(4);	/* one block */
	ASSERT_FALSE(disk.empty()) << "no block device to write back to";
	auto d = create_wb("1M", "4k", disk);
	auto dir = wb_dir(d);
	int fd = open(d.path.c_str(), O_RDWR | O_DIRECT);
	ASSERT_GE(fd, 0);
	auto page = [](char c) {
		void *p = aligned_alloc(4096, 4096);
		memset(p, c, 4096);
		reinterpret_cast<char *>(p)[100] = 'x';		/* not same-filled */
		return static_cast<char *>(p);
	};
	char *a = page('A'), *b = page('B'), *c = page('C'), *got = page(0), *got2 = page(0);
	ASSERT_EQ(pwrite(fd, a, 4096, 0), 4096);
	ASSERT_EQ(pwrite(fd, b, 4096, 4096), 4096);
	ASSERT_EQ(sysfs_write(dir + "/writeback", "page_index=0"), 0);
	ASSERT_EQ(info(d).bd_count, 1u);
	ASSERT_EQ(sysfs_write(kDbg + "/fault_bd_read_delay_ms", "300"), 0);
	std::thread reader([&] { EXPECT_EQ(pread(fd, got, 4096, 0), 4096); });
	usleep(100 * 1000);	/* the read waits in its I/O */
	EXPECT_EQ(pwrite(fd, c, 4096, 0), 4096);	/* its block is freed */
	EXPECT_EQ(sysfs_write(dir + "/writeback", "page_index=1"), 0);	/* the only block */
	reader.join();
	sysfs_write(kDbg + "/fault_bd_read_delay_ms", "0");
	EXPECT_TRUE(!memcmp(got, a, 4096) || !memcmp(got, c, 4096))
		<< "the read of page 0 returned '" << got[0] << "' (page 1 is 'B')";
	ASSERT_EQ(pread(fd, got, 4096, 0), 4096);
	ASSERT_EQ(pread(fd, got2, 4096, 4096), 4096);
	EXPECT_EQ(memcmp(got, c, 4096), 0);
	EXPECT_EQ(memcmp(got2, b, 4096), 0);
	EXPECT_EQ(info(d).bd_count, 1u) << "page 1 is on the disk";
	close(fd);
	for (char *p : {a, b, c, got, got2})
		free(p);
	destroy(d);
}

// Recompression as an operator sets it up, through the CLI: a device made
// with a secondary codec and a background budget (dev list shows both),
// real data swapped out with lz4 in 64K folios, every page recompressed
// with zstd by dev recompress (some shrink: recomp_stat's recompressed in
// dev list --json), then every byte swapped back in, the recompressed
// pages through the secondary codec. (What the kernel refuses, saves and
// costs: SwapdevRecompress.)
TEST(Swapdev, RecompressThroughTheCli)
{
	auto c = run(kCli + " --json dev create --size 256M --codec lz4 --unit 16k "
			    "--recomp-algorithm zstd --recomp-budget 10 --recomp-interval 5");
	ASSERT_EQ(c.status, 0) << c.output;
	Dev d;
	d.id = zbatch::Json::parse(c.output)["id"];
	d.path = "/dev/zbatchswap" + std::to_string(d.id);
	const std::string id = std::to_string(d.id);
	auto list = run(kCli + " dev list");
	EXPECT_NE(list.output.find("recompression with zstd, background 10% of a CPU every 5 s"),
		  std::string::npos) << list.output;
	swapon(d);
	zbatch::Json rc, listed;
	auto cfg = pageout(16, zbatch::Pattern::Real, "64kB");
	cfg.passes = 1;
	cfg.between = [&]() -> zbatch::Result<void> {
		auto r = run(kCli + " --json dev recompress " + id);
		if (r.status)
			return zbatch::fail(EIO, "dev recompress: " + r.output);
		rc = zbatch::Json::parse(r.output, nullptr, false);
		auto l = run(kCli + " --json dev list");
		for (const auto &j : zbatch::Json::parse(l.output, nullptr, false))
			if (j.is_object() && j["id"] == d.id)
				listed = j;
		return {};
	};
	zbatch::SwapdevInfo after;
	auto w = swap_through(d, cfg, &after);
	ASSERT_TRUE(w) << w.error().message;
	EXPECT_EQ(w->bad_bytes, 0u) << "recompressed pages did not read back";
	zbatch::Json shown = zbatch::Json::object();
	for (const auto &[k, v] : listed.items())
		if (k.starts_with("recomp_"))
			shown[k] = v;
	std::cout << "dev recompress: " << rc.dump() << "\ndev list: " << shown.dump()
		  << "\nsecondary reads: " << us(after, "secondary_reads") << "\n";
	ASSERT_TRUE(listed.is_object()) << "the device not in dev list --json";
	ASSERT_TRUE(rc.is_object()) << "dev recompress --json printed no JSON object";
	EXPECT_EQ(listed["recomp_algorithm"], "zstd") << listed;
	EXPECT_EQ(listed["recomp_budget"], 10) << listed;
	EXPECT_EQ(listed["recomp_interval"], 5) << listed;
	EXPECT_GT(listed["recomp_recompressed"].get<int64_t>(), 0) << listed;
	EXPECT_GT(listed["recomp_saved_bytes"].get<int64_t>(), 0) << listed;
	EXPECT_GT(rc.value("tried", 0), 0) << rc;
	EXPECT_GT(us(after, "secondary_reads"), 0) << "nothing read through the secondary codec";
	EXPECT_EQ(after.failed_reads + after.failed_writes, 0u);
}

// Compression levels (algorithm_params, as zram's): what a device accepts
// and refuses before it is sized, and that the level reaches the codec:
// the same real data stores smaller at zstd level 9 than at -5, every byte
// read back. (That engines and the inline path both apply it, byte for
// byte: the self-test level_reaches_engines_and_inline_path_*.)
TEST(Swapdev, CompressionLevelsReachTheCodec)
{
	auto id = sysfs_read(kSys + "/swapdev/hot_add");
	ASSERT_EQ(id.find('<'), std::string::npos) << id;
	const std::string dir = "/sys/block/zbatchswap" + std::to_string(std::stoi(id)) +
				"/zbatch/";
	const std::string ap = dir + "algorithm_params";
	EXPECT_EQ(sysfs_read(ap), "algo=lz4 level=0");
	EXPECT_EQ(sysfs_write(ap, "level=8"), 0) << "lz4's acceleration";
	EXPECT_EQ(sysfs_write(dir + "codec", "zstd"), 0);
	EXPECT_EQ(sysfs_read(ap), "algo=zstd level=0") << "a new codec starts at its default";
	EXPECT_EQ(sysfs_write(ap, "level=5"), 0);
	EXPECT_EQ(sysfs_write(dir + "codec", "zstd"), 0);
	EXPECT_EQ(sysfs_read(ap), "algo=zstd level=0") << "writing the codec resets the level";
	EXPECT_EQ(sysfs_write(ap, "algo=zstd level=19"), 0);
	EXPECT_EQ(sysfs_read(ap), "algo=zstd level=19");
	EXPECT_EQ(sysfs_write(ap, "level=23"), ERANGE);
	EXPECT_EQ(sysfs_write(ap, "algo=lz4 level=3"), EINVAL) << "not the device's codec";
	EXPECT_EQ(sysfs_write(ap, "priority=1 level=3"), EINVAL) << "no secondary codec";
	EXPECT_EQ(sysfs_write(ap, "dict=/etc/zbatch/zstd.dict"), EOPNOTSUPP);
	EXPECT_EQ(sysfs_write(ap, "algo=zstd"), EINVAL) << "nothing to set";
	EXPECT_EQ(sysfs_write(ap, "level"), EINVAL);
	EXPECT_EQ(sysfs_write(dir + "unit", "64k"), 0);
	EXPECT_EQ(sysfs_write(ap, "level=9"), E2BIG) << "level 9's tables for 64 KiB";
	// a level set for 16k units, then 64k units: refused when sized
	EXPECT_EQ(sysfs_write(dir + "unit", "16k"), 0);
	EXPECT_EQ(sysfs_write(ap, "level=9"), 0);
	EXPECT_EQ(sysfs_write(dir + "unit", "64k"), 0);
	EXPECT_EQ(sysfs_write(dir + "disksize", "16M"), E2BIG);
	EXPECT_EQ(sysfs_read(dir + "disksize"), "0");
	EXPECT_EQ(sysfs_write(dir + "unit", "16k"), 0);
	EXPECT_EQ(sysfs_write(dir + "disksize", "16M"), 0);
	EXPECT_EQ(sysfs_write(ap, "level=3"), EBUSY) << "fixed once sized";
	EXPECT_EQ(sysfs_write(kSys + "/swapdev/hot_remove", std::to_string(std::stoi(id))), 0);

	auto big = run(kCli + " dev create --size 64M --codec zstd --unit 64k --level 9");
	EXPECT_EQ(big.status, 1);
	EXPECT_NE(big.output.find("larger tables than 64k units allow"), std::string::npos)
		<< big.output;

	std::map<int, uint64_t> compr;
	for (int level : {-5, 9}) {
		auto r = run(kCli + " --json dev create --size 256M --codec zstd --unit 16k --level " +
			     std::to_string(level));
		ASSERT_EQ(r.status, 0) << r.output;
		Dev d;
		d.id = std::stoi(r.output.substr(r.output.find("\"id\": ") + 6));
		d.path = "/dev/zbatchswap" + std::to_string(d.id);
		EXPECT_EQ(info(d).level, level);
		swapon(d);
		auto cfg = pageout(8, zbatch::Pattern::Real, "64kB");
		cfg.passes = 1;
		zbatch::SwapdevInfo mid;
		cfg.between = [&]() -> zbatch::Result<void> {
			mid = info(d);
			return {};
		};
		auto w = swap_through(d, cfg);
		ASSERT_TRUE(w) << w.error().message;
		EXPECT_EQ(w->bad_bytes, 0u) << "level " << level;
		EXPECT_GT(mid.orig_bytes, 12ull << 20) << "level " << level << ": not swapped out";
		EXPECT_EQ(mid.failed_writes + mid.failed_reads, 0u);
		// per byte stored: the two runs may swap out slightly different amounts
		compr[level] = mid.compr_bytes * 1000 / std::max<uint64_t>(mid.orig_bytes, 1);
	}
	std::printf("per mille stored: zstd -5 %llu, 9 %llu\n",
		    static_cast<unsigned long long>(compr[-5]),
		    static_cast<unsigned long long>(compr[9]));
	// on the real-data mix, 16 KiB blocks: zstd -5 about 2.0x, 9 about 3.0x
	EXPECT_LT(compr[9] * 100, compr[-5] * 95)
		<< "per mille stored: level 9 " << compr[9] << ", level -5 " << compr[-5];
}

// zbatch stats --prometheus on the real module and a device with data:
// the text exposition format line by line (a family's HELP and TYPE before
// its samples, each sample a name, labels and a number), and the values
// the device's own files give. (Prometheus's parser reads it on the host:
// tests/metrics; Python in a guest may block on its entropy pool.)
TEST(Swapdev, PrometheusMetricsOfTheModuleAndADevice)
{
	auto d = create("64M", kCodec, "16k");
	const std::string dev = "zbatchswap" + std::to_string(d.id);
	auto w = run("dd if=" + std::string(ZBATCH_CLI) + " of=" + d.path +
		     " bs=64k count=32 oflag=direct 2>&1");
	ASSERT_EQ(w.status, 0) << w.output;
	const std::string file = "/tmp/zbatch-metrics/zbatch.prom";
	ASSERT_EQ(run("mkdir -p /tmp/zbatch-metrics").status, 0);
	auto r = run(kCli + " stats --prometheus --output " + file);
	ASSERT_EQ(r.status, 0) << r.output;
	std::ifstream in(file);
	std::string line, text;
	std::set<std::string> typed;
	std::map<std::string, double> value;
	const std::regex sample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? ([-+0-9.eE]+|\+Inf)$)");
	while (std::getline(in, line)) {
		text += line + "\n";
		std::smatch m;
		if (line.rfind("# HELP ", 0) == 0)
			continue;
		if (line.rfind("# TYPE ", 0) == 0) {
			std::istringstream t(line.substr(7));
			std::string name, type;
			t >> name >> type;
			EXPECT_TRUE(typed.insert(name).second) << "TYPE twice: " << name;
			EXPECT_TRUE(type == "counter" || type == "gauge" || type == "histogram" ||
				    type == "summary") << line;
			continue;
		}
		ASSERT_TRUE(std::regex_match(line, m, sample)) << "not a sample: " << line;
		std::string fam = m[1];
		for (const char *suffix : {"_bucket", "_sum", "_count"})
			if (!typed.count(fam) && fam.ends_with(suffix))
				fam = fam.substr(0, fam.size() - strlen(suffix));
		EXPECT_TRUE(typed.count(fam)) << "sample before its TYPE: " << line;
		value[m[1].str() + m[2].str()] = std::stod(m[4]);
	}
	EXPECT_EQ(value["zbatch_module_loaded"], 1) << text;
	EXPECT_EQ(value["zbatch_swapdev_info{device=\"" + dev + "\",codec=\"" + kCodec +
			"\",level=\"0\",unit=\"16k\",recomp_codec=\"\",recomp_level=\"0\"}"], 1)
		<< text;
	EXPECT_EQ(value["zbatch_swapdev_disksize_bytes{device=\"" + dev + "\"}"], 64 << 20);
	auto i = info(d);
	EXPECT_GT(i.orig_bytes, 0u);
	EXPECT_EQ(value["zbatch_swapdev_orig_data_bytes{device=\"" + dev + "\"}"],
		  static_cast<double>(i.orig_bytes)) << text;
	EXPECT_EQ(value["zbatch_swapdev_swap_active{device=\"" + dev + "\"}"], 0);
	EXPECT_GT(value["zbatch_requests_total{op=\"compress\"}"], 0) << text;
	EXPECT_GT(value["zbatch_batch_requests_count"], 0) << text;
	EXPECT_TRUE(value.count("zbatch_engine_cpu_seconds_total")) << text;
	destroy(d);
	run("rm -rf /tmp/zbatch-metrics");
}

// Faults on the engines that run the device's batches (debugfs devN/wqM/
// fault), allocations that fail (fault_nomem: the shared pool of
// submitter contexts, which the device never uses, its CPUs' streams
// come with their own; fault_swap_alloc: the device's allocations without
// direct reclaim, which then reserve with it), under a swap workload with
// 16K units and mTHP: every byte comes back, nothing fails a swap-out or
// a swap-in, the errors are counted.
class SwapdevFault : public ::testing::TestWithParam<std::string> {};

TEST_P(SwapdevFault, SwapWorkloadLosesNothing)
{
	const std::string f = GetParam();
	// the faults are the software engines': a codec they run
	auto d = create("256M", "lz4", "16k");
	swapon(d);
	auto stats = [] { return zbatch::parse_kv(sysfs_read(kDbg + "/stats")); };
	auto s0 = stats();
	// every descriptor to the engines, except for the allocation faults:
	// the submitter's own share is where it uses its context
	// "alloc random": units that save no page, stored page by page in a
	// second batch, under the same allocation faults (the write's retry
	// must meet the same lengths); "alloc real": real data, some of whose
	// units fall back with pages their attempt already decided (kept:
	// raw, or the first page as lz4 coded it), retried after stalls too.
	// "status 0x0a 0x19 4": 1 descriptor in 4 says its output overflowed
	// without running: units fall back with nothing known of their pages
	bool random = f == "alloc random", real = f == "alloc real";
	bool alloc = f == "nomem" || f == "alloc" || random || real;
	ASSERT_EQ(sysfs_write(kDbg + "/handoff", alloc ? "auto" : "always"), 0);
	if (f == "nomem")
		ASSERT_EQ(sysfs_write(kDbg + "/fault_nomem", "3"), 0);
	else if (f == "alloc" || random || real)
		ASSERT_EQ(sysfs_write(kDbg + "/fault_swap_alloc", "3"), 0);
	else
		ASSERT_EQ(sysfs_write(kDbg + "/dev0/wq0/fault", f), 0);
	auto r = zbatch::run_workload(pageout(24,
					      random ? zbatch::Pattern::Random :
					      real   ? zbatch::Pattern::Real :
						       zbatch::Pattern::Mixed,
					      "64kB"));
	sysfs_write(kDbg + "/dev0/wq0/fault", "none");
	sysfs_write(kDbg + "/fault_nomem", "0");
	sysfs_write(kDbg + "/fault_swap_alloc", "0");
	sysfs_write(kDbg + "/handoff", "auto");
	sysfs_write(kSys + "/dev0/wq0/enabled", "1");
	auto i = info(d);
	swapoff(d);
	destroy(d);
	auto s1 = stats();
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u) << f;
	EXPECT_EQ(i.failed_reads + i.failed_writes, 0u) << f;
	if (f == "full") {
		EXPECT_GT(s1["enqueue_retries"] - s0["enqueue_retries"], 0);
	} else if (f == "nomem") {
		EXPECT_EQ(us(i, "comp_errors") + us(i, "decomp_redone"), 0)
			<< "the device used a context from the shared pool";
	} else if (f == "alloc" || random || real) {
		EXPECT_GT(us(i, "write_stalls"), 0) << "no store took the slow path";
		// lz4 in software: a retry gives what the first try gave
		EXPECT_EQ(us(i, "reserve_misses"), 0) << "a retried store missed its reserve";
		if (random || real) {
			EXPECT_GT(us(i, "unit_fallbacks"), 0) << "no unit was stored page by page";
		}
		if (real) {
			EXPECT_GT(us(i, "fallback_pages_kept"), 0) << "no page kept";
		}
	} else if (f == "status 0x0a 0x19 4") {
		EXPECT_GT(us(i, "unit_fallbacks"), 0) << "no injected overflow met a unit";
	} else {
		EXPECT_GT(s1["device_errors"] - s0["device_errors"], 0) << f;
	}
}

INSTANTIATE_TEST_SUITE_P(Faults, SwapdevFault,
			 ::testing::Values("status 0x04 0 4", "status 0x20 0 4", "status 0x0a 0x05 4",
					   "status 0x0a 0x19 4", "corrupt 4", "full", "nomem", "alloc",
					   "alloc random", "alloc real"),
			 [](const auto &info) {
				 std::string n;
				 for (char c : info.param)
					 n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
				 return n;
			 });

namespace {

// Each engine thread's allowed CPUs (/proc/PID/status) by its name
// ("zbatch/D.I"), and the CPU debugfs says it runs on ("D.I" -> cpu).
std::map<std::string, std::string> engine_affinity()
{
	std::map<std::string, std::string> out;
	DIR *d = opendir("/proc");
	if (!d)
		return out;
	while (auto *e = readdir(d)) {
		std::string pid = e->d_name;
		if (pid.find_first_not_of("0123456789") != std::string::npos)
			continue;
		std::ifstream f("/proc/" + pid + "/status");
		std::string line, name, allowed;
		while (std::getline(f, line)) {
			if (line.rfind("Name:\t", 0) == 0)
				name = line.substr(6);
			else if (line.rfind("Cpus_allowed_list:\t", 0) == 0)
				allowed = line.substr(19);
		}
		if (name.rfind("zbatch/", 0) == 0)
			out[name.substr(7)] = allowed;
	}
	closedir(d);
	return out;
}

// Each engine's CPU now and its home (debugfs engines: first and last field).
struct EnginePlace {
	std::string cpu, home;
	bool operator==(const EnginePlace &) const = default;
};
std::map<std::string, EnginePlace> engine_cpus()
{
	std::map<std::string, EnginePlace> out;
	std::istringstream s(sysfs_read(kDbg + "/engines"));
	for (std::string line; std::getline(s, line);) {
		std::istringstream l(line);
		std::vector<std::string> f{std::istream_iterator<std::string>(l), {}};
		if (f.size() == 7 && f[0].find('.') != std::string::npos)
			out[f[0]] = {f[1], f[6]};
	}
	return out;
}

bool cpu_is_online(const std::string &cpu)
{
	if (cpu == "0")
		return true;
	return sysfs_read("/sys/devices/system/cpu/cpu" + cpu + "/online").rfind('1', 0) == 0;
}

int cpu_online(int cpu, bool on)
{
	return sysfs_write("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online",
			   on ? "1" : "0");
}

} // namespace

// CPU 1 taken offline and brought back five times while the swap device
// swaps (16K units, 64K mTHP) and /dev/zbatch round-trips batches, every
// descriptor through the engines: every byte comes back, and each engine
// ends on the CPU it was placed on, its affinity that CPU alone (it used
// to keep the any-CPU affinity the scheduler gave it when its CPU went).
// An engine whose home is offline (the swapdev-iaa tier runs with CPUs 2
// and 3 offline: their engines moved to CPUs 0 and 1) is pinned to an
// online CPU: when CPU 1 went, two engines had only CPU 0 left, and the
// second used to be left to the scheduler, unpinned, its CPU stale.
TEST(Swapdev, EnginesFollowCpuHotplugUnderLoad)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 ||
	    access("/sys/devices/system/cpu/cpu1/online", W_OK))
		GTEST_SKIP() << "CPU 1 cannot be taken offline here";
	auto before = engine_cpus();
	ASSERT_FALSE(before.empty()) << "debugfs engines lists no engine (format changed?)";
	auto d = create("256M", "lz4", "16k");
	swapon(d);
	ASSERT_EQ(sysfs_write(kDbg + "/handoff", "always"), 0);
	std::atomic<bool> done{false};
	std::atomic<int> bad{0}, batches{0};
	zbatch::Result<zbatch::WorkloadResult> r = zbatch::fail(EINVAL, "not run");
	std::thread swap([&] {
		r = zbatch::run_workload(pageout(24, zbatch::Pattern::Mixed, "64kB"));
		done = true;
	});
	std::thread dev([&] {
		auto z = zbatch::Device::open();
		if (!z) {
			bad++;
			return;
		}
		for (uint64_t seed = 0; !done; seed++) {
			std::vector<std::vector<uint8_t>> in(16), cmp(16, std::vector<uint8_t>(4200)),
				out(16, std::vector<uint8_t>(4096));
			std::vector<zbatch::Request> c(16), x(16);
			for (int i = 0; i < 16; i++) {
				in[i] = zbatch::generate(zbatch::Pattern::Text, 4096, seed * 16 + i);
				c[i] = {in[i], cmp[i]};
			}
			if (!z->submit(ZBATCH_OP_COMPRESS, ZBATCH_CODEC_LZ4, c)) {
				bad++;
				continue;
			}
			for (int i = 0; i < 16; i++)
				x[i] = {std::span<const uint8_t>(cmp[i].data(), c[i].produced), out[i]};
			if (!z->submit(ZBATCH_OP_DECOMPRESS, ZBATCH_CODEC_LZ4, x)) {
				bad++;
				continue;
			}
			for (int i = 0; i < 16; i++)
				bad += c[i].status || x[i].status || out[i] != in[i];
			batches++;
		}
	});
	int cycles = 0;
	for (; cycles < 5 && !done; cycles++) {
		EXPECT_EQ(cpu_online(1, false), 0);
		usleep(300000);
		EXPECT_EQ(cpu_online(1, true), 0);
		usleep(300000);
	}
	swap.join();
	dev.join();
	sysfs_write(kDbg + "/handoff", "auto");
	EXPECT_EQ(cpu_online(1, true), 0) << "CPU 1 not brought back";
	swapoff(d);
	destroy(d);
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u);
	EXPECT_EQ(bad, 0) << "/dev/zbatch batches that failed or came back wrong";
	EXPECT_GT(batches, 0);
	EXPECT_GT(cycles, 0) << "the workload ended before CPU 1 went offline once";
	auto after = engine_cpus();
	auto aff = engine_affinity();
	ASSERT_EQ(after.size(), before.size());
	for (auto &[id, e] : after) {
		EXPECT_EQ(e.home, before[id].home) << "engine " << id;
		if (cpu_is_online(e.home))
			EXPECT_EQ(e.cpu, e.home) << "engine " << id << " not back on its CPU";
		else
			EXPECT_TRUE(cpu_is_online(e.cpu)) << "engine " << id << " on offline CPU " << e.cpu;
		EXPECT_EQ(aff[id], e.cpu) << "engine " << id << " affinity after hotplug";
	}
}
