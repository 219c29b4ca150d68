// SPDX-License-Identifier: GPL-2.0
// zbatch swap: the usemem-style swap workload with verification.
#include <chrono>
#include <ctime>

#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/json.hpp"
#include "zbatch/swapdev.hpp"
#include "zbatch/sysfs.hpp"
#include "zbatch/workload.hpp"

namespace zbatch::cli {

Result<int> run_swap(Context &ctx, const SwapOptions &o)
{
	auto &con = ctx.con;
	WorkloadConfig cfg;
	cfg.procs = o.procs;
	auto sz = parse_bytes(o.size);
	if (!sz)
		return fail(EINVAL, "--size " + sz.error().message);
	cfg.bytes_per_proc = *sz / 4096 * 4096;
	if (o.file.empty()) {
		auto p = pattern_from_name(o.pattern);
		if (!p)
			return std::unexpected(p.error());
		cfg.pattern = *p;
	}
	cfg.corpus = o.file;
	cfg.passes = o.passes;
	cfg.sleep_ms = o.sleep_ms;
	cfg.cgroup = o.cgroup;
	cfg.memory_max = o.memory_max;
	cfg.thp = o.thp;
	cfg.mthp = o.mthp;
	cfg.pageout = o.pageout;
	cfg.touch_every = o.touch_every;
	cfg.swapin_4k = o.swapin_4k;
	cfg.timeout_s = o.timeout;
	cfg.sysroot = ctx.tree.root().string();
	std::vector<std::pair<std::string, std::string>> snaps;
	double writeback_s = 0, recompress_s = 0, recompress_cpu_s = 0;
	// this thread's CPU time, kernel time included: a write to zram's
	// recompress does all of its work in the writer
	auto thread_cpu_s = [] {
		timespec ts{};
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		return ts.tv_sec + ts.tv_nsec / 1e9;
	};
	if (!o.snapshots.empty() || !o.writeback.empty() || !o.recompress.empty())
		cfg.between = [&snaps, &o, &ctx, &writeback_s, &recompress_s, &recompress_cpu_s,
			       &thread_cpu_s]() -> Result<void> {
			const SysfsTree &t = ctx.tree;
			if (!o.recompress.empty()) {
				auto t0 = std::chrono::steady_clock::now();
				double c0 = thread_cpu_s();
				if (auto w = t.write(o.recompress + "/recompress", "\n"); !w)
					return fail(w.error().code,
						    fmt::format("--recompress: {}/recompress: {}",
								o.recompress, w.error().message));
				recompress_cpu_s = thread_cpu_s() - c0;
				recompress_s = std::chrono::duration<double>(
						       std::chrono::steady_clock::now() - t0).count();
			}
			if (!o.writeback.empty()) {
				auto t0 = std::chrono::steady_clock::now();
				for (auto [file, v] : {std::pair{"idle", "all"}, {"writeback", "idle"}})
					if (auto w = t.write(o.writeback + "/" + file, v); !w)
						return fail(w.error().code,
							    fmt::format("--writeback: {}/{} {}: {}",
									o.writeback, file, v,
									w.error().message));
				writeback_s = std::chrono::duration<double>(
						      std::chrono::steady_clock::now() - t0).count();
			}
			for (const auto &f : o.snapshots) {
				auto c = t.read(f);
				if (!c)
					return fail(c.error().code, fmt::format("--snapshot {}: {}", f,
										 c.error().message));
				snaps.emplace_back(f, *c);
			}
			return {};
		};
	if (con.shows_progress() && !ctx.json)
		cfg.progress = [&con](double s, int64_t out, int64_t in) {
			con.progress(fmt::format("{:6.1f} s  zswpout {:>10}  zswpin {:>10}", s, out, in));
		};
	con.detail("{} process(es) x {} bytes, {} pass(es){}\n", cfg.procs, cfg.bytes_per_proc,
		   cfg.passes, cfg.cgroup.empty() ? "" : ", cgroup " + cfg.cgroup);
	auto r = ctx.workload(cfg);
	con.end_progress();
	if (!r)
		return std::unexpected(r.error());
	if (ctx.json) {
		Json j = {{"procs", cfg.procs}, {"bytes_per_proc", cfg.bytes_per_proc},
			  {"elapsed_s", r->elapsed_s}, {"sys_s", r->sys_s}, {"user_s", r->user_s},
			  {"write_kbps", r->write_kbps}, {"read_kbps", r->read_kbps},
			  {"bad_bytes", r->bad_bytes}, {"zswap_stored_pages", r->zswap_stored_pages},
			  {"zswap_pool_bytes", r->zswap_pool_bytes}, {"pageout_s", r->pageout_s},
			  {"readback_s", r->readback_s}, {"touch_s", r->touch_s},
			  {"writeback_s", writeback_s}, {"recompress_s", recompress_s},
			  {"recompress_cpu_s", recompress_cpu_s}};
		for (const auto &[k, v] : r->vmstat_delta)
			j["vmstat_" + k] = v;
		for (const auto &[k, v] : r->memstat_delta)
			j["memory_stat_" + k] = v;
		j["snapshots"] = Json::object();
		for (const auto &[path, text] : snaps)
			j["snapshots"][path] = text;
		con.print("{}", json_text(j));
	} else {
		con.print("{} process(es) x {} MiB, {} read pass(es): {:.2f} s elapsed, "
			   "{:.2f} s sys, {:.2f} s user\n", cfg.procs, cfg.bytes_per_proc >> 20,
			   cfg.passes, r->elapsed_s, r->sys_s, r->user_s);
		con.print("throughput per process: write {:.0f} KB/s, read {:.0f} KB/s\n",
			   r->write_kbps, r->read_kbps);
		if (cfg.pageout)
			con.print("swap-out (MADV_PAGEOUT) {:.3f} s, read back {:.3f} s (slowest "
				   "process)\n", r->pageout_s, r->readback_s);
		if (cfg.touch_every)
			con.print("touch one page in {}: {:.3f} s (slowest process)\n",
				   cfg.touch_every, r->touch_s);
		if (!o.recompress.empty())
			con.print("recompressed before the read-back: {:.3f} s ({:.3f} s CPU of the "
				   "writer)\n", recompress_s, recompress_cpu_s);
		if (!o.writeback.empty())
			con.print("written back to the disk before the read-back: {:.3f} s\n",
				   writeback_s);
		if (r->zswap_stored_pages)
			con.print("zswap after writing: {} pages stored in {} bytes (ratio {:.3f})\n",
				   r->zswap_stored_pages, r->zswap_pool_bytes,
				   double(r->zswap_pool_bytes) / (r->zswap_stored_pages * 4096.0));
		for (const auto &[k, v] : r->vmstat_delta)
			con.print("  vmstat {:<10} {:+}\n", k, v);
		for (const auto &[k, v] : r->memstat_delta)
			con.print("  memory.stat {:<10} {:+}\n", k, v);
		for (const auto &[f, c] : snaps)
			con.print("{} once written:\n{}\n", f, c);
		con.print("verify: {}\n", r->bad_bytes ? con.bad(fmt::format("{} bad bytes", r->bad_bytes))
							: con.good("every byte intact"));
	}
	return r->bad_bytes ? kExitFailure : kExitOk;
}

void add_swap(CLI::App &app, Action &action)
{
	auto o = std::make_shared<SwapOptions>();
	auto *sub = app.add_subcommand("swap", "usemem-style swap workload that verifies every byte");
	sub->add_option("-n,--procs", o->procs, "Processes (default 1)")->check(CLI::Range(1, 1024));
	sub->add_option("-s,--size", o->size, "Memory per process, e.g. 64M, 1G (default 64M)");
	sub->add_option("--pattern", o->pattern, "text, zeros, random, mixed, real (the pages of binaries, libraries, text, a heap and compressed files on this system) or same (each page one nonzero word repeated: same-filled, stored without the codec); default mixed");
	sub->add_option("--file", o->file, "Corpus file as page data instead of a pattern");
	sub->add_option("--passes", o->passes, "Read-back passes (default 2)")->check(CLI::Range(1, 100));
	sub->add_option("--sleep-ms", o->sleep_ms, "Sleep between writing and reading back");
	sub->add_option("--cgroup", o->cgroup, "cgroup v2 group to create and run in (removed after)");
	sub->add_option("--memory-max", o->memory_max,
			"memory.max of that group; keep it above the compressed size: zswap "
			"charges its pool to the group");
	sub->add_option("--thp", o->thp, "Set transparent_hugepage/enabled for the run (restored)");
	sub->add_option("--mthp", o->mthp,
			"Enable one mTHP size for the run, e.g. 16kB, 64kB (hugepages-SIZE/enabled = "
			"always, restored); where transparent_hugepage/enabled is always (Debian's "
			"default, or --thp always) 2 MiB-aligned memory still gets 2 MiB folios: "
			"add --thp never for SIZE alone");
	sub->add_flag("--pageout", o->pageout,
		      "Swap each region out with MADV_PAGEOUT once written (swap-out time "
		      "independent of memory pressure; large folios go out whole)");
	sub->add_option("--touch-every", o->touch_every,
			"Before reading back, touch one page in every N (timed as touch_s): "
			"swap-in of a little of each region, e.g. 16 for one page per 64 KiB");
	sub->add_flag("--swapin-4k", o->swapin_4k,
		      "Set the --mthp size back to never before reading back: pages come back "
		      "4 KiB at a time, each a part of the unit it was stored in (partial "
		      "swap-in)");
	sub->add_option("--snapshot", o->snapshots,
			"A file to read once everything is written (and paged out), before the "
			"read-back, e.g. /sys/block/zram0/mm_stat (repeatable)");
	sub->add_option("--writeback", o->writeback,
			"A swap device's directory with zram's idle and writeback files "
			"(/sys/block/zram0, /sys/block/zbatchswapN/zbatch): once everything is "
			"written and paged out, mark it idle and write it back to the device's "
			"backing disk, so that the read-back reads it from there (timed)");
	sub->add_option("--recompress", o->recompress,
			"A swap device's directory with a secondary codec and a recompress file "
			"(/sys/block/zbatchswapN/zbatch; /sys/block/zram0 where zram has "
			"CONFIG_ZRAM_MULTI_COMP): once everything is written and paged out, "
			"recompress every page with it (before --writeback and --snapshot; timed, "
			"with the CPU time of the writing thread, all of zram's work: "
			"recompress_cpu_s), so that the read-back decompresses what recompression "
			"stored");
	sub->add_option("--timeout", o->timeout, "Seconds before the processes are killed (default 600)");
	sub->footer("Exit 1 when any byte reads back wrong. Reports usemem-style KB/s per\n"
		    "process, elapsed/sys/user time, and the deltas of /proc/vmstat zswpout,\n"
		    "zswpin, zswpwb, pswpout, pswpin (and the cgroup's memory.stat).\n"
		    "Examples:\n  zbatch swap -n 4 -s 256M --pattern text\n"
		    "  zbatch swap -s 512M --cgroup zb --memory-max 400M --json");
	sub->callback([&action, o] { action = [o](Context &ctx) { return run_swap(ctx, *o); }; });
}

} // namespace zbatch::cli
