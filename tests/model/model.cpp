// SPDX-License-Identifier: GPL-2.0
// The model's shared parts: randomness, page contents, the write history,
// the op log and the report. The two modes are blockdev.cpp and swap.cpp.
#include "model.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <utility>

#include <sys/mman.h>

#include <fmt/core.h>

namespace zbatch::model {

// ---- memory ---------------------------------------------------------------------------

Mapping::Mapping(size_t len) : len_(len)
{
	void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	addr_ = p == MAP_FAILED ? nullptr : static_cast<uint8_t *>(p);
}

Mapping::Mapping(Mapping &&o) noexcept : addr_(std::exchange(o.addr_, nullptr)), len_(o.len_) {}

Mapping &Mapping::operator=(Mapping &&o) noexcept
{
	std::swap(addr_, o.addr_);
	std::swap(len_, o.len_);
	return *this;
}

Mapping::~Mapping()
{
	if (addr_)
		munmap(addr_, len_);
}

// ---- randomness --------------------------------------------------------------------

uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

Rng::Rng(uint64_t seed)
{
	for (auto &w : s_) {
		seed = mix64(seed);
		w = seed;
	}
}

uint64_t Rng::next()
{
	uint64_t r = std::rotl(s_[1] * 5, 7) * 9;
	uint64_t t = s_[1] << 17;
	s_[2] ^= s_[0];
	s_[3] ^= s_[1];
	s_[1] ^= s_[2];
	s_[0] ^= s_[3];
	s_[2] ^= t;
	s_[3] = std::rotl(s_[3], 45);
	return r;
}

uint64_t Rng::below(uint64_t n)
{
	return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
}

uint64_t Rng::range(uint64_t lo, uint64_t hi)
{
	return lo + below(hi - lo + 1);
}

size_t Rng::pick(std::span<const unsigned> weights)
{
	uint64_t total = 0;
	for (unsigned w : weights)
		total += w;
	uint64_t r = below(total);
	for (size_t i = 0; i < weights.size(); i++) {
		if (r < weights[i])
			return i;
		r -= weights[i];
	}
	return weights.size() - 1;
}

// ---- page contents ---------------------------------------------------------------

namespace {

// Header of text, half and random pages: four little-endian words.
constexpr uint64_t kMagic = 0x7a626d6f64656c00ull;   // "zbmodel" + kind byte
constexpr size_t kHeader = 32;
// A same-filled page's word: this tag over the low 48 bits of the write id.
constexpr uint64_t kSameTag = 0x5a3eull << 48;
constexpr uint64_t kLow48 = (uint64_t{1} << 48) - 1;
constexpr uint64_t kPoison = 0x9015a5deadbeef15ull;
constexpr size_t kWords = kPage / 8;

uint64_t load(const uint8_t *p, size_t word)
{
	uint64_t v;
	std::memcpy(&v, p + word * 8, 8);
	return v;
}

void store(uint8_t *p, size_t word, uint64_t v)
{
	std::memcpy(p + word * 8, &v, 8);
}

uint64_t body_checksum(const uint8_t *page)
{
	uint64_t h = 0x6a09e667f3bcc909ull;
	for (size_t w = kHeader / 8; w < kWords; w++)
		h = std::rotl(h ^ load(page, w), 29) * 0x9fb21c651e98df25ull;
	return h;
}

// Header fields take part so that a body moved to another page or write
// does not check out.
uint64_t page_checksum(const uint8_t *page)
{
	return mix64(body_checksum(page) ^ load(page, 0) ^ mix64(load(page, 1) ^ mix64(load(page, 2))));
}

// Real phrases and numbers, so that the text compresses like text: lz4
// finds the repeated phrases (about 3x on one page, more on a unit), the
// numbers and the order keep it from compressing much better than that.
constexpr std::array<std::string_view, 32> kPhrases = {
	"the page was written ", "to the swap device ", "and read back ", "in one unit ",
	"of the compressed stream ", "when memory is low ", "the kernel reclaims ",
	"a large folio ", "is split into pages ", "for every request ", "in the batch ",
	"on this queue ", "the buffer holds ", "data that was ", "not yet compressed ",
	"by the engine ", "with a checksum ", "at the offset ", "of the block ",
	"which is freed ", "after the discard ", "but the slot ", "is reused later ",
	"so the reader ", "must see zeros ", "or the new data ", "from this write ",
	"count ", "size ", "id ", "time ", "zone ",
};

void fill_text(uint8_t *p, size_t len, Rng &rng)
{
	size_t i = 0;
	while (i < len) {
		char token[40];
		size_t n;
		if (rng.chance(15)) {
			n = static_cast<size_t>(fmt::format_to_n(token, sizeof(token) - 1, "{}{}",
								  rng.below(100000),
								  rng.chance(20) ? ".\n" : " ").size);
		} else {
			n = kPhrases[rng.below(kPhrases.size())].copy(token, sizeof(token));
		}
		n = std::min(n, len - i);
		std::memcpy(p + i, token, n);
		i += n;
	}
}

void fill_random(uint8_t *p, size_t len, Rng &rng)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = rng.next();
		std::memcpy(p + i, &v, std::min<size_t>(8, len - i));
	}
}

bool all_words(const uint8_t *page, uint64_t word)
{
	for (size_t w = 0; w < kWords; w++)
		if (load(page, w) != word)
			return false;
	return true;
}

}  // namespace

char kind_letter(Kind k)
{
	return "ZSTHR"[static_cast<size_t>(k)];
}

const char *kind_name(Kind k)
{
	static constexpr const char *names[] = {"zero", "same", "text", "half", "random"};
	return names[static_cast<size_t>(k)];
}

void fill_page(uint8_t *page, uint64_t id, uint64_t index, Kind kind)
{
	if (kind == Kind::zero) {
		std::memset(page, 0, kPage);
		return;
	}
	if (kind == Kind::same) {
		for (size_t w = 0; w < kWords; w++)
			store(page, w, kSameTag | (id & kLow48));
		return;
	}
	Rng rng(mix64(id) ^ mix64(index ^ 0x5bd1e995) ^ static_cast<uint64_t>(kind));
	uint8_t *body = page + kHeader;
	constexpr size_t body_len = kPage - kHeader;
	if (kind == Kind::text) {
		fill_text(body, body_len, rng);
	} else if (kind == Kind::half) {
		fill_text(body, kPage / 2 - kHeader, rng);
		fill_random(page + kPage / 2, kPage / 2, rng);
	} else {
		fill_random(body, body_len, rng);
	}
	store(page, 0, kMagic | static_cast<uint64_t>(kind));
	store(page, 1, index);
	store(page, 2, id);
	store(page, 3, page_checksum(page));
}

void poison_page(uint8_t *page)
{
	for (size_t w = 0; w < kWords; w++)
		store(page, w, kPoison);
}

Decoded decode_page(const uint8_t *page)
{
	uint64_t first = load(page, 0);
	if (all_words(page, first)) {
		if (first == 0)
			return {Decoded::What::zero};
		if (first == kPoison)
			return {Decoded::What::poison};
		if ((first & ~kLow48) == kSameTag)
			return {Decoded::What::same, first & kLow48, 0, Kind::same};
		return {Decoded::What::garbage};
	}
	uint8_t kind = first & 0xff;
	bool header = (first & ~0xffull) == kMagic && kind >= static_cast<uint8_t>(Kind::text) &&
		      kind <= static_cast<uint8_t>(Kind::random);
	if (!header)
		return {Decoded::What::garbage};
	Decoded d{Decoded::What::page, load(page, 2), load(page, 1), static_cast<Kind>(kind)};
	if (load(page, 3) != page_checksum(page))
		d.what = Decoded::What::torn;
	return d;
}

namespace {

std::string write_name(uint64_t id)
{
	return fmt::format("write #{} (op #{})", id, op_of(id));
}

std::string describe_write(const Write &w)
{
	if (w.id == 0)
		return "zeros (never written)";
	if (w.kind == Kind::zero)
		return "zeros of " + write_name(w.id);
	return fmt::format("{} {}", write_name(w.id), kind_name(w.kind));
}

}  // namespace

std::string describe(const Decoded &d)
{
	using W = Decoded::What;
	switch (d.what) {
	case W::zero: return "zeros";
	case W::same: return "same-filled " + write_name(d.id);
	case W::page:
		return fmt::format("{} {} of page {}", write_name(d.id), kind_name(d.kind), d.index);
	case W::torn:
		return fmt::format("a torn page: the header of {} of page {}, the rest not",
				   write_name(d.id), d.index);
	case W::poison: return "the read buffer's poison (the read did not fill it)";
	case W::garbage: return "garbage (no write of this checker)";
	}
	return "?";
}

namespace {

bool matches(const uint8_t *actual, const Decoded &d, uint64_t index, const Write &w,
	     uint8_t *scratch)
{
	if (w.kind == Kind::zero)
		return d.what == Decoded::What::zero;
	bool named = (w.kind == Kind::same && d.what == Decoded::What::same) ||
		     (d.what == Decoded::What::page && d.kind == w.kind);
	if (!named || d.id != w.id)
		return false;
	fill_page(scratch, w.id, index, w.kind);
	return std::memcmp(actual, scratch, kPage) == 0;
}

std::string hex16(const uint8_t *p)
{
	std::string s;
	for (size_t i = 0; i < 16; i++)
		s += fmt::format("{:02x}", p[i]);
	return s;
}

std::string first_difference(const uint8_t *actual, uint64_t index, const Write &w)
{
	std::vector<uint8_t> want(kPage);
	fill_page(want.data(), w.id, index, w.kind);
	size_t off = 0;
	while (off < kPage && actual[off] == want[off])
		off++;
	size_t at = std::min(off & ~size_t{15}, kPage - 16);
	return fmt::format("page {}: first difference at byte {} (against {}):\n"
			   "  expected @{:#06x}: {}\n  actual   @{:#06x}: {}",
			   index, off, describe_write(w), at, hex16(want.data() + at), at,
			   hex16(actual + at));
}

}  // namespace

std::optional<Mismatch> check_page(const uint8_t *actual, uint64_t index,
				   std::span<const Write> candidates)
{
	Decoded d = decode_page(actual);
	std::vector<uint8_t> scratch(kPage);
	for (const Write &w : candidates)
		if (matches(actual, d, index, w, scratch.data()))
			return std::nullopt;
	std::string want;
	for (const Write &w : candidates)
		want += (want.empty() ? "" : "; ") + describe_write(w);
	Mismatch m;
	m.what = fmt::format("page {}: holds {}, expected {}{}", index, describe(d),
			     candidates.size() > 1 ? "one of: " : "", want);
	// against the newest candidate: the one a correct device most likely returns
	m.difference = first_difference(actual, index, candidates.back());
	return m;
}

std::vector<Kind> choose_kinds(Rng &rng, size_t n)
{
	// text, half, random, same, zero
	static constexpr std::array<unsigned, 5> weights = {40, 15, 15, 15, 15};
	static constexpr std::array<Kind, 5> kinds = {Kind::text, Kind::half, Kind::random,
						      Kind::same, Kind::zero};
	std::vector<Kind> v(n);
	uint64_t mode = rng.below(100);
	if (mode < 25) {
		// one kind for the whole write
		std::fill(v.begin(), v.end(), kinds[rng.pick(weights)]);
	} else if (mode < 50) {
		// all text: aligned units are then compressible, so the device
		// stores them as units (it only does when that saves enough)
		std::fill(v.begin(), v.end(), Kind::text);
	} else {
		for (auto &k : v)
			k = kinds[rng.pick(weights)];
	}
	return v;
}

std::string kind_letters(std::span<const Kind> kinds)
{
	std::string s;
	for (Kind k : kinds)
		s += kind_letter(k);
	return s;
}

// ---- the write history -------------------------------------------------------

void History::begin_write(uint64_t page, const Write &w)
{
	auto &h = pages_[page];
	if (h.empty())
		h.push_back(Write{});   // the initial zeros, for reads already running
	h.push_back(w);
}

void History::end_write(uint64_t page, uint64_t id, uint64_t end, uint64_t oldest_running)
{
	auto &h = pages_[page];
	for (auto &w : h)
		if (w.id == id)
			w.end = end;
	prune(h, oldest_running);
}

void History::cancel_write(uint64_t page, uint64_t id)
{
	auto &h = pages_[page];
	std::erase_if(h, [id](const Write &w) { return w.id == id; });
}

// Every read still to come starts at or after oldest_running. A write w
// is of no use to any of them once some w2 started after w ended and ended
// before oldest_running; the latest-starting such w2 removes the most.
void History::prune(std::vector<Write> &h, uint64_t oldest_running)
{
	uint64_t cut = 0;
	for (const auto &w2 : h)
		if (w2.end < oldest_running)
			cut = std::max(cut, w2.start);
	std::erase_if(h, [cut](const Write &w) { return w.end < cut; });
}

std::vector<Write> History::candidates(uint64_t page, uint64_t rs, uint64_t re) const
{
	const auto &h = pages_[page];
	if (h.empty())
		return {Write{}};
	std::vector<Write> out;
	for (const auto &w : h) {
		if (w.start >= re)
			continue;
		bool overwritten = std::any_of(h.begin(), h.end(), [&](const Write &w2) {
			return w.end < w2.start && w2.end < rs;
		});
		if (!overwritten)
			out.push_back(w);
	}
	std::sort(out.begin(), out.end(),
		  [](const Write &a, const Write &b) { return a.start < b.start; });
	return out;
}

// ---- the op log ------------------------------------------------------------------

void OpLog::add(std::string line)
{
	std::lock_guard lock(mu_);
	if (file_) {
		// flushed per op: after a hang or a crash the file still ends
		// with the op that was running
		std::fputs(line.c_str(), file_);
		std::fputc('\n', file_);
		std::fflush(file_);
	}
	if (verbose_)
		fmt::print("{}\n", line);
	tail_[next_++ % kTail] = std::move(line);
}

std::vector<std::string> OpLog::tail() const
{
	std::lock_guard lock(mu_);
	std::vector<std::string> out;
	for (size_t i = next_ > kTail ? next_ - kTail : 0; i < next_; i++)
		out.push_back(tail_[i % kTail]);
	return out;
}

// ---- the report -----------------------------------------------------------------

void print_result(const Result &r)
{
	switch (r.outcome) {
	case Outcome::pass:
		fmt::print("{}\n", r.summary);
		break;
	case Outcome::skip:
		fmt::print(stderr, "zbatch_model: skipped: {}\n", r.summary);
		break;
	case Outcome::usage:
		fmt::print(stderr, "zbatch_model: {}\n", r.summary);
		break;
	case Outcome::fail:
		fmt::print(stderr, "{}\n", r.failure.message);
		fmt::print(stderr, "last {} ops:\n", r.log_tail.size());
		for (const auto &l : r.log_tail)
			fmt::print(stderr, "  {}\n", l);
		if (!r.failure.difference.empty())
			fmt::print(stderr, "{}\n", r.failure.difference);
		if (!r.summary.empty())
			fmt::print(stderr, "{}\n", r.summary);
		break;
	}
}

}  // namespace zbatch::model
