// SPDX-License-Identifier: GPL-2.0
// Recompression of the swap device (kmod/swapdev_recomp.c) in the guest,
// through its sysfs files: what it refuses, what it saves on real data and
// that every page reads back, incompressible pages written back, and the
// background thread keeping its CPU budget. The model checker's side
// (recompression racing with every other op) is ModelRecompress.
#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "vm_util.hpp"
#include "zbatch/pattern.hpp"
#include "zbatch/workload.hpp"

using namespace vmtest;

namespace {

// A device made through sysfs, removed at the end.
struct RcDev {
	int id = -1;
	std::string dir, path;

	RcDev(const std::string &unit, const std::string &codec, const std::string &secondary,
	      const std::string &backing = "", const std::string &size = "32M")
	{
		id = std::stoi(sysfs_read(kSys + "/swapdev/hot_add"));
		dir = "/sys/block/zbatchswap" + std::to_string(id) + "/zbatch";
		path = "/dev/zbatchswap" + std::to_string(id);
		EXPECT_EQ(sysfs_write(dir + "/unit", unit), 0);
		EXPECT_EQ(sysfs_write(dir + "/codec", codec), 0);
		EXPECT_EQ(sysfs_write(dir + "/unit_adapt", "0"), 0);	// units, always
		if (!secondary.empty()) {
			EXPECT_EQ(sysfs_write(dir + "/recomp_algorithm", "algo=" + secondary), 0);
		}
		if (!backing.empty()) {
			EXPECT_EQ(sysfs_write(dir + "/backing_dev", backing), 0);
		}
		EXPECT_EQ(sysfs_write(dir + "/disksize", size), 0);
	}
	RcDev(const RcDev &) = delete;
	~RcDev()
	{
		EXPECT_EQ(sysfs_write(kSys + "/swapdev/hot_remove", std::to_string(id)), 0);
	}
	std::vector<uint64_t> nums(const std::string &file) const
	{
		std::istringstream in(sysfs_read(dir + "/" + file));
		std::vector<uint64_t> v;
		for (uint64_t x; in >> x;)
			v.push_back(x);
		return v;
	}
	// recomp_stat: stored now, tried, recompressed, incompressible (pages),
	// saved (bytes), CPU (ns)
	std::vector<uint64_t> rs() const { return nums("recomp_stat"); }
	uint64_t compr_bytes() const { return nums("mm_stat").at(1); }
	// pages stored compressed or raw (not same-filled): what may be tried
	uint64_t stored_pages() const
	{
		auto mm = nums("mm_stat");
		return mm.at(0) / 4096 - mm.at(5);
	}
	uint64_t unit_stat(const std::string &k) const
	{
		return static_cast<uint64_t>(zbatch::parse_kv(sysfs_read(dir + "/unit_stat"))[k]);
	}
};

// @data written at @at (the start) of @path with O_DIRECT, 2 MiB at a
// time from a huge page, so that units arrive whole (one multi-page bvec).
void write_thp(const std::string &path, const std::vector<uint8_t> &data, off_t at = 0)
{
	ThpMadvise thp;
	const size_t huge = 2 << 20;
	void *m = mmap(nullptr, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	ASSERT_NE(m, MAP_FAILED);
	auto *p = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(m) + huge - 1) &
					      ~(huge - 1));
	madvise(p, huge, MADV_HUGEPAGE);
	int fd = open(path.c_str(), O_WRONLY | O_DIRECT);
	ASSERT_GE(fd, 0);
	for (size_t off = 0; off < data.size(); off += huge) {
		size_t n = std::min(huge, data.size() - off);
		memcpy(p, data.data() + off, n);
		EXPECT_EQ(pwrite(fd, p, n, at + static_cast<off_t>(off)), static_cast<ssize_t>(n));
	}
	close(fd);
	munmap(m, 2 * huge);
}

// Whether @path's first bytes are @data (read with O_DIRECT, 64 KiB I/Os,
// compared in memory: no copy in the guest's tmpfs, which a debug
// kernel's small guest cannot spare for 64 MiB).
bool reads_back(const std::string &path, const std::vector<uint8_t> &data)
{
	const size_t chunk = 64 << 10;
	int fd = open(path.c_str(), O_RDONLY | O_DIRECT);
	if (fd < 0)
		return false;
	void *buf = nullptr;
	bool same = posix_memalign(&buf, 4096, chunk) == 0;
	for (size_t off = 0; same && off < data.size(); off += chunk) {
		size_t n = std::min(chunk, data.size() - off);
		same = pread(fd, buf, n, static_cast<off_t>(off)) == static_cast<ssize_t>(n) &&
		       !memcmp(buf, data.data() + off, n);
	}
	free(buf);
	close(fd);
	return same;
}

} // namespace

// What recompression refuses, and why (zram's errors where zram has the
// file); the settings it keeps and shows.
TEST(SwapdevRecompress, RefusalsAndSettings)
{
	{
		RcDev plain("4k", "lz4", "");
		EXPECT_EQ(sysfs_write(plain.dir + "/recompress", "type=idle"), ENODEV)
			<< "no secondary codec";
		EXPECT_EQ(sysfs_write(plain.dir + "/recompress", "algo=zstd"), ENODEV);
		EXPECT_EQ(sysfs_write(plain.dir + "/recomp_budget", "10"), ENODEV)
			<< "a thread with nothing to recompress";
		EXPECT_EQ(sysfs_write(plain.dir + "/recomp_budget", "0"), 0);
		EXPECT_EQ(sysfs_read(plain.dir + "/recomp_algorithm"), "");
		EXPECT_EQ(sysfs_write(plain.dir + "/recomp_algorithm", "algo=zstd"), EBUSY)
			<< "after disksize";
		EXPECT_EQ(sysfs_write(plain.dir + "/algorithm_params", "priority=1 level=3"),
			  EBUSY);
	}
	int id = std::stoi(sysfs_read(kSys + "/swapdev/hot_add"));
	auto dir = "/sys/block/zbatchswap" + std::to_string(id) + "/zbatch";
	EXPECT_EQ(sysfs_write(dir + "/algorithm_params", "priority=1 level=3"), EINVAL)
		<< "no secondary codec to set";
	EXPECT_EQ(sysfs_write(dir + "/recomp_algorithm", "algo=zstd priority=2"), EINVAL)
		<< "one secondary codec";
	EXPECT_EQ(sysfs_write(dir + "/recomp_algorithm", "algo=lz5"), EINVAL);
	EXPECT_EQ(sysfs_write(dir + "/recomp_algorithm", "level=3"), EINVAL) << "no algo";
	EXPECT_EQ(sysfs_write(dir + "/recomp_algorithm", "algo=zstd level=99"), ERANGE);
	EXPECT_EQ(sysfs_write(dir + "/unit", "64k"), 0);
	EXPECT_EQ(sysfs_write(dir + "/recomp_algorithm", "algo=zstd level=9"), E2BIG)
		<< "zstd 9's tables do not fit 64 KiB units";
	EXPECT_EQ(sysfs_write(dir + "/unit", "16k"), 0);
	EXPECT_EQ(sysfs_write(dir + "/recomp_algorithm", "algo=zstd level=9"), 0);
	EXPECT_EQ(sysfs_read(dir + "/recomp_algorithm"), "#1: deflate lz4 [zstd] lzo");
	EXPECT_EQ(sysfs_write(dir + "/algorithm_params", "algo=zstd priority=1 level=5"), 0);
	EXPECT_EQ(sysfs_write(dir + "/algorithm_params", "algo=lz4 priority=1 level=5"), EINVAL)
		<< "lz4 is not the secondary";
	EXPECT_EQ(sysfs_read(dir + "/algorithm_params"),
		  "algo=lz4 level=0\nalgo=zstd level=5 priority=1");
	// a unit changed since: disksize checks the secondary's level again
	EXPECT_EQ(sysfs_write(dir + "/algorithm_params", "priority=1 level=9"), 0);
	EXPECT_EQ(sysfs_write(dir + "/unit", "64k"), 0);
	EXPECT_EQ(sysfs_write(dir + "/disksize", "16M"), E2BIG);
	EXPECT_EQ(sysfs_write(dir + "/unit", "16k"), 0);
	EXPECT_EQ(sysfs_write(dir + "/recompress", "type=idle"), EINVAL) << "before disksize";
	EXPECT_EQ(sysfs_write(dir + "/disksize", "16M"), 0);
	EXPECT_EQ(sysfs_write(dir + "/recomp_algorithm", "algo=deflate"), EBUSY);
	for (const char *bad : {"type=cold", "threshold=4096", "algo=lz4", "priority=2",
				"max_pages=x", "type", "bogus=1"})
		EXPECT_EQ(sysfs_write(dir + "/recompress", bad), EINVAL) << bad;
	EXPECT_EQ(sysfs_write(dir + "/recompress", "type=huge_idle algo=zstd priority=1 "
						   "max_pages=10 threshold=100"), 0);
	EXPECT_EQ(sysfs_read(dir + "/recomp_budget"), "0") << "no background by default";
	EXPECT_EQ(sysfs_read(dir + "/recomp_interval"), "60");
	EXPECT_EQ(sysfs_write(dir + "/recomp_budget", "101"), ERANGE);
	EXPECT_EQ(sysfs_write(dir + "/recomp_interval", "0"), ERANGE);
	EXPECT_EQ(sysfs_write(dir + "/recomp_interval", "86401"), ERANGE);
	EXPECT_EQ(sysfs_write(kSys + "/swapdev/hot_remove", std::to_string(id)), 0);
	// the primary codec at the same level again would shrink nothing: the
	// device refuses to start so; at another level it starts
	id = std::stoi(sysfs_read(kSys + "/swapdev/hot_add"));
	dir = "/sys/block/zbatchswap" + std::to_string(id) + "/zbatch";
	EXPECT_EQ(sysfs_write(dir + "/codec", "zstd"), 0);
	EXPECT_EQ(sysfs_write(dir + "/recomp_algorithm", "algo=zstd"), 0);
	EXPECT_EQ(sysfs_write(dir + "/disksize", "16M"), EINVAL) << "zstd at its default twice";
	EXPECT_EQ(sysfs_write(dir + "/algorithm_params", "priority=1 level=9"), 0);
	EXPECT_EQ(sysfs_write(dir + "/disksize", "16M"), 0);
	EXPECT_EQ(sysfs_write(kSys + "/swapdev/hot_remove", std::to_string(id)), 0);
}

// Real data stored with lz4, recompressed with zstd: the memory stored
// shrinks by exactly what recomp_stat says it saved, every page reads
// back (through the secondary codec), and a second pass tries nothing
// again; 4 KiB pages and 16 KiB units.
TEST(SwapdevRecompress, RealDataShrinksAndReadsBack)
{
	auto data = zbatch::generate(zbatch::Pattern::Real, 4 << 20, 11);
	for (const char *unit : {"4k", "16k"}) {
		SCOPED_TRACE(unit);
		RcDev d(unit, "lz4", "zstd");
		write_thp(d.path, data);
		uint64_t before = d.compr_bytes(), stored = d.stored_pages();
		uint64_t huge = d.nums("mm_stat").at(7), direct = d.unit_stat("direct_reads");
		uint64_t units = d.unit_stat("units");
		ASSERT_EQ(sysfs_write(d.dir + "/recompress", "\n"), 0);
		auto rs = d.rs();
		direct = d.unit_stat("direct_reads") - direct;
		uint64_t after = d.compr_bytes();
		std::cout << unit << ": " << before << " -> " << after << " bytes ("
			  << 100.0 * (before - after) / before << "% saved), recomp_stat "
			  << sysfs_read(d.dir + "/recomp_stat") << "\n";
		RecordProperty(std::string("saved_pct_") + unit,
			       std::to_string(100.0 * (before - after) / before));
		EXPECT_EQ(rs.at(1), stored) << "every page stored (not same-filled) tried once";
		EXPECT_GT(rs.at(2), 512u) << "zstd shrinks most of lz4's real data";
		EXPECT_EQ(rs.at(0), rs.at(2)) << "stored recompressed = recompressed";
		EXPECT_EQ(rs.at(2) + rs.at(3), rs.at(1)) << "each tried page: stored or marked";
		EXPECT_EQ(before - after, rs.at(4)) << "mm_stat and recomp_stat disagree";
		EXPECT_GT(rs.at(5), 0u);
		// its reads decompress straight from zsmalloc (no copy): every
		// compressed page, and every lz4 unit, however many objects it
		// takes (cut between its blocks)
		if (!strcmp(unit, "4k")) {
			EXPECT_EQ(direct, stored - huge) << "pages copied out before decompressing";
		} else {
			EXPECT_GT(units, 200u) << "the data was not stored as units";
			EXPECT_EQ(direct, units + (stored - 4 * units) - huge)
				<< "units or pages copied out before decompressing";
		}
		EXPECT_TRUE(reads_back(d.path, data)) << "recompressed pages did not read back";
		EXPECT_GT(d.unit_stat("secondary_reads"), 0u);
		ASSERT_EQ(sysfs_write(d.dir + "/recompress", "\n"), 0);
		EXPECT_EQ(d.rs().at(1), rs.at(1)) << "a page was tried twice";
		// a page rewritten is the primary's again
		write_thp(d.path, std::vector<uint8_t>(data.begin(), data.begin() + (2 << 20)));
		auto now = d.rs().at(0);
		EXPECT_LT(now, rs.at(0)) << "rewritten pages still counted as recompressed";
		EXPECT_GE(now + 512, rs.at(0));
		EXPECT_TRUE(reads_back(d.path, data));
	}
}

// The scans over a whole device (idle marking, recompression, writeback)
// pass its empty slots without taking their locks
// (zb_slots_next_stored()): pages in runs of every length between holes,
// at the device's first and last pages, across unit boundaries and
// across the end of a recompression batch's scan (ZB_RC_SCAN, 16384
// pages), are each marked, tried and written back, once, and read back.
TEST(SwapdevRecompress, ScansFindEveryPageBetweenHoles)
{
	auto disk = backing_disk(16384);
	ASSERT_FALSE(disk.empty()) << "no block device to write back to";
	// runs of pages: {first page, pages} on a 72 MiB device (18432 pages);
	// 58 pages before the run at 16382, whose first two still fit the
	// first batch's 64: that batch's scan ends at 16384, inside the run
	const std::vector<std::pair<size_t, size_t>> runs = {
		{0, 1}, {2, 2}, {5, 3}, {8, 4}, {13, 1}, {100, 5}, {1000, 16},
		{2047, 1}, {4096, 8}, {8000, 16}, {8191, 1}, {16382, 4}, {16390, 1},
		{18431, 1}};
	std::vector<uint8_t> img(72 << 20);	// what the device holds: zeros elsewhere
	size_t pages = 0;
	for (size_t r = 0; r < runs.size(); r++) {
		auto data = zbatch::generate(zbatch::Pattern::Text, runs[r].second * 4096, 40 + r);
		std::copy(data.begin(), data.end(), img.begin() + runs[r].first * 4096);
		pages += runs[r].second;
	}
	for (const char *unit : {"4k", "16k"}) {
		SCOPED_TRACE(unit);
		RcDev d(unit, "lz4", "zstd", disk, "72M");
		uint64_t units = d.unit_stat("units");
		for (const auto &[first, n] : runs) {
			std::vector<uint8_t> run(img.begin() + first * 4096,
						 img.begin() + (first + n) * 4096);
			write_thp(d.path, run, static_cast<off_t>(first * 4096));
		}
		ASSERT_EQ(d.stored_pages(), pages) << "a page of the runs is not stored";
		if (!strcmp(unit, "16k")) {
			// the 16 KiB-aligned stretches of 4 pages: 8, 100, 1000 (4),
			// 4096 (2), 8000 (4)
			EXPECT_EQ(d.unit_stat("units") - units, 12u) << "runs not stored as units";
		}
		ASSERT_EQ(sysfs_write(d.dir + "/idle", "all"), 0);
		ASSERT_EQ(sysfs_write(d.dir + "/recompress", "type=idle"), 0);
		EXPECT_EQ(d.rs().at(1), pages) << "marked idle and tried: every page, once";
		ASSERT_EQ(sysfs_write(d.dir + "/idle", "all"), 0);	// a run un-marks
		ASSERT_EQ(sysfs_write(d.dir + "/writeback", "idle"), 0);
		EXPECT_EQ(d.nums("bd_stat").at(0), pages) << "written back: every page";
		EXPECT_TRUE(reads_back(d.path, img)) << "a page or a hole read back wrong";
	}
}

// Random pages are stored raw; the secondary codec cannot shrink them
// either: recompression marks them incompressible, tries them no more,
// and "writeback incompressible" moves exactly those to the disk.
TEST(SwapdevRecompress, IncompressiblePagesAreWrittenBack)
{
	auto disk = backing_disk(16384);
	ASSERT_FALSE(disk.empty()) << "no block device to write back to";
	auto data = zbatch::generate(zbatch::Pattern::Text, 1 << 20, 5);
	auto rnd = zbatch::generate(zbatch::Pattern::Random, 256 << 10, 5);
	std::copy(rnd.begin(), rnd.end(), data.begin());   // pages 0-63 random
	RcDev d("4k", "lz4", "zstd", disk);
	write_thp(d.path, data);
	EXPECT_EQ(sysfs_write(d.dir + "/writeback", "incompressible"), 0);
	EXPECT_EQ(d.nums("bd_stat").at(0), 0u) << "nothing was found incompressible yet";
	ASSERT_EQ(sysfs_write(d.dir + "/recompress", "type=huge"), 0);
	auto rs = d.rs();
	EXPECT_EQ(rs.at(1), 64u) << "only the raw pages: type=huge";
	EXPECT_EQ(rs.at(3), 64u) << "zstd shrinks no random page";
	ASSERT_EQ(sysfs_write(d.dir + "/recompress", "\n"), 0);
	EXPECT_EQ(d.rs().at(3), 64u) << "an incompressible page was tried again";
	ASSERT_EQ(sysfs_write(d.dir + "/writeback", "incompressible"), 0);
	EXPECT_EQ(d.nums("bd_stat").at(0), 64u) << "the incompressible pages, and only they";
	EXPECT_TRUE(reads_back(d.path, data));
}

// The background thread (recomp_budget 5, a pass a second): it exists
// only while the budget is set; it gets through the device's pages
// untouched for a second; and the CPU it takes while it works
// (recomp_stat's: its own, its batches run on it) stays within the
// budget.
TEST(SwapdevRecompress, BackgroundKeepsItsBudget)
{
	auto data = zbatch::generate(zbatch::Pattern::Real, 8 << 20, 13);
	RcDev d("4k", "lz4", "zstd");
	write_thp(d.path, data);
	uint64_t stored = d.stored_pages();
	auto comm = "zbatchswap" + std::to_string(d.id) + "-rc";
	auto threads = [&] { return run("grep -lx " + comm + " /proc/[0-9]*/comm").output; };
	// the thread's own CPU time, as the scheduler has it to the ns
	// (/proc/PID/schedstat), beside what recomp_stat counts
	auto sched_ns = [&] {
		auto r = run("cat $(dirname $(grep -lx " + comm + " /proc/[0-9]*/comm))/schedstat");
		return r.status ? 0ull : std::stoull(r.output);
	};
	EXPECT_EQ(threads(), "") << "a thread without a budget";
	ASSERT_EQ(sysfs_write(d.dir + "/recomp_interval", "1"), 0);
	ASSERT_EQ(sysfs_write(d.dir + "/recomp_budget", "5"), 0);
	EXPECT_NE(threads(), "") << "no background thread";
	using clk = std::chrono::steady_clock;
	auto t_first = clk::time_point{}, t_last = t_first;
	uint64_t cpu_first = 0, cpu_last = 0, tried = 0, sched_first = 0, sched_last = 0;
	auto deadline = clk::now() + std::chrono::seconds(120 * slow_factor());
	while (clk::now() < deadline) {
		std::this_thread::sleep_for(std::chrono::milliseconds(250));
		auto rs = d.rs();
		if (rs.at(1) && t_first == clk::time_point{}) {
			t_first = clk::now();
			cpu_first = rs.at(5);
			sched_first = sched_ns();
		}
		if (rs.at(1) > tried) {
			tried = rs.at(1);
			t_last = clk::now();
			cpu_last = rs.at(5);
			sched_last = sched_ns();
		}
		if (tried == stored)
			break;
	}
	ASSERT_EQ(tried, stored) << "the thread did not get through the device";
	double wall = std::chrono::duration<double>(t_last - t_first).count();
	double share = (cpu_last - cpu_first) / 1e9 / wall;
	double sched = (sched_last - sched_first) / 1e9 / wall;
	std::cout << "background: " << (cpu_last - cpu_first) / 1e6 << " ms CPU in " << wall
		  << " s: " << 100 * share << "% of a CPU (budget 5%); the scheduler's "
		  << (sched_last - sched_first) / 1e6 << " ms: " << 100 * sched << "%\n";
	RecordProperty("cpu_share_pct", std::to_string(100 * share));
	RecordProperty("sched_share_pct", std::to_string(100 * sched));
	EXPECT_GT(wall, 1.0) << "the work was too short to measure a share";
	EXPECT_LT(share, 0.05 * 1.5) << "over its budget";
	// its batches run on the thread (no engines): the scheduler's count
	// of its time checks recomp_stat's
	EXPECT_GT(sched_last, sched_first) << "no schedstat for the thread";
	EXPECT_LT(sched, 0.05 * 1.5) << "over its budget by the scheduler's count";
	EXPECT_TRUE(reads_back(d.path, data));
	ASSERT_EQ(sysfs_write(d.dir + "/recomp_budget", "0"), 0);
	EXPECT_EQ(threads(), "") << "the thread outlived its budget";
}

// What a failure costs (Documentation/reliability.md): with 1 in 3 of the
// store's allocations failing (fault_swap_alloc) a run ends with ENOMEM
// and what it did not replace stays as it was; with 1 in 2 secondary
// decompressions failing (fault_swap_secondary) reads of recompressed
// pages fail, counted, and nothing stored changes; with both off again
// every page reads back, and discarding the device gives every object
// back (mm_stat's memory used 0: nothing leaked on the failure paths).
TEST(SwapdevRecompress, FailuresLoseNothingAndLeakNothing)
{
	struct Faults {
		~Faults()
		{
			sysfs_write(kDbg + "/fault_swap_alloc", "0");
			sysfs_write(kDbg + "/fault_swap_secondary", "0");
		}
	} restore;
	auto data = zbatch::generate(zbatch::Pattern::Real, 4 << 20, 13);
	for (const char *unit : {"4k", "16k"}) {
		SCOPED_TRACE(unit);
		RcDev d(unit, "lz4", "zstd");
		write_thp(d.path, data);
		uint64_t before = d.compr_bytes(), stored = d.stored_pages();
		ASSERT_EQ(sysfs_write(kDbg + "/fault_swap_alloc", "3"), 0);
		EXPECT_EQ(sysfs_write(d.dir + "/recompress", "\n"), ENOMEM)
			<< "an allocation failure ends the run";
		ASSERT_EQ(sysfs_write(kDbg + "/fault_swap_alloc", "0"), 0);
		auto rs = d.rs();
		EXPECT_LT(rs.at(2), stored) << "the run went on after a failure";
		EXPECT_EQ(before - d.compr_bytes(), rs.at(4)) << "mm_stat and recomp_stat disagree";
		EXPECT_EQ(rs.at(0), rs.at(2));
		EXPECT_TRUE(reads_back(d.path, data)) << "after a failed run";
		// the rest, then reads through a failing secondary codec
		ASSERT_EQ(sysfs_write(d.dir + "/recompress", "\n"), 0);
		rs = d.rs();
		// the object whose store failed was tried in both runs, no other
		unsigned unit_pages = std::string(unit) == "4k" ? 1 : 4;
		EXPECT_GE(rs.at(1), stored);
		EXPECT_LE(rs.at(1), stored + unit_pages) << "pages tried again";
		EXPECT_EQ(rs.at(2) + rs.at(3), stored) << "each page stored or marked, once";
		EXPECT_EQ(before - d.compr_bytes(), rs.at(4));
		ASSERT_GT(rs.at(0), 512u);
		uint64_t failed = d.nums("io_stat").at(0);
		ASSERT_EQ(sysfs_write(kDbg + "/fault_swap_secondary", "2"), 0);
		EXPECT_FALSE(reads_back(d.path, data)) << "a failed decompression read as data";
		ASSERT_EQ(sysfs_write(kDbg + "/fault_swap_secondary", "0"), 0);
		EXPECT_GT(d.nums("io_stat").at(0), failed) << "failed reads not counted";
		EXPECT_EQ(d.rs().at(0), rs.at(0)) << "a failed read changed what is stored";
		EXPECT_TRUE(reads_back(d.path, data)) << "after failed reads";
		auto dc = run("blkdiscard " + d.path);
		ASSERT_EQ(dc.status, 0) << dc.output;
		auto mm = d.nums("mm_stat");
		EXPECT_EQ(mm.at(0), 0u) << "pages left stored";
		EXPECT_EQ(mm.at(1), 0u) << "compressed bytes left";
		EXPECT_EQ(mm.at(2), 0u) << "zsmalloc memory left: an object leaked";
		EXPECT_EQ(d.rs().at(0), 0u) << "recompressed pages still counted";
	}
}

// Recompressions that fail (fault_swap_comp: 1 in 2 fails with EIO, as
// a compressor's error would) leave their objects as they were, counted
// in comp_errors, the run going on: every page tried, fewer stored
// recompressed, mm_stat and recomp_stat agreeing, every page reading back.
TEST(SwapdevRecompress, CompressorErrorsLeaveObjectsAsTheyWere)
{
	struct Restore {
		~Restore() { sysfs_write(kDbg + "/fault_swap_comp", "0"); }
	} restore;
	auto data = zbatch::generate(zbatch::Pattern::Real, 4 << 20, 17);
	for (const char *unit : {"4k", "16k"}) {
		SCOPED_TRACE(unit);
		RcDev d(unit, "lz4", "zstd");
		write_thp(d.path, data);
		uint64_t before = d.compr_bytes(), stored = d.stored_pages();
		uint64_t errors = d.unit_stat("comp_errors");
		ASSERT_EQ(sysfs_write(kDbg + "/fault_swap_comp", "2"), 0);
		EXPECT_EQ(sysfs_write(d.dir + "/recompress", "\n"), 0)
			<< "a compressor's error ended the run";
		ASSERT_EQ(sysfs_write(kDbg + "/fault_swap_comp", "0"), 0);
		auto rs = d.rs();
		uint64_t failed = d.unit_stat("comp_errors") - errors;
		std::cout << unit << ": " << stored << " pages, " << rs.at(2) << " recompressed, "
			  << failed << " compressions failed\n";
		EXPECT_GT(failed, 0u) << "no recompression failed";
		EXPECT_EQ(rs.at(1), stored) << "every page tried once";
		EXPECT_LT(rs.at(2) + rs.at(3), stored) << "failed objects counted as done";
		EXPECT_GT(rs.at(2), 0u) << "nothing recompressed";
		EXPECT_EQ(before - d.compr_bytes(), rs.at(4)) << "mm_stat and recomp_stat disagree";
		EXPECT_EQ(rs.at(0), rs.at(2));
		EXPECT_TRUE(reads_back(d.path, data));
		// the objects left are taken by the next run
		ASSERT_EQ(sysfs_write(d.dir + "/recompress", "\n"), 0);
		rs = d.rs();
		EXPECT_EQ(rs.at(2) + rs.at(3), stored) << "the next run left failed objects";
		EXPECT_TRUE(reads_back(d.path, data));
	}
}

// Recompression's compressions run where the secondary codec runs
// (rc_compress()): one by one on the writer's CPU with the software
// codecs (inline runs: one to compress each object, one to read each
// that is not stored raw), as one batch on the IAA executor where it
// serves the codec (the swapdev-iaa tier: deflate on the test double;
// its requests, and only the reads inline). Either way real data shrinks and reads back (the
// executor's deflate stream decompressed by the software codec on the
// read path). lz4 below, deflate as the secondary codec, 4k units (one
// object a page); no device executor for lz4 in any tier.
TEST(SwapdevRecompressExecutor, CompressesOnTheCpuOrOnTheDeviceServingTheCodec)
{
	const bool iaa = sysfs_read(kSys + "/iaa/state").find("[online]") != std::string::npos &&
			 sysfs_read(kSys + "/iaa/codec").rfind("deflate", 0) == 0;
	auto data = zbatch::generate(zbatch::Pattern::Real, 2 << 20, 19);
	RcDev d("4k", "lz4", "deflate");
	write_thp(d.path, data);
	uint64_t before = d.compr_bytes();
	const int64_t raw = static_cast<int64_t>(d.nums("mm_stat").at(7));	// huge_pages
	auto s0 = debug_stats();
	auto i0 = zbatch::parse_kv(sysfs_read(kSys + "/iaa/stats"));
	ASSERT_EQ(sysfs_write(d.dir + "/recompress", "\n"), 0);
	auto s1 = debug_stats();
	auto i1 = zbatch::parse_kv(sysfs_read(kSys + "/iaa/stats"));
	int64_t requests = i1["requests"] - i0["requests"];
	int64_t inline_runs = s1["inline_runs"] - s0["inline_runs"];
	int64_t blamed = s1["device_errors"] - s0["device_errors"];
	auto rs = d.rs();
	int64_t tried = static_cast<int64_t>(rs.at(1));
	std::cout << (iaa ? "IAA serves deflate" : "software deflate") << ": " << blamed
		  << " device errors, " << tried
		  << " tried (" << raw << " stored raw), " << rs.at(2) << " recompressed, " << inline_runs
		  << " inline runs, " << requests << " IAA requests\n";
	ASSERT_GT(tried, 256);
	EXPECT_EQ(rs.at(2) + rs.at(3), static_cast<uint64_t>(tried))
		<< "each tried page: stored or marked incompressible";
	// software deflate shrinks most of lz4's pages, IAA's fixed Huffman
	// fewer (384 and 233 of 448 with this data)
	EXPECT_GT(rs.at(2), static_cast<uint64_t>(iaa ? tried / 3 : tried / 2));
	EXPECT_EQ(before - d.compr_bytes(), rs.at(4)) << "mm_stat and recomp_stat disagree";
	if (iaa) {
		// the executor stayed in service (a timeout would send the rest
		// to software): else what follows measures something else
		ASSERT_NE(sysfs_read(kSys + "/iaa/state").find("[online]"), std::string::npos)
			<< "the IAA executor went offline during the run: "
			<< sysfs_read(kSys + "/iaa/reason");
		ASSERT_EQ(i1["timeouts"], i0["timeouts"]) << "IAA requests timed out during the run";
		EXPECT_EQ(requests, tried) << "compressions not sent to the IAA executor";
		EXPECT_EQ(inline_runs, tried - raw) << "compressions run inline though IAA serves deflate";
		// IAA's fixed Huffman compresses worse than software: output past
		// the object's size now, or no smaller than the page (the pages
		// stored raw among them: room past the input, ACX_SLACK), is the
		// device's answer, an overflow: not an error, not redone (with the
		// object's size as room, 117 were blamed and redone; with the
		// page's, 53, and 2 blamed).
		EXPECT_EQ(blamed, 0) << "overflows counted as device errors";
		EXPECT_EQ(i1["device_errors"] - i0["device_errors"], 0)
			<< "overflows reported by iaa_crypto as errors (-EIO)";
		EXPECT_EQ(i1["redone"] - i0["redone"], 0) << "overflows redone in software";
	} else {
		EXPECT_EQ(requests, 0) << "IAA requests with no IAA executor serving deflate";
		EXPECT_EQ(inline_runs, 2 * tried - raw) << "reads and compressions not run inline";
	}
	EXPECT_TRUE(reads_back(d.path, data)) << "recompressed pages did not read back";
	EXPECT_GE(d.unit_stat("secondary_reads"), rs.at(2));
}

// The background thread at budget 100 (no pacing sleeps) in a pass of
// several seconds does not hold up a suspend: the freezer takes it
// between batches (pm_test "freezer", 1 s timeout), the pass goes on
// after the thaw, and every page reads back. A pass that froze only in
// its pacing sleeps would refuse to freeze (EBUSY).
TEST(SwapdevRecompress, ASuspendDoesNotWaitForABackgroundPass)
{
	if (access("/sys/power/pm_test", W_OK))
		GTEST_SKIP() << "no /sys/power/pm_test (CONFIG_PM_DEBUG off): cannot freeze";
	auto data = zbatch::generate(zbatch::Pattern::Real, 64 << 20, 19);
	RcDev d("4k", "lz4", "zstd", "", "80M");
	write_thp(d.path, data);
	ASSERT_EQ(sysfs_write(d.dir + "/idle", "all"), 0);
	ASSERT_EQ(sysfs_write(d.dir + "/recomp_interval", "1"), 0);
	ASSERT_EQ(sysfs_write(d.dir + "/recomp_budget", "100"), 0);
	// the first pass starts a second in
	auto t0 = std::chrono::steady_clock::now();
	while (d.rs().at(1) == 0 &&
	       std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10))
		std::this_thread::sleep_for(std::chrono::milliseconds(50));
	auto before = d.rs().at(1);
	ASSERT_GT(before, 0u) << "the pass did not start";
	int frz = pm_test_freeze(1000);
	auto after = d.rs().at(1);
	std::cout << "pages tried: " << before << " before the freeze, " << after << " after\n";
	EXPECT_EQ(frz, 0) << "the freeze failed (EBUSY: the thread refused to freeze)";
	EXPECT_LT(after, d.stored_pages()) << "the pass ended before the freeze: too short";
	ASSERT_EQ(sysfs_write(d.dir + "/recomp_budget", "0"), 0);
	EXPECT_TRUE(reads_back(d.path, data));
}

// hot_remove while an operator's recompress runs over 64 MiB: the run
// ends at its next batch (ENODEV) instead of holding the removal for
// the whole run, and the device is gone.
TEST(SwapdevRecompress, RemovalEndsARun)
{
	auto data = zbatch::generate(zbatch::Pattern::Real, 64 << 20, 23);
	int id = std::stoi(sysfs_read(kSys + "/swapdev/hot_add"));
	auto dir = "/sys/block/zbatchswap" + std::to_string(id) + "/zbatch";
	auto path = "/dev/zbatchswap" + std::to_string(id);
	ASSERT_EQ(sysfs_write(dir + "/codec", "lz4"), 0);
	ASSERT_EQ(sysfs_write(dir + "/recomp_algorithm", "algo=zstd"), 0);
	ASSERT_EQ(sysfs_write(dir + "/disksize", "80M"), 0);
	write_thp(path, data);
	int rc_err = -1;
	std::thread rc([&] { rc_err = sysfs_write(dir + "/recompress", "\n"); });
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	auto t0 = std::chrono::steady_clock::now();
	int rm = sysfs_write(kSys + "/swapdev/hot_remove", std::to_string(id));
	double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	rc.join();
	std::cout << "hot_remove took " << s << " s during a run\n";
	EXPECT_EQ(rm, 0);
	EXPECT_EQ(rc_err, ENODEV) << "the run was not ended by the removal (or ended before it)";
	EXPECT_LT(s, 2.0) << "the removal waited for the run";
	EXPECT_NE(access(dir.c_str(), F_OK), 0) << "the device is still there";
}

// A secondary codec only decompresses on the streams (reads of
// recompressed objects): each CPU's stream takes zstd's decompression
// workspace for it (about 100 KiB), not the whole one (about 1 MiB, most
// of it the compression tables). Measured as the memory disksize adds
// (slab, vmalloc, per-CPU) with and without a secondary codec.
TEST(SwapdevRecompress, TheSecondaryCodecTakesADecompressionWorkspacePerCpu)
{
	auto taken = [](const std::string &secondary) {
		int id = std::stoi(sysfs_read(kSys + "/swapdev/hot_add"));
		auto dir = "/sys/block/zbatchswap" + std::to_string(id) + "/zbatch";
		EXPECT_EQ(sysfs_write(dir + "/codec", "lz4"), 0);
		if (!secondary.empty()) {
			EXPECT_EQ(sysfs_write(dir + "/recomp_algorithm", "algo=" + secondary), 0);
		}
		auto mem = [] {
			return meminfo_kb("SUnreclaim") + meminfo_kb("VmallocUsed") +
			       meminfo_kb("Percpu");
		};
		long before = mem();
		EXPECT_EQ(sysfs_write(dir + "/disksize", "16M"), 0);
		long after = mem();
		EXPECT_EQ(sysfs_write(kSys + "/swapdev/hot_remove", std::to_string(id)), 0);
		return after - before;
	};
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	// Memory others free or take meanwhile (a debug kernel's KASAN
	// quarantine and slab caches, RCU) moves one measurement by up to a
	// few hundred kB, as much as what is measured: one device first, not
	// counted (caches made), then pairs made one right after the other,
	// which goes first alternating, and the median of the pairs'
	// differences (a median of three of each kind, made apart, once came
	// to 14 kB a CPU on a debug kernel).
	taken("");
	std::vector<long> plain, zstd, diff;
	for (int i = 0; i < 5; i++) {
		if (i % 2) {
			zstd.push_back(taken("zstd"));
			plain.push_back(taken(""));
		} else {
			plain.push_back(taken(""));
			zstd.push_back(taken("zstd"));
		}
		diff.push_back(zstd.back() - plain.back());
	}
	auto median = [](std::vector<long> v) {
		std::sort(v.begin(), v.end());
		return v[v.size() / 2];
	};
	double per_cpu = static_cast<double>(median(diff)) / cpus;
	std::cout << "disksize takes " << median(plain) << " kB without a secondary codec, "
		  << median(zstd) << " kB with zstd (medians of 5): " << per_cpu
		  << " kB a CPU for it, the median of 5 pairs (" << cpus << " CPUs)\n";
	RecordProperty("secondary_zstd_kib_per_cpu", std::to_string(per_cpu));
	EXPECT_LT(per_cpu, 400.0) << "a whole zstd workspace on every stream";
	EXPECT_GT(per_cpu, 64.0) << "no decompression workspace at all?";
}

// The thread takes pages by their age, not by idle marks: pages written
// 9 s before a pass with recomp_interval 4 are recompressed, pages
// written 2 s before it are not (until a later pass: ages are counted in
// whole seconds of the slots' stamps, so a page 3.2 s old may count 4);
// and the idle marks
// stay the operator's: the old pages marked idle before the passes are
// still marked after them (writeback idle takes exactly those), the
// young ones were not marked by the thread.
TEST(SwapdevRecompress, TheThreadTakesPagesByAge)
{
	auto disk = backing_disk(16384);
	ASSERT_FALSE(disk.empty()) << "no block device to write back to";
	auto data = zbatch::generate(zbatch::Pattern::Real, 2 << 20, 29);
	RcDev d("4k", "lz4", "zstd", disk);
	write_thp(d.path, std::vector<uint8_t>(data.begin(), data.begin() + (1 << 20)));
	uint64_t old_pages = d.stored_pages();
	std::this_thread::sleep_for(std::chrono::seconds(5));
	ASSERT_EQ(sysfs_write(d.dir + "/idle", "all"), 0);	// the old pages
	ASSERT_EQ(sysfs_write(d.dir + "/recomp_interval", "4"), 0);
	ASSERT_EQ(sysfs_write(d.dir + "/recomp_budget", "100"), 0);	// a pass 4 s on
	std::this_thread::sleep_for(std::chrono::seconds(2));
	write_thp(d.path, std::vector<uint8_t>(data.begin() + (1 << 20), data.end()), 1 << 20);
	uint64_t all = d.stored_pages();
	ASSERT_GT(all, old_pages);
	using clk = std::chrono::steady_clock;
	auto deadline = clk::now() + std::chrono::seconds(30 * slow_factor());
	while (d.rs().at(1) < old_pages && clk::now() < deadline)
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	auto first = d.rs().at(1);
	std::cout << "first pass: " << first << " pages tried of " << old_pages << " old, "
		  << all - old_pages << " young\n";
	EXPECT_EQ(first, old_pages) << "the first pass took young pages, or missed old ones";
	while (d.rs().at(1) < all && clk::now() < deadline)
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	EXPECT_EQ(d.rs().at(1), all) << "a later pass did not take the pages once old";
	ASSERT_EQ(sysfs_write(d.dir + "/recomp_budget", "0"), 0);
	ASSERT_EQ(sysfs_write(d.dir + "/writeback", "idle"), 0);
	EXPECT_EQ(d.nums("bd_stat").at(0), old_pages)
		<< "the thread cleared the operator's idle marks, or set its own";
	EXPECT_TRUE(reads_back(d.path, data));
}
