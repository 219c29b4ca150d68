// SPDX-License-Identifier: GPL-2.0
// Guest integration tests of the module skeleton. Run by scripts/guest-check
// inside the VM, as root, with kmod/zbatch.ko loaded.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <linux/zbatch.h>

#include "zbatch/sysfs.hpp"

namespace {

struct Cmd {
	int status;
	std::string output;
};

Cmd run(const std::string &cmd)
{
	Cmd r{-1, {}};
	FILE *p = ::popen((cmd + " 2>&1").c_str(), "r");
	if (!p)
		return r;
	std::array<char, 512> buf;
	size_t n;
	while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
		r.output.append(buf.data(), n);
	int st = ::pclose(p);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return r;
}

const std::string kKo = std::string(ZBATCH_SOURCE_DIR) + "/kmod/zbatch.ko";
const std::string kCli = ZBATCH_CLI;

} // namespace

TEST(Module, VersionInSysfsMatchesAbiHeader)
{
	zbatch::SysfsTree tree;
	auto v = tree.read("/sys/kernel/zbatch/version");
	ASSERT_TRUE(v.has_value()) << v.error().message;
	EXPECT_EQ(*v, ZBATCH_VERSION);
}

TEST(Module, CliStatusShowsVersion)
{
	auto r = run(kCli + " status");
	EXPECT_EQ(r.status, 0) << r.output;
	EXPECT_NE(r.output.find(std::string("version ") + ZBATCH_VERSION), std::string::npos)
		<< r.output;
}

TEST(Module, UnloadReloadCycles)
{
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(run("rmmod zbatch").status, 0);
		auto r = run(kCli + " status");
		EXPECT_EQ(r.status, 1) << r.output;
		EXPECT_NE(r.output.find("zbatch: error: module zbatch is not loaded"),
			  std::string::npos) << r.output;
		auto ins = run("insmod " + kKo);
		ASSERT_EQ(ins.status, 0) << ins.output;
	}
	EXPECT_EQ(run(kCli + " status").status, 0);
}
