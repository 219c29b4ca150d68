// SPDX-License-Identifier: GPL-2.0
// zbatch_model: a model checker for storage (fsx / FoundationDB simulation
// style). Random operations run against a device or a swapped-out memory
// region and every read is compared with a model; the seed replays a run.
//
// The model keeps no page copies: every written page gets a unique write
// id and a content kind, and its bytes are regenerated from (write id, page
// index, kind) whenever they are needed. Pages carry a header naming the
// write, so a wrong page can be told apart: an older write, another page's
// write, a torn page, garbage.
#pragma once

#include <sys/uio.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <expected>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zbatch::model {

inline constexpr size_t kPage = 4096;
// Write ids are op << kOpShift | page-in-op, so a write id names its op.
inline constexpr unsigned kOpShift = 12;
inline constexpr uint64_t kMaxPagesPerOp = uint64_t{1} << kOpShift;

inline uint64_t write_id(uint64_t op, uint64_t index) { return op << kOpShift | index; }
inline uint64_t op_of(uint64_t id) { return id >> kOpShift; }

// An anonymous private mapping, unmapped on destruction.
class Mapping {
public:
	Mapping() = default;
	explicit Mapping(size_t len);
	Mapping(Mapping &&o) noexcept;
	Mapping &operator=(Mapping &&o) noexcept;
	~Mapping();
	uint8_t *get() const { return addr_; }

private:
	uint8_t *addr_ = nullptr;
	size_t len_ = 0;
};

// ---- deterministic randomness ----------------------------------------------

// xoshiro256**, seeded through splitmix64: fast, and the same sequence on
// every machine (std::uniform_int_distribution is not portable).
class Rng {
public:
	explicit Rng(uint64_t seed);
	uint64_t next();
	uint64_t below(uint64_t n);                  // [0, n), n > 0
	uint64_t range(uint64_t lo, uint64_t hi);    // [lo, hi], lo <= hi
	bool chance(unsigned percent) { return below(100) < percent; }
	// Index of the weight hit; weights must not all be zero.
	size_t pick(std::span<const unsigned> weights);

private:
	std::array<uint64_t, 4> s_;
};

uint64_t mix64(uint64_t x);   // splitmix64's finaliser

// ---- page contents ------------------------------------------------------------

enum class Kind : uint8_t { zero, same, text, half, random };
inline constexpr size_t kKinds = 5;
char kind_letter(Kind k);       // Z S T H R, for the op log
const char *kind_name(Kind k);

// The bytes of page `index` written by write `id` with content `kind`.
//   text: pseudo-text of real words and numbers (lz4 ~2-4x)
//   half: text, then random from the middle on
//   random: incompressible
//   same: one 64-bit word, derived from the write id, repeated
//   zero: all zero
// Every kind but same and zero starts with a 32-byte header.
void fill_page(uint8_t *page, uint64_t id, uint64_t index, Kind kind);

// What a page that was read holds, as far as it says so itself.
struct Decoded {
	enum class What { zero, same, page, torn, poison, garbage } what;
	uint64_t id = 0;      // same, page, torn: the write it names
	uint64_t index = 0;   // page, torn: the page index in its header
	Kind kind = Kind::zero;
};
Decoded decode_page(const uint8_t *page);
std::string describe(const Decoded &d);   // "write #8193 (op #2, its page 1) text"

// How a write is told apart from the others in the log: its kind letters.
std::string kind_letters(std::span<const Kind> kinds);
// Page kinds for a write of n pages: per page by weight, or one kind for
// the whole write, or all text (so whole units are compressible).
std::vector<Kind> choose_kinds(Rng &rng, size_t n);

// Read buffers are filled with this before every read, so a read that did
// not fill its buffer is seen ("poison") instead of passing with old data.
void poison_page(uint8_t *page);

// ---- the model: per-page write history -------------------------------------

// A write to one page, with the op's start and end stamps. Discards and
// write-zeroes are writes of Kind::zero; the initial state is a zero write
// that ended before anything started (stamps 0).
struct Write {
	uint64_t id = 0;
	Kind kind = Kind::zero;
	uint64_t start = 0;
	uint64_t end = 0;   // kOpen while the op runs
};
inline constexpr uint64_t kOpen = UINT64_MAX;

// Which contents a read of a page may return. A read spanning stamps
// [rs, re] may return write w iff w.start < re and no write w2 of the page
// has w.end < w2.start and w2.end < rs (w was definitively overwritten
// before the read began). One thread reading its own writes sees exactly
// the last one. The caller serialises access (Checker holds a mutex).
class History {
public:
	explicit History(uint64_t pages) : pages_(pages) {}
	void begin_write(uint64_t page, const Write &w);
	void end_write(uint64_t page, uint64_t id, uint64_t end, uint64_t oldest_running);
	void cancel_write(uint64_t page, uint64_t id);   // the I/O was refused whole
	std::vector<Write> candidates(uint64_t page, uint64_t rs, uint64_t re) const;
	size_t entries(uint64_t page) const { return pages_[page].size(); }

private:
	void prune(std::vector<Write> &h, uint64_t oldest_running);
	std::vector<std::vector<Write>> pages_;   // empty: only the initial zero
};

// A page that matches none of the writes it may hold: what it holds and
// what was expected ("page 37: holds write #... , expected ..."), and its
// first differing bytes against the newest candidate.
struct Mismatch {
	std::string what;
	std::string difference;
};
std::optional<Mismatch> check_page(const uint8_t *actual, uint64_t index,
																	 std::span<const Write> candidates);

// ---- the op log ------------------------------------------------------------------

// Every op's line, streamed to a file (so it is there after a failure or a
// crash) and kept in memory for the last kTail lines.
class OpLog {
public:
	static constexpr size_t kTail = 40;
	OpLog(FILE *file, bool verbose) : file_(file), verbose_(verbose) {}
	void add(std::string line);
	std::vector<std::string> tail() const;

private:
	mutable std::mutex mu_;   // protects tail_, next_ and the file's order
	FILE *file_;
	bool verbose_;
	std::vector<std::string> tail_ = std::vector<std::string>(kTail);
	size_t next_ = 0;
};

// ---- results ----------------------------------------------------------------------

enum class Outcome { pass = 0, fail = 1, usage = 2, skip = 77 };

struct Failure {
	uint64_t op = 0;
	uint64_t page = UINT64_MAX;   // UINT64_MAX: not about one page
	std::string message;          // "FAIL seed N op #K: ..."
	std::string difference;       // the first differing bytes, if any
};

struct Result {
	Outcome outcome = Outcome::pass;
	std::string summary;   // pass: the counts; skip: why
	Failure failure;
	std::vector<std::string> log_tail;
};

// Prints a result the way the program does: the summary on stdout, or the
// failure, the last ops and the first difference on stderr.
void print_result(const Result &r);

// ---- blockdev mode -------------------------------------------------------------

enum class Buf : uint8_t { thp, pages, sector };
const char *buf_name(Buf b);

// A device of pages. Transfers return bytes done or -errno; discard and
// zeroout return 0 or -errno. Called from several threads at once.
class Device {
public:
	virtual ~Device() = default;
	virtual uint64_t pages() const = 0;
	virtual ssize_t readv(uint64_t page, std::span<const iovec> iov) = 0;
	virtual ssize_t writev(uint64_t page, std::span<const iovec> iov) = 0;
	virtual int discard(uint64_t page, uint64_t n) = 0;
	virtual int zeroout(uint64_t page, uint64_t n) = 0;
};

// A block device with O_DIRECT, or a regular file (O_DIRECT if its file
// system takes it; holes for discard).
std::expected<std::unique_ptr<Device>, std::string> open_device(const std::string &path,
																																std::string *note);

struct BlockConfig {
	uint64_t seed = 0;
	uint64_t ops = 2000;
	double seconds = 0;          // 0: no time limit
	uint64_t pages = 0;          // 0: min(device, 2048)
	uint64_t max_pages = 64;
	uint64_t unit_pages = 1;     // 1, 4, 16: the offset and length bias
	unsigned threads = 1;
	bool overlap = false;
	bool thp = true;
	bool sector = true;
	// The device's sysfs directory with zram's writeback files (idle,
	// writeback): writeback ops move pages to its backing device while
	// the others run. "": none.
	std::string writeback;
	bool writeback_eio_ok = false;   // the backing device fails writes on purpose
	// A zbatch swap device's sysfs directory (a secondary codec set):
	// recompress ops replace stored objects while the others run. "": none.
	std::string recompress;
	FILE *log = nullptr;
	bool verbose = false;
};

std::string check_block_config(const BlockConfig &c, uint64_t device_pages);
Result run_blockdev(Device &dev, const BlockConfig &c);

// ---- swap mode ----------------------------------------------------------------------

struct SwapConfig {
	uint64_t seed = 0;
	uint64_t ops = 2000;
	double seconds = 0;
	uint64_t size_mib = 64;
	uint64_t pressure_mib = 32;
	uint64_t memory_max_mib = 0;   // the run's memory cgroup limit; 0: none
	unsigned folio_pages = 16;   // 4 (16k), 16 (64k); 0: none (base pages)
	bool fork = true;
	FILE *log = nullptr;
	bool verbose = false;
};

Result run_swap(const SwapConfig &c);

// Active swap areas from /proc/swaps, one line each.
std::vector<std::string> active_swaps(const std::string &proc_swaps = "/proc/swaps");

// The per-size mTHP knobs under a transparent_hugepage directory: set one
// size to always and every other size to never, and put every value back
// on restore(), on destruction and on a fatal signal.
class MthpKnobs {
public:
	explicit MthpKnobs(std::string root = "/sys/kernel/mm/transparent_hugepage");
	~MthpKnobs();
	MthpKnobs(const MthpKnobs &) = delete;
	MthpKnobs &operator=(const MthpKnobs &) = delete;
	// size_kb 0: every size never. Fails (nothing left changed) when the
	// chosen size has no knob or a knob cannot be written.
	std::expected<void, std::string> set_only(unsigned size_kb);
	void restore();

private:
	std::string root_;
};

}  // namespace zbatch::model
