// SPDX-License-Identifier: GPL-2.0
// blockdev mode: random writes, reads, discards and write-zeroes of page
// ranges against a Device, every read checked against the write history.
#include "model.hpp"

#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <thread>

#include <fmt/core.h>

namespace zbatch::model {

const char *buf_name(Buf b)
{
	static constexpr const char *names[] = {"thp", "pages", "sector"};
	return names[static_cast<size_t>(b)];
}

// ---- the real device: a file descriptor ----------------------------------------

namespace {

class FdDevice final : public Device {
public:
	FdDevice(int fd, uint64_t pages, bool block) : fd_(fd), pages_(pages), block_(block) {}
	~FdDevice() override { close(fd_); }

	uint64_t pages() const override { return pages_; }

	ssize_t readv(uint64_t page, std::span<const iovec> iov) override
	{
		ssize_t r = preadv(fd_, iov.data(), static_cast<int>(iov.size()), offset(page));
		return r < 0 ? -errno : r;
	}

	ssize_t writev(uint64_t page, std::span<const iovec> iov) override
	{
		ssize_t r = pwritev(fd_, iov.data(), static_cast<int>(iov.size()), offset(page));
		return r < 0 ? -errno : r;
	}

	int discard(uint64_t page, uint64_t n) override
	{
		if (block_)
			return range_ioctl(BLKDISCARD, page, n);
		return fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset(page),
				 offset(n)) ? -errno : 0;
	}

	int zeroout(uint64_t page, uint64_t n) override
	{
		if (block_)
			return range_ioctl(BLKZEROOUT, page, n);
		if (fallocate(fd_, FALLOC_FL_ZERO_RANGE, offset(page), offset(n)) == 0)
			return 0;
		if (errno != EOPNOTSUPP)
			return -errno;
		return write_zeros(page, n);   // tmpfs has no ZERO_RANGE
	}

private:
	static off_t offset(uint64_t page) { return static_cast<off_t>(page * kPage); }

	int range_ioctl(unsigned long req, uint64_t page, uint64_t n)
	{
		uint64_t range[2] = {page * kPage, n * kPage};
		return ioctl(fd_, req, range) ? -errno : 0;
	}

	int write_zeros(uint64_t page, uint64_t n)
	{
		// page-aligned, for O_DIRECT
		alignas(kPage) static const uint8_t zeros[kPage] = {};
		for (uint64_t i = 0; i < n; i++) {
			ssize_t r = pwrite(fd_, zeros, kPage, offset(page + i));
			if (r < 0)
				return -errno;
			if (r != static_cast<ssize_t>(kPage))
				return -EIO;
		}
		return 0;
	}

	int fd_;
	uint64_t pages_;
	bool block_;
};

}  // namespace

std::expected<std::unique_ptr<Device>, std::string> open_device(const std::string &path,
								std::string *note)
{
	int fd = open(path.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
	struct stat st;
	bool regular = stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
	if (fd < 0 && errno == EINVAL && regular) {
		fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
		*note = "O_DIRECT not supported by this file system: buffered I/O";
	}
	if (fd < 0)
		return std::unexpected(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
	if (fstat(fd, &st) || !(S_ISBLK(st.st_mode) || S_ISREG(st.st_mode))) {
		close(fd);
		return std::unexpected(path + " is not a block device or a regular file");
	}
	uint64_t bytes = static_cast<uint64_t>(st.st_size);
	if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &bytes)) {
		int err = errno;
		close(fd);
		return std::unexpected(fmt::format("BLKGETSIZE64 {}: {}", path, std::strerror(err)));
	}
	return std::make_unique<FdDevice>(fd, bytes / kPage, S_ISBLK(st.st_mode));
}

// ---- I/O buffers ------------------------------------------------------------------

namespace {

constexpr size_t kHuge = size_t{2} << 20;

// AnonHugePages of the mapping that holds addr, from /proc/self/smaps.
uint64_t anon_huge_kb(const void *addr)
{
	std::ifstream smaps("/proc/self/smaps");
	auto a = reinterpret_cast<uintptr_t>(addr);
	bool inside = false;
	std::string line;
	while (std::getline(smaps, line)) {
		uintptr_t lo, hi;
		// "lo-hi perms ..." starts a mapping; field lines are "Name: value"
		if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {
			inside = lo <= a && a < hi;
			continue;
		}
		unsigned long kb;
		if (inside && std::sscanf(line.c_str(), "AnonHugePages: %lu kB", &kb) == 1)
			return kb;
	}
	return 0;
}

// One thread's buffers. The same logical pages are laid out three ways,
// because the layout decides the bio's bvecs under O_DIRECT:
//   thp: one 2 MiB huge page, so a multi-page I/O is one multi-page bvec;
//   pages: one iovec per page, each a separate base page, shuffled;
//   sector: 512 bytes past a page boundary, so every bvec is sub-page.
class Buffers {
public:
	static std::expected<Buffers, std::string> create(uint64_t max_pages, bool thp)
	{
		Buffers b;
		size_t len = max_pages * kPage;
		b.max_pages_ = max_pages;
		if (thp) {
			size_t huge_len = (len + kHuge - 1) / kHuge * kHuge;
			b.thp_map_ = Mapping(huge_len + kHuge);
			if (!b.thp_map_.get())
				return std::unexpected("mmap of the THP buffer failed");
			auto base = reinterpret_cast<uintptr_t>(b.thp_map_.get());
			b.thp_ = reinterpret_cast<uint8_t *>((base + kHuge - 1) & ~(kHuge - 1));
			// whole huge pages: a VMA smaller than 2 MiB gets none
			madvise(b.thp_, huge_len, MADV_HUGEPAGE);
			std::memset(b.thp_, 1, len);
			if (anon_huge_kb(b.thp_) == 0)
				return std::unexpected(
					"THP not available: multi-page bvecs cannot be tested "
					"(the buffer got no huge page; transparent_hugepage/enabled "
					"must be always or madvise; --no-thp runs without)");
		}
		b.pages_map_ = Mapping(len);
		b.sector_map_ = Mapping(len + kPage);
		if (!b.pages_map_.get() || !b.sector_map_.get())
			return std::unexpected("mmap of the I/O buffers failed");
		madvise(b.pages_map_.get(), len, MADV_NOHUGEPAGE);
		return b;
	}

	// The n logical pages of buffer kind b: their addresses and the iovecs.
	void layout(Buf b, uint64_t n, Rng &rng, std::vector<uint8_t *> &pages,
		    std::vector<iovec> &iov) const
	{
		pages.resize(n);
		iov.clear();
		if (b == Buf::pages) {
			std::vector<uint64_t> order(max_pages_);
			for (uint64_t i = 0; i < max_pages_; i++)
				order[i] = i;
			for (uint64_t i = 0; i < n; i++) {
				std::swap(order[i], order[rng.range(i, max_pages_ - 1)]);
				pages[i] = pages_map_.get() + order[i] * kPage;
				iov.push_back({pages[i], kPage});
			}
			return;
		}
		uint8_t *base = b == Buf::thp ? thp_ : sector_map_.get() + 512;
		for (uint64_t i = 0; i < n; i++)
			pages[i] = base + i * kPage;
		iov.push_back({base, n * kPage});
	}

private:
	uint64_t max_pages_ = 0;
	Mapping thp_map_, pages_map_, sector_map_;
	uint8_t *thp_ = nullptr;
};

}  // namespace

// ---- the checker ------------------------------------------------------------------

namespace {

enum class OpKind : uint8_t { write, read, discard, zeroout, rewrite, writeback, recompress };
constexpr std::array<const char *, 7> kOpNames = {"write",   "read",      "discard",   "zeroout",
						   "rewrite", "writeback", "recompress"};
constexpr size_t kRecentGroups = 16;

struct Counts {
	std::array<uint64_t, kOpNames.size()> ops{};
	std::array<uint64_t, 3> bufs{};
	uint64_t pages_written = 0, pages_read = 0, pages_verified = 0;
	uint64_t bytes_written = 0, bytes_read = 0, sector_einval = 0;
	// writeback ops refused: another ran (EAGAIN), backing device full
	// (ENOSPC), a backing write failed (EIO, with writeback_eio_ok)
	uint64_t wb_busy = 0, wb_full = 0, wb_eio = 0;

	void add(const Counts &o)
	{
		for (size_t i = 0; i < ops.size(); i++)
			ops[i] += o.ops[i];
		for (size_t i = 0; i < bufs.size(); i++)
			bufs[i] += o.bufs[i];
		pages_written += o.pages_written;
		pages_read += o.pages_read;
		pages_verified += o.pages_verified;
		bytes_written += o.bytes_written;
		bytes_read += o.bytes_read;
		sector_einval += o.sector_einval;
		wb_busy += o.wb_busy;
		wb_full += o.wb_full;
		wb_eio += o.wb_eio;
	}
};

struct Extent {
	uint64_t first, n;
};

// One thread: its pages [lo, hi), its randomness, its buffers, and the
// aligned groups it lately wrote whole (where the rewrite op aims).
struct Worker {
	unsigned id;
	uint64_t lo, hi;
	Rng rng;
	Buffers bufs;
	std::vector<uint64_t> recent;
	size_t recent_next = 0;
	std::optional<Extent> follow;   // a whole-group read due next
	Counts counts;
	std::vector<uint8_t *> pages;   // the current op's pages and iovecs
	std::vector<iovec> iov;
};

enum class Io { done, refused, failed };

class Checker {
public:
	Checker(Device &dev, const BlockConfig &c, uint64_t pages)
		: dev_(dev), c_(c), pages_(pages), group_(c.unit_pages > 1 ? c.unit_pages : 4),
		  log_(c.log, c.verbose), history_(pages)
	{
	}
	Result run();

private:
	std::expected<std::vector<Worker>, Result> make_workers();
	void work(Worker &w);
	void one_op(Worker &w, uint64_t op);
	Extent choose_extent(Worker &w);
	Buf choose_buf(Worker &w);
	void rewrite(Worker &w, uint64_t op);
	void writeback(Worker &w, uint64_t op);
	void recompress(Worker &w, uint64_t op);
	void remember_groups(Worker &w, Extent e);
	void do_write(Worker &w, uint64_t op, Extent e, std::string_view name);
	void do_zero(Worker &w, uint64_t op, Extent e, OpKind kind, std::string_view name);
	void do_read(Worker &w, uint64_t op, Extent e, std::string_view name, Buf b);
	Io check_io(Worker &w, uint64_t op, const std::string &desc, ssize_t r, size_t want,
		    std::optional<Buf> b);
	void fail(uint64_t op, uint64_t page, const std::string &what, std::string difference = {});
	std::string summary(const Counts &n, double secs) const;

	// The model's side of an op; every one takes mu_.
	uint64_t begin_write(uint64_t op, Extent e, std::span<const Kind> kinds);
	uint64_t end_write(uint64_t op, Extent e, uint64_t start, bool done);
	uint64_t begin_read();
	std::vector<std::vector<Write>> end_read(Extent e, uint64_t start, uint64_t *end);

	Device &dev_;
	const BlockConfig &c_;
	uint64_t pages_;
	uint64_t group_;   // the rewrite op's group: the unit, or 4 pages with 1-page units
	OpLog log_;
	// Protects history_, running_, stamp_, failure_ and failed_. Stamps are
	// taken under it, not from a bare atomic, so that a write's history
	// entry exists before any stamp that follows its start. Never held
	// across I/O.
	std::mutex mu_;
	History history_;
	std::set<uint64_t> running_;   // start stamps of the ops in flight
	uint64_t stamp_ = 1;           // 0 is the initial zeros' stamp
	Failure failure_;
	bool failed_ = false;
	std::atomic<uint64_t> next_op_{1};
	std::atomic<bool> stop_{false};
	std::chrono::steady_clock::time_point deadline_;
};

uint64_t Checker::begin_write(uint64_t op, Extent e, std::span<const Kind> kinds)
{
	std::lock_guard lock(mu_);
	uint64_t start = stamp_++;
	running_.insert(start);
	for (uint64_t i = 0; i < e.n; i++)
		history_.begin_write(e.first + i, Write{write_id(op, i), kinds[i], start, kOpen});
	return start;
}

uint64_t Checker::end_write(uint64_t op, Extent e, uint64_t start, bool done)
{
	std::lock_guard lock(mu_);
	uint64_t end = stamp_++;
	running_.erase(start);
	uint64_t oldest = running_.empty() ? stamp_ : *running_.begin();
	for (uint64_t i = 0; i < e.n; i++) {
		if (done)
			history_.end_write(e.first + i, write_id(op, i), end, oldest);
		else
			history_.cancel_write(e.first + i, write_id(op, i));
	}
	return end;
}

uint64_t Checker::begin_read()
{
	std::lock_guard lock(mu_);
	uint64_t start = stamp_++;
	running_.insert(start);
	return start;
}

std::vector<std::vector<Write>> Checker::end_read(Extent e, uint64_t start, uint64_t *end)
{
	std::lock_guard lock(mu_);
	*end = stamp_++;
	running_.erase(start);
	std::vector<std::vector<Write>> out;
	for (uint64_t i = 0; i < e.n; i++)
		out.push_back(history_.candidates(e.first + i, start, *end));
	return out;
}

void Checker::fail(uint64_t op, uint64_t page, const std::string &what, std::string difference)
{
	std::lock_guard lock(mu_);
	stop_ = true;
	if (failed_)
		return;   // the first difference is the one worth reading
	failed_ = true;
	failure_ = {op, page, fmt::format("FAIL seed {} op #{}: {}", c_.seed, op, what),
		    std::move(difference)};
}

// EINVAL from a 512-byte aligned buffer is the device refusing the
// alignment before any I/O (a 4 KiB logical block size): reported in the
// summary, not a data failure. Anything else that is not the whole
// transfer fails the run.
Io Checker::check_io(Worker &w, uint64_t op, const std::string &desc, ssize_t r, size_t want,
		     std::optional<Buf> b)
{
	if (r == static_cast<ssize_t>(want))
		return Io::done;
	if (r == -EINVAL && b == Buf::sector) {
		w.counts.sector_einval++;
		return Io::refused;
	}
	if (r < 0)
		fail(op, UINT64_MAX, fmt::format("{}: I/O error {} ({})", desc,
						 std::strerror(static_cast<int>(-r)), -r));
	else
		fail(op, UINT64_MAX, fmt::format("{}: short transfer: {} of {} bytes", desc, r, want));
	return Io::failed;
}

Buf Checker::choose_buf(Worker &w)
{
	std::array<unsigned, 3> weights = {c_.thp ? 40u : 0u, 35u, c_.sector ? 25u : 0u};
	Buf b = static_cast<Buf>(w.rng.pick(weights));
	w.counts.bufs[static_cast<size_t>(b)]++;
	return b;
}

// Lengths and offsets lean toward whole units, since units are what the
// device stores differently, and toward one page, a 4 KiB swap-in's read
// (the device's one-page path, read_page()); most are still anything.
Extent Checker::choose_extent(Worker &w)
{
	uint64_t span = w.hi - w.lo;
	uint64_t maxn = std::min(c_.max_pages, span);
	uint64_t u = c_.unit_pages;
	uint64_t n = w.rng.chance(20) ? 1 : w.rng.range(1, maxn);
	if (u > 1 && w.rng.chance(40))
		n = std::min(maxn, u * w.rng.range(1, std::max<uint64_t>(1, maxn / u)));
	uint64_t aligned = (w.lo + u - 1) / u * u;
	if (u > 1 && w.rng.chance(50) && aligned + n <= w.hi)
		return {aligned + u * w.rng.below((w.hi - n - aligned) / u + 1), n};
	return {w.lo + w.rng.below(span - n + 1), n};
}

void Checker::remember_groups(Worker &w, Extent e)
{
	for (uint64_t g = (e.first + group_ - 1) / group_ * group_; g + group_ <= e.first + e.n;
	     g += group_) {
		if (w.recent.size() < kRecentGroups)
			w.recent.push_back(g);
		else
			w.recent[w.recent_next++ % kRecentGroups] = g;
	}
}

void Checker::do_write(Worker &w, uint64_t op, Extent e, std::string_view name)
{
	std::vector<Kind> kinds = choose_kinds(w.rng, e.n);
	Buf b = choose_buf(w);
	w.bufs.layout(b, e.n, w.rng, w.pages, w.iov);
	for (uint64_t i = 0; i < e.n; i++)
		fill_page(w.pages[i], write_id(op, i), e.first + i, kinds[i]);
	std::string desc = fmt::format("#{} t{} {} {}+{} {} {}", op, w.id, name, e.first, e.n,
				       buf_name(b), kind_letters(kinds));
	uint64_t start = begin_write(op, e, kinds);
	ssize_t r = dev_.writev(e.first, w.iov);
	Io io = check_io(w, op, desc, r, e.n * kPage, b);
	uint64_t end = end_write(op, e, start, io == Io::done);
	log_.add(fmt::format("{} [{},{}]{}", desc, start, end, io == Io::refused ? " EINVAL" : ""));
	if (io != Io::done)
		return;
	w.counts.pages_written += e.n;
	w.counts.bytes_written += e.n * kPage;
	remember_groups(w, e);
}

void Checker::do_zero(Worker &w, uint64_t op, Extent e, OpKind kind, std::string_view name)
{
	std::vector<Kind> zeros(e.n, Kind::zero);
	std::string desc = fmt::format("#{} t{} {} {}+{}", op, w.id, name, e.first, e.n);
	uint64_t start = begin_write(op, e, zeros);
	int r = kind == OpKind::discard ? dev_.discard(e.first, e.n) : dev_.zeroout(e.first, e.n);
	Io io = check_io(w, op, desc, r, 0, std::nullopt);
	uint64_t end = end_write(op, e, start, io == Io::done);
	log_.add(fmt::format("{} [{},{}]", desc, start, end));
}

void Checker::do_read(Worker &w, uint64_t op, Extent e, std::string_view name, Buf b)
{
	w.bufs.layout(b, e.n, w.rng, w.pages, w.iov);
	for (uint8_t *p : w.pages)
		poison_page(p);
	std::string desc = fmt::format("#{} t{} {} {}+{} {}", op, w.id, name, e.first, e.n,
				       buf_name(b));
	uint64_t start = begin_read();
	ssize_t r = dev_.readv(e.first, w.iov);
	uint64_t end;
	auto candidates = end_read(e, start, &end);
	Io io = check_io(w, op, desc, r, e.n * kPage, b);
	log_.add(fmt::format("{} [{},{}]{}", desc, start, end, io == Io::refused ? " EINVAL" : ""));
	if (io != Io::done)
		return;
	w.counts.pages_read += e.n;
	w.counts.bytes_read += e.n * kPage;
	for (uint64_t i = 0; i < e.n; i++) {
		auto m = check_page(w.pages[i], e.first + i, candidates[i]);
		if (m) {
			fail(op, e.first + i, desc + ": " + m->what, m->difference);
			return;
		}
		w.counts.pages_verified++;
	}
}

// The known bug's pattern: a unit written whole, then 1-3 of its later
// pages rewritten, discarded or zeroed, then the whole unit read at once.
void Checker::rewrite(Worker &w, uint64_t op)
{
	uint64_t g;
	if (!w.recent.empty() && w.rng.chance(75)) {
		g = w.recent[w.rng.below(w.recent.size())];
	} else {
		uint64_t aligned = (w.lo + group_ - 1) / group_ * group_;
		g = aligned + group_ * w.rng.below((w.hi - aligned) / group_);
	}
	uint64_t j = w.rng.range(1, group_ - 1);
	Extent e{g + j, w.rng.range(1, std::min<uint64_t>(3, group_ - j))};
	static constexpr std::array<unsigned, 3> weights = {70, 15, 15};
	switch (w.rng.pick(weights)) {
	case 0: do_write(w, op, e, "rewrite-write"); break;
	case 1: do_zero(w, op, e, OpKind::discard, "rewrite-discard"); break;
	default: do_zero(w, op, e, OpKind::zeroout, "rewrite-zeroout"); break;
	}
	if (w.rng.chance(75))
		w.follow = Extent{g, group_};
}

// A write to a sysfs file: 0 or -errno.
int sysfs_put(const std::string &path, const std::string &v)
{
	int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t r = ::write(fd, v.data(), v.size());
	int e = r < 0 ? -errno : 0;
	::close(fd);
	return e;
}

// What "idle" is written: "all" half the time, else an age of 0-2 s
// (zram's "idle N": which pages it marks depends on the clock, what they
// read back must not).
static std::string idle_arg(Worker &w)
{
	return w.rng.chance(50) ? "all" : std::to_string(w.rng.range(0, 2));
}

// Pages moved to the backing device as the others run: what they hold
// must not change, so the model does not; every later read checks them.
// "idle" marks every page in memory (or, by age, those not read or
// written in the last 0-2 s), "writeback idle" moves those not read or
// written since (a race with every other thread's ops), "huge"
// the incompressible ones, page_index one page of this worker's.
void Checker::writeback(Worker &w, uint64_t op)
{
	auto put = [&](const char *file, const std::string &v) {
		return sysfs_put(c_.writeback + "/" + file, v);
	};
	std::string what;
	// incompressible: pages recompression could not shrink (zbatch's)
	std::array<unsigned, 4> weights = {40, 20, 40, c_.recompress.empty() ? 0u : 20u};
	switch (w.rng.pick(weights)) {
	case 0: {
		std::string idle = idle_arg(w);
		what = "idle";
		log_.add(fmt::format("#{} idle {}", op, idle));
		if (int e = put("idle", idle)) {
			fail(op, UINT64_MAX, fmt::format("writeback: idle {}: {}", idle,
							 std::strerror(-e)));
			return;
		}
		break;
	}
	case 1: what = "huge"; break;
	case 2: what = fmt::format("page_index={}", w.rng.range(w.lo, w.hi - 1)); break;
	default: what = "incompressible"; break;
	}
	log_.add(fmt::format("#{} writeback {}", op, what));
	int e = put("writeback", what);
	if (e == -EAGAIN)
		w.counts.wb_busy++;
	else if (e == -ENOSPC)
		w.counts.wb_full++;
	else if (e == -EIO && c_.writeback_eio_ok)
		w.counts.wb_eio++;
	else if (e)
		fail(op, UINT64_MAX, fmt::format("writeback {}: {}", what, std::strerror(-e)));
}

// Stored objects replaced by the same pages compressed with the secondary
// codec as the others run: what they hold must not change, so the model
// does not. "idle all" then the idle ones (racing with every other
// thread's reads and writes of them), every page, the raw ones, or a few
// large ones (max_pages, threshold).
void Checker::recompress(Worker &w, uint64_t op)
{
	auto put = [&](const char *file, const std::string &v) {
		return sysfs_put(c_.recompress + "/" + file, v);
	};
	std::string what;
	static constexpr std::array<unsigned, 4> weights = {40, 20, 20, 20};
	switch (w.rng.pick(weights)) {
	case 0: {
		std::string idle = idle_arg(w);
		what = "type=idle";
		log_.add(fmt::format("#{} idle {}", op, idle));
		if (int e = put("idle", idle)) {
			fail(op, UINT64_MAX, fmt::format("recompress: idle {}: {}", idle,
							 std::strerror(-e)));
			return;
		}
		break;
	}
	case 1: what = "type=huge"; break;
	case 2:
		what = fmt::format("max_pages={} threshold={}", w.rng.range(1, 64),
				   w.rng.range(0, 3000));
		break;
	default: break;   // every page in memory
	}
	log_.add(fmt::format("#{} recompress {}", op, what));
	if (int e = put("recompress", what.empty() ? "\n" : what))
		fail(op, UINT64_MAX, fmt::format("recompress {}: {}", what, std::strerror(-e)));
}

void Checker::one_op(Worker &w, uint64_t op)
{
	if (w.follow) {
		Extent e = *w.follow;
		w.follow.reset();
		w.counts.ops[static_cast<size_t>(OpKind::read)]++;
		// half of them as one multi-page bvec: the bug's trigger
		Buf b = c_.thp && w.rng.chance(50) ? Buf::thp : choose_buf(w);
		do_read(w, op, e, "group-read", b);
		return;
	}
	// without writeback, the same choices as before it was an op; no
	// rewrite where its group read would pass --max-pages
	std::array<unsigned, 7> weights = {35, 30, 10, 10, c_.max_pages < group_ ? 0u : 15u,
					   c_.writeback.empty() ? 0u : 4u,
					   c_.recompress.empty() ? 0u : 4u};
	auto kind = static_cast<OpKind>(w.rng.pick(weights));
	w.counts.ops[static_cast<size_t>(kind)]++;
	switch (kind) {
	case OpKind::write: do_write(w, op, choose_extent(w), "write"); break;
	case OpKind::read: do_read(w, op, choose_extent(w), "read", choose_buf(w)); break;
	case OpKind::discard: do_zero(w, op, choose_extent(w), kind, "discard"); break;
	case OpKind::zeroout: do_zero(w, op, choose_extent(w), kind, "zeroout"); break;
	case OpKind::rewrite: rewrite(w, op); break;
	case OpKind::writeback: writeback(w, op); break;
	case OpKind::recompress: recompress(w, op); break;
	}
}

void Checker::work(Worker &w)
{
	while (!stop_) {
		if (c_.seconds > 0 && std::chrono::steady_clock::now() >= deadline_)
			break;
		uint64_t op = next_op_++;
		if (op > c_.ops)
			break;
		one_op(w, op);
	}
}

// Disjoint slices are 16-page aligned, so no unit straddles two threads.
std::expected<std::vector<Worker>, Result> Checker::make_workers()
{
	std::vector<Worker> workers;
	uint64_t slice = c_.overlap ? pages_ : pages_ / c_.threads / 16 * 16;
	for (unsigned t = 0; t < c_.threads; t++) {
		auto bufs = Buffers::create(c_.max_pages, c_.thp);
		if (!bufs) {
			bool no_thp = bufs.error().starts_with("THP");
			Result r;
			r.outcome = no_thp ? Outcome::skip : Outcome::fail;
			r.summary = bufs.error();
			r.failure.message = fmt::format("FAIL seed {} op #0: {}", c_.seed, bufs.error());
			return std::unexpected(r);
		}
		uint64_t lo = c_.overlap ? 0 : t * slice;
		uint64_t hi = c_.overlap || t + 1 == c_.threads ? pages_ : lo + slice;
		workers.push_back(Worker{t, lo, hi, Rng(mix64(c_.seed) ^ mix64(t + 1)),
					 std::move(*bufs), {}, 0, std::nullopt, {}, {}, {}});
	}
	return workers;
}

std::string Checker::summary(const Counts &n, double secs) const
{
	std::string ops;
	for (size_t i = 0; i < kOpNames.size(); i++)
		ops += fmt::format("{}{} {}", i ? ", " : "", kOpNames[i], n.ops[i]);
	std::string s = fmt::format(
		"seed {}: {} ops ({}); pages written {}, read {}, verified {}; "
		"bytes written {}, read {}; buffers thp {}, pages {}, sector {}; {} thread{}{}; "
		"{:.1f} s",
		c_.seed, next_op_.load() > c_.ops ? c_.ops : next_op_.load() - 1, ops,
		n.pages_written, n.pages_read, n.pages_verified, n.bytes_written, n.bytes_read,
		n.bufs[0], n.bufs[1], n.bufs[2], c_.threads, c_.threads > 1 ? "s" : "",
		c_.threads > 1 ? (c_.overlap ? " overlapping" : " disjoint") : "", secs);
	if (n.wb_busy || n.wb_full || n.wb_eio)
		s += fmt::format("; writeback refused: {} busy, {} backing full, {} write errors",
				 n.wb_busy, n.wb_full, n.wb_eio);
	if (n.sector_einval)
		s += fmt::format("\nnote: {} I/Os from 512-byte aligned (sector) buffers were refused "
				 "with EINVAL: the device does not take them (not a data failure)",
				 n.sector_einval);
	return s;
}

Result Checker::run()
{
	auto workers = make_workers();
	if (!workers)
		return workers.error();
	// The device holds whatever an earlier run left there: zero the range
	// first, so that the model's initial state (zeros) is true.
	log_.add(fmt::format("#0 zeroout 0+{} (the initial state)", pages_));
	if (int e = dev_.zeroout(0, pages_)) {
		fail(0, UINT64_MAX, fmt::format("zeroout of the range at start: {}", std::strerror(-e)));
		return Result{Outcome::fail, {}, failure_, log_.tail()};
	}
	auto t0 = std::chrono::steady_clock::now();
	deadline_ = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
				 std::chrono::duration<double>(c_.seconds));
	if (workers->size() == 1) {
		work(workers->front());
	} else {
		std::vector<std::jthread> threads;
		for (auto &w : *workers)
			threads.emplace_back([this, &w] { work(w); });
	}
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	Counts total;
	for (const auto &w : *workers)
		total.add(w.counts);
	Result r;
	r.log_tail = log_.tail();
	if (!failed_ && total.pages_verified == 0)
		fail(next_op_ - 1, UINT64_MAX, "nothing was verified: no read completed");
	if (failed_) {
		r.outcome = Outcome::fail;
		r.failure = failure_;
		r.log_tail = log_.tail();
	}
	r.summary = (failed_ ? "counts: " : "passed: ") + summary(total, secs);
	return r;
}

}  // namespace

std::string check_block_config(const BlockConfig &c, uint64_t device_pages)
{
	uint64_t pages = c.pages ? c.pages : std::min<uint64_t>(device_pages, 2048);
	if (pages > device_pages)
		return fmt::format("--pages {} is more than the device's {} pages", pages,
				   device_pages);
	if (c.unit_pages != 1 && c.unit_pages != 4 && c.unit_pages != 16)
		return "--unit-pages must be 1, 4 or 16";
	if (c.max_pages < 1 || c.max_pages > 1024)
		return "--max-pages must be 1..1024 (one iovec per page, IOV_MAX)";
	if (c.threads < 1 || c.threads > 64)
		return "--threads must be 1..64";
	if ((c.overlap ? pages : pages / c.threads) < 16)
		return fmt::format("{} pages are too few: every thread needs at least 16", pages);
	return {};
}

Result run_blockdev(Device &dev, const BlockConfig &c)
{
	std::string bad = check_block_config(c, dev.pages());
	if (!bad.empty())
		return Result{Outcome::usage, bad, {}, {}};
	uint64_t pages = c.pages ? c.pages : std::min<uint64_t>(dev.pages(), 2048);
	return Checker(dev, c, pages).run();
}

}  // namespace zbatch::model
