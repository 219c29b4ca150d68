// SPDX-License-Identifier: GPL-2.0
// swap mode: the program is the swap user. A region of anonymous memory
// (large folios by the mTHP knobs) is written, paged out, dropped, read,
// squeezed by memory pressure and shared with forked children, and every
// read is checked against a per-page model.
#include "model.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/core.h>

namespace fs = std::filesystem;

namespace zbatch::model {

namespace {

constexpr const char *kThpRoot = "/sys/kernel/mm/transparent_hugepage";
// A child verifies at most the whole region, swapping it in: generous even
// for a slow guest, and still bounded.
constexpr auto kChildTimeout = std::chrono::seconds(120);

std::string read_file(const std::string &path)
{
	std::ifstream f(path);
	return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// /proc/vmstat's swap counters and the per-size mTHP swap counters.
std::map<std::string, uint64_t> swap_counters()
{
	std::map<std::string, uint64_t> out;
	std::ifstream vmstat("/proc/vmstat");
	std::string name;
	uint64_t value;
	while (vmstat >> name >> value)
		if (name == "pswpout" || name == "pswpin" || name.starts_with("thp_swpout"))
			out[name] = value;
	std::error_code ec;
	for (const auto &dir : fs::directory_iterator(kThpRoot, ec)) {
		std::string size = dir.path().filename().string();
		if (!size.starts_with("hugepages-"))
			continue;
		for (const char *stat : {"swpout", "swpout_fallback", "swpin"}) {
			std::ifstream f(dir.path() / "stats" / stat);
			if (f >> value)
				out[size.substr(10) + " " + stat] = value;
		}
	}
	return out;
}

enum class SwapOp : uint8_t { write, read, pageout, dontneed, pressure, fork };
constexpr std::array<const char *, 6> kSwapOpNames = {"write",    "read",     "pageout",
						       "dontneed", "pressure", "fork"};

struct Page {
	uint64_t id = 0;
	Kind kind = Kind::zero;
};

class SwapChecker {
public:
	explicit SwapChecker(const SwapConfig &c)
		: c_(c), rng_(mix64(c.seed)), folio_(c.folio_pages ? c.folio_pages : 16),
		  pages_(c.size_mib << 8), model_(pages_), log_(c.log, c.verbose)
	{
	}
	Result run();

private:
	uint8_t *page(uint64_t p) const { return region_ + p * kPage; }
	std::vector<uint64_t> folio_pages(uint64_t max_folios);
	std::vector<uint64_t> any_range(uint64_t max);
	std::vector<uint64_t> random_pages(uint64_t n);
	std::vector<uint64_t> all_pages() const;
	std::string list(std::span<const uint64_t> pages) const;
	void write_pages(uint64_t op, std::span<const uint64_t> pages);
	std::optional<Mismatch> verify(std::span<const uint64_t> pages);
	bool advise(uint64_t op, const std::string &desc, std::span<const uint64_t> pages,
		    int advice);
	void fail(uint64_t op, const std::string &what, std::string difference = {});
	void one_op(uint64_t op);
	void op_write(uint64_t op);
	void op_read(uint64_t op);
	void op_pageout(uint64_t op);
	void op_dontneed(uint64_t op);
	void op_pressure(uint64_t op);
	void op_fork(uint64_t op);
	uint64_t fill();
	std::string child(uint64_t op, std::span<const uint64_t> sample,
			  std::span<const uint64_t> writes);
	std::string summary(uint64_t ops, const std::map<std::string, uint64_t> &before,
			    const std::map<std::string, uint64_t> &after, double secs) const;

	const SwapConfig &c_;
	Rng rng_;
	uint64_t folio_;   // pages per folio: alignment of whole-folio ops
	uint64_t pages_;
	Mapping map_;
	uint8_t *region_ = nullptr;   // 2 MiB aligned, so folios are aligned
	std::vector<Page> model_;
	OpLog log_;
	std::array<uint64_t, kSwapOpNames.size()> ops_{};
	uint64_t pages_written_ = 0, pages_verified_ = 0;
	Failure failure_;
	bool failed_ = false;
};

void SwapChecker::fail(uint64_t op, const std::string &what, std::string difference)
{
	if (failed_)
		return;
	failed_ = true;
	failure_ = {op, UINT64_MAX, fmt::format("FAIL seed {} op #{}: {}", c_.seed, op, what),
		    std::move(difference)};
}

std::vector<uint64_t> SwapChecker::folio_pages(uint64_t max_folios)
{
	uint64_t folios = pages_ / folio_;
	uint64_t n = std::min(folios, rng_.range(1, max_folios));
	uint64_t first = folio_ * rng_.below(folios - n + 1);
	std::vector<uint64_t> v(n * folio_);
	for (uint64_t i = 0; i < v.size(); i++)
		v[i] = first + i;
	return v;
}

// Anywhere, any length: partial folios too (the kernel may split them).
std::vector<uint64_t> SwapChecker::any_range(uint64_t max)
{
	uint64_t first = rng_.below(pages_);
	uint64_t n = std::min(pages_ - first, rng_.range(1, max));
	std::vector<uint64_t> v(n);
	for (uint64_t i = 0; i < n; i++)
		v[i] = first + i;
	return v;
}

std::vector<uint64_t> SwapChecker::all_pages() const
{
	std::vector<uint64_t> v(pages_);
	for (uint64_t i = 0; i < pages_; i++)
		v[i] = i;
	return v;
}

std::vector<uint64_t> SwapChecker::random_pages(uint64_t n)
{
	std::vector<uint64_t> v(n);
	for (auto &p : v)
		p = rng_.below(pages_);
	return v;
}

// "1024+16" for a range, else the page numbers.
std::string SwapChecker::list(std::span<const uint64_t> pages) const
{
	bool range = pages.size() > 1 && pages.back() == pages.front() + pages.size() - 1;
	if (range)
		return fmt::format("{}+{}", pages.front(), pages.size());
	std::string s;
	for (uint64_t p : pages)
		s += fmt::format("{}{}", s.empty() ? "" : ",", p);
	return s;
}

void SwapChecker::write_pages(uint64_t op, std::span<const uint64_t> pages)
{
	std::vector<Kind> kinds = choose_kinds(rng_, pages.size());
	for (size_t i = 0; i < pages.size(); i++) {
		fill_page(page(pages[i]), write_id(op, i), pages[i], kinds[i]);
		model_[pages[i]] = {write_id(op, i), kinds[i]};
	}
	pages_written_ += pages.size();
}

std::optional<Mismatch> SwapChecker::verify(std::span<const uint64_t> pages)
{
	for (uint64_t p : pages) {
		Write want{model_[p].id, model_[p].kind, 0, 0};
		if (auto m = check_page(page(p), p, std::span(&want, 1)))
			return m;
		pages_verified_++;
	}
	return std::nullopt;
}

// madvise over the extent of pages (they are one range).
bool SwapChecker::advise(uint64_t op, const std::string &desc, std::span<const uint64_t> pages,
			 int advice)
{
	if (madvise(page(pages.front()), pages.size() * kPage, advice) == 0)
		return true;
	fail(op, fmt::format("{}: madvise: {}", desc, std::strerror(errno)));
	return false;
}

void SwapChecker::op_write(uint64_t op)
{
	auto pages = rng_.chance(25) ? folio_pages(1) : random_pages(rng_.range(1, 32));
	write_pages(op, pages);
	std::string kinds;
	for (uint64_t p : pages)
		kinds += kind_letter(model_[p].kind);
	log_.add(fmt::format("#{} write {} {}", op, list(pages), kinds));
}

void SwapChecker::op_read(uint64_t op)
{
	auto pages = rng_.chance(50) ? folio_pages(4) : random_pages(rng_.range(1, 32));
	std::string desc = fmt::format("#{} read {}", op, list(pages));
	log_.add(desc);
	if (auto m = verify(pages))
		fail(op, desc + ": " + m->what, m->difference);
}

void SwapChecker::op_pageout(uint64_t op)
{
	auto pages = rng_.chance(60) ? folio_pages(8) : any_range(2 * folio_);
	std::string desc = fmt::format("#{} pageout {}", op, list(pages));
	log_.add(desc);
	advise(op, desc, pages, MADV_PAGEOUT);
}

void SwapChecker::op_dontneed(uint64_t op)
{
	auto pages = rng_.chance(50) ? folio_pages(2) : any_range(2 * folio_);
	std::string desc = fmt::format("#{} dontneed {}", op, list(pages));
	log_.add(desc);
	if (!advise(op, desc, pages, MADV_DONTNEED))
		return;
	for (size_t i = 0; i < pages.size(); i++)
		model_[pages[i]] = {write_id(op, i), Kind::zero};
}

// A balloon the size of --pressure, touched and dropped: reclaim swaps the
// region out under kswapd and direct reclaim, not only by MADV_PAGEOUT,
// and frees slots that later swap-outs reuse. Its pages compress well and
// differ, so reclaim gains memory by swapping them to compressed RAM.
void SwapChecker::op_pressure(uint64_t op)
{
	std::string desc = fmt::format("#{} pressure {} MiB", op, c_.pressure_mib);
	log_.add(desc);
	size_t len = c_.pressure_mib << 20;
	Mapping balloon(len);
	if (!balloon.get()) {
		fail(op, desc + ": mmap failed");
		return;
	}
	for (size_t off = 0; off < len; off += kPage) {
		std::memset(balloon.get() + off, 'a' + static_cast<int>(off / kPage % 26), kPage);
		std::memcpy(balloon.get() + off, &off, sizeof(off));
	}
}

// Reads until EOF; false when the deadline passed first.
bool read_until_eof(int fd, std::chrono::steady_clock::time_point deadline, std::string *out)
{
	char buf[4096];
	for (;;) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			deadline - std::chrono::steady_clock::now());
		if (left.count() <= 0)
			return false;
		pollfd p{fd, POLLIN, 0};
		int r = poll(&p, 1, static_cast<int>(left.count()));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			return true;
		out->append(buf, static_cast<size_t>(n));
	}
}

// In the child, after fork: model_ is the child's own copy, so its writes
// update the child's view only. Returns "" or what went wrong, the first
// difference after a NUL.
std::string SwapChecker::child(uint64_t op, std::span<const uint64_t> sample,
			       std::span<const uint64_t> writes)
{
	auto failed = [](const char *when, const Mismatch &m) {
		return fmt::format("fork child, {}: {}", when, m.what) + '\0' + m.difference;
	};
	if (auto m = verify(sample))
		return failed("before writing", *m);
	write_pages(op, writes);
	for (uint64_t p : writes)
		madvise(page(p / folio_ * folio_), folio_ * kPage, MADV_PAGEOUT);
	if (auto m = verify(writes))
		return failed("its own writes after pageout", *m);
	if (auto m = verify(sample))
		return failed("after its writes", *m);
	return {};
}

// Copy-on-write over swap: a child sees the parent's pages (swapped out
// or not), writes and pages out its own copies, and the parent's pages
// must keep the parent's values.
void SwapChecker::op_fork(uint64_t op)
{
	std::vector<uint64_t> sample = rng_.chance(20) ? all_pages() : random_pages(64);
	std::vector<uint64_t> writes = random_pages(rng_.range(1, 16));
	std::string desc = fmt::format("#{} fork: child verifies {} pages, writes {}", op,
				       sample.size(), list(writes));
	log_.add(desc);
	int fds[2];
	if (pipe2(fds, O_CLOEXEC)) {
		fail(op, desc + ": pipe: " + std::strerror(errno));
		return;
	}
	std::fflush(nullptr);   // or the child's exit would print our buffers again
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		std::string msg = child(op, sample, writes);
		ssize_t ignored = write(fds[1], msg.data(), msg.size());
		(void)ignored;
		_exit(msg.empty() ? 0 : 1);
	}
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		fail(op, desc + ": fork: " + std::strerror(errno));
		return;
	}
	std::string msg;
	bool exited = read_until_eof(fds[0], std::chrono::steady_clock::now() + kChildTimeout, &msg);
	close(fds[0]);
	if (!exited)
		kill(pid, SIGKILL);
	int status = 0;
	waitpid(pid, &status, 0);
	if (!exited) {
		fail(op, fmt::format("{}: child hung (killed after {} s)", desc, kChildTimeout.count()));
		return;
	}
	if (!msg.empty() || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		size_t nul = msg.find('\0');
		std::string what = msg.empty() ? fmt::format("child died (status {:#x})", status)
					       : msg.substr(0, nul);
		fail(op, desc + ": " + what, nul == std::string::npos ? "" : msg.substr(nul + 1));
		return;
	}
	if (auto m = verify(writes))
		fail(op, desc + ": the parent's page after the child wrote it: " + m->what,
		     m->difference);
}

// The first ops: every page written, whole folios at a time (so that they
// go out as large folios), then the whole region paged out. Swap holds
// the region from the start; what follows faults it in, rewrites and
// drops it over slots in use, and frees slots that later swap-outs reuse.
// Returns the next op's number.
uint64_t SwapChecker::fill()
{
	uint64_t op = 1, chunk = kMaxPagesPerOp / folio_ * folio_;
	for (uint64_t first = 0; first < pages_ && !failed_; first += chunk, op++) {
		std::vector<uint64_t> pages(std::min(chunk, pages_ - first));
		for (uint64_t i = 0; i < pages.size(); i++)
			pages[i] = first + i;
		write_pages(op, pages);
		log_.add(fmt::format("#{} fill {}", op, list(pages)));
	}
	std::vector<uint64_t> all = all_pages();
	std::string desc = fmt::format("#{} pageout {} (the whole region)", op, list(all));
	log_.add(desc);
	advise(op, desc, all, MADV_PAGEOUT);
	return op + 1;
}

void SwapChecker::one_op(uint64_t op)
{
	std::array<unsigned, kSwapOpNames.size()> weights = {30, 22, 25, 8, 5, c_.fork ? 5u : 0u};
	auto kind = static_cast<SwapOp>(rng_.pick(weights));
	ops_[static_cast<size_t>(kind)]++;
	switch (kind) {
	case SwapOp::write: op_write(op); break;
	case SwapOp::read: op_read(op); break;
	case SwapOp::pageout: op_pageout(op); break;
	case SwapOp::dontneed: op_dontneed(op); break;
	case SwapOp::pressure: op_pressure(op); break;
	case SwapOp::fork: op_fork(op); break;
	}
}

std::string SwapChecker::summary(uint64_t ops, const std::map<std::string, uint64_t> &before,
				 const std::map<std::string, uint64_t> &after, double secs) const
{
	std::string counts;
	for (size_t i = 0; i < kSwapOpNames.size(); i++)
		counts += fmt::format("{}{} {}", i ? ", " : "", kSwapOpNames[i], ops_[i]);
	std::string stats;
	for (const auto &[name, value] : after) {
		uint64_t delta = value - (before.contains(name) ? before.at(name) : 0);
		// the per-size counters only where something happened
		if (delta || !std::isdigit(static_cast<unsigned char>(name[0])))
			stats += fmt::format("{}{} +{}", stats.empty() ? "" : ", ", name, delta);
	}
	return fmt::format("seed {}: {} ops ({}); pages written {}, verified {}; bytes written {}; "
			   "{} MiB region, folio {} pages; swap: {}; {:.1f} s",
			   c_.seed, ops, counts, pages_written_, pages_verified_,
			   pages_written_ * kPage, c_.size_mib, folio_, stats, secs);
}

Result SwapChecker::run()
{
	map_ = Mapping((c_.size_mib << 20) + (size_t{2} << 20));
	if (!map_.get())
		return Result{Outcome::skip, "cannot map the region", {}, {}};
	auto base = reinterpret_cast<uintptr_t>(map_.get());
	region_ = reinterpret_cast<uint8_t *>((base + (2 << 20) - 1) & ~uintptr_t{(2 << 20) - 1});
	auto before = swap_counters();
	auto t0 = std::chrono::steady_clock::now();
	auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
				     std::chrono::duration<double>(c_.seconds));
	uint64_t op = fill(), last = op + c_.ops;
	for (; op < last && !failed_; op++) {
		if (c_.seconds > 0 && std::chrono::steady_clock::now() >= deadline)
			break;
		one_op(op);
	}
	if (!failed_) {
		std::vector<uint64_t> all = all_pages();
		std::string desc = fmt::format("#{} final read of every page {}", op, list(all));
		log_.add(desc);
		if (auto m = verify(all))
			fail(op, desc + ": " + m->what, m->difference);
	}
	auto after = swap_counters();
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	if (!failed_ && after["pswpout"] == before["pswpout"])
		fail(op, "nothing was swapped out (pswpout did not move): is swap on, on the "
			 "device under test?");
	Result r;
	r.outcome = failed_ ? Outcome::fail : Outcome::pass;
	r.summary = (failed_ ? "counts: " : "passed: ") + summary(op - 1, before, after, secs);
	r.failure = failure_;
	r.log_tail = log_.tail();
	return r;
}

// ---- the mTHP knobs --------------------------------------------------------------

// What MthpKnobs changed, kept where a signal handler can reach it: fixed
// arrays, written back with open/write/close only (async-signal-safe).
struct SavedKnob {
	char path[256];
	char value[32];
	size_t len;
};
SavedKnob g_saved[64];
std::atomic<int> g_nsaved{0};
pid_t g_owner;   // the process that changed them: not a forked child

void restore_saved()
{
	int n = g_nsaved.exchange(0);
	for (int i = 0; i < n; i++) {
		int fd = open(g_saved[i].path, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t ignored = write(fd, g_saved[i].value, g_saved[i].len);
		(void)ignored;
		close(fd);
	}
}

void on_fatal_signal(int sig)
{
	if (getpid() == g_owner)
		restore_saved();
	signal(sig, SIG_DFL);
	raise(sig);
}

// "always inherit madvise [never]" -> "never"; a plain value as it is.
std::string current_choice(const std::string &path)
{
	std::string s = read_file(path);
	size_t open = s.find('['), close = s.find(']');
	if (open != std::string::npos && close > open)
		return s.substr(open + 1, close - open - 1);
	while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
		s.pop_back();
	return s;
}

bool write_knob(const std::string &path, const std::string &value)
{
	std::ofstream f(path, std::ios::trunc);
	f << value;
	f.flush();
	return f.good();
}

}  // namespace

namespace {

// The run's own memory cgroup (v2) with memory.max below the region: the
// region never fits, so reclaim swaps it out and in all the time (slots
// freed and reused), not only where MADV_PAGEOUT says. The run and its
// children are in it; it goes when the run ends.
class MemoryCgroup {
public:
	std::expected<void, std::string> enter(uint64_t max_mib)
	{
		const std::string root = "/sys/fs/cgroup";
		if (!fs::exists(root + "/cgroup.subtree_control"))
			return std::unexpected("no cgroup v2 at " + root);
		if (read_file(root + "/cgroup.subtree_control").find("memory") == std::string::npos &&
		    !write(root + "/cgroup.subtree_control", "+memory"))
			return std::unexpected("cannot enable the memory controller in " + root);
		dir_ = fmt::format("{}/zbatch_model.{}", root, getpid());
		std::error_code ec;
		if (!fs::create_directory(dir_, ec))
			return std::unexpected(fmt::format("cannot create {}: {}", dir_, ec.message()));
		if (!write(dir_ + "/memory.max", fmt::format("{}M", max_mib)) ||
		    !write(dir_ + "/cgroup.procs", std::to_string(getpid())))
			return std::unexpected("cannot set up " + dir_);
		return {};
	}
	~MemoryCgroup()
	{
		if (dir_.empty())
			return;
		write("/sys/fs/cgroup/cgroup.procs", std::to_string(getpid()));
		std::error_code ec;
		fs::remove(dir_, ec);
	}

private:
	static bool write(const std::string &path, const std::string &v)
	{
		std::ofstream f(path);
		f << v << "\n";
		f.flush();
		return static_cast<bool>(f);
	}
	std::string dir_;
};

} // namespace

Result run_swap(const SwapConfig &c)
{
	MemoryCgroup cg;
	if (c.memory_max_mib) {
		if (auto r = cg.enter(c.memory_max_mib); !r)
			return Result{Outcome::skip, "--memory-max: " + r.error(), {}, {}};
	}
	return SwapChecker(c).run();
}

std::vector<std::string> active_swaps(const std::string &proc_swaps)
{
	std::ifstream f(proc_swaps);
	std::vector<std::string> out;
	std::string line;
	std::getline(f, line);   // the header
	while (std::getline(f, line))
		if (!line.empty())
			out.push_back(line);
	return out;
}

MthpKnobs::MthpKnobs(std::string root) : root_(std::move(root)) {}

MthpKnobs::~MthpKnobs()
{
	restore();
}

std::expected<void, std::string> MthpKnobs::set_only(unsigned size_kb)
{
	std::string chosen = fmt::format("{}/hugepages-{}kB/enabled", root_, size_kb);
	if (size_kb && !fs::exists(chosen))
		return std::unexpected(fmt::format("no mTHP knob {} (a kernel without mTHP?)", chosen));
	std::vector<fs::path> knobs;
	std::error_code ec;
	for (const auto &dir : fs::directory_iterator(root_, ec))
		if (dir.path().filename().string().starts_with("hugepages-") &&
		    fs::exists(dir.path() / "enabled"))
			knobs.push_back(dir.path() / "enabled");
	g_owner = getpid();
	for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT})
		signal(sig, on_fatal_signal);
	for (const auto &knob : knobs) {
		std::string want = knob.string() == chosen ? "always" : "never";
		std::string was = current_choice(knob.string());
		if (was == want)
			continue;
		int n = g_nsaved.load();
		if (n == static_cast<int>(std::size(g_saved)) ||
		    knob.string().size() >= sizeof(g_saved[0].path) ||
		    was.size() >= sizeof(g_saved[0].value)) {
			restore();
			return std::unexpected("too many mTHP knobs to save: " + knob.string());
		}
		SavedKnob &s = g_saved[n];
		std::snprintf(s.path, sizeof(s.path), "%s", knob.c_str());
		s.len = static_cast<size_t>(std::snprintf(s.value, sizeof(s.value), "%s", was.c_str()));
		g_nsaved = n + 1;   // saved before it is changed
		if (!write_knob(knob.string(), want)) {
			restore();
			return std::unexpected(fmt::format("cannot write {} to {}", want, knob.string()));
		}
	}
	return {};
}

void MthpKnobs::restore()
{
	restore_saved();
}

}  // namespace zbatch::model
