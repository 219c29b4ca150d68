// SPDX-License-Identifier: GPL-2.0
// Guest tests of /dev/zbatch against the userspace reference codecs.
#include <cerrno>
#include <cstring>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "vm_util.hpp"
#include "zbatch/device.hpp"
#include "zbatch/pattern.hpp"
#include "zbatch/refcodec.hpp"

using namespace vmtest;
using zbatch::Device;
using zbatch::Request;

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kGuard = 64;
constexpr uint8_t kPoison = 0xa5;

Device open_dev()
{
	auto d = Device::open();
	if (!d)
		throw std::runtime_error(d.error().message);
	return std::move(*d);
}

zbatch::Pattern pat_for(size_t i)
{
	static const zbatch::Pattern p[] = {zbatch::Pattern::Text, zbatch::Pattern::Mixed,
					    zbatch::Pattern::Zeros, zbatch::Pattern::Text};
	return p[i % 4];
}

struct ModeGuard {
	std::string old;
	explicit ModeGuard(const std::string &mode)
	{
		old = choice(sysfs_read(kSys + "/sync_mode"));
		EXPECT_EQ(sysfs_write(kSys + "/sync_mode", mode), 0) << mode;
	}
	~ModeGuard() { sysfs_write(kSys + "/sync_mode", old); }
};

} // namespace

TEST(Device, InfoMatchesHeader)
{
	auto dev = open_dev();
	auto info = dev.info();
	ASSERT_TRUE(info) << info.error().message;
	EXPECT_EQ(info->abi_version, static_cast<uint32_t>(ZBATCH_ABI_VERSION));
	EXPECT_EQ(info->max_batch, static_cast<uint32_t>(ZBATCH_MAX_BATCH));
	EXPECT_EQ(info->max_len, static_cast<uint32_t>(ZBATCH_MAX_LEN));
	EXPECT_GE(info->batch_size, 1u);
	EXPECT_EQ(std::to_string(info->batch_size), sysfs_read(kSys + "/batch_size"));
}

// Every codec x sync mode, batches of 1..32: zbatch output decodes with the
// userspace library, the library's output decodes with zbatch, and
// zbatch's own round trip is exact.
class CodecMode : public ::testing::TestWithParam<std::tuple<unsigned int, std::string>> {};

TEST_P(CodecMode, BatchesOf1To32CrossCheckWithUserspaceLibraries)
{
	auto [codec, mode] = GetParam();
	ModeGuard mg(mode);
	auto dev = open_dev();
	uint64_t seed = codec * 100;
	for (unsigned int n = 1; n <= 32; n++) {
		std::vector<std::vector<uint8_t>> src(n), comp(n, std::vector<uint8_t>(kPage)),
			back(n, std::vector<uint8_t>(kPage)), refc(n);
		std::vector<Request> reqs;
		for (unsigned int i = 0; i < n; i++) {
			src[i] = zbatch::generate(pat_for(i + n), kPage, seed++);
			reqs.push_back({src[i], comp[i]});
		}
		auto r = dev.submit(ZBATCH_OP_COMPRESS, codec, reqs);
		ASSERT_TRUE(r) << r.error().message;
		std::vector<unsigned int> ok;	// pages that compressed
		for (unsigned int i = 0; i < n; i++) {
			auto rc = zbatch::ref::compress(codec, src[i]);
			ASSERT_TRUE(rc) << rc.error().message;
			refc[i] = *rc;
			if (reqs[i].status == -ENOSPC) {
				// only when the library cannot shrink the page either
				ASSERT_GE(refc[i].size() + 16, kPage) << "batch " << n << " req " << i;
				continue;
			}
			ASSERT_EQ(reqs[i].status, 0) << "batch " << n << " req " << i;
			ASSERT_GT(reqs[i].produced, 0u);
			ASSERT_LT(reqs[i].produced, kPage);
			comp[i].resize(reqs[i].produced);
			auto ref = zbatch::ref::decompress(codec, comp[i], kPage);
			ASSERT_TRUE(ref) << ref.error().message << " batch " << n << " req " << i;
			ASSERT_EQ(*ref, src[i]) << "library decode differs, batch " << n << " req " << i;
			ok.push_back(i);
		}
		ASSERT_EQ(r->nr_done, ok.size());
		ASSERT_GE(ok.size() * 4, n * 3u) << "most of these pages must compress";
		// zbatch decodes its own output and the library's
		for (auto *input : {&comp, &refc}) {
			std::vector<Request> d;
			for (unsigned int i : ok) {
				std::fill(back[i].begin(), back[i].end(), 0);
				d.push_back({(*input)[i], back[i]});
			}
			auto rd = dev.submit(ZBATCH_OP_DECOMPRESS, codec, d);
			ASSERT_TRUE(rd) << rd.error().message;
			for (size_t k = 0; k < ok.size(); k++) {
				unsigned int i = ok[k];
				ASSERT_EQ(d[k].status, 0) << "batch " << n << " req " << i;
				ASSERT_EQ(d[k].produced, kPage);
				ASSERT_EQ(back[i], src[i]) << "batch " << n << " req " << i;
			}
		}
	}
}

INSTANTIATE_TEST_SUITE_P(
	AllCodecsAllModes, CodecMode,
	::testing::Combine(::testing::Values(ZBATCH_CODEC_DEFLATE, ZBATCH_CODEC_LZ4,
					     ZBATCH_CODEC_ZSTD, ZBATCH_CODEC_LZO),
			   ::testing::Values("sync", "async", "async_irq")),
	[](const auto &info) {
		return zbatch::codec_name(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
	});

TEST(Device, IncompressibleIsEnospcAndSiblingsSucceed)
{
	auto dev = open_dev();
	auto rnd = zbatch::generate(zbatch::Pattern::Random, kPage, 1);
	auto txt = zbatch::generate(zbatch::Pattern::Text, kPage, 2);
	std::vector<uint8_t> o1(kPage + kGuard, kPoison), o2(kPage, 0);
	std::vector<Request> reqs{{rnd, std::span(o1).first(kPage)}, {txt, o2}};
	auto r = dev.submit(ZBATCH_OP_COMPRESS, ZBATCH_CODEC_DEFAULT, reqs);
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(reqs[0].status, -ENOSPC);
	EXPECT_EQ(reqs[1].status, 0);
	EXPECT_EQ(r->nr_done, 1u);
	for (size_t i = kPage; i < o1.size(); i++)
		ASSERT_EQ(o1[i], kPoison);
}

TEST(Device, CorruptAndTruncatedStreamsFailWithoutOverrun)
{
	auto dev = open_dev();
	auto txt = zbatch::generate(zbatch::Pattern::Text, kPage, 3);
	for (unsigned int codec = 1; codec < ZBATCH_CODEC_NR; codec++) {
		auto comp = zbatch::ref::compress(codec, txt);
		ASSERT_TRUE(comp);
		std::vector<uint8_t> trunc(comp->begin(), comp->begin() + comp->size() / 2);
		std::vector<uint8_t> garbage = zbatch::generate(zbatch::Pattern::Random, 300, codec);
		std::vector<uint8_t> o1(kPage + kGuard, kPoison), o2(kPage + kGuard, kPoison),
			o3(kPage + kGuard, kPoison);
		std::vector<Request> reqs{{trunc, std::span(o1).first(kPage)},
					  {garbage, std::span(o2).first(kPage)},
					  {*comp, std::span(o3).first(kPage / 2)}};
		auto r = dev.submit(ZBATCH_OP_DECOMPRESS, codec, reqs);
		ASSERT_TRUE(r) << r.error().message;
		auto name = zbatch::codec_name(codec);
		EXPECT_NE(reqs[0].status, 0) << name << ": truncated stream decoded";
		EXPECT_NE(reqs[2].status, 0) << name << ": a page fit in half a page";
		for (int s : {reqs[0].status, reqs[1].status, reqs[2].status}) {
			if (s) {
				EXPECT_TRUE(s == -EBADMSG || s == -EINVAL || s == -ENOSPC)
					<< name << ": status " << s;
			}
		}
		for (size_t i = kPage; i < o1.size(); i++) {
			ASSERT_EQ(o1[i], kPoison) << name;
			ASSERT_EQ(o2[i], kPoison) << name;
		}
		for (size_t i = kPage / 2; i < o3.size(); i++)
			ASSERT_EQ(o3[i], kPoison) << name << ": wrote past dst_len";
	}
}

// Malformed calls get a clear errno and no kernel warning (vm-run checks
// the log after the run).
TEST(Device, MalformedCallsAreRefused)
{
	auto dev = open_dev();
	auto txt = zbatch::generate(zbatch::Pattern::Text, kPage, 4);
	std::vector<uint8_t> out(2 * kPage);
	zbatch_ioc_req req{};
	auto good = [&] {
		req = {};
		req.src = reinterpret_cast<uintptr_t>(txt.data());
		req.dst = reinterpret_cast<uintptr_t>(out.data());
		req.src_len = kPage;
		req.dst_len = kPage;
		zbatch_ioc_batch b{};
		b.size = sizeof(b);
		b.req_size = sizeof(req);
		b.op = ZBATCH_OP_COMPRESS;
		b.nr_reqs = 1;
		b.reqs = reinterpret_cast<uintptr_t>(&req);
		return b;
	};
	auto call = [&](zbatch_ioc_batch b) {
		return ::ioctl(dev.fd(), ZBATCH_IOC_SUBMIT, &b) < 0 ? errno : 0;
	};
	ASSERT_EQ(call(good()), 0);
	ASSERT_EQ(req.status, 0);

	auto b = good(); b.size = 8;				EXPECT_EQ(call(b), EINVAL) << "short size";
	b = good(); b.req_size = 8;				EXPECT_EQ(call(b), EINVAL) << "req_size";
	b = good(); b.nr_reqs = 0;				EXPECT_EQ(call(b), EINVAL) << "empty";
	b = good(); b.nr_reqs = ZBATCH_MAX_BATCH + 1;		EXPECT_EQ(call(b), EINVAL) << "oversized";
	b = good(); b.flags = 0x80;				EXPECT_EQ(call(b), EINVAL) << "flags";
	b = good(); b.op = 7;					EXPECT_EQ(call(b), EINVAL) << "op";
	b = good(); b.codec = ZBATCH_CODEC_NR;			EXPECT_EQ(call(b), EINVAL) << "codec";
	b = good(); b.reserved = 1;				EXPECT_EQ(call(b), EINVAL) << "reserved";
	b = good(); b.reqs = 8;					EXPECT_EQ(call(b), EFAULT) << "reqs ptr";
	b = good(); req.src = 16;				EXPECT_EQ(call(b), EFAULT) << "src ptr";
	b = good(); req.dst = 0xffff800000000000ull;		EXPECT_EQ(call(b), EFAULT) << "kernel ptr";
	b = good(); req.src_len = 0;				EXPECT_EQ(call(b), EINVAL) << "src_len 0";
	b = good(); req.dst_len = ZBATCH_MAX_LEN + 1;		EXPECT_EQ(call(b), EINVAL) << "dst_len";
	b = good(); req.reserved = 3;				EXPECT_EQ(call(b), EINVAL) << "req reserved";
	b = good(); req.dst = req.src + 100;			EXPECT_EQ(call(b), EINVAL) << "src/dst overlap";
	{
		// two requests writing into the same buffer
		zbatch_ioc_req two[2];
		b = good();
		two[0] = req;
		two[1] = req;
		two[1].src = reinterpret_cast<uintptr_t>(txt.data() + 1);
		two[1].src_len = 100;
		b.reqs = reinterpret_cast<uintptr_t>(two);
		b.nr_reqs = 2;
		EXPECT_EQ(call(b), EINVAL) << "dst/dst overlap";
	}
	{
		// a larger struct with unknown non-zero trailing bytes
		struct {
			zbatch_ioc_batch b;
			uint64_t extra;
		} big{good(), 1};
		big.b.size = sizeof(big);
		EXPECT_EQ(::ioctl(dev.fd(), ZBATCH_IOC_SUBMIT, &big) < 0 ? errno : 0, E2BIG);
		big.extra = 0;
		EXPECT_EQ(::ioctl(dev.fd(), ZBATCH_IOC_SUBMIT, &big) < 0 ? errno : 0, 0);
	}
	{
		// a size without bound, even with a zero tail: the kernel would
		// scan all of it (a page at most)
		std::vector<uint64_t> huge(65536 / sizeof(uint64_t), 0);
		zbatch_ioc_batch g = good();
		g.size = 65536;
		std::memcpy(huge.data(), &g, sizeof(g));
		EXPECT_EQ(::ioctl(dev.fd(), ZBATCH_IOC_SUBMIT, huge.data()) < 0 ? errno : 0, E2BIG);
	}
	EXPECT_EQ(::ioctl(dev.fd(), _IO(ZBATCH_IOC_MAGIC, 77)) < 0 ? errno : 0, ENOTTY);
	zbatch_ioc_info info{};
	info.size = 4;
	EXPECT_EQ(::ioctl(dev.fd(), ZBATCH_IOC_INFO, &info) < 0 ? errno : 0, EINVAL);
}

TEST(Device, NonRootIsRefused)
{
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		// open as root, then drop privileges: the ioctl checks CAP_SYS_ADMIN
		auto d = Device::open();
		if (!d || setgid(65534) || setuid(65534))
			_exit(2);
		auto info = d->info();
		_exit(!info && info.error().code == EPERM ? 0 : 1);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
}

TEST(Sysfs, WritesAreValidatedAndAppliedWhole)
{
	auto codec = sysfs_read(kSys + "/codec");
	EXPECT_EQ(sysfs_write(kSys + "/codec", "nope"), EINVAL);
	EXPECT_EQ(sysfs_read(kSys + "/codec"), codec);
	EXPECT_EQ(sysfs_write(kSys + "/codec", "zstd"), 0);
	EXPECT_EQ(choice(sysfs_read(kSys + "/codec")), "zstd");
	EXPECT_EQ(sysfs_write(kSys + "/codec", choice(codec)), 0);

	EXPECT_EQ(sysfs_write(kSys + "/sync_mode", "fast"), EINVAL);
	EXPECT_EQ(sysfs_write(kSys + "/distribute_comps", "everywhere"), EINVAL);
	EXPECT_EQ(sysfs_write(kSys + "/g_comp_wqs_per_iaa", "9"), EINVAL);
	EXPECT_EQ(sysfs_write(kSys + "/verify_compress", "maybe"), EINVAL);
	EXPECT_EQ(sysfs_write(kSys + "/timeout_ms", "0"), EINVAL);
	EXPECT_EQ(sysfs_write(kSys + "/timeout_ms", "1000000"), EINVAL);
	EXPECT_EQ(sysfs_write(kSys + "/timeout_ms", "12abc"), EINVAL);
	EXPECT_EQ(sysfs_write(kSys + "/dev0/wq0/enabled", "2"), EINVAL);
	EXPECT_EQ(sysfs_read(kSys + "/timeout_ms"), "1000");
	EXPECT_EQ(sysfs_read(kSys + "/dev0/wq0/enabled"), "1");
	EXPECT_EQ(sysfs_read(kSys + "/dev0/wq0/executor"), "software");
}

TEST(Sysfs, DistributedDecompressAndVerifyStillRoundTrip)
{
	auto dev = open_dev();
	ASSERT_EQ(sysfs_write(kSys + "/distribute_decomps", "1"), 0);
	ASSERT_EQ(sysfs_write(kSys + "/verify_compress", "1"), 0);
	ASSERT_EQ(sysfs_write(kDbg + "/reset", "1"), 0);
	std::vector<std::vector<uint8_t>> src, out(16, std::vector<uint8_t>(kPage));
	std::vector<Request> reqs;
	for (int i = 0; i < 16; i++)
		src.push_back(zbatch::generate(zbatch::Pattern::Text, kPage, 50 + i));
	for (int i = 0; i < 16; i++)
		reqs.push_back({src[i], out[i]});
	auto r = dev.submit(ZBATCH_OP_COMPRESS, ZBATCH_CODEC_DEFLATE, reqs);
	sysfs_write(kSys + "/distribute_decomps", "0");
	sysfs_write(kSys + "/verify_compress", "0");
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->nr_done, 16u);
	auto stats = sysfs_read(kDbg + "/stats");
	EXPECT_NE(stats.find("compress_calls 16\n"), std::string::npos) << stats;
	EXPECT_NE(stats.find("err_verify 0\n"), std::string::npos) << stats;
	auto hist = sysfs_read(kDbg + "/batch_hist");
	EXPECT_NE(hist.find("\n16 1\n"), std::string::npos) << hist;
}

// A stalled WQ (debugfs fault injection): with ZBATCH_F_NO_FALLBACK the
// request reports -ETIMEDOUT, the WQ leaves service, and later jobs still
// complete in software until sysfs puts the WQ back.
TEST(Device, TimeoutTakesWqOutOfService)
{
	auto dev = open_dev();
	ASSERT_EQ(sysfs_write(kSys + "/timeout_ms", "20"), 0);
	std::vector<std::string> wqs;
	for (int d = 0; d < std::stoi(sysfs_read(kSys + "/nr_devices")); d++)
		wqs.push_back("dev" + std::to_string(d) + "/wq0");
	for (auto &w : wqs)
		ASSERT_EQ(sysfs_write(kDbg + "/" + w + "/stall", "1"), 0);
	// a batch of one runs inline; only a handed-off descriptor meets the WQ
	ASSERT_EQ(sysfs_write(kDbg + "/handoff", "always"), 0);
	ModeGuard mg("async_irq");
	auto txt = zbatch::generate(zbatch::Pattern::Text, kPage, 9);
	std::vector<uint8_t> out(kPage);
	std::vector<Request> reqs{{txt, out}};
	auto r = dev.submit(ZBATCH_OP_COMPRESS, ZBATCH_CODEC_LZ4, reqs, ZBATCH_F_NO_FALLBACK);
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(reqs[0].status, -ETIMEDOUT);
	EXPECT_EQ(sysfs_read(kSys + "/" + wqs[0] + "/enabled"), "0");
	// no WQ in service now: runs in the submitter
	std::vector<Request> again{{txt, out}};
	auto r2 = dev.submit(ZBATCH_OP_COMPRESS, ZBATCH_CODEC_LZ4, again, ZBATCH_F_NO_FALLBACK);
	ASSERT_TRUE(r2);
	EXPECT_EQ(again[0].status, 0);
	for (auto &w : wqs) {
		EXPECT_EQ(sysfs_write(kDbg + "/" + w + "/stall", "0"), 0);
		EXPECT_EQ(sysfs_write(kSys + "/" + w + "/enabled", "1"), 0);
	}
	EXPECT_EQ(sysfs_write(kSys + "/timeout_ms", "1000"), 0);
	EXPECT_EQ(sysfs_write(kDbg + "/handoff", "auto"), 0);
	auto stats = sysfs_read(kDbg + "/stats");
	EXPECT_EQ(stats.find("timeouts 0\n"), std::string::npos) << stats;
}
