// SPDX-License-Identifier: GPL-2.0
// zbatch_model: the model checker's command line (Documentation/testing.md).
#include "model.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <fmt/core.h>

using namespace zbatch::model;

namespace {

constexpr const char *kUsage = R"(Usage: zbatch_model blockdev --device PATH [options]
       zbatch_model swap [options]

Random operations, every read compared with a model of what it must
return. The first line printed is "seed N": --seed N replays the run.

Common options:
  --seed N          seed of every random choice (default: from the clock)
  --ops N           operations to run (default 2000)
  --seconds S       stop after S seconds if the ops are not done (0: no limit)
  --log FILE        write every op to FILE as it runs (the whole log on failure)
  --verbose         print every op
blockdev: writes, reads, discards, write-zeroes and rewrites inside units
  --device PATH     a block device (O_DIRECT) or a regular file
  --pages N         pages to use from offset 0 (default: min(size, 2048))
  --max-pages N     pages per I/O at most (default 64)
  --unit-pages U    1, 4 or 16: offsets and lengths lean toward units (default 1)
  --threads T       threads (default 1)
  --overlap         threads share one range (default: a slice each)
  --no-thp          no huge-page buffers (multi-page bvecs go untested)
  --no-sector       no 512-byte aligned buffers
  --writeback DIR   also writeback ops, through DIR's idle and writeback
                    files (zram's: /sys/block/zram0; a zbatch swap device's:
                    /sys/block/zbatchswapN/zbatch), a backing device set
  --writeback-eio-ok  the backing device fails writes on purpose: EIO from
                    writeback is counted, not a failure (reads must still
                    return every page)
  --recompress DIR  also recompress ops, through DIR's idle and recompress
                    files (a zbatch swap device's /sys/block/zbatchswapN/zbatch,
                    a secondary codec set: recomp_algorithm); with
                    --writeback, writeback also takes incompressible pages
swap: this program is the swap user (root; swapon the device under test first)
  --size MiB        region size (default 64)
  --mthp SIZE       large folios: 16k, 64k or none (default 64k); the mTHP
                    knobs are set for the run and restored after
  --pressure MiB    memory balloon op size (default: size / 2)
  --memory-max MiB  run in a memory cgroup of that limit, below --size, so
                    that reclaim swaps the region out and in all along
                    (slots freed and reused); 0: none (default)
  --no-fork         no fork op (children checking copy-on-write over swap)

Exit status: 0 passed, 1 a difference or an I/O error, 2 usage,
77 cannot run here (not root, no THP, no swap, no mTHP).
)";

struct Options {
	std::string mode;
	std::string device;
	std::string log;
	BlockConfig block;
	SwapConfig swap;
	bool pressure_set = false;
};

int usage(const std::string &why)
{
	fmt::print(stderr, "zbatch_model: {}\n\n{}", why, kUsage);
	return static_cast<int>(Outcome::usage);
}

bool parse_u64(const char *s, uint64_t *out)
{
	auto [end, ec] = std::from_chars(s, s + std::strlen(s), *out);
	return ec == std::errc() && *end == '\0';
}

// Fills o from argv; "" or why not.
std::string parse(int argc, char **argv, Options &o)
{
	o.mode = argv[1];
	bool seeded = false;
	for (int i = 2; i < argc; i++) {
		std::string a = argv[i];
		auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
		auto number = [&](uint64_t *out) {
			const char *v = value();
			return v && parse_u64(v, out);
		};
		uint64_t n = 0;
		bool ok = true;
		if (a == "--seed") {
			ok = number(&o.block.seed);
			seeded = true;
		} else if (a == "--ops") {
			ok = number(&o.block.ops);
		} else if (a == "--seconds") {
			const char *v = value();
			char *end = nullptr;
			o.block.seconds = v ? std::strtod(v, &end) : -1;
			ok = v && *end == '\0' && o.block.seconds >= 0;
		} else if (a == "--log") {
			const char *v = value();
			ok = v != nullptr;
			o.log = v ? v : "";
		} else if (a == "--verbose") {
			o.block.verbose = true;
		} else if (o.mode == "blockdev" && a == "--device") {
			const char *v = value();
			ok = v != nullptr;
			o.device = v ? v : "";
		} else if (o.mode == "blockdev" && a == "--pages") {
			ok = number(&o.block.pages) && o.block.pages > 0;
		} else if (o.mode == "blockdev" && a == "--max-pages") {
			ok = number(&o.block.max_pages);
		} else if (o.mode == "blockdev" && a == "--unit-pages") {
			ok = number(&o.block.unit_pages);
		} else if (o.mode == "blockdev" && a == "--threads") {
			ok = number(&n) && n <= 64;
			o.block.threads = static_cast<unsigned>(n);
		} else if (o.mode == "blockdev" && a == "--overlap") {
			o.block.overlap = true;
		} else if (o.mode == "blockdev" && a == "--no-thp") {
			o.block.thp = false;
		} else if (o.mode == "blockdev" && a == "--no-sector") {
			o.block.sector = false;
		} else if (o.mode == "blockdev" && a == "--writeback") {
			const char *v = value();
			ok = v && *v;
			o.block.writeback = v ? v : "";
		} else if (o.mode == "blockdev" && a == "--recompress") {
			const char *v = value();
			ok = v && *v;
			o.block.recompress = v ? v : "";
		} else if (o.mode == "blockdev" && a == "--writeback-eio-ok") {
			o.block.writeback_eio_ok = true;
		} else if (o.mode == "swap" && a == "--size") {
			ok = number(&o.swap.size_mib) && o.swap.size_mib > 0;
		} else if (o.mode == "swap" && a == "--pressure") {
			ok = number(&o.swap.pressure_mib) && o.swap.pressure_mib > 0;
			o.pressure_set = true;
		} else if (o.mode == "swap" && a == "--mthp") {
			const char *v = value();
			std::string s = v ? v : "";
			ok = s == "16k" || s == "64k" || s == "none";
			o.swap.folio_pages = s == "16k" ? 4 : s == "64k" ? 16 : 0;
		} else if (o.mode == "swap" && a == "--memory-max") {
			ok = number(&o.swap.memory_max_mib);
		} else if (o.mode == "swap" && a == "--no-fork") {
			o.swap.fork = false;
		} else {
			return "unknown option " + a + " for " + o.mode;
		}
		if (!ok)
			return "bad or missing value for " + a;
	}
	if (!seeded) {
		auto now = std::chrono::system_clock::now().time_since_epoch();
		o.block.seed = mix64(static_cast<uint64_t>(now.count()) ^ getpid()) >> 1;
	}
	if (o.mode == "blockdev" && o.device.empty())
		return "blockdev needs --device PATH";
	// the common options live in block; swap takes them from there
	o.swap.seed = o.block.seed;
	o.swap.ops = o.block.ops;
	o.swap.seconds = o.block.seconds;
	o.swap.verbose = o.block.verbose;
	if (!o.pressure_set)
		o.swap.pressure_mib = std::max<uint64_t>(1, o.swap.size_mib / 2);
	return {};
}

int finish(const Result &r)
{
	print_result(r);
	return static_cast<int>(r.outcome);
}

int skip(const std::string &why)
{
	return finish(Result{Outcome::skip, why, {}, {}});
}

int blockdev(const Options &o)
{
	std::string note;
	auto dev = open_device(o.device, &note);
	if (!dev) {
		struct stat st;
		if (stat(o.device.c_str(), &st))
			return usage(dev.error());
		return skip(dev.error());
	}
	if (!note.empty())
		fmt::print("note: {}\n", note);
	fmt::print("device {}: {} pages\n", o.device, (*dev)->pages());
	std::fflush(stdout);
	return finish(run_blockdev(**dev, o.block));
}

int swap(const Options &o)
{
	if (geteuid() != 0)
		return skip("swap mode needs root (the mTHP knobs)");
	auto swaps = active_swaps();
	if (swaps.empty())
		return skip("no swap is active (/proc/swaps): swapon the device under test first");
	for (const auto &s : swaps)
		fmt::print("swap: {}\n", s);
	if (swaps.size() > 1)
		fmt::print("warning: {} swap areas are active: pages may go to any of them\n",
			   swaps.size());
	MthpKnobs knobs;
	unsigned kb = static_cast<unsigned>(o.swap.folio_pages * kPage / 1024);
	if (auto set = knobs.set_only(kb); !set)
		return skip(set.error());
	return finish(run_swap(o.swap));
}

}  // namespace

int main(int argc, char **argv)
{
	if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
		fmt::print("{}", kUsage);
		return argc < 2 ? static_cast<int>(Outcome::usage) : 0;
	}
	Options o;
	if (std::strcmp(argv[1], "blockdev") != 0 && std::strcmp(argv[1], "swap") != 0)
		return usage(fmt::format("unknown mode {}", argv[1]));
	if (std::string why = parse(argc, argv, o); !why.empty())
		return usage(why);
	fmt::print("seed {}\n", o.block.seed);
	std::fflush(stdout);   // first, even when stderr is the same file
	FILE *log = nullptr;
	if (!o.log.empty() && !(log = std::fopen(o.log.c_str(), "w")))
		return usage(fmt::format("cannot write {}: {}", o.log, std::strerror(errno)));
	o.block.log = o.swap.log = log;
	int rc = o.mode == "blockdev" ? blockdev(o) : swap(o);
	if (log)
		std::fclose(log);
	return rc;
}
