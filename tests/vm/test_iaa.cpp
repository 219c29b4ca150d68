// SPDX-License-Identifier: GPL-2.0
// Guest tests of the IAA executor against the hardware test double
// (tests/iaa_double: deflate-iaa-double, iaa_crypto's async_irq behaviour).
// scripts/guest-iaa loads the double, then zbatch with
// iaa_driver=deflate-iaa-double.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "vm_util.hpp"
#include "zbatch/device.hpp"
#include "zbatch/pattern.hpp"
#include "zbatch/workload.hpp"

using namespace vmtest;
using zbatch::Device;
using zbatch::Request;

namespace {

const std::string kIaa = kSys + "/iaa";
const std::string kDbl = "/sys/module/zbatch_iaa_double/parameters";

int64_t dbl(const std::string &name)
{
	return std::stoll(sysfs_read(kDbl + "/" + name));
}

std::map<std::string, int64_t> iaa_stats()
{
	return zbatch::parse_kv(sysfs_read(kIaa + "/stats"));
}

std::string state()
{
	return choice(sysfs_read(kIaa + "/state"));
}

// Polls up to @secs for the executor to reach @want.
bool wait_state(const std::string &want, int secs = 10)
{
	for (int i = 0; i < secs * 10; i++) {
		if (state() == want)
			return true;
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	return false;
}

Device open_dev()
{
	auto d = Device::open();
	if (!d)
		throw std::runtime_error(d.error().message);
	return std::move(*d);
}

// A batch of @n deflate pages of @len bytes, compressed and decompressed,
// every byte compared. Returns how many requests failed either way.
int round_trip(const Device &dev, unsigned n, size_t len = 4096, uint64_t seed = 1,
	       unsigned codec = ZBATCH_CODEC_DEFLATE)
{
	static const zbatch::Pattern pats[] = {zbatch::Pattern::Text, zbatch::Pattern::Mixed,
					       zbatch::Pattern::Zeros};
	std::vector<std::vector<uint8_t>> in(n), cmp(n, std::vector<uint8_t>(len + 64)),
		out(n, std::vector<uint8_t>(len));
	std::vector<Request> c(n), d(n);
	int bad = 0;

	for (unsigned i = 0; i < n; i++) {
		in[i] = zbatch::generate(pats[i % 3], len, seed + i);
		c[i].src = in[i];
		c[i].dst = cmp[i];
	}
	auto r = dev.submit(ZBATCH_OP_COMPRESS, codec, c);
	EXPECT_TRUE(r) << (r ? "" : r.error().message);
	if (!r)
		return static_cast<int>(n);
	for (unsigned i = 0; i < n; i++) {
		EXPECT_EQ(c[i].status, 0) << "compress " << i;
		if (c[i].status) {
			bad++;
			continue;
		}
		d[i].src = std::span<const uint8_t>(cmp[i].data(), c[i].produced);
		d[i].dst = out[i];
	}
	auto rd = dev.submit(ZBATCH_OP_DECOMPRESS, codec, d);
	EXPECT_TRUE(rd) << (rd ? "" : rd.error().message);
	if (!rd)
		return static_cast<int>(n);
	for (unsigned i = 0; i < n; i++) {
		if (c[i].status)
			continue;
		EXPECT_EQ(d[i].status, 0) << "decompress " << i;
		EXPECT_EQ(d[i].produced, len) << i;
		bad += d[i].status != 0 || out[i] != in[i];
	}
	return bad;
}

struct Inject {
	Inject(const std::string &what, unsigned every)
	{
		EXPECT_EQ(sysfs_write(kDbl + "/inject", what), 0);
		EXPECT_EQ(sysfs_write(kDbl + "/inject_every", std::to_string(every)), 0);
	}
	~Inject()
	{
		sysfs_write(kDbl + "/inject_every", "0");
		sysfs_write(kDbl + "/inject", "none");
	}
};

class Iaa : public ::testing::Test {
protected:
	void SetUp() override
	{
		if (sysfs_read(kDbl + "/engines").front() == '<')
			GTEST_SKIP() << "the IAA test double is not loaded (run through scripts/guest-iaa)";
		sysfs_write(kIaa + "/driver", "deflate-iaa-double");
		ASSERT_TRUE(wait_state("online")) << sysfs_read(kIaa + "/reason");
	}
	// every test leaves the double attached: the iaa tier runs the vm
	// suite after these, with deflate on the double (scripts/guest-iaa)
	void TearDown() override
	{
		if (IsSkipped())
			return;
		// a test stopped by a failure may have left requests parked
		sysfs_write(kDbl + "/release_lost", "1");
		sysfs_write(kDbl + "/offline", "0");
		sysfs_write(kSys + "/timeout_ms", "1000");
		if (sysfs_read(kIaa + "/driver") != "deflate-iaa-double")
			sysfs_write(kIaa + "/driver", "deflate-iaa-double");
		EXPECT_TRUE(wait_state("online")) << "the test left the executor detached: "
						  << sysfs_read(kIaa + "/reason");
	}
};

} // namespace

TEST_F(Iaa, OnlineAfterItsProbeAndStatusSaysWhoRunsWhat)
{
	EXPECT_NE(sysfs_read(kIaa + "/reason").find("passed its probe"), std::string::npos);
	auto st = run(kCli + " status");
	ASSERT_EQ(st.status, 0) << st.output;
	EXPECT_NE(st.output.find("deflate: iaa (deflate-iaa-double, online)"), std::string::npos)
		<< st.output;
	EXPECT_NE(st.output.find("lz4: software engines"), std::string::npos) << st.output;
}

// Every request of a batch is on the device before any completes.
TEST_F(Iaa, DeflateBatchesRunOnTheDeviceInParallel)
{
	auto dev = open_dev();
	auto s0 = iaa_stats();
	int64_t sub0 = dbl("submitted");
	EXPECT_EQ(round_trip(dev, 16), 0);
	auto s1 = iaa_stats();
	EXPECT_EQ(dbl("submitted") - sub0, 32);
	EXPECT_EQ(s1["requests"] - s0["requests"], 32);
	EXPECT_EQ(s1["redone"] - s0["redone"], 0);
	// 8 engines at 200 us: 16 requests in flight at once, not one by one
	EXPECT_GE(dbl("max_inflight"), 8);
}

TEST_F(Iaa, OtherCodecsStayOnTheSoftwareEngines)
{
	auto dev = open_dev();
	int64_t sub0 = dbl("submitted");
	for (unsigned codec : {ZBATCH_CODEC_LZ4, ZBATCH_CODEC_ZSTD, ZBATCH_CODEC_LZO})
		EXPECT_EQ(round_trip(dev, 8, 4096, 3, codec), 0) << codec;
	EXPECT_EQ(dbl("submitted"), sub0);
}

// Pages move both ways between IAA and software: the device reads the
// software deflate (raw, 4 KiB window; the double checks IAA's history
// rule on 64 KiB units) and the software reads IAA's fixed blocks.
TEST_F(Iaa, SoftwareAndDeviceReadEachOthersOutput)
{
	auto dev = open_dev();
	for (size_t len : {size_t{4096}, size_t{65536}}) {
		auto in = zbatch::generate(zbatch::Pattern::Text, len, 7);
		// capacity up to ZBATCH_MAX_LEN: text compresses well below it
		std::vector<uint8_t> sw(len), hw(len), out(len);
		// software compress: IAA detached
		ASSERT_EQ(sysfs_write(kIaa + "/driver", "\n"), 0);
		ASSERT_EQ(state(), "disabled");
		std::vector<Request> c(1);
		c[0].src = in;
		c[0].dst = sw;
		auto r = dev.submit(ZBATCH_OP_COMPRESS, ZBATCH_CODEC_DEFLATE, c);
		ASSERT_TRUE(r) << r.error().message;
		ASSERT_EQ(c[0].status, 0);
		uint32_t sw_len = c[0].produced;
		ASSERT_EQ(sysfs_write(kIaa + "/driver", "deflate-iaa-double"), 0);
		ASSERT_TRUE(wait_state("online"));
		// the device decompresses it, and compresses its own
		auto s0 = iaa_stats();
		std::vector<Request> d(1);
		d[0].src = std::span<const uint8_t>(sw.data(), sw_len);
		d[0].dst = out;
		ASSERT_TRUE(dev.submit(ZBATCH_OP_DECOMPRESS, ZBATCH_CODEC_DEFLATE, d));
		EXPECT_EQ(d[0].status, 0);
		EXPECT_EQ(out, in) << len;
		c[0].dst = hw;
		ASSERT_TRUE(dev.submit(ZBATCH_OP_COMPRESS, ZBATCH_CODEC_DEFLATE, c));
		ASSERT_EQ(c[0].status, 0);
		uint32_t hw_len = c[0].produced;
		auto s1 = iaa_stats();
		// 64 KiB buffers may be vmalloc'd by /dev/zbatch: those the
		// device cannot take (refused) run in software
		EXPECT_EQ(s1["requests"] - s0["requests"], 2);
		EXPECT_EQ(s1["redone"] - s0["redone"], s1["refused"] - s0["refused"]);
		// the software decompresses the device's output
		ASSERT_EQ(sysfs_write(kIaa + "/driver", "\n"), 0);
		std::fill(out.begin(), out.end(), 0);
		d[0].src = std::span<const uint8_t>(hw.data(), hw_len);
		ASSERT_TRUE(dev.submit(ZBATCH_OP_DECOMPRESS, ZBATCH_CODEC_DEFLATE, d));
		EXPECT_EQ(d[0].status, 0);
		EXPECT_EQ(out, in) << len;
		ASSERT_EQ(sysfs_write(kIaa + "/driver", "deflate-iaa-double"), 0);
		ASSERT_TRUE(wait_state("online"));
	}
}

// iaa_crypto reports overflow and analytics errors as -EIO from the
// callback: zbatch redoes those descriptors in software, loses nothing,
// and keeps the device in service.
TEST_F(Iaa, DeviceErrorsAreRedoneInSoftware)
{
	auto dev = open_dev();
	for (const char *what : {"overflow", "analytics"}) {
		auto s0 = iaa_stats();
		int64_t e0 = dbl("errors");
		{
			Inject inj(what, 3);
			for (uint64_t seed = 0; seed < 4; seed++)
				EXPECT_EQ(round_trip(dev, 16, 4096, seed), 0) << what;
		}
		auto s1 = iaa_stats();
		EXPECT_GT(dbl("errors") - e0, 0) << what;
		EXPECT_EQ(s1["device_errors"] - s0["device_errors"], dbl("errors") - e0) << what;
		EXPECT_EQ(s1["redone"] - s0["redone"], s1["device_errors"] - s0["device_errors"]);
		EXPECT_EQ(state(), "online") << what;
	}
}

// iaa_crypto's decompress may complete at submit (after its own software
// fallback) with 0 and no callback.
TEST_F(Iaa, SynchronousCompletionsAreTaken)
{
	auto dev = open_dev();
	int64_t n0 = dbl("sync_completions");
	{
		Inject inj("sync", 2);
		EXPECT_EQ(round_trip(dev, 16), 0);
	}
	EXPECT_GT(dbl("sync_completions") - n0, 0);
}

// Unbinding the last WQ makes iaa_crypto answer -ENODEV: the executor goes
// offline at once, the batch still completes in software, and the
// executor comes back when the device does.
TEST_F(Iaa, NoDeviceTakesItOfflineAndItComesBack)
{
	auto dev = open_dev();
	ASSERT_EQ(sysfs_write(kDbl + "/offline", "1"), 0);
	EXPECT_EQ(round_trip(dev, 16), 0);
	ASSERT_TRUE(wait_state("offline", 5));
	EXPECT_TRUE(wait_state("offline", 5));
	std::this_thread::sleep_for(std::chrono::milliseconds(500));
	auto why = sysfs_read(kIaa + "/reason");
	EXPECT_NE(why.find("ENODEV"), std::string::npos) << why;
	EXPECT_NE(why.find("no IAA WQ is bound"), std::string::npos) << why;
	auto st = run(kCli + " status");
	EXPECT_NE(st.output.find("deflate: software engines (IAA offline:"), std::string::npos)
		<< st.output;
	EXPECT_EQ(round_trip(dev, 8), 0);
	ASSERT_EQ(sysfs_write(kDbl + "/offline", "0"), 0);
	EXPECT_TRUE(wait_state("online", 10)) << sysfs_read(kIaa + "/reason");
	EXPECT_EQ(round_trip(dev, 8), 0);
}

// -ENODEV for some requests only (a WQ unbound mid-batch).
TEST_F(Iaa, NoDeviceMidBatchLosesNothing)
{
	auto dev = open_dev();
	{
		Inject inj("nodev", 5);
		EXPECT_EQ(round_trip(dev, 16), 0);
	}
	EXPECT_TRUE(wait_state("online", 10)) << sysfs_read(kIaa + "/reason");
}

// A completion that never comes: the batch gives up on it at timeout_ms,
// redoes it in software, and the executor leaves service; zbatch cannot
// be unloaded while the device may still complete it. The late
// completion is harmless.
TEST_F(Iaa, LostCompletionTimesOutAndIsRedone)
{
	auto dev = open_dev();
	ASSERT_EQ(sysfs_write(kSys + "/timeout_ms", "200"), 0);
	auto s0 = iaa_stats();
	{
		Inject inj("lost", 4);
		EXPECT_EQ(round_trip(dev, 16), 0);
	}
	auto s1 = iaa_stats();
	EXPECT_GT(s1["timeouts"] - s0["timeouts"], 0);
	EXPECT_GE(s1["redone"] - s0["redone"], s1["timeouts"] - s0["timeouts"]);
	EXPECT_GT(dbl("lost"), 0);
	auto rm = run("rmmod zbatch");
	EXPECT_NE(rm.status, 0) << "unloaded while the device holds requests";
	ASSERT_EQ(sysfs_write(kDbl + "/release_lost", "1"), 0);
	EXPECT_TRUE(wait_state("online", 10)) << sysfs_read(kIaa + "/reason");
	EXPECT_EQ(round_trip(dev, 16), 0);
}

// Submitters taking and dropping the executor (zbatch_iaa_get/put) while
// it is detached and attached again and again: nobody may use an
// instance detach() freed (a full barrier on both sides of the state /
// users handshake), and every page comes back. Run on the debug kernel,
// KASAN says whether an instance was used after it was freed.
TEST_F(Iaa, AttachAndDetachUnderLoadLoseNothing)
{
	std::atomic<bool> stop{false};
	std::atomic<int> lost{0}, rounds{0};
	std::vector<std::thread> load;
	for (int t = 0; t < 2; t++)
		load.emplace_back([&] {
			auto dev = open_dev();
			while (!stop) {
				lost += round_trip(dev, 16);
				rounds++;
			}
		});
	for (int i = 0; i < 20; i++)
		EXPECT_EQ(sysfs_write(kIaa + "/driver", "deflate-iaa-double"), 0);
	stop = true;
	for (auto &t : load)
		t.join();
	EXPECT_EQ(lost, 0);
	EXPECT_GT(rounds, 0);
	EXPECT_TRUE(wait_state("online", 10)) << sysfs_read(kIaa + "/reason");
}

// Requests over a page (32 KiB) borrow a large bounce pair allocated at
// attach, never one allocated to submit or in the completion: the
// instance's bounce memory is what it was at attach, whatever it served,
// and a batch of 16 (as many pairs as 128 slots have) runs on the device.
TEST_F(Iaa, LargeRequestsUseBounceBuffersAllocatedAtAttach)
{
	auto dev = open_dev();
	auto s0 = iaa_stats();
	ASSERT_GT(s0["bounce_kib"], 16 * 2 * 64) << "no large bounce pairs at attach";
	for (uint64_t seed = 0; seed < 4; seed++)
		EXPECT_EQ(round_trip(dev, 16, 32768, 100 + seed), 0);
	auto s1 = iaa_stats();
	EXPECT_EQ(s1["bounce_kib"], s0["bounce_kib"]);
	EXPECT_GE(s1["requests"] - s0["requests"], 4 * 32) << "32 KiB requests not on the device";
	EXPECT_EQ(s1["refused"] - s0["refused"], 0);
}

// A hung device (every request lost): each attach's probe times out and
// its instance is kept for the late completion. Retrying must not build
// another each time (128 slots, about 1 MiB, a retry, without bound): at
// most one waits, the reason says why, and once the completions come the
// executor attaches again.
TEST_F(Iaa, HungDeviceDoesNotLeakAnInstancePerRetry)
{
	ASSERT_EQ(sysfs_write(kSys + "/timeout_ms", "200"), 0);
	long slab0 = meminfo_kb("SUnreclaim");
	{
		Inject inj("lost", 1);
		for (int i = 0; i < 8; i++)
			ASSERT_EQ(sysfs_write(kIaa + "/driver", "deflate-iaa-double"), 0);
		auto s = iaa_stats();
		EXPECT_EQ(s["parked"], 1) << "instances kept for late completions";
		EXPECT_GE(s["abandoned"], 1);
		auto why = sysfs_read(kIaa + "/reason");
		EXPECT_NE(why.find("never completed"), std::string::npos) << why;
		EXPECT_EQ(state(), "offline");
	}
	long grew = meminfo_kb("SUnreclaim") - slab0;
	EXPECT_LT(grew, 3 * 1024) << "kB of slab after 8 attaches to a hung device";
	ASSERT_EQ(sysfs_write(kDbl + "/release_lost", "1"), 0);
	EXPECT_TRUE(wait_state("online", 10)) << sysfs_read(kIaa + "/reason");
	EXPECT_EQ(iaa_stats()["parked"], 0);
	auto dev = open_dev();
	EXPECT_EQ(round_trip(dev, 16), 0);
}

// The last late completion of a hung device drops zbatch's last module
// reference in zbatch's own code: unloading zbatch at that moment must
// wait for the task to leave it (the completion lingers there on purpose,
// debugfs fault_late_completion_ms), not free the code under it (an oops
// when the task returns, before the unload waited for tasks-RCU).
TEST_F(Iaa, UnloadWaitsForTheLateCompletionToLeaveZbatch)
{
	const std::string late = kDbg + "/fault_late_completion_ms";
	ASSERT_EQ(sysfs_write(kSys + "/timeout_ms", "200"), 0);
	{
		Inject inj("lost", 1);
		ASSERT_EQ(sysfs_write(kIaa + "/driver", "deflate-iaa-double"), 0);
	}
	ASSERT_GE(iaa_stats()["abandoned"], 1) << "the probe did not time out";
	ASSERT_EQ(sysfs_write(late, "4000"), 0);
	using clock = std::chrono::steady_clock;
	// max until the completer is back: an oops there must not pass
	clock::time_point released = clock::time_point::max();
	auto t0 = clock::now();
	std::thread completer([&] {
		EXPECT_EQ(sysfs_write(kDbl + "/release_lost", "1"), 0);
		released = clock::now();
	});
	// the completer is in its 4 s in zbatch once the references are gone
	std::string refs;
	for (int i = 0; i < 100; i++) {
		refs = sysfs_read("/sys/module/zbatch/refcnt");
		if (refs == "0")
			break;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	EXPECT_EQ(refs, "0") << "module references left after the late completions";
	auto rm = run("rmmod zbatch");
	auto unloaded = clock::now();
	completer.join();
	if (rm.status != 0) {
		sysfs_write(late, "0");
		FAIL() << "rmmod zbatch: " << rm.output;
	}
	auto ins = run(kInsmod);
	ASSERT_EQ(ins.status, 0) << ins.output;
	EXPECT_GE(unloaded, released) << "zbatch unloaded while a task was still in its code";
	EXPECT_GE(unloaded - t0, std::chrono::milliseconds(3000))
		<< "the completion did not linger: nothing was tested";
	EXPECT_TRUE(wait_state("online", 10)) << sysfs_read(kIaa + "/reason");
}

// The algorithm appears after zbatch loaded (a WQ binds later): the crypto
// notifier attaches it without waiting for the retry period.
TEST_F(Iaa, PicksUpTheDriverWhenItAppearsAndReportsWhenItIsMissing)
{
	ASSERT_EQ(sysfs_write(kIaa + "/driver", "deflate-iaa-absent"), 0);
	EXPECT_EQ(state(), "offline");
	auto why = sysfs_read(kIaa + "/reason");
	EXPECT_NE(why.find("deflate-iaa-absent is not registered"), std::string::npos) << why;
	// the double is free now: reload it while zbatch waits for it
	auto rm = run("rmmod zbatch_iaa_double");
	ASSERT_EQ(rm.status, 0) << rm.output;
	ASSERT_EQ(sysfs_write(kIaa + "/driver", "deflate-iaa-double"), 0);
	EXPECT_EQ(state(), "offline");
	auto ins = run("insmod " + std::string(ZBATCH_SOURCE_DIR) +
		       "/tests/iaa_double/zbatch_iaa_double.ko");
	ASSERT_EQ(ins.status, 0) << ins.output;
	EXPECT_TRUE(wait_state("online", 2)) << sysfs_read(kIaa + "/reason");
	auto dev = open_dev();
	EXPECT_EQ(round_trip(dev, 16), 0);
}

TEST_F(Iaa, DriverNameIsValidated)
{
	EXPECT_EQ(sysfs_write(kIaa + "/driver", "two words"), EINVAL);
	EXPECT_EQ(sysfs_write(kIaa + "/driver", std::string(200, 'x')), EINVAL);
	EXPECT_EQ(sysfs_read(kIaa + "/driver"), "deflate-iaa-double");
}

// The executor is one over any async acomp driver, not IAA's: pointed at
// the crypto API's own lzo (lzo-scomp, cra_name "lzo", completing at
// submit), it attaches for lzo after the same probe, routes lzo batches
// to it and leaves deflate to the software engines.
TEST_F(Iaa, AnyAcompDriverServesTheCodecItsAlgorithmNames)
{
	EXPECT_EQ(sysfs_read(kIaa + "/codec"), "deflate");
	ASSERT_EQ(sysfs_write(kIaa + "/driver", "lzo-scomp"), 0);
	ASSERT_TRUE(wait_state("online")) << sysfs_read(kIaa + "/reason");
	EXPECT_EQ(sysfs_read(kIaa + "/codec"), "lzo");
	EXPECT_NE(sysfs_read(kIaa + "/reason").find("lzo-scomp passed its probe: lzo runs on it"),
		  std::string::npos)
		<< sysfs_read(kIaa + "/reason");
	auto st = run(kCli + " status");
	ASSERT_EQ(st.status, 0) << st.output;
	EXPECT_NE(st.output.find("lzo: iaa (lzo-scomp, online)"), std::string::npos) << st.output;
	EXPECT_NE(st.output.find("deflate: software engines"), std::string::npos) << st.output;

	auto dev = open_dev();
	auto s0 = iaa_stats();
	int64_t sub0 = dbl("submitted");
	EXPECT_EQ(round_trip(dev, 16, 4096, 5, ZBATCH_CODEC_LZO), 0);
	EXPECT_EQ(round_trip(dev, 8, 4096, 6, ZBATCH_CODEC_DEFLATE), 0);
	auto s1 = iaa_stats();
	EXPECT_EQ(s1["requests"] - s0["requests"], 32) << "lzo did not run on the driver";
	EXPECT_EQ(s1["redone"] - s0["redone"], 0);
	EXPECT_EQ(dbl("submitted"), sub0) << "deflate went to the double, which is detached";
}

// A driver whose algorithm zbatch has no codec for is refused, says so,
// and is not tried again (nothing would change).
TEST_F(Iaa, DriverOfACodecZbatchDoesNotRunIsRefused)
{
	ASSERT_EQ(sysfs_write(kIaa + "/driver", "lzo-rle-scomp"), 0);
	EXPECT_EQ(state(), "offline");
	auto why = sysfs_read(kIaa + "/reason");
	EXPECT_NE(why.find("lzo-rle-scomp compresses lzo-rle, which zbatch has no codec for"),
		  std::string::npos)
		<< why;
	EXPECT_EQ(sysfs_read(kIaa + "/codec"), "") << "a refused driver has no codec";
	auto dev = open_dev();
	EXPECT_EQ(round_trip(dev, 8), 0);
}

// zbatch's own algorithms are no device: deflate-zbatch's requests would
// come back to the executor (a recursion until the stack overflows).
TEST_F(Iaa, ZbatchsOwnAlgorithmIsRefused)
{
	ASSERT_EQ(sysfs_write(kIaa + "/driver", "deflate-zbatch"), 0);
	EXPECT_EQ(state(), "offline");
	auto why = sysfs_read(kIaa + "/reason");
	EXPECT_NE(why.find("deflate-zbatch is zbatch's own algorithm"), std::string::npos) << why;
	auto dev = open_dev();
	EXPECT_EQ(round_trip(dev, 8), 0);
}
