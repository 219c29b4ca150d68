// SPDX-License-Identifier: GPL-2.0
// Fault injection on the software engines' WQs (debugfs devN/wqM/fault,
// fault_nomem): every completion status IAA can return, corrupt records,
// a full WQ, allocation failures in the submit path. Batches through
// /dev/zbatch must come back whole (a device error is redone in software),
// errors must be counted, a WQ failing again and again must leave service
// and come back when put back.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sched.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "vm_util.hpp"
#include "zbatch/device.hpp"
#include "zbatch/pattern.hpp"
#include "zbatch/workload.hpp"

using namespace vmtest;
using zbatch::Device;
using zbatch::Request;

namespace {

std::vector<std::string> wqs()
{
	std::vector<std::string> v;
	for (int d = 0; d < std::stoi(sysfs_read(kSys + "/nr_devices")); d++)
		v.push_back("dev" + std::to_string(d) + "/wq0");
	return v;
}

// Every WQ gets @fault; the destructor clears it and puts them back.
struct Fault {
	explicit Fault(const std::string &fault)
	{
		for (auto &w : wqs())
			EXPECT_EQ(sysfs_write(kDbg + "/" + w + "/fault", fault), 0) << fault;
		// every descriptor through the engines, even a batch of one
		EXPECT_EQ(sysfs_write(kDbg + "/handoff", "always"), 0);
	}
	~Fault()
	{
		for (auto &w : wqs()) {
			sysfs_write(kDbg + "/" + w + "/fault", "none");
			sysfs_write(kSys + "/" + w + "/enabled", "1");
		}
		sysfs_write(kDbg + "/handoff", "auto");
		sysfs_write(kDbg + "/fault_nomem", "0");
	}
};

// Compress and decompress @n pages of @codec in batches of 16, every byte
// compared; compress -ENOSPC (the data's answer) counts as stored raw.
// Returns the pages that did not come back.
int round_trips(unsigned codec, unsigned n, uint64_t seed)
{
	auto d = Device::open();
	if (!d) {
		ADD_FAILURE() << d.error().message;
		return static_cast<int>(n);
	}
	int lost = 0;
	for (unsigned base = 0; base < n; base += 16) {
		unsigned k = std::min(16u, n - base);
		std::vector<std::vector<uint8_t>> in(k), cmp(k, std::vector<uint8_t>(4096)),
			out(k, std::vector<uint8_t>(4096));
		std::vector<Request> c(k), dr;
		for (unsigned i = 0; i < k; i++) {
			in[i] = zbatch::generate(i % 2 ? zbatch::Pattern::Text : zbatch::Pattern::Mixed,
						 4096, seed + base + i);
			c[i].src = in[i];
			c[i].dst = cmp[i];
		}
		auto r = d->submit(ZBATCH_OP_COMPRESS, codec, c);
		if (!r) {
			ADD_FAILURE() << r.error().message;
			return static_cast<int>(n);
		}
		std::vector<unsigned> idx;
		for (unsigned i = 0; i < k; i++) {
			if (c[i].status == -ENOSPC)
				continue;	// stored raw by a real caller
			if (c[i].status) {
				ADD_FAILURE() << "compress " << i << ": " << c[i].status;
				lost++;
				continue;
			}
			Request q;
			q.src = std::span<const uint8_t>(cmp[i].data(), c[i].produced);
			q.dst = out[i];
			dr.push_back(q);
			idx.push_back(i);
		}
		if (dr.empty())
			continue;
		auto rd = d->submit(ZBATCH_OP_DECOMPRESS, codec, dr);
		if (!rd) {
			ADD_FAILURE() << rd.error().message;
			return static_cast<int>(n);
		}
		for (size_t j = 0; j < dr.size(); j++)
			if (dr[j].status || out[idx[j]] != in[idx[j]]) {
				ADD_FAILURE() << "decompress " << idx[j] << ": " << dr[j].status;
				lost++;
			}
	}
	return lost;
}

} // namespace

// Every status an IAA completion record can carry (include/uapi/linux/idxd.h
// IAX_COMP_*), one descriptor in three: nothing is lost, device errors are
// counted and redone in software.
class FaultStatus : public ::testing::TestWithParam<int> {};

TEST_P(FaultStatus, BatchesComeBackWholeAndErrorsAreCounted)
{
	char f[48];
	std::snprintf(f, sizeof(f), "status 0x%02x 0 3", GetParam());
	auto s0 = debug_stats();
	{
		Fault fault(f);
		EXPECT_EQ(round_trips(ZBATCH_CODEC_LZ4, 48, 10), 0) << f;
	}
	auto s1 = debug_stats();
	EXPECT_GT(s1["device_errors"] - s0["device_errors"], 0) << f;
	EXPECT_GE(s1["sw_fallbacks"] - s0["sw_fallbacks"], s1["device_errors"] - s0["device_errors"]);
}

INSTANTIATE_TEST_SUITE_P(IaaStatuses, FaultStatus,
			 ::testing::Values(0x04, 0x0b, 0x10, 0x11, 0x12, 0x16, 0x19, 0x1a, 0x1b,
					   0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24,
					   0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x7f),
			 [](const auto &info) {
				 char n[8];
				 std::snprintf(n, sizeof(n), "s%02x", info.param);
				 return std::string(n);
			 });

// Analytics errors: compress output overflow is the data's answer (stored
// raw, not an error); any other analytics error is the device's.
TEST(Faults, AnalyticsOverflowIsTheDatasAnswerOtherAnalyticsErrorsAreRedone)
{
	auto s0 = debug_stats();
	{
		Fault fault("status 0x0a 0x19 2");
		EXPECT_EQ(round_trips(ZBATCH_CODEC_ZSTD, 32, 20), 0);
	}
	auto s1 = debug_stats();
	EXPECT_GT(s1["err_nospc"] - s0["err_nospc"], 0) << "compress overflow not reported";
	{
		Fault fault("status 0x0a 0x05 2");
		EXPECT_EQ(round_trips(ZBATCH_CODEC_ZSTD, 32, 21), 0);
	}
	auto s2 = debug_stats();
	EXPECT_GT(s2["device_errors"] - s1["device_errors"], 0);
}

TEST(Faults, CorruptRecordsAreNotBelieved)
{
	auto s0 = debug_stats();
	{
		Fault fault("corrupt 2");
		for (unsigned codec : {ZBATCH_CODEC_LZ4, ZBATCH_CODEC_DEFLATE})
			EXPECT_EQ(round_trips(codec, 32, 30), 0) << codec;
	}
	auto s1 = debug_stats();
	EXPECT_GT(s1["device_errors"] - s0["device_errors"], 0);
}

// A user's corrupt streams are bad input, not device errors: a software
// redo that fails the same way clears the WQ. Batches of garbage through
// /dev/zbatch, every descriptor handed to the WQs, used to take them out
// of service for everyone (16 "device errors" in a row), swap included.
TEST(Faults, CorruptInputDoesNotTakeWqsOutOfService)
{
	auto dev = Device::open();
	ASSERT_TRUE(dev) << dev.error().message;
	auto s0 = debug_stats();
	ASSERT_EQ(sysfs_write(kDbg + "/handoff", "always"), 0);
	for (unsigned int b = 0; b < 8; b++) {
		std::vector<std::vector<uint8_t>> in, out(16, std::vector<uint8_t>(4096));
		std::vector<Request> reqs;
		for (unsigned int i = 0; i < 16; i++)
			in.push_back(zbatch::generate(zbatch::Pattern::Random, 1000, 16 * b + i));
		for (unsigned int i = 0; i < 16; i++)
			reqs.push_back({in[i], out[i]});
		auto r = dev->submit(ZBATCH_OP_DECOMPRESS, ZBATCH_CODEC_LZ4, reqs);
		ASSERT_TRUE(r) << r.error().message;
		for (auto &q : reqs)
			EXPECT_NE(q.status, 0) << "garbage decoded";
	}
	auto s1 = debug_stats();
	for (auto &w : wqs())
		EXPECT_EQ(sysfs_read(kSys + "/" + w + "/enabled"), "1") << w << " taken out of service";
	EXPECT_EQ(s1["device_errors"] - s0["device_errors"], 0);
	EXPECT_GE(s1["bad_input"] - s0["bad_input"], 100) << "the engines never saw the garbage";
	// and the WQs still serve: good batches are handed off and run there
	EXPECT_EQ(round_trips(ZBATCH_CODEC_LZ4, 32, 40), 0);
	EXPECT_GT(debug_stats()["handoffs"] - s1["handoffs"], 0);
	sysfs_write(kDbg + "/handoff", "auto");
}

// Clock readings from two CPUs (debugfs clock_skew_ns puts odd CPUs ahead,
// as an unstable sched_clock can): a batch submitted on CPU 1 is stamped
// "later" than the engine on CPU 0 reads its clock when it takes the
// slice. The queue time must clamp at 0; it wrapped to about 2^64 and
// wrecked the hand-off cost (and, the other way, fired timeouts at once).
TEST(Faults, ClockSkewAcrossCpusDoesNotWrap)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		GTEST_SKIP() << "one CPU: no clock of another CPU to disagree with";
	cpu_set_t old, one;
	ASSERT_EQ(sched_getaffinity(0, sizeof(old), &old), 0);
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	auto s0 = debug_stats();
	ASSERT_EQ(sysfs_write(kDbg + "/clock_skew_ns", "100000000"), 0);
	ASSERT_EQ(sysfs_write(kDbg + "/handoff", "always"), 0);
	int lost = round_trips(ZBATCH_CODEC_LZ4, 1024, 60);
	sysfs_write(kDbg + "/clock_skew_ns", "0");
	sysfs_write(kDbg + "/handoff", "auto");
	sched_setaffinity(0, sizeof(old), &old);
	EXPECT_EQ(lost, 0);
	auto s1 = debug_stats();
	EXPECT_GT(s1["handoffs"] - s0["handoffs"], 50) << "the engines never took a slice";
	EXPECT_EQ(s1["timeouts"] - s0["timeouts"], 0);
	// unsigned: a wrapped difference is about 2^64, over int64's range
	auto costs = sysfs_read(kDbg + "/costs");
	for (const char *k : {"handoff_ns ", "handoff_warm_ns "}) {
		auto at = costs.find(std::string("\n") + k);
		ASSERT_NE(at, std::string::npos) << costs;
		EXPECT_LT(std::stoull(costs.substr(at + 1 + std::strlen(k))), 1000000000ull)
			<< k << "wrapped: a cross-CPU time difference\n" << costs;
	}
}

TEST(Faults, FullWqFallsBackToTheSubmitter)
{
	auto s0 = debug_stats();
	{
		Fault fault("full");
		EXPECT_EQ(round_trips(ZBATCH_CODEC_LZ4, 32, 40), 0);
	}
	auto s1 = debug_stats();
	EXPECT_GT(s1["enqueue_retries"] - s0["enqueue_retries"], 0);
	EXPECT_GT(s1["sw_fallbacks"] - s0["sw_fallbacks"], 0);
}

// No context for the submitter at all (fault_nomem=1) while the WQs hang
// (stall): after timeout_ms the submitter takes their slices back and
// must fail every descriptor it then holds, its own and the taken-back
// ones alike, so that the batch ends with errors. It used to fail only
// its own slice and wait for the rest until an allocation succeeded:
// forever here. The batch runs in a child; if it has not ended in 20 s,
// allocations are let succeed again so that it can, and the test fails.
TEST(Faults, NoContextFailsEverySliceTheSubmitterHolds)
{
	Fault fault("none");	/* handoff always; puts the WQs back after */
	struct Hang {
		Hang()
		{
			for (auto &w : wqs())
				EXPECT_EQ(sysfs_write(kDbg + "/" + w + "/stall", "1"), 0);
			EXPECT_EQ(sysfs_write(kSys + "/timeout_ms", "20"), 0);
		}
		~Hang()
		{
			for (auto &w : wqs())
				sysfs_write(kDbg + "/" + w + "/stall", "0");
			sysfs_write(kSys + "/timeout_ms", "1000");
		}
	} hang;
	auto s0 = debug_stats();
	ASSERT_EQ(sysfs_write(kDbg + "/fault_nomem", "1"), 0);
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		auto d = Device::open();
		if (!d)
			_exit(2);
		std::vector<std::vector<uint8_t>> in(16), out(16, std::vector<uint8_t>(4096));
		std::vector<Request> reqs(16);
		for (int i = 0; i < 16; i++) {
			in[i] = zbatch::generate(zbatch::Pattern::Text, 4096, 70 + i);
			reqs[i] = {in[i], out[i]};
		}
		auto r = d->submit(ZBATCH_OP_COMPRESS, ZBATCH_CODEC_LZ4, reqs);
		if (!r)
			_exit(3);
		for (auto &q : reqs)
			if (!q.status)
				_exit(4);	/* ran without a context? */
		_exit(0);
	}
	int st = 0;
	bool ended = false;
	for (int i = 0; i < 200 && !ended; i++) {
		ended = waitpid(pid, &st, WNOHANG) == pid;
		if (!ended)
			usleep(100000);
	}
	sysfs_write(kDbg + "/fault_nomem", "0");
	if (!ended)
		waitpid(pid, &st, 0);
	EXPECT_TRUE(ended) << "the batch waited for memory instead of failing";
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "child status " << st;
	EXPECT_GT(debug_stats()["timeouts"] - s0["timeouts"], 0) << "no slice was taken back";
}

// No context for the submitter: its share of a batch fails with -ENOMEM
// (the caller sees an error, never wrong data); the next batches work.
TEST(Faults, AllocationFailureInTheSubmitPathIsAnErrorNotACorruption)
{
	auto d = Device::open();
	ASSERT_TRUE(d);
	// every request on the submitter: with 'auto' the cost model may hand
	// a whole batch to the engines (they have contexts), and then no
	// submitter ever asks for one (a CI run saw 0 failures in 8 batches)
	struct Restore {
		~Restore()
		{
			sysfs_write(kDbg + "/fault_nomem", "0");
			sysfs_write(kDbg + "/handoff", "auto");
		}
	} restore;
	ASSERT_EQ(sysfs_write(kDbg + "/handoff", "never"), 0);
	ASSERT_EQ(sysfs_write(kDbg + "/fault_nomem", "2"), 0);
	int nomem = 0, good = 0;
	for (int round = 0; round < 8; round++) {
		std::vector<std::vector<uint8_t>> in(4), out(4, std::vector<uint8_t>(4096));
		std::vector<Request> c(4);
		for (int i = 0; i < 4; i++) {
			in[i] = zbatch::generate(zbatch::Pattern::Text, 4096, 50 + round * 4 + i);
			c[i].src = in[i];
			c[i].dst = out[i];
		}
		auto r = d->submit(ZBATCH_OP_COMPRESS, ZBATCH_CODEC_LZ4, c);
		ASSERT_TRUE(r) << r.error().message;
		for (auto &q : c) {
			if (q.status == -ENOMEM)
				nomem++;
			else if (q.status == 0)
				good++;
			else
				ADD_FAILURE() << "status " << q.status;
		}
	}
	sysfs_write(kDbg + "/fault_nomem", "0");
	EXPECT_EQ(sysfs_write(kDbg + "/handoff", "auto"), 0);
	std::cout << nomem << " requests without a context, " << good << " done\n";
	EXPECT_GT(nomem, 0);
	EXPECT_GT(good, 0);
	EXPECT_EQ(round_trips(ZBATCH_CODEC_LZ4, 16, 60), 0);
}

// A submitter that gets no context must fail only what nobody else would
// run, and its own failure is never a device's: the engines' slices stay
// theirs (they have contexts), and what the core redoes after a
// submitter's -ENOMEM never counts against a WQ. Large batches handed to
// the engines with every other context allocation failing.
TEST(Faults, NoContextIsNeverADeviceError)
{
	auto d = Device::open();
	ASSERT_TRUE(d);
	auto s0 = debug_stats();
	ASSERT_EQ(sysfs_write(kDbg + "/fault_nomem", "2"), 0);
	for (int round = 0; round < 8; round++) {
		std::vector<std::vector<uint8_t>> in(64), out(64, std::vector<uint8_t>(4096));
		std::vector<Request> c(64);
		for (int i = 0; i < 64; i++) {
			in[i] = zbatch::generate(zbatch::Pattern::Text, 4096, 900 + round * 64 + i);
			c[i] = {in[i], out[i]};
		}
		auto r = d->submit(ZBATCH_OP_COMPRESS, ZBATCH_CODEC_ZSTD, c);
		ASSERT_TRUE(r) << r.error().message;
		for (auto &q : c)
			EXPECT_TRUE(q.status == 0 || q.status == -ENOMEM) << "status " << q.status;
	}
	sysfs_write(kDbg + "/fault_nomem", "0");
	auto s1 = debug_stats();
	EXPECT_GT(s1["handoffs"] - s0["handoffs"], 0) << "the engines never got a slice";
	EXPECT_EQ(s1["device_errors"] - s0["device_errors"], 0);
	for (auto &w : wqs())
		EXPECT_EQ(sysfs_read(kSys + "/" + w + "/enabled"), "1") << w << " taken out of service";
}

// A WQ whose every record says the device failed leaves service after
// ZBATCH_WQ_ERR_LIMIT in a row; put back, it serves again.
TEST(Faults, BrokenWqLeavesServiceAndComesBack)
{
	auto w = wqs().front();
	{
		Fault fault("status 0x20 0 1");
		EXPECT_EQ(round_trips(ZBATCH_CODEC_LZ4, 64, 70), 0);
		EXPECT_EQ(sysfs_read(kSys + "/" + w + "/enabled"), "0") << "still in service";
		auto dm = run("dmesg | grep 'device errors in a row'");
		EXPECT_EQ(dm.status, 0) << "not logged";
		// out of service: everything runs on the submitter, still whole
		EXPECT_EQ(round_trips(ZBATCH_CODEC_LZ4, 16, 71), 0);
	}
	// the guard cleared the fault and put the WQ back
	EXPECT_EQ(sysfs_read(kSys + "/" + w + "/enabled"), "1");
	auto before = zbatch::parse_kv(sysfs_read(kDbg + "/" + w + "/stats"));
	ASSERT_EQ(sysfs_write(kDbg + "/handoff", "always"), 0);
	EXPECT_EQ(round_trips(ZBATCH_CODEC_LZ4, 16, 72), 0);
	sysfs_write(kDbg + "/handoff", "auto");
	auto after = zbatch::parse_kv(sysfs_read(kDbg + "/" + w + "/stats"));
	EXPECT_GT(after["compress_calls"] - before["compress_calls"], 0) << "not serving again";
}

TEST(Faults, FaultFileRefusesNonsenseAndReadsBack)
{
	auto w = kDbg + "/" + wqs().front() + "/fault";
	EXPECT_EQ(sysfs_write(w, "explode"), EINVAL);
	EXPECT_EQ(sysfs_write(w, "status 0x01"), EINVAL) << "success is not a fault";
	EXPECT_EQ(sysfs_write(w, "status 0x100"), EINVAL);
	EXPECT_EQ(sysfs_write(w, "full 3"), EINVAL);
	EXPECT_EQ(sysfs_write(w, "status 0x0a 0x19 5"), 0);
	EXPECT_EQ(sysfs_read(w), "status 0x0a 0x19 every 5");
	EXPECT_EQ(sysfs_write(w, "none"), 0);
	EXPECT_EQ(sysfs_read(w), "none");
}
