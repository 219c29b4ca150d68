// SPDX-License-Identifier: GPL-2.0
// zbatch swap's workload (tools/lib/workload.cpp) against a fake tree: each
// step that changes the system fails in turn, and whatever failed, THP,
// mTHP and the cgroup are back as they were and no process is left.
#include <cerrno>
#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include "fake_tree.hpp"
#include "zbatch/workload.hpp"

namespace {

const std::string kThp = "/sys/kernel/mm/transparent_hugepage/enabled";
const std::string kMthp = "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled";
const std::string kCg = "/sys/fs/cgroup/zbatch-test";

struct Fixture {
	FakeTree tree;
	zbatch::WorkloadConfig cfg;

	Fixture()
	{
		tree.put(kThp, "always [madvise] never\n");
		tree.put(kMthp, "always inherit madvise [never]\n");
		tree.put("/sys/fs/cgroup/cgroup.controllers", "memory\n");
		tree.put("/proc/vmstat", "pswpout 0\npswpin 0\n");
		cfg.sysroot = tree.root().string();
		cfg.procs = 3;
		cfg.bytes_per_proc = 2 * 4096;
		cfg.passes = 1;
		cfg.thp = "always";
		cfg.mthp = "64kB";
		cfg.timeout_s = 60;
	}

	std::string read(const std::string &path) const
	{
		std::ifstream in(tree.root() / path.substr(1));
		std::stringstream s;
		s << in.rdbuf();
		return s.str();
	}
	bool exists(const std::string &path) const
	{
		return std::filesystem::exists(tree.root() / path.substr(1));
	}

	// THP and mTHP as they were before the run (what the run wrote
	// back: the choice, without brackets), or untouched
	void expect_restored() const
	{
		auto thp = read(kThp), mthp = read(kMthp);
		EXPECT_TRUE(thp == "madvise" || thp == "always [madvise] never\n") << thp;
		EXPECT_TRUE(mthp.empty() || mthp == "never" ||
			    mthp == "always inherit madvise [never]\n") << mthp;
		// every process it started is reaped: this process has no child
		errno = 0;
		EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a workload process is left";
		EXPECT_EQ(errno, ECHILD);
	}
};

// fails the nth call (1-based) of a system call, passes the others through
template <class F>
struct FailNth {
	int n;
	F real;
	int calls = 0;
	auto operator()(auto... a)
	{
		if (++calls == n) {
			errno = EAGAIN;
			return decltype(real(a...))(-1);
		}
		return real(a...);
	}
};

TEST(Workload, SucceedsAndPutsBackThpAndMthp)
{
	Fixture f;
	auto r = zbatch::run_workload(f.cfg);
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(r->bad_bytes, 0u);
	EXPECT_EQ(f.read(kThp), "madvise");
	EXPECT_EQ(f.read(kMthp), "never");
	f.expect_restored();
}

TEST(Workload, MthpUnreadablePutsBackThp)
{
	Fixture f;
	std::filesystem::remove(f.tree.root() / kMthp.substr(1));
	auto r = zbatch::run_workload(f.cfg);
	ASSERT_FALSE(r);
	EXPECT_NE(r.error().message.find("--mthp 64kB: cannot read"), std::string::npos)
		<< r.error().message;
	EXPECT_EQ(f.read(kThp), "madvise") << "THP left at always";
	f.expect_restored();
}

TEST(Workload, CgroupThatCannotBeCreatedPutsBackThpAndMthp)
{
	Fixture f;
	std::filesystem::remove_all(f.tree.root() / "sys/fs/cgroup");
	f.cfg.cgroup = "zbatch-test";
	auto r = zbatch::run_workload(f.cfg);
	ASSERT_FALSE(r);
	EXPECT_NE(r.error().message.find("cannot create cgroup"), std::string::npos)
		<< r.error().message;
	EXPECT_EQ(f.read(kThp), "madvise");
	EXPECT_EQ(f.read(kMthp), "never");
	f.expect_restored();
}

TEST(Workload, ExistingCgroupIsRefusedAndKept)
{
	Fixture f;
	f.tree.put(kCg + "/memory.max", "max\n");
	f.cfg.cgroup = "zbatch-test";
	auto r = zbatch::run_workload(f.cfg);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().code, EEXIST);
	EXPECT_NE(r.error().message.find("exists already"), std::string::npos) << r.error().message;
	EXPECT_TRUE(f.exists(kCg + "/memory.max")) << "someone else's cgroup was removed";
	f.expect_restored();
}

TEST(Workload, MemoryMaxRefusedRemovesTheCgroup)
{
	Fixture f;
	f.cfg.cgroup = "zbatch-test";
	f.cfg.memory_max = "64M";	// the fake cgroup has no memory.max
	auto r = zbatch::run_workload(f.cfg);
	ASSERT_FALSE(r);
	EXPECT_NE(r.error().message.find("memory.max 64M"), std::string::npos) << r.error().message;
	EXPECT_FALSE(f.exists(kCg)) << "the cgroup it created is left";
	f.expect_restored();
}

// The nth pipe(2) or fork(2) fails. pipe: 1 is the go pipe, 2 the first
// process's, 4 the third's (two processes already forked and waiting);
// fork: the first, and the third with two processes waiting.
struct SysFailure {
	const char *call;
	int n;
};

class WorkloadSys : public testing::TestWithParam<SysFailure> {};

TEST_P(WorkloadSys, FailurePutsEverythingBack)
{
	Fixture f;
	const auto [call, n] = GetParam();
	if (std::string(call) == "pipe")
		f.cfg.pipe = FailNth<std::function<int(int *)>>{n, [](int *p) { return ::pipe(p); }};
	else
		f.cfg.fork = FailNth<std::function<pid_t()>>{n, [] { return ::fork(); }};
	auto r = zbatch::run_workload(f.cfg);
	ASSERT_FALSE(r);
	EXPECT_NE(r.error().message.find(std::string(call) + " failed"), std::string::npos)
		<< r.error().message;
	EXPECT_EQ(f.read(kThp), "madvise");
	EXPECT_EQ(f.read(kMthp), "never");
	f.expect_restored();
}
INSTANTIATE_TEST_SUITE_P(EachCall, WorkloadSys,
			 testing::Values(SysFailure{"pipe", 1}, SysFailure{"pipe", 2},
					 SysFailure{"pipe", 4}, SysFailure{"fork", 1},
					 SysFailure{"fork", 3}),
			 [](const auto &i) {
				 return std::string(i.param.call) + "_" + std::to_string(i.param.n);
			 });

// A process that never finishes: the time limit kills and reaps it, and
// only it and its siblings (a reaped process's pid is never signalled).
TEST(Workload, TimeoutKillsItsProcessesAndPutsBack)
{
	Fixture f;
	f.cfg.procs = 2;
	f.cfg.timeout_s = 1;
	f.cfg.fork = [n = 0]() mutable {
		int k = ++n;
		pid_t p = ::fork();
		if (p == 0 && k == 2)
			for (;;)
				pause();
		return p;
	};
	auto t0 = std::chrono::steady_clock::now();
	auto r = zbatch::run_workload(f.cfg);
	ASSERT_FALSE(r);
	EXPECT_NE(r.error().message.find("timed out after 1 s"), std::string::npos)
		<< r.error().message;
	EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
	EXPECT_EQ(f.read(kThp), "madvise");
	f.expect_restored();
}

// Every process dies before it has written its memory: the run fails (no
// SIGPIPE when releasing the dead) and puts everything back.
TEST(Workload, ProcessesThatDieEarlyFailTheRunAndPutBack)
{
	Fixture f;
	f.cfg.fork = [] {
		pid_t p = ::fork();
		if (p == 0)
			_exit(3);
		return p;
	};
	auto r = zbatch::run_workload(f.cfg);
	ASSERT_FALSE(r);
	EXPECT_NE(r.error().message.find("a process died while writing its memory"), std::string::npos)
		<< r.error().message;
	EXPECT_EQ(f.read(kThp), "madvise");
	f.expect_restored();
}

// A process killed while it writes (as the OOM killer does): the failure
// says by which signal.
TEST(Workload, AKilledProcessIsNamedWithItsSignal)
{
	Fixture f;
	f.cfg.fork = [] {
		pid_t p = ::fork();
		if (p == 0)
			raise(SIGKILL);
		return p;
	};
	auto r = zbatch::run_workload(f.cfg);
	ASSERT_FALSE(r);
	EXPECT_NE(r.error().message.find("a process died while writing its memory; process 0 was "
					 "ended by signal 9"), std::string::npos)
		<< r.error().message;
	f.expect_restored();
}

// SIGTERM (or Ctrl-C) mid-run ends it as a failure: everything put back,
// the caller's handler back in place.
TEST(Workload, InterruptedRunPutsBack)
{
	Fixture f;
	f.cfg.between = [] {
		raise(SIGTERM);
		return zbatch::Result<void>();
	};
	auto r = zbatch::run_workload(f.cfg);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().code, EINTR);
	EXPECT_EQ(r.error().message, "workload: interrupted");
	EXPECT_EQ(f.read(kThp), "madvise");
	f.expect_restored();
	struct sigaction now = {};
	sigaction(SIGTERM, nullptr, &now);
	EXPECT_EQ(now.sa_handler, SIG_DFL) << "the workload's handler was left installed";
}

TEST(Workload, FailingBetweenHookStillReadsBackAndPutsBack)
{
	Fixture f;
	f.cfg.between = [] { return zbatch::Result<void>(zbatch::fail(EIO, "switch refused")); };
	auto r = zbatch::run_workload(f.cfg);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "workload: switch refused");
	f.expect_restored();
	EXPECT_EQ(f.read(kThp), "madvise");
}

} // namespace
