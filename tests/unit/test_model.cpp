// SPDX-License-Identifier: GPL-2.0
// The model checker (tests/model) on the host: correct fake devices and a
// real file pass; planted bugs fail with the seed, op and page named.
#include "model.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include <fmt/core.h>
#include <gtest/gtest.h>

using namespace zbatch::model;
namespace fs = std::filesystem;

namespace {

// A correct device in memory. The fakes below plant one bug each by
// overriding a page-level operation; iovec gathering and locking are here.
class MemDevice : public Device {
public:
	explicit MemDevice(uint64_t pages) : data_(pages * kPage) {}
	uint64_t pages() const override { return data_.size() / kPage; }

	ssize_t readv(uint64_t page, std::span<const iovec> iov) override
	{
		std::lock_guard lock(mu_);
		std::vector<uint8_t> buf(bytes(iov));
		read_pages(page, buf.data(), buf.size() / kPage);
		size_t off = 0;
		for (const auto &v : iov) {
			std::memcpy(v.iov_base, buf.data() + off, v.iov_len);
			off += v.iov_len;
		}
		return static_cast<ssize_t>(buf.size());
	}

	ssize_t writev(uint64_t page, std::span<const iovec> iov) override
	{
		std::lock_guard lock(mu_);
		std::vector<uint8_t> buf;
		for (const auto &v : iov) {
			auto *p = static_cast<const uint8_t *>(v.iov_base);
			buf.insert(buf.end(), p, p + v.iov_len);
		}
		write_pages(page, buf.data(), buf.size() / kPage);
		return static_cast<ssize_t>(buf.size());
	}

	int discard(uint64_t page, uint64_t n) override
	{
		std::lock_guard lock(mu_);
		zero_pages(page, n, true);
		return 0;
	}

	int zeroout(uint64_t page, uint64_t n) override
	{
		std::lock_guard lock(mu_);
		zero_pages(page, n, false);
		return 0;
	}

protected:
	static size_t bytes(std::span<const iovec> iov)
	{
		size_t n = 0;
		for (const auto &v : iov)
			n += v.iov_len;
		return n;
	}
	uint8_t *at(uint64_t page) { return data_.data() + page * kPage; }

	virtual void read_pages(uint64_t page, uint8_t *out, uint64_t n)
	{
		std::memcpy(out, at(page), n * kPage);
	}
	virtual void write_pages(uint64_t page, const uint8_t *in, uint64_t n)
	{
		std::memcpy(at(page), in, n * kPage);
	}
	virtual void zero_pages(uint64_t page, uint64_t n, bool /*discard*/)
	{
		std::memset(at(page), 0, n * kPage);
	}

	std::mutex mu_;   // one I/O at a time: a correct device is atomic per op
	std::vector<uint8_t> data_;
};

// The real bug: a 4-page group written whole is kept as a unit; only a
// change to its first page drops the unit, so a whole-group read after a
// later page was rewritten, discarded or zeroed returns the stale unit.
class StaleUnitDevice : public MemDevice {
public:
	using MemDevice::MemDevice;

protected:
	static constexpr uint64_t kUnit = 4;

	void write_pages(uint64_t page, const uint8_t *in, uint64_t n) override
	{
		MemDevice::write_pages(page, in, n);
		changed(page, n);
		for (uint64_t g = (page + kUnit - 1) / kUnit * kUnit; g + kUnit <= page + n; g += kUnit)
			units_[g].assign(at(g), at(g) + kUnit * kPage);
	}
	void zero_pages(uint64_t page, uint64_t n, bool discard) override
	{
		MemDevice::zero_pages(page, n, discard);
		changed(page, n);
	}
	void read_pages(uint64_t page, uint8_t *out, uint64_t n) override
	{
		MemDevice::read_pages(page, out, n);
		for (uint64_t g = (page + kUnit - 1) / kUnit * kUnit; g + kUnit <= page + n; g += kUnit)
			if (auto u = units_.find(g); u != units_.end())
				std::memcpy(out + (g - page) * kPage, u->second.data(), kUnit * kPage);
	}

private:
	void changed(uint64_t page, uint64_t n)
	{
		for (uint64_t p = page; p < page + n; p++)
			if (p % kUnit == 0)
				units_.erase(p);
	}
	std::map<uint64_t, std::vector<uint8_t>> units_;
};

// Drops one in every k single-page writes.
class LostWriteDevice : public MemDevice {
public:
	LostWriteDevice(uint64_t pages, unsigned k) : MemDevice(pages), k_(k) {}

protected:
	void write_pages(uint64_t page, const uint8_t *in, uint64_t n) override
	{
		if (n == 1 && ++singles_ % k_ == 0)
			return;
		MemDevice::write_pages(page, in, n);
	}

private:
	unsigned k_;
	uint64_t singles_ = 0;
};

// Every fifth page read returns the first half of the page's current
// contents and the second half of its previous ones.
class TornDevice : public MemDevice {
public:
	explicit TornDevice(uint64_t pages) : MemDevice(pages), prev_(pages * kPage) {}

protected:
	void write_pages(uint64_t page, const uint8_t *in, uint64_t n) override
	{
		std::memcpy(prev_.data() + page * kPage, at(page), n * kPage);
		MemDevice::write_pages(page, in, n);
	}
	void zero_pages(uint64_t page, uint64_t n, bool discard) override
	{
		std::memcpy(prev_.data() + page * kPage, at(page), n * kPage);
		MemDevice::zero_pages(page, n, discard);
	}
	void read_pages(uint64_t page, uint8_t *out, uint64_t n) override
	{
		MemDevice::read_pages(page, out, n);
		for (uint64_t i = 0; i < n; i++)
			if (++reads_ % 5 == 0)
				std::memcpy(out + i * kPage + kPage / 2,
					    prev_.data() + (page + i) * kPage + kPage / 2, kPage / 2);
	}

private:
	std::vector<uint8_t> prev_;
	uint64_t reads_ = 0;
};

// A discard that leaves its last page as it was (an off-by-one).
class StaleAfterDiscardDevice : public MemDevice {
public:
	using MemDevice::MemDevice;

protected:
	void zero_pages(uint64_t page, uint64_t n, bool discard) override
	{
		MemDevice::zero_pages(page, discard ? n - 1 : n, discard);
	}
};

BlockConfig config(uint64_t seed, uint64_t unit = 4)
{
	BlockConfig c;
	c.seed = seed;
	c.ops = 2000;
	c.pages = 256;
	c.max_pages = 32;
	c.unit_pages = unit;
	c.thp = false;   // the host's THP is not what these tests are about
	return c;
}

// The failure names the seed, the op and the page, and the op is a read.
void expect_named_failure(const Result &r, uint64_t seed)
{
	ASSERT_EQ(r.outcome, Outcome::fail) << r.summary;
	const Failure &f = r.failure;
	EXPECT_GT(f.op, 0u);
	EXPECT_TRUE(f.message.starts_with(fmt::format("FAIL seed {} op #{}: ", seed, f.op)))
		<< f.message;
	ASSERT_NE(f.page, UINT64_MAX) << f.message;
	EXPECT_NE(f.message.find(fmt::format("page {}: holds ", f.page)), std::string::npos)
		<< f.message;
	EXPECT_NE(f.message.find("read"), std::string::npos) << f.message;
	EXPECT_NE(f.difference.find("first difference at byte"), std::string::npos);
	EXPECT_FALSE(r.log_tail.empty());
	// the failing op is logged (with threads, others may follow it)
	EXPECT_TRUE(std::any_of(r.log_tail.begin(), r.log_tail.end(), [&](const std::string &l) {
		return l.starts_with(fmt::format("#{} ", f.op));
	}));
}

std::string temp_path(const std::string &name)
{
	return (fs::temp_directory_path() /
		fmt::format("zbatch_model_test.{}.{}", getpid(), name)).string();
}

std::string slurp(const std::string &path)
{
	std::ifstream f(path);
	return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace

// ---- page contents --------------------------------------------------------------

TEST(ModelContent, EveryKindRegeneratesAndNamesItsWrite)
{
	std::vector<uint8_t> page(kPage);
	for (Kind k : {Kind::same, Kind::text, Kind::half, Kind::random}) {
		fill_page(page.data(), write_id(7, 3), 42, k);
		Write w{write_id(7, 3), k, 1, 2};
		EXPECT_FALSE(check_page(page.data(), 42, std::span(&w, 1))) << kind_name(k);
		Decoded d = decode_page(page.data());
		EXPECT_EQ(d.id, write_id(7, 3)) << kind_name(k);
		EXPECT_EQ(op_of(d.id), 7u);
	}
}

TEST(ModelContent, TextCompressesButIsNotSameFilled)
{
	std::vector<uint8_t> page(kPage);
	fill_page(page.data(), 99, 1, Kind::text);
	std::string s(page.begin() + 32, page.end());
	EXPECT_NE(s.find(' '), std::string::npos);
	EXPECT_EQ(decode_page(page.data()).what, Decoded::What::page);
}

TEST(ModelContent, AMismatchSaysWhatThePageHoldsAndWhatWasExpected)
{
	std::vector<uint8_t> page(kPage);
	fill_page(page.data(), write_id(55, 0), 37, Kind::text);
	Write want{write_id(301, 2), Kind::random, 5, 6};
	auto m = check_page(page.data(), 37, std::span(&want, 1));
	ASSERT_TRUE(m);
	EXPECT_NE(m->what.find("page 37: holds write #225280 (op #55) text of page 37"),
		  std::string::npos) << m->what;
	EXPECT_NE(m->what.find("expected write #1232898 (op #301) random"), std::string::npos)
		<< m->what;

	page[3000] ^= 1;   // a body that no longer matches its header: torn
	Write same{write_id(55, 0), Kind::text, 1, 2};
	m = check_page(page.data(), 37, std::span(&same, 1));
	ASSERT_TRUE(m);
	EXPECT_NE(m->what.find("torn"), std::string::npos) << m->what;
	EXPECT_NE(m->difference.find("first difference at byte 3000"), std::string::npos)
		<< m->difference;

	poison_page(page.data());
	m = check_page(page.data(), 37, std::span(&same, 1));
	ASSERT_TRUE(m);
	EXPECT_NE(m->what.find("did not fill"), std::string::npos) << m->what;
}

// ---- the history rule --------------------------------------------------------------

TEST(ModelHistory, OneThreadSeesExactlyTheLastWrite)
{
	History h(1);
	h.begin_write(0, {write_id(1, 0), Kind::text, 1, kOpen});
	h.end_write(0, write_id(1, 0), 2, 3);
	h.begin_write(0, {write_id(2, 0), Kind::zero, 3, kOpen});
	h.end_write(0, write_id(2, 0), 4, 5);
	auto c = h.candidates(0, 5, 6);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].id, write_id(2, 0));
	EXPECT_EQ(h.entries(0), 1u);   // pruned down to the one that matters
}

TEST(ModelHistory, AReadOverlappingAWriteMayReturnEitherValue)
{
	History h(1);
	h.begin_write(0, {write_id(1, 0), Kind::text, 2, kOpen});
	// read [1, 3]: started before the write, ended after it started
	auto c = h.candidates(0, 1, 3);
	ASSERT_EQ(c.size(), 2u);
	EXPECT_EQ(c[0].id, 0u);   // the initial zeros
	EXPECT_EQ(c[1].id, write_id(1, 0));
	// a read that started after the write ended sees only the write
	h.end_write(0, write_id(1, 0), 4, 1);   // a read from stamp 1 still runs
	c = h.candidates(0, 5, 6);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].id, write_id(1, 0));
	// the running read keeps the zeros alive in the history
	EXPECT_EQ(h.entries(0), 2u);
}

TEST(ModelHistory, AWriteThatStartedAfterTheReadEndedIsNoCandidate)
{
	History h(1);
	h.begin_write(0, {write_id(1, 0), Kind::text, 5, kOpen});
	auto c = h.candidates(0, 2, 4);
	ASSERT_EQ(c.size(), 1u);
	EXPECT_EQ(c[0].id, 0u);
}

// ---- correct devices pass -----------------------------------------------------------

TEST(ModelCorrect, SingleThreadPassesForEveryUnitSize)
{
	for (uint64_t unit : {1, 4, 16}) {
		MemDevice dev(256);
		Result r = run_blockdev(dev, config(1, unit));
		EXPECT_EQ(r.outcome, Outcome::pass) << r.failure.message << r.failure.difference;
		EXPECT_TRUE(r.summary.starts_with("passed: seed 1: 2000 ops")) << r.summary;
	}
}

TEST(ModelCorrect, DisjointAndOverlappingThreadsPass)
{
	for (bool overlap : {false, true}) {
		MemDevice dev(256);
		BlockConfig c = config(2);
		c.threads = 4;
		c.overlap = overlap;
		Result r = run_blockdev(dev, c);
		EXPECT_EQ(r.outcome, Outcome::pass) << r.failure.message << r.failure.difference;
		EXPECT_NE(r.summary.find(overlap ? "overlapping" : "disjoint"), std::string::npos);
	}
}

TEST(ModelCorrect, ARealFilePassesThroughTheFdDevice)
{
	std::string path = temp_path("dev");
	{
		std::ofstream f(path);
	}
	fs::resize_file(path, 512 * kPage);
	std::string note;
	auto dev = open_device(path, &note);
	ASSERT_TRUE(dev) << dev.error();
	BlockConfig c = config(3);
	c.ops = 300;
	c.pages = 0;   // the default: min(device, 2048)
	// twice: the second run starts on what the first left
	for (uint64_t seed : {3, 4}) {
		c.seed = seed;
		Result r = run_blockdev(**dev, c);
		EXPECT_EQ(r.outcome, Outcome::pass) << r.failure.message << r.failure.difference;
		EXPECT_NE(r.summary.find("sector"), std::string::npos) << r.summary;
	}
	fs::remove(path);
}

TEST(ModelCorrect, HugePageBuffersAreCheckedToBeHuge)
{
	MemDevice dev(256);
	BlockConfig c = config(4);
	c.thp = true;
	c.ops = 200;
	Result r = run_blockdev(dev, c);
	if (r.outcome == Outcome::skip) {
		EXPECT_NE(r.summary.find("THP not available"), std::string::npos);
		GTEST_SKIP() << r.summary;
	}
	EXPECT_EQ(r.outcome, Outcome::pass) << r.failure.message;
	EXPECT_EQ(r.summary.find("thp 0,"), std::string::npos) << r.summary;
}

TEST(ModelCorrect, TheSameSeedReplaysTheSameOpLog)
{
	auto log_of = [](uint64_t seed, const std::string &name) {
		std::string path = temp_path(name);
		FILE *f = std::fopen(path.c_str(), "w");
		MemDevice dev(256);
		BlockConfig c = config(seed);
		c.ops = 300;
		c.log = f;
		run_blockdev(dev, c);
		std::fclose(f);
		std::string s = slurp(path);
		fs::remove(path);
		return s;
	};
	std::string a = log_of(5, "a"), b = log_of(5, "b"), other = log_of(6, "c");
	EXPECT_EQ(std::count(a.begin(), a.end(), '\n'), 301);   // and the initial zeroout
	EXPECT_EQ(a, b);
	EXPECT_NE(a, other);
}

TEST(ModelCorrect, UnusableConfigurationsAreUsageErrors)
{
	MemDevice dev(64);
	BlockConfig c = config(1);
	EXPECT_EQ(run_blockdev(dev, c).outcome, Outcome::usage);   // 256 pages of 64
	c.pages = 64;
	c.unit_pages = 8;
	EXPECT_EQ(run_blockdev(dev, c).outcome, Outcome::usage);
	c.unit_pages = 4;
	c.threads = 8;   // 8 pages each
	EXPECT_EQ(run_blockdev(dev, c).outcome, Outcome::usage);
}

// ---- planted bugs fail ----------------------------------------------------------------

TEST(ModelBugs, StaleUnitAfterARewriteOfALaterPageIsCaught)
{
	for (uint64_t seed : {11, 12, 13}) {
		StaleUnitDevice dev(256);
		Result r = run_blockdev(dev, config(seed));
		expect_named_failure(r, seed);
		EXPECT_NE(r.failure.message.find("read"), std::string::npos);
	}
}

TEST(ModelBugs, StaleUnitIsCaughtWithSixteenPageUnitsAndOnePageUnitsToo)
{
	for (uint64_t unit : {1, 16}) {
		StaleUnitDevice dev(256);
		expect_named_failure(run_blockdev(dev, config(14, unit)), 14);
	}
}

TEST(ModelBugs, AFailureReplaysAtTheSameOp)
{
	StaleUnitDevice a(256), b(256);
	Result ra = run_blockdev(a, config(15)), rb = run_blockdev(b, config(15));
	ASSERT_EQ(ra.outcome, Outcome::fail);
	EXPECT_EQ(ra.failure.message, rb.failure.message);
	EXPECT_EQ(ra.log_tail, rb.log_tail);
}

TEST(ModelBugs, ALostWriteIsCaught)
{
	LostWriteDevice dev(256, 5);
	Result r = run_blockdev(dev, config(21));
	expect_named_failure(r, 21);
}

TEST(ModelBugs, StaleDataAfterADiscardIsCaught)
{
	StaleAfterDiscardDevice dev(256);
	Result r = run_blockdev(dev, config(31));
	expect_named_failure(r, 31);
	EXPECT_NE(r.failure.message.find("expected zeros of write"), std::string::npos)
		<< r.failure.message;
}

TEST(ModelBugs, ATornPageUnderConcurrentWritersIsCaught)
{
	TornDevice dev(256);
	BlockConfig c = config(41);
	c.threads = 4;
	c.overlap = true;
	Result r = run_blockdev(dev, c);
	expect_named_failure(r, 41);
	// a header whose body does not check out, or no header at all
	EXPECT_TRUE(r.failure.message.find("torn") != std::string::npos ||
		    r.failure.message.find("garbage") != std::string::npos)
		<< r.failure.message;
}

// ---- swap mode pieces that need no root --------------------------------------------

TEST(ModelSwap, MthpKnobsSetOneSizeAndRestoreEveryValue)
{
	fs::path root = temp_path("thp");
	std::map<std::string, std::string> was = {
		{"hugepages-16kB", "always inherit madvise [never]\n"},
		{"hugepages-64kB", "always [inherit] madvise never\n"},
		{"hugepages-2048kB", "always inherit [madvise] never\n"},
	};
	for (const auto &[dir, value] : was) {
		fs::create_directories(root / dir);
		std::ofstream(root / dir / "enabled") << value;
	}
	{
		MthpKnobs knobs(root.string());
		ASSERT_TRUE(knobs.set_only(64));
		EXPECT_EQ(slurp(root / "hugepages-64kB/enabled"), "always");
		EXPECT_EQ(slurp(root / "hugepages-16kB/enabled"), "always inherit madvise [never]\n");
		EXPECT_EQ(slurp(root / "hugepages-2048kB/enabled"), "never");
		EXPECT_FALSE(knobs.set_only(32));   // no such knob
	}
	// restored on destruction: plain values, as sysfs takes them
	EXPECT_EQ(slurp(root / "hugepages-64kB/enabled"), "inherit");
	EXPECT_EQ(slurp(root / "hugepages-2048kB/enabled"), "madvise");
	fs::remove_all(root);
}

TEST(ModelSwap, ActiveSwapsSkipsTheHeader)
{
	std::string path = temp_path("swaps");
	std::ofstream(path) << "Filename\tType\tSize\tUsed\tPriority\n"
			       "/dev/zbatchswap0\tpartition\t262140\t0\t-2\n";
	auto swaps = active_swaps(path);
	fs::remove(path);
	ASSERT_EQ(swaps.size(), 1u);
	EXPECT_TRUE(swaps[0].starts_with("/dev/zbatchswap0"));
}

// Without the device under test nothing need be swapped out, so the run
// may fail for that alone; the model of writes, drops and forks must hold.
TEST(ModelSwap, ASmallRegionKeepsItsModelWithForks)
{
	SwapConfig c;
	c.seed = 51;
	c.ops = 300;
	c.size_mib = 4;
	c.pressure_mib = 2;
	Result r = run_swap(c);
	if (r.outcome == Outcome::fail) {
		EXPECT_NE(r.failure.message.find("nothing was swapped out"), std::string::npos)
			<< r.failure.message << "\n" << r.failure.difference;
	}
	EXPECT_NE(r.summary.find("fork "), std::string::npos) << r.summary;
	EXPECT_EQ(r.summary.find("fork 0"), std::string::npos) << r.summary;
	EXPECT_NE(r.summary.find("pswpout +"), std::string::npos) << r.summary;
}
