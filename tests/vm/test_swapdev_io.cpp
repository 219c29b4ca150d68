// SPDX-License-Identifier: GPL-2.0
// The swap device as a block device, case by case (scripts/guest-swapdev):
// units whose pages diverged, partial reads, the memory a bio's pages
// arrive in, the counters that say what happened. The random search over
// the same ground is the model checker (test_model.cpp).
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <linux/fs.h>
#include <map>
#include <sstream>
#include <string>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "vm_util.hpp"
#include "zbatch/pattern.hpp"

using namespace vmtest;

namespace {

constexpr size_t kPage = 4096;

// A device of @unit units, created through sysfs, removed at the end.
struct Device {
	int id = -1;
	std::string path, dir;
	int fd = -1;

	Device(const std::string &unit, const std::string &codec = "lz4")
	{
		id = std::stoi(sysfs_read(kSys + "/swapdev/hot_add"));
		dir = "/sys/block/zbatchswap" + std::to_string(id) + "/zbatch";
		path = "/dev/zbatchswap" + std::to_string(id);
		EXPECT_EQ(sysfs_write(dir + "/unit", unit), 0);
		EXPECT_EQ(sysfs_write(dir + "/codec", codec), 0);
		EXPECT_EQ(sysfs_write(dir + "/disksize", "16M"), 0);
		fd = ::open(path.c_str(), O_RDWR | O_DIRECT);
		EXPECT_GE(fd, 0) << path << ": " << std::strerror(errno);
	}
	~Device()
	{
		if (fd >= 0)
			::close(fd);
		if (id >= 0) {
			EXPECT_EQ(sysfs_write(kSys + "/swapdev/hot_remove", std::to_string(id)), 0);
		}
	}
	int64_t unit_stat(const std::string &k) const
	{
		std::istringstream s(sysfs_read(dir + "/unit_stat"));
		std::string name;
		int64_t v;
		while (s >> name >> v)
			if (name == k)
				return v;
		ADD_FAILURE() << "unit_stat has no " << k;
		return -1;
	}
	std::vector<uint64_t> mm_stat() const
	{
		std::istringstream s(sysfs_read(dir + "/mm_stat"));
		std::vector<uint64_t> f;
		uint64_t v;
		while (s >> v)
			f.push_back(v);
		return f;
	}
};

// 2 MiB of anonymous memory backed by a transparent huge page: O_DIRECT
// from it gives the device one multi-page bvec, as a large folio does.
struct HugeBuffer {
	uint8_t *p = nullptr;
	void *map = MAP_FAILED;
	static constexpr size_t kSize = 2 << 20;

	HugeBuffer()
	{
		map = ::mmap(nullptr, 2 * kSize, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED)
			return;
		auto a = (reinterpret_cast<uintptr_t>(map) + kSize - 1) & ~(kSize - 1);
		p = reinterpret_cast<uint8_t *>(a);
		::madvise(p, kSize, MADV_HUGEPAGE);
		std::memset(p, 1, kSize);
	}
	~HugeBuffer()
	{
		if (map != MAP_FAILED)
			::munmap(map, 2 * kSize);
	}
	// AnonHugePages of this mapping, from /proc/self/smaps
	bool huge() const
	{
		std::ifstream f("/proc/self/smaps");
		std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
		auto at = s.find(fmt_hex(reinterpret_cast<uintptr_t>(map)) + "-");
		if (at == std::string::npos)
			return false;
		auto k = s.find("AnonHugePages:", at);
		return k != std::string::npos && std::strtoul(s.c_str() + k + 14, nullptr, 10) > 0;
	}
	static std::string fmt_hex(uintptr_t v)
	{
		char b[32];
		std::snprintf(b, sizeof(b), "%lx", static_cast<unsigned long>(v));
		return b;
	}
};

// @pages pages of data that compresses about 1.5x: a 64 KiB unit's
// stream is then over half of the I/O context's old 64 KiB window.
std::vector<uint8_t> half_text(size_t pages, uint64_t seed)
{
	auto t = zbatch::generate(zbatch::Pattern::Text, pages * kPage, seed);
	auto r = zbatch::generate(zbatch::Pattern::Random, pages * kPage, seed + 1);
	for (size_t i = 0; i < t.size(); i += 2048)
		std::memcpy(t.data() + i, r.data() + i, 1024);
	return t;
}

// @data written from @b's memory at byte @off, as one multi-page bvec.
::testing::AssertionResult write_bvec(const Device &d, HugeBuffer &b,
				      const std::vector<uint8_t> &data, off_t off)
{
	std::memcpy(b.p, data.data(), data.size());
	ssize_t r = ::pwrite(d.fd, b.p, data.size(), off);
	int err = errno;
	if (r == ssize_t(data.size()))
		return ::testing::AssertionSuccess();
	return ::testing::AssertionFailure() << "pwrite of " << data.size() << " bytes at " << off
					     << ": " << (r < 0 ? std::strerror(err) : "short");
}

ssize_t preadv_pages(int fd, const std::vector<uint8_t *> &pages, off_t off)
{
	std::vector<iovec> iov;
	for (auto *p : pages)
		iov.push_back({p, kPage});
	return ::preadv(fd, iov.data(), static_cast<int>(iov.size()), off);
}

} // namespace

// The data loss of a unit read whole after one of its later pages was
// rewritten, same-filled or discarded: each page must come back as its
// own slot holds it, from one multi-page bvec as from scattered pages.
TEST(SwapdevIo, UnitReadWholeAfterPagesDivergedReturnsEachPage)
{
	for (const char *unit : {"16k", "64k"}) {
		SCOPED_TRACE(unit);
		Device d(unit);
		ThpMadvise thp;
		HugeBuffer b;
		ASSERT_TRUE(b.p && b.huge()) << "no THP: cannot build a multi-page bvec";
		const size_t n = std::string(unit) == "16k" ? 4 : 16;
		auto want = zbatch::generate(zbatch::Pattern::Text, n * kPage, 7);
		ASSERT_TRUE(write_bvec(d, b, want, 0));
		ASSERT_EQ(d.unit_stat("units"), 1);
		int64_t pw = d.unit_stat("partial_writes");
		// page 1 rewritten, page 2 same-filled, page n-1 discarded
		auto other = zbatch::generate(zbatch::Pattern::Text, kPage, 99);
		ASSERT_TRUE(write_bvec(d, b, other, kPage));
		std::memcpy(want.data() + kPage, other.data(), kPage);
		std::memset(b.p, 0x5a, kPage);
		ASSERT_EQ(::pwrite(d.fd, b.p, kPage, 2 * kPage), ssize_t(kPage));
		std::memset(want.data() + 2 * kPage, 0x5a, kPage);
		uint64_t range[2] = {(n - 1) * kPage, kPage};
		ASSERT_EQ(::ioctl(d.fd, BLKDISCARD, range), 0) << std::strerror(errno);
		std::memset(want.data() + (n - 1) * kPage, 0, kPage);
		EXPECT_EQ(d.unit_stat("partial_writes") - pw, 2) << "a same-filled page into a unit "
								    "is a partial write too";

		std::memset(b.p, 0xee, n * kPage);
		ASSERT_EQ(::pread(d.fd, b.p, n * kPage, 0), ssize_t(n * kPage));
		for (size_t i = 0; i < n; i++)
			EXPECT_EQ(std::memcmp(b.p + i * kPage, want.data() + i * kPage, kPage), 0)
				<< "page " << i << " of the unit, read as one bvec";
		std::vector<uint8_t *> pages;
		for (size_t i = 0; i < n; i++)
			pages.push_back(b.p + (2 * n - 1 - i) * kPage);	// scattered, reversed
		ASSERT_EQ(preadv_pages(d.fd, pages, 0), ssize_t(n * kPage));
		for (size_t i = 0; i < n; i++)
			EXPECT_EQ(std::memcmp(pages[i], want.data() + i * kPage, kPage), 0)
				<< "page " << i << " of the unit, read page by page";
		EXPECT_EQ(d.unit_stat("units"), 1) << "the unit keeps its other pages";
	}
}

// Reading 15 pages of a 64 KiB unit whose stream is over 32 KiB: one
// decompression into scratch, whatever the memory (one bvec or fifteen).
// It used to be one per page.
TEST(SwapdevIo, PartialReadDecompressesTheUnitOnce)
{
	Device d("64k");
	ThpMadvise thp;
	HugeBuffer b;
	ASSERT_TRUE(b.p && b.huge()) << "no THP: cannot build a multi-page bvec";
	auto data = half_text(16, 3);
	ASSERT_TRUE(write_bvec(d, b, data, 0));
	ASSERT_EQ(d.unit_stat("units"), 1) << "the data did not make a unit";
	auto mm = d.mm_stat();
	ASSERT_EQ(mm.size(), 9u);
	ASSERT_GT(mm[1], 32768u) << "the stream must be over half of 64 KiB";

	int64_t r0 = d.unit_stat("partial_reads");
	ASSERT_EQ(::pread(d.fd, b.p, 15 * kPage, kPage), ssize_t(15 * kPage));
	EXPECT_EQ(std::memcmp(b.p, data.data() + kPage, 15 * kPage), 0);
	EXPECT_EQ(d.unit_stat("partial_reads") - r0, 1) << "one bvec";

	std::vector<uint8_t *> pages;
	for (size_t i = 0; i < 15; i++)
		pages.push_back(b.p + (40 - 2 * i) * kPage);
	r0 = d.unit_stat("partial_reads");
	ASSERT_EQ(preadv_pages(d.fd, pages, kPage), ssize_t(15 * kPage));
	for (size_t i = 0; i < 15; i++)
		EXPECT_EQ(std::memcmp(pages[i], data.data() + (i + 1) * kPage, kPage), 0) << i;
	EXPECT_EQ(d.unit_stat("partial_reads") - r0, 1) << "fifteen bvecs";
	EXPECT_EQ(d.unit_stat("partial_read_bytes") % (16 * kPage), 0);
}

// O_DIRECT from a buffer aligned to 512 bytes, not to a page: the block
// layer allows it (the device's DMA alignment is 512), so the device must
// take a page spread over several bvecs. It answered EIO.
TEST(SwapdevIo, DirectIoFromSectorAlignedBuffer)
{
	for (const char *unit : {"4k", "16k"}) {
		SCOPED_TRACE(unit);
		Device d(unit);
		void *mem;
		ASSERT_EQ(posix_memalign(&mem, kPage, 6 * kPage), 0);
		auto *buf = static_cast<uint8_t *>(mem) + 512;
		auto data = zbatch::generate(zbatch::Pattern::Mixed, 4 * kPage, 11);
		std::memcpy(buf, data.data(), data.size());
		EXPECT_EQ(::pwrite(d.fd, buf, 2 * kPage, 0), ssize_t(2 * kPage)) << std::strerror(errno);
		EXPECT_EQ(::pwrite(d.fd, buf + 2 * kPage, 2 * kPage, 2 * kPage), ssize_t(2 * kPage))
			<< std::strerror(errno);
		std::memset(buf, 0, 4 * kPage);
		EXPECT_EQ(::pread(d.fd, buf, 4 * kPage, 0), ssize_t(4 * kPage)) << std::strerror(errno);
		EXPECT_EQ(std::memcmp(buf, data.data(), 4 * kPage), 0);
		// and the same pages read from aligned memory
		auto *al = static_cast<uint8_t *>(mem);
		ASSERT_EQ(::pread(d.fd, al, 4 * kPage, 0), ssize_t(4 * kPage));
		EXPECT_EQ(std::memcmp(al, data.data(), 4 * kPage), 0);
		std::free(mem);
	}
}

// mm_stat is zram's, field for field: pages stored raw now (huge_pages)
// and ever (huge_pages_since) are two counters.
TEST(SwapdevIo, MmStatHasZramsFields)
{
	Device d("4k");
	void *mem;
	ASSERT_EQ(posix_memalign(&mem, kPage, kPage), 0);
	auto rnd = zbatch::generate(zbatch::Pattern::Random, kPage, 5);
	std::memcpy(mem, rnd.data(), kPage);
	ASSERT_EQ(::pwrite(d.fd, mem, kPage, 0), ssize_t(kPage));
	auto a = d.mm_stat();
	ASSERT_EQ(a.size(), 9u) << sysfs_read(d.dir + "/mm_stat");
	EXPECT_EQ(a[7], 1u) << "huge_pages";
	EXPECT_EQ(a[8], 1u) << "huge_pages_since";
	auto txt = zbatch::generate(zbatch::Pattern::Text, kPage, 5);
	std::memcpy(mem, txt.data(), kPage);
	ASSERT_EQ(::pwrite(d.fd, mem, kPage, 0), ssize_t(kPage));
	auto b = d.mm_stat();
	EXPECT_EQ(b[7], 0u) << "huge_pages: the raw page was rewritten";
	EXPECT_EQ(b[8], 1u) << "huge_pages_since never goes down";
	EXPECT_EQ(b[0], kPage) << "orig_data_size";
	std::free(mem);
}

namespace {

// The @want.size() bytes written at offset 0 read back: as one bvec into
// @buf (a huge page's memory, room for twice that), and page by page into
// that memory's pages in reverse order (scattered: a partial read each).
void expect_reads_back(int fd, uint8_t *buf, const std::vector<uint8_t> &want)
{
	const size_t n = want.size() / kPage;

	std::memset(buf, 0xee, n * kPage);
	ASSERT_EQ(::pread(fd, buf, n * kPage, 0), ssize_t(n * kPage));
	EXPECT_EQ(std::memcmp(buf, want.data(), n * kPage), 0) << "read as one bvec";
	std::vector<uint8_t *> pages;
	for (size_t i = 0; i < n; i++)
		pages.push_back(buf + (2 * n - 1 - i) * kPage);
	ASSERT_EQ(preadv_pages(fd, pages, 0), ssize_t(n * kPage));
	for (size_t i = 0; i < n; i++)
		EXPECT_EQ(std::memcmp(pages[i], want.data() + i * kPage, kPage), 0)
			<< "page " << i << ", read page by page";
}

} // namespace

// A unit that does not fit (all but one of its pages random: with lz4 a
// random page's block does not fit a page, and the unit would save
// nothing) is stored page by page, each compressed alone: the text page
// keeps what it saves, and each page reads back as written, whole or
// scattered. Units used to fall back to every page raw.
TEST(SwapdevIo, UnitThatSavesNoPageIsStoredPageByPageCompressed)
{
	for (const char *unit : {"16k", "64k"}) {
		SCOPED_TRACE(unit);
		Device d(unit);
		ThpMadvise thp;
		HugeBuffer b;
		ASSERT_TRUE(b.p && b.huge()) << "no THP: cannot build a multi-page bvec";
		const size_t n = std::string(unit) == "16k" ? 4 : 16;
		auto want = zbatch::generate(zbatch::Pattern::Random, n * kPage, 21);
		auto txt = zbatch::generate(zbatch::Pattern::Text, kPage, 22);
		std::memcpy(want.data() + (n - 1) * kPage, txt.data(), kPage);
		ASSERT_TRUE(write_bvec(d, b, want, 0));
		EXPECT_EQ(d.unit_stat("units"), 0);
		EXPECT_EQ(d.unit_stat("unit_fallbacks"), 1);
		auto mm = d.mm_stat();
		ASSERT_EQ(mm.size(), 9u);
		EXPECT_EQ(mm[7], n - 1) << "huge_pages: the random pages raw";
		EXPECT_LT(mm[1], (n - 1) * kPage + kPage / 2)
			<< "compr_data_size: the text page must be stored compressed";

		expect_reads_back(d.fd, b.p, want);
	}
}

namespace {

// verify_compress set for a scope, put back as it was after it.
struct VerifyCompress {
	std::string old = sysfs_read(kSys + "/verify_compress");

	explicit VerifyCompress(bool on)
	{
		EXPECT_EQ(sysfs_write(kSys + "/verify_compress", on ? "1" : "0"), 0);
	}
	~VerifyCompress()
	{
		sysfs_write(kSys + "/verify_compress", old.rfind("1", 0) == 0 ? "1" : "0");
	}
};

// This device's write batches by size (batch_stat): size -> batches.
std::map<unsigned, uint64_t> write_batches(const std::string &dir)
{
	std::istringstream s(sysfs_read(dir + "/batch_stat"));
	std::map<unsigned, uint64_t> out;
	std::string line;
	while (std::getline(s, line)) {
		unsigned size;
		uint64_t w, r;
		if (line.empty() || line[0] == '#')
			continue;
		if (std::istringstream(line) >> size >> w >> r && w)
			out[size] = w;
	}
	return out;
}

} // namespace

// A unit that does not fit is stored page by page, but what its own
// attempt found is not compressed again (fallback_pages_kept): the page
// whose lz4 block did not fit a page (random data) goes raw, and the first
// page, which that attempt compressed as plain lz4, goes as it is (unless
// verify_compress: nothing verified it, so it is compressed again). The
// device's write batches say what was compressed: the unit, then one
// batch of the pages left. Every page reads back as written: the unit
// whole, page by page, and the first page alone (a one-page read decodes
// its object as plain lz4).
TEST(SwapdevIo, UnitFallbackKeepsWhatItsAttemptFound)
{
	for (const char *unit : {"16k", "64k"}) {
		for (bool verify : {false, true}) {
			SCOPED_TRACE(std::string(unit) + (verify ? " verify_compress" : ""));
			VerifyCompress vc(verify);
			Device d(unit);
			ThpMadvise thp;
			HugeBuffer b;
			ASSERT_TRUE(b.p && b.huge()) << "no THP: cannot build a multi-page bvec";
			const size_t n = std::string(unit) == "16k" ? 4 : 16;
			auto want = zbatch::generate(zbatch::Pattern::Text, n * kPage, 41);
			auto rnd = zbatch::generate(zbatch::Pattern::Random, kPage, 42);
			std::memcpy(want.data() + kPage, rnd.data(), kPage);
			ASSERT_TRUE(write_bvec(d, b, want, 0));
			const uint64_t kept = verify ? 1 : 2;
			EXPECT_EQ(d.unit_stat("units"), 0);
			EXPECT_EQ(d.unit_stat("unit_fallbacks"), 1);
			EXPECT_EQ(d.unit_stat("fallback_pages_kept"), int64_t(kept));
			std::map<unsigned, uint64_t> batches{{1, 1}, {unsigned(n - kept), 1}};
			EXPECT_EQ(write_batches(d.dir), batches)
				<< "the unit, then a batch of each page not kept\n"
				<< sysfs_read(d.dir + "/batch_stat");
			auto mm = d.mm_stat();
			ASSERT_EQ(mm.size(), 9u);
			EXPECT_EQ(mm[7], 1u) << "huge_pages: the random page raw";
			EXPECT_LT(mm[1], kPage + (n - 1) * kPage / 2)
				<< "compr_data_size: the text pages stored compressed";

			expect_reads_back(d.fd, b.p, want);
			std::memset(b.p, 0xee, kPage);
			ASSERT_EQ(::pread(d.fd, b.p, kPage, 0), ssize_t(kPage));
			EXPECT_EQ(std::memcmp(b.p, want.data(), kPage), 0) << "the first page alone";
		}
	}
}

// The same with a same-filled page among three random ones (a 16k unit
// whose random pages' lz4 blocks do not fit a page): the same-filled page
// takes no memory.
TEST(SwapdevIo, SameFilledPageOfAUnitThatSavesNoPageTakesNoMemory)
{
	Device d("16k");
	ThpMadvise thp;
	HugeBuffer b;
	ASSERT_TRUE(b.p && b.huge()) << "no THP: cannot build a multi-page bvec";
	auto want = zbatch::generate(zbatch::Pattern::Random, 4 * kPage, 31);
	std::memset(want.data() + 2 * kPage, 0x5a, kPage);
	ASSERT_TRUE(write_bvec(d, b, want, 0));
	EXPECT_EQ(d.unit_stat("units"), 0);
	EXPECT_EQ(d.unit_stat("unit_fallbacks"), 1);
	auto mm = d.mm_stat();
	ASSERT_EQ(mm.size(), 9u);
	EXPECT_EQ(mm[5], 1u) << "same_pages";
	EXPECT_EQ(mm[7], 3u) << "huge_pages";
	std::memset(b.p, 0xee, 4 * kPage);
	ASSERT_EQ(::pread(d.fd, b.p, 4 * kPage, 0), ssize_t(4 * kPage));
	EXPECT_EQ(std::memcmp(b.p, want.data(), 4 * kPage), 0);
}

namespace {

// A 16k unit whose pages each keep @random random bytes and end in zeros.
std::vector<uint8_t> barely_compressible(size_t random, uint64_t seed)
{
	auto v = zbatch::generate(zbatch::Pattern::Random, 4 * kPage, seed);
	for (size_t i = 0; i < 4; i++)
		std::memset(v.data() + i * kPage + random, 0, kPage - random);
	return v;
}

} // namespace

// An lz4 unit is kept when it saves half a page (ZB_UNIT_SAVES()), not a
// whole one: four pages that compress to about 3.05 pages (3100 random
// bytes each) are one unit, not a fallback that compresses them again;
// pages that compress to just over 3.5 (3600 random bytes each), written
// over it, are stored page by page. zstd's units still save a page: the
// first pages are stored page by page. Every page reads back, whole and
// page by page.
TEST(SwapdevIo, Lz4UnitThatSavesHalfAPageIsKept)
{
	for (const char *codec : {"lz4", "zstd"}) {
		SCOPED_TRACE(codec);
		const bool lz4 = std::string(codec) == "lz4";
		Device d("16k", codec);
		ThpMadvise thp;
		HugeBuffer b;
		ASSERT_TRUE(b.p && b.huge()) << "no THP: cannot build a multi-page bvec";
		auto want = barely_compressible(3100, 51);
		ASSERT_TRUE(write_bvec(d, b, want, 0));
		EXPECT_EQ(d.unit_stat("units"), lz4 ? 1 : 0);
		EXPECT_EQ(d.unit_stat("unit_fallbacks"), lz4 ? 0 : 1);
		if (lz4) {
			auto mm = d.mm_stat();
			ASSERT_EQ(mm.size(), 9u);
			EXPECT_GT(mm[1], 3 * kPage) << "compr_data_size: the unit saves less than a page";
			EXPECT_LE(mm[1], 4 * kPage - kPage / 2);
		}
		expect_reads_back(d.fd, b.p, want);
		if (!lz4)
			continue;

		// written over the unit
		want = barely_compressible(3600, 52);
		ASSERT_TRUE(write_bvec(d, b, want, 0));
		EXPECT_EQ(d.unit_stat("units"), 0) << "these pages save under half a page";
		EXPECT_EQ(d.unit_stat("unit_fallbacks"), 1);
		expect_reads_back(d.fd, b.p, want);
	}
}
