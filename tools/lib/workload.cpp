// SPDX-License-Identifier: GPL-2.0
#include "zbatch/workload.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/parse.hpp"
#include "zbatch/scope.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <fmt/core.h>

#include "zbatch/sysfs.hpp"

namespace zbatch {

std::map<std::string, int64_t> parse_kv(const std::string &text)
{
	std::map<std::string, int64_t> m;
	std::istringstream in(text);
	std::string k;
	int64_t v;
	while (in >> k >> v)
		m[k] = v;
	return m;
}

namespace {

constexpr size_t kPage = 4096;

// Child: fill, page out (cfg.pageout), say "W", wait for the go byte on
// @go, sleep, touch (cfg.touch_every), verify. Writes "write_us read_us
// bad pageout_us touch_us" to @fd.
[[noreturn]] void child(const WorkloadConfig &cfg, unsigned int id, const std::vector<uint8_t> &tmpl,
			int fd, int go)
{
	using clk = std::chrono::steady_clock;
	size_t len = cfg.bytes_per_proc;
	auto *mem = static_cast<uint8_t *>(mmap(nullptr, len, PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	if (mem == MAP_FAILED)
		_exit(3);
	size_t pages = len / kPage;
	bool real = cfg.corpus.empty() && cfg.pattern == Pattern::Real;
	bool same = cfg.corpus.empty() && cfg.pattern == Pattern::Same;
	auto expect = [&](size_t i, uint8_t *out) {
		if (same)
			same_page(id, i, out);
		else
			workload_page(tmpl, real, id, i, out);
	};
	auto t0 = clk::now();
	for (size_t i = 0; i < pages; i++)
		expect(i, mem + i * kPage);
	auto t1 = clk::now();
	// MADV_PAGEOUT: swap the region out now, whatever the memory pressure
	// (large folios whole when the swap device takes them)
	if (cfg.pageout && madvise(mem, len, MADV_PAGEOUT))
		_exit(6);
	auto t1p = clk::now();
	char c;
	if (write(fd, "W", 1) != 1 || read(go, &c, 1) != 1)
		_exit(5);
	if (cfg.sleep_ms)
		std::this_thread::sleep_for(std::chrono::milliseconds(cfg.sleep_ms));
	uint64_t bad = 0;
	std::vector<uint8_t> want(kPage);
	auto check = [&](size_t i) {
		expect(i, want.data());
		if (std::memcmp(want.data(), mem + i * kPage, kPage))
			for (size_t b = 0; b < kPage; b++)
				bad += want[b] != mem[i * kPage + b];
	};
	auto tt = clk::now();
	for (size_t i = 0; cfg.touch_every && i < pages; i += cfg.touch_every)
		check(i);
	auto t2 = clk::now();
	for (unsigned int p = 0; p < cfg.passes; p++)
		for (size_t i = 0; i < pages; i++)
			check(i);
	auto t3 = clk::now();
	auto us = [](auto d) { return std::chrono::duration_cast<std::chrono::microseconds>(d).count(); };
	auto line = fmt::format("{} {} {} {} {}\n", us(t1 - t0), us(t3 - t2), bad, us(t1p - t1),
				us(t2 - tt));
	if (write(fd, line.data(), line.size()) < 0)
		_exit(4);
	_exit(0);
}

// SIGINT or SIGTERM during a run (Ctrl-C): it ends as a failure does,
// everything put back.
volatile sig_atomic_t interrupted;

void on_interrupt(int)
{
	interrupted = 1;
}

// Wait until @fd can be read or @deadline passes: 1 readable (data or
// EOF), 0 timed out, -1 error or interrupted.
int wait_readable(int fd, std::chrono::steady_clock::time_point deadline)
{
	for (;;) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			deadline - std::chrono::steady_clock::now()).count();
		struct pollfd p = {fd, POLLIN, 0};
		int r = poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, 1 << 30)));
		if (r >= 0 || errno != EINTR || interrupted)
			return r;
	}
}

// The workload's processes and pipes: an early return kills and reaps the
// processes still running and closes what is open (a run that succeeds
// has reaped them all: pid -1).
struct Processes {
	std::vector<pid_t> pids;
	std::vector<int> fds;	// read ends, one per process
	int go[2] = {-1, -1};	// closing go[1] releases them all

	Processes() = default;
	Processes(const Processes &) = delete;
	Processes &operator=(const Processes &) = delete;
	~Processes()
	{
		for (pid_t p : pids)
			if (p > 0)
				kill(p, SIGKILL);
		for (pid_t p : pids)
			if (p > 0)
				waitpid(p, nullptr, 0);
		for (int fd : fds)
			if (fd >= 0)
				close(fd);
		for (int fd : go)
			if (fd >= 0)
				close(fd);
	}
};

} // namespace

// Page i of process id holds template page (i * 7 + id) mod n, with its
// first 8 bytes replaced by i. Real data keeps its order (a folio holds
// adjacent pages of one kind, as in a process).
void workload_page(const std::vector<uint8_t> &tmpl, bool real, unsigned int id, size_t i,
		   uint8_t *out)
{
	size_t tpages = tmpl.size() / kPage;
	size_t t = real ? (i + id * 1031) % tpages : (i * 7 + id) % tpages;

	std::memcpy(out, tmpl.data() + t * kPage, kPage);
	uint64_t tag = (uint64_t(id) << 48) | i;
	std::memcpy(out, &tag, sizeof(tag));
}

Result<WorkloadResult> run_workload(const WorkloadConfig &cfg)
{
	SysfsTree tree(cfg.sysroot);
	if (cfg.procs < 1 || cfg.bytes_per_proc < kPage)
		return fail(EINVAL, "workload needs at least 1 process and 1 page");
	if (cfg.swapin_4k && cfg.mthp.empty())
		return fail(EINVAL, "4 KiB swap-in (--swapin-4k) needs an mTHP size (--mthp) to swap out with");
	std::vector<uint8_t> tmpl;
	size_t tlen = 1024 * kPage;
	if (!cfg.corpus.empty()) {
		auto c = load_corpus(cfg.corpus, tlen);
		if (!c)
			return std::unexpected(c.error());
		tmpl = std::move(*c);
	} else if (cfg.pattern == Pattern::Real) {
		auto c = real_corpus();
		if (!c)
			return std::unexpected(c.error());
		tmpl = **c;
	} else {
		tmpl = generate(cfg.pattern, tlen, 7);
	}
	// What the run changes is put back on every return, in the reverse
	// order of the guards: the processes killed and reaped, then the
	// cgroup removed (empty by then), then mTHP and THP as they were.
	// A value is recorded only once its write succeeded.
	std::string thp_old;
	const std::string thp_path = kThpDir + "/enabled";
	ScopeExit thp_back([&] {
		if (!thp_old.empty())
			(void)tree.write(thp_path, thp_old);
	});
	if (!cfg.thp.empty()) {
		auto old = tree.read_choice(thp_path);
		if (old.empty())
			return fail(ENOENT, fmt::format("--thp: cannot read {}", thp_path));
		if (auto w = tree.write(thp_path, cfg.thp); !w)
			return fail(EINVAL, fmt::format("--thp {}: {}", cfg.thp, w.error().message));
		thp_old = old;
	}
	std::string mthp_old, mthp_path;
	ScopeExit mthp_back([&] {
		if (!mthp_old.empty())
			(void)tree.write(mthp_path, mthp_old);
	});
	if (!cfg.mthp.empty()) {
		mthp_path = kThpDir + "/hugepages-" + cfg.mthp + "/enabled";
		auto old = tree.read_choice(mthp_path);
		if (old.empty())
			return fail(ENOENT, fmt::format("--mthp {}: cannot read {}", cfg.mthp, mthp_path));
		if (auto w = tree.write(mthp_path, "always"); !w)
			return fail(EINVAL, fmt::format("--mthp {}: {}", cfg.mthp, w.error().message));
		mthp_old = old;
	}
	std::string cg;
	ScopeExit cg_back([&] {
		std::error_code ec;
		if (!cg.empty())
			std::filesystem::remove(tree.resolve(cg), ec);
	});
	if (!cfg.cgroup.empty()) {
		const std::string path = kCgroupDir + "/" + cfg.cgroup;
		std::error_code ec;
		bool made = std::filesystem::create_directory(tree.resolve(path), ec);
		if (ec)
			return fail(ec.value(), fmt::format("cannot create cgroup {}: {}", path, ec.message()));
		// someone else's group is neither joined nor removed
		if (!made)
			return fail(EEXIST, fmt::format("cgroup {} exists already: name another (--cgroup) "
							"or remove it (rmdir {})", path, path));
		cg = path;
		if (!cfg.memory_max.empty())
			if (auto w = tree.write(cg + "/memory.max", cfg.memory_max); !w)
				return fail(EINVAL, fmt::format("memory.max {}: {}", cfg.memory_max,
								w.error().message));
	}
	auto vm0 = parse_kv(tree.read(kProcVmstat).value_or(""));
	auto ms0 = cg.empty() ? std::map<std::string, int64_t>{} :
		   parse_kv(tree.read(cg + "/memory.stat").value_or(""));
	auto start = std::chrono::steady_clock::now();
	struct rusage ru0;
	getrusage(RUSAGE_CHILDREN, &ru0);

	// Ctrl-C and SIGTERM end the run through the failure path; the
	// handlers are put back after the processes are reaped
	struct sigaction sa = {}, old_int = {}, old_term = {};
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	ScopeExit sig_back([&] {
		sigaction(SIGINT, &old_int, nullptr);
		sigaction(SIGTERM, &old_term, nullptr);
	});
	auto sys_fail = [](const char *what) {
		int e = errno;
		return fail(e, fmt::format("{} failed: {}", what, std::strerror(e)));
	};
	Processes procs;
	if (cfg.pipe(procs.go))
		return sys_fail("pipe");
	for (unsigned int i = 0; i < cfg.procs; i++) {
		int p[2];
		if (cfg.pipe(p))
			return sys_fail("pipe");
		pid_t pid = cfg.fork();
		if (pid < 0) {
			auto f = sys_fail("fork");
			close(p[0]);
			close(p[1]);
			return f;
		}
		if (pid == 0) {
			// the child never returns into run_workload(): its copies
			// of the guards must not run (they would undo the parent's
			// settings and kill its siblings)
			try {
				// a terminal's Ctrl-C ends the processes as before
				signal(SIGINT, SIG_DFL);
				signal(SIGTERM, SIG_DFL);
				close(p[0]);
				close(procs.go[1]);
				if (!cg.empty()) {
					std::ofstream(tree.resolve(cg + "/cgroup.procs")) << getpid() << "\n";
				}
				child(cfg, i, tmpl, p[1], procs.go[0]);
			} catch (...) {
			}
			_exit(7);
		}
		close(p[1]);
		procs.pids.push_back(pid);
		procs.fds.push_back(p[0]);
	}
	WorkloadResult res;
	std::string failure;
	const auto deadline = start + std::chrono::seconds(cfg.timeout_s);
	// every process has written its memory (or died: read gives 0), within
	// the time limit
	for (int fd : procs.fds) {
		char c = 0;
		int ready = wait_readable(fd, deadline);
		if (ready <= 0) {
			failure = interrupted ? "interrupted" :
				  fmt::format("timed out after {} s while the processes wrote their memory",
					      cfg.timeout_s);
			break;
		}
		if (read(fd, &c, 1) != 1 || c != 'W')
			failure = "a process died while writing its memory";
	}
	for (auto [file, field] : {std::pair{"stored_pages", &res.zswap_stored_pages},
				   std::pair{"pool_total_size", &res.zswap_pool_bytes}}) {
		const std::string path = kZswapDebugDir + "/" + file;
		if (auto v = tree.read(path)) {
			auto n = parse_number<int64_t>(*v, path);
			if (n)
				*field = *n;
			else if (failure.empty())
				failure = n.error().message;
		}
	}
	if (failure.empty() && cfg.between) {
		if (auto b = cfg.between(); !b)
			failure = b.error().message;
	}
	if (failure.empty() && cfg.swapin_4k)
		if (auto w = tree.write(mthp_path, "never"); !w)
			failure = fmt::format("--swapin-4k: {}", w.error().message);
	// the read end stays open until the go bytes are written: with every
	// process dead, a write would otherwise raise SIGPIPE and end this
	// process without putting anything back
	for (unsigned int i = 0; i < cfg.procs; i++)
		if (write(procs.go[1], "g", 1) != 1)
			failure = "cannot release the processes";
	close(procs.go[1]);
	procs.go[1] = -1;
	close(procs.go[0]);
	procs.go[0] = -1;
	auto next_progress = std::chrono::steady_clock::now();
	auto &pids = procs.pids;
	bool killed = false;		/* the run killed them: no signal is news */
	unsigned int signalled = 0;
	for (size_t i = 0; i < pids.size(); i++) {
		int st = 0;
		for (;;) {
			pid_t r = waitpid(pids[i], &st, WNOHANG);
			if (r == pids[i])
				break;
			auto now = std::chrono::steady_clock::now();
			if (cfg.progress && now >= next_progress) {
				auto vm = parse_kv(tree.read(kProcVmstat).value_or(""));
				cfg.progress(std::chrono::duration<double>(now - start).count(),
					     vm["zswpout"] - vm0["zswpout"], vm["zswpin"] - vm0["zswpin"]);
				next_progress = now + std::chrono::seconds(1);
			}
			if (interrupted || std::chrono::steady_clock::now() > deadline) {
				for (pid_t p : pids)
					if (p > 0)	/* -1: reaped (kill(-1) is everyone) */
						kill(p, SIGKILL);
				killed = true;
				waitpid(pids[i], &st, 0);
				failure = interrupted ? "interrupted" :
					  fmt::format("timed out after {} s", cfg.timeout_s);
				break;
			}
			std::this_thread::sleep_for(std::chrono::milliseconds(20));
		}
		pids[i] = -1;	/* reaped */
		char buf[128] = {};
		ssize_t n = read(procs.fds[i], buf, sizeof(buf) - 1);
		close(procs.fds[i]);
		procs.fds[i] = -1;
		long long wus = 0, rus = 0, pus = 0, tus = 0;
		unsigned long long bad = 0;
		if (failure.empty() && (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || n <= 0 ||
					sscanf(buf, "%lld %lld %llu %lld %lld", &wus, &rus, &bad, &pus,
					       &tus) != 5))
			failure = fmt::format("process {} failed (status {:#x}{})", i, st,
					      WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ?
					      ", killed: out of memory?" : "");
		else if (!failure.empty() && !killed && WIFSIGNALED(st) && !signalled++)
			// why the first failure happened: the first process a
			// signal ended (not after the run killed them itself)
			failure += fmt::format("; process {} was ended by signal {}", i,
					       WTERMSIG(st));
		double mb = cfg.bytes_per_proc / 1024.0;
		res.write_kbps += wus ? mb / (wus / 1e6) / cfg.procs : 0;
		res.read_kbps += rus ? mb * cfg.passes / (rus / 1e6) / cfg.procs : 0;
		res.bad_bytes += bad;
		res.pageout_s = std::max(res.pageout_s, pus / 1e6);
		res.readback_s = std::max(res.readback_s, rus / 1e6);
		res.touch_s = std::max(res.touch_s, tus / 1e6);
	}
	// a signal while the processes were finishing (they may all have
	// ended before the loop above looked): interrupted all the same
	if (interrupted && failure.empty())
		failure = "interrupted";
	res.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	struct rusage ru1;
	getrusage(RUSAGE_CHILDREN, &ru1);
	auto secs = [](const timeval &a, const timeval &b) {
		return (b.tv_sec - a.tv_sec) + (b.tv_usec - a.tv_usec) / 1e6;
	};
	res.sys_s = secs(ru0.ru_stime, ru1.ru_stime);
	res.user_s = secs(ru0.ru_utime, ru1.ru_utime);
	auto vm1 = parse_kv(tree.read(kProcVmstat).value_or(""));
	for (const char *k : {"zswpout", "zswpin", "zswpwb", "pswpout", "pswpin", "thp_swpout",
			      "thp_swpout_fallback", "swap_ra"})
		res.vmstat_delta[k] = vm1[k] - vm0[k];
	if (!cg.empty()) {
		auto ms1 = parse_kv(tree.read(cg + "/memory.stat").value_or(""));
		for (const char *k : {"zswap", "zswapped", "zswpout", "zswpin", "pswpout", "pswpin"})
			res.memstat_delta[k] = ms1[k] - ms0[k];
	}
	if (!failure.empty() && !cg.empty()) {
		// a kill by the cgroup's memory limit says so here
		auto ev = parse_kv(tree.read(cg + "/memory.events").value_or(""));
		failure += fmt::format(" (cgroup {}: oom {}, oom_kill {})", cg, ev["oom"],
				       ev["oom_kill"]);
	}
	if (!failure.empty())
		return fail(interrupted ? EINTR : EIO, "workload: " + failure);
	return res;
}

} // namespace zbatch
