// SPDX-License-Identifier: GPL-2.0
// The zbatch CLI against the real module in the guest.
#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include "vm_util.hpp"
#include "zbatch/json.hpp"

using namespace vmtest;

TEST(Cli, LoadUnloadWithParameters)
{
	auto again = run(kCli + " load");
	EXPECT_EQ(again.status, 0) << again.output;
	EXPECT_NE(again.output.find("already loaded"), std::string::npos) << again.output;
	auto un = run(kCli + " unload");
	ASSERT_EQ(un.status, 0) << un.output;
	EXPECT_EQ(run(kCli + " unload").output, "zbatch is not loaded\n");
	auto bad = run(kCli + " load -p devices=99");
	EXPECT_EQ(bad.status, 1) << bad.output;
	EXPECT_NE(bad.output.find("zbatch: error: loading"), std::string::npos) << bad.output;
	EXPECT_EQ(run(kCli + " load -p nonsense").status, 1);
	auto ld = run(kCli + " load -p devices=2 -p engines=1 -p wqs=2" + load_params());
	ASSERT_EQ(ld.status, 0) << ld.output;
	EXPECT_EQ(sysfs_read(kSys + "/nr_devices"), "2");
	auto list = run(kCli + " wq list");
	EXPECT_NE(list.output.find("dev1/wq1"), std::string::npos) << list.output;
	EXPECT_NE(list.output.find("IAA hardware: none found"), std::string::npos) << list.output;
	ASSERT_EQ(run(kCli + " unload").status, 0);
	ASSERT_EQ(run(kCli + " load " + kKo + load_params()).status, 0);
}

TEST(Cli, ConfigSetGetSaveLoad)
{
	auto bad = run(kCli + " config set codec gzip");
	EXPECT_EQ(bad.status, 1);
	EXPECT_NE(bad.output.find("'gzip' is not one of: deflate, lz4, zstd, lzo"), std::string::npos)
		<< bad.output;
	EXPECT_EQ(run(kCli + " config set timeout_ms 0").status, 1);
	ASSERT_EQ(run(kCli + " config set codec zstd").status, 0);
	EXPECT_EQ(run(kCli + " config get codec").output, "zstd\n");
	const std::string f = "/tmp/zbatch-cfg.json";
	ASSERT_EQ(run(kCli + " config save " + f).status, 0);
	ASSERT_EQ(run(kCli + " config set codec lz4").status, 0);
	ASSERT_EQ(run(kCli + " config set sync_mode sync").status, 0);
	auto ld = run(kCli + " config load " + f);
	ASSERT_EQ(ld.status, 0) << ld.output;
	EXPECT_EQ(choice(sysfs_read(kSys + "/codec")), "zstd");
	EXPECT_EQ(choice(sysfs_read(kSys + "/sync_mode")), "async");
	std::ofstream(f) << "{\"codec\": \"lz4\", \"timeout_ms\": 0}";
	auto partial = run(kCli + " config load " + f);
	EXPECT_EQ(partial.status, 1) << partial.output;
	EXPECT_EQ(choice(sysfs_read(kSys + "/codec")), "zstd") << "a refused file applied in part";
	ASSERT_EQ(run(kCli + " config set codec lz4").status, 0);
	std::remove(f.c_str());
}

TEST(Cli, WqDisableEnable)
{
	ASSERT_EQ(run(kCli + " wq disable dev0 wq0").status, 0);
	EXPECT_EQ(sysfs_read(kSys + "/dev0/wq0/enabled"), "0");
	ASSERT_EQ(run(kCli + " wq enable dev0 wq0").status, 0);
	EXPECT_EQ(sysfs_read(kSys + "/dev0/wq0/enabled"), "1");
	auto none = run(kCli + " wq enable dev7 wq0");
	EXPECT_EQ(none.status, 1);
	EXPECT_NE(none.output.find("no WQ dev7/wq0"), std::string::npos) << none.output;
	auto iaa = run(kCli + " wq config iax1 wq1.0");
	EXPECT_EQ(iaa.status, 77) << iaa.output;
}

TEST(Cli, BenchStatsValidateSelftest)
{
	ASSERT_EQ(run(kCli + " stats --reset").status, 0);
	auto b = run(kCli + " bench --quick --codec lz4,zstd --batch 1,16 --pages 32 --rounds 1 --csv");
	ASSERT_EQ(b.status, 0) << b.output;
	EXPECT_NE(b.output.find("lz4,16,compress,"), std::string::npos) << b.output;
	auto s = run(kCli + " --json stats");
	ASSERT_EQ(s.status, 0) << s.output;
	auto sj = zbatch::Json::parse(s.output, nullptr, false);
	ASSERT_FALSE(sj.is_discarded()) << "not JSON: " << s.output;
	EXPECT_GT(sj["global"]["compress_calls"].get<int64_t>(), 0) << s.output;
	auto v = run(kCli + " validate");
	EXPECT_EQ(v.status, 0) << v.output;
	EXPECT_NE(v.output.find("ok   global: calls = completions + errors"), std::string::npos)
		<< v.output;
	auto st = run(kCli + " selftest");
	EXPECT_EQ(st.status, 0) << st.output;
	EXPECT_NE(st.output.find("KTAP version 1"), std::string::npos);
}

TEST(Cli, BenchModesAndPlot)
{
	const std::string png = "/tmp/zbatch-speedup.png";
	std::remove(png.c_str());
	auto mode = choice(sysfs_read(kSys + "/sync_mode"));
	auto b = run(kCli + " bench --codec lz4 --batch 1,8 --pages 16 --rounds 1 --mode sync,async_irq"
		     " --plot " + png);
	ASSERT_EQ(b.status, 0) << b.output;
	EXPECT_NE(b.output.find("sync_mode async_irq"), std::string::npos) << b.output;
	EXPECT_EQ(choice(sysfs_read(kSys + "/sync_mode")), mode) << "sync_mode not restored";
	std::ifstream f(png, std::ios::binary);
	char magic[4] = {};
	f.read(magic, 4);
	EXPECT_EQ(std::string(magic + 1, 3), "PNG");
	auto bad = run(kCli + " bench --codec lz4 --pages 4 --rounds 1 --mode turbo");
	EXPECT_EQ(bad.status, 1) << bad.output;
	EXPECT_EQ(choice(sysfs_read(kSys + "/sync_mode")), mode);
}

TEST(Cli, StatusShowsLayoutAlgorithmsAndZswap)
{
	auto s = run(kCli + " status");
	ASSERT_EQ(s.status, 0) << s.output;
	for (const char *want : {"layout:", "dev0 (node", "wq0 dedicated", "lz4-zbatch",
				 "selftest passed", "zswap: ", "load parameters:"})
		EXPECT_NE(s.output.find(want), std::string::npos) << want << "\n" << s.output;
	auto j = run(kCli + " --json status");
	auto jj = zbatch::Json::parse(j.output, nullptr, false);
	ASSERT_FALSE(jj.is_discarded()) << "not JSON: " << j.output;
	EXPECT_FALSE(jj["algorithms"].empty()) << j.output;
	EXPECT_EQ(jj["executors"].size(), 4u) << j.output;
	EXPECT_TRUE(jj["errors"].empty()) << j.output;
}
