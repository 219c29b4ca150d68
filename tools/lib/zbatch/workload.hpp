// SPDX-License-Identifier: GPL-2.0
// A usemem-style swap workload: N processes each write a pattern into
// anonymous memory, optionally sleep, then read every byte back and check
// it. Run in an optional cgroup v2 group; reports usemem-style throughput
// and the zswap / cgroup counters it moved.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unistd.h>

#include "zbatch/error.hpp"
#include "zbatch/pattern.hpp"

namespace zbatch {

struct WorkloadConfig {
	unsigned int procs = 1;
	size_t bytes_per_proc = 64ull << 20;
	Pattern pattern = Pattern::Mixed;
	std::string corpus;		// file used instead of the pattern
	unsigned int passes = 2;	// read-back passes after the write
	unsigned int sleep_ms = 0;	// between write and read-back
	std::string cgroup;		// cgroup v2 group to create and use ("" none)
	std::string memory_max;		// its memory.max ("" = unlimited)
	std::string thp;		// "always", "madvise", "never" or "" (leave)
	std::string mthp;		// e.g. "64kB": hugepages-64kB/enabled = always
	bool pageout = false;		// MADV_PAGEOUT the region once written
	// Before the read-back passes, touch one page in every touch_every
	// (0: none), timed on its own (touch_s): a process that comes back
	// to a little of its memory, the case where large units cost most.
	unsigned int touch_every = 0;
	// mTHP set back to "never" before the read-back (needs mthp): pages
	// come back 4 KiB at a time, each a part of the unit it was stored in.
	bool swapin_4k = false;
	unsigned int timeout_s = 600;
	std::string sysroot = "/";	// for /proc and /sys (tests)
	// Called once every process has written all its memory and before any
	// reads it back (the processes wait): switch a compressor, read zswap's
	// pool size, ... An error fails the run after the read-back.
	std::function<Result<void>()> between;
	// Called about once a second while the processes run: seconds so far
	// and zswpout / zswpin since the start (a progress display).
	std::function<void(double, int64_t, int64_t)> progress;
	// How the run makes its pipes and processes: pipe(2) and fork(2).
	// Host tests make one fail to check that everything the run changed
	// is put back and no process is left behind.
	std::function<int(int *)> pipe = [](int *fds) { return ::pipe(fds); };
	std::function<pid_t()> fork = [] { return ::fork(); };
};

struct WorkloadResult {
	double elapsed_s = 0;
	double sys_s = 0;		// children's system time
	double user_s = 0;
	double write_kbps = 0;		// per process, as usemem reports
	double read_kbps = 0;
	uint64_t bad_bytes = 0;		// bytes that read back wrong
	double pageout_s = 0;		// slowest process's MADV_PAGEOUT (swap-out)
	double readback_s = 0;		// slowest process's read-back passes
	double touch_s = 0;		// slowest process's touch_every pass
	// zswap's debugfs stored_pages and pool_total_size once everything
	// was written (0 when zswap's debugfs is absent)
	int64_t zswap_stored_pages = 0;
	int64_t zswap_pool_bytes = 0;
	std::map<std::string, int64_t> vmstat_delta;	// zswpout, zswpin, pswpout...
	std::map<std::string, int64_t> memstat_delta;	// the cgroup's memory.stat
};

// Every return puts back what the run changed (THP, mTHP, the cgroup it
// created; an existing cgroup is refused with EEXIST) and leaves no
// process behind.
Result<WorkloadResult> run_workload(const WorkloadConfig &cfg);

// Page @i of process @id's region, as run_workload() writes it: a page of
// @tmpl (real data keeps its order, each process from its own place in
// it; generated patterns are spread) with its first 8 bytes replaced by
// the process and page number, so that every page differs and all are
// checkable. @out is 4 KiB. The benchmark computes what a codec gives on
// the same bytes with it (bench/blocks/).
void workload_page(const std::vector<uint8_t> &tmpl, bool real, unsigned int id, size_t i,
		   uint8_t *out);

// /proc/vmstat-style "key value" lines into a map.
std::map<std::string, int64_t> parse_kv(const std::string &text);

} // namespace zbatch
