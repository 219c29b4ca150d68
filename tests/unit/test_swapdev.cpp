// SPDX-License-Identifier: GPL-2.0
// The swap device library (tools/lib/swapdev.cpp) against fake sysfs trees.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "fake_tree.hpp"
#include "zbatch/swapdev.hpp"

namespace {

std::string slurp(const std::filesystem::path &p)
{
	std::ifstream in(p);
	std::stringstream s;
	s << in.rdbuf();
	return s.str();
}

void device(FakeTree &t, int id)
{
	auto d = "/sys/block/zbatchswap" + std::to_string(id) + "/zbatch/";
	t.put(d + "disksize", "536870912\n");
	t.put(d + "codec", "deflate [lz4] zstd lzo\n");
	t.put(d + "unit", "4k [16k] 64k\n");
	t.put(d + "mem_limit", "0\n");
	t.put(d + "mm_stat", "100663296 20000000 22000000 0 23000000 12 0 7 7\n");
	t.put(d + "io_stat", "0 1 0 55\n");
	t.put(d + "unit_stat", "units 1500\nunit_fallbacks 2\npartial_reads 3\n");
	t.put(d + "batch_stat", "# requests_per_batch write_batches read_batches\n1 10 2\n4 300 280\n");
}

TEST(Swapdev, ParseBytes)
{
	EXPECT_EQ(*zbatch::parse_bytes("2G"), 2ull << 30);
	EXPECT_EQ(*zbatch::parse_bytes("64k"), 65536u);
	EXPECT_EQ(*zbatch::parse_bytes("4096"), 4096u);
	EXPECT_FALSE(zbatch::parse_bytes("2X"));
	EXPECT_FALSE(zbatch::parse_bytes("-1G"));
	EXPECT_FALSE(zbatch::parse_bytes("G"));
	EXPECT_FALSE(zbatch::parse_bytes("99999999999T"));
}

TEST(Swapdev, ConfigChecksNameTheValue)
{
	auto bad = zbatch::check_swapdev_config({1ull << 30, "lz4", "8k", 0, ""});
	ASSERT_FALSE(bad);
	EXPECT_NE(bad.error().message.find("8k"), std::string::npos);
	EXPECT_FALSE(zbatch::check_swapdev_config({1ull << 30, "gzip", "4k", 0, ""}));
	EXPECT_FALSE(zbatch::check_swapdev_config({1000, "lz4", "4k", 0, ""}));
	EXPECT_TRUE(zbatch::check_swapdev_config({1ull << 30, "zstd", "64k", 0, ""}));
}

TEST(Swapdev, CreateWritesCodecUnitThenSize)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/swapdev/hot_add", "3\n");
	t.put("/sys/kernel/zbatch/swapdev/hot_remove", "");
	device(t, 3);
	zbatch::SysfsTree tree(t.root());
	auto id = zbatch::swapdev_create(tree, {1ull << 30, "zstd", "64k", 0, ""});
	ASSERT_TRUE(id) << id.error().message;
	EXPECT_EQ(*id, 3);
	auto d = t.root() / "sys/block/zbatchswap3/zbatch";
	EXPECT_EQ(slurp(d / "codec"), "zstd");
	EXPECT_EQ(slurp(d / "unit"), "64k");
	EXPECT_EQ(slurp(d / "disksize"), std::to_string(1ull << 30));
}

TEST(Swapdev, CreateWithoutModuleSkips)
{
	FakeTree t;
	zbatch::SysfsTree tree(t.root());
	auto id = zbatch::swapdev_create(tree, {1ull << 30, "lz4", "4k", 0, ""});
	ASSERT_FALSE(id);
	EXPECT_EQ(id.error().exit, zbatch::kExitSkipped);
}

TEST(Swapdev, ListParsesStatistics)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/swapdev/hot_add", "0\n");
	device(t, 0);
	device(t, 2);
	t.put("/sys/block/vda/size", "0\n");
	t.put("/proc/swaps", "Filename Type Size Used Priority\n"
			     "/dev/zbatchswap2                        partition\t524284\t0\t100\n");
	zbatch::SysfsTree tree(t.root());
	auto l = zbatch::swapdev_list(tree);
	ASSERT_TRUE(l) << l.error().message;
	ASSERT_EQ(l->size(), 2u);
	const auto &d = (*l)[0];
	EXPECT_EQ(d.name, "zbatchswap0");
	EXPECT_EQ(d.codec, "lz4");
	EXPECT_EQ(d.unit, "16k");
	EXPECT_EQ(d.orig_bytes, 100663296u);
	EXPECT_EQ(d.compr_bytes, 20000000u);
	EXPECT_EQ(d.used_bytes, 22000000u);
	EXPECT_EQ(d.same_pages, 12u);
	EXPECT_EQ(d.huge_pages, 7u);
	EXPECT_EQ(d.failed_writes, 1u);
	EXPECT_EQ(d.notify_free, 55u);
	EXPECT_EQ(d.unit_stat.at("units"), 1500);
	EXPECT_EQ(d.batches.at(4).first, 300u);
	EXPECT_EQ(d.batches.at(4).second, 280u);
	EXPECT_TRUE(d.swap_use.empty());
	EXPECT_FALSE((*l)[1].swap_use.empty());
	auto j = zbatch::swapdev_to_json((*l)[1]);
	EXPECT_EQ(j["swap"], true) << j;
	EXPECT_EQ(j["batches"][1], (zbatch::Json{{"requests", 4}, {"writes", 300}, {"reads", 280}})) << j;
	// and as text it is valid JSON whatever the strings hold
	auto odd = (*l)[1];
	odd.codec = "lz4\"\n\x01";
	EXPECT_EQ(zbatch::Json::parse(zbatch::swapdev_to_json(odd).dump())["codec"], odd.codec);
}

TEST(Swapdev, CreateSetsTheWritebackDeviceBeforeTheSize)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/swapdev/hot_add", "3\n");
	t.put("/sys/kernel/zbatch/swapdev/hot_remove", "");
	device(t, 3);
	t.put("/sys/block/zbatchswap3/zbatch/backing_dev", "none\n");
	zbatch::SysfsTree tree(t.root());
	auto id = zbatch::swapdev_create(tree, {1ull << 30, "zstd", "16k", 0, "/dev/vdb"});
	ASSERT_TRUE(id) << id.error().message;
	EXPECT_EQ(slurp(t.root() / "sys/block/zbatchswap3/zbatch/backing_dev"), "/dev/vdb");
}

TEST(Swapdev, ListParsesWriteback)
{
	FakeTree t;
	device(t, 0);
	t.put("/sys/kernel/zbatch/swapdev/hot_add", "");
	auto d = std::string("/sys/block/zbatchswap0/zbatch/");
	t.put(d + "backing_dev", "/dev/vdb\n");
	t.put(d + "bd_stat", "     120       30      150\n");
	t.put(d + "writeback_limit_enable", "1\n");
	t.put(d + "writeback_limit", "77\n");
	zbatch::SysfsTree tree(t.root());
	auto l = zbatch::swapdev_list(tree);
	ASSERT_TRUE(l) << l.error().message;
	const auto &i = l->at(0);
	EXPECT_EQ(i.backing_dev, "/dev/vdb");
	EXPECT_EQ(i.bd_count, 120u);
	EXPECT_EQ(i.bd_reads, 30u);
	EXPECT_EQ(i.bd_writes, 150u);
	auto j = zbatch::swapdev_to_json(i);
	EXPECT_EQ(j["backing_dev"], "/dev/vdb");
	EXPECT_EQ(j["writeback_limit"], 77);
	t.put(d + "backing_dev", "none\n");
	t.put(d + "writeback_limit_enable", "0\n");
	auto none = zbatch::swapdev_to_json(zbatch::swapdev_list(tree)->at(0));
	EXPECT_TRUE(none["backing_dev"].is_null()) << none;
	EXPECT_TRUE(none["writeback_limit"].is_null()) << none;
}

TEST(Swapdev, WritebackRefusesAnUnknownModeAndAModuleWithout)
{
	FakeTree t;
	device(t, 0);
	zbatch::SysfsTree tree(t.root());
	auto bad = zbatch::swapdev_writeback(tree, 0, "cold");
	ASSERT_FALSE(bad);
	EXPECT_NE(bad.error().message.find("idle, huge, huge_idle, incompressible or page_index=N"),
		  std::string::npos) << bad.error().message;
	auto old = zbatch::swapdev_writeback(tree, 0, "idle");
	ASSERT_FALSE(old);
	EXPECT_NE(old.error().message.find("no writeback"), std::string::npos)
		<< old.error().message;
	auto gone = zbatch::swapdev_mark_idle(tree, 4);
	ASSERT_FALSE(gone);
	EXPECT_EQ(gone.error().code, ENODEV);
	t.put("/sys/block/zbatchswap0/zbatch/idle", "");
	EXPECT_TRUE(zbatch::swapdev_mark_idle(tree, 0));
	EXPECT_EQ(slurp(t.root() / "sys/block/zbatchswap0/zbatch/idle"), "all");
	EXPECT_TRUE(zbatch::swapdev_mark_idle(tree, 0, 3600));
	EXPECT_EQ(slurp(t.root() / "sys/block/zbatchswap0/zbatch/idle"), "3600");
	auto far = zbatch::swapdev_mark_idle(tree, 0, zbatch::kIdleAgeMax + 1);
	ASSERT_FALSE(far);
	EXPECT_EQ(far.error().message, "idle age 4294967296 s: at most 4294967295 s");
	t.put("/sys/block/zbatchswap0/zbatch/writeback", "");
	EXPECT_TRUE(zbatch::swapdev_writeback(tree, 0, "page_index=12"));
	EXPECT_EQ(slurp(t.root() / "sys/block/zbatchswap0/zbatch/writeback"), "page_index=12");
	EXPECT_TRUE(zbatch::swapdev_writeback(tree, 0, "incompressible"));
	EXPECT_EQ(slurp(t.root() / "sys/block/zbatchswap0/zbatch/writeback"), "incompressible");
}

// Recompression's settings are checked before anything is made, each
// error naming its option.
TEST(Swapdev, RecompressionSettingsAreChecked)
{
	auto cfg = [](const std::string &codec, int level, int budget, int interval,
		      const std::string &unit = "16k") {
		return zbatch::SwapdevConfig{1ull << 30, "lz4", unit, 0, "", codec, level, budget,
					     interval};
	};
	auto err = [](const zbatch::SwapdevConfig &c) {
		auto r = zbatch::check_swapdev_config(c);
		return r ? std::string("ok") : r.error().message;
	};
	EXPECT_EQ(err(cfg("zstd", 9, 10, 5)), "ok");
	EXPECT_EQ(err(cfg("lz4", 8, 0, 86400)), "ok") << "the same codec at another level, budget 0";
	EXPECT_TRUE(err(cfg("lz4", 0, 0, 86400)).starts_with("--recomp-algorithm lz4: the device's "
							     "own codec at the same level"))
		<< "the same codec at the same level: nothing to gain";
	EXPECT_EQ(err(cfg("", 0, -1, -1)), "ok") << "no recompression";
	EXPECT_EQ(err(cfg("gzip", 0, -1, -1)), "--recomp-algorithm gzip: one of deflate, lz4, zstd, lzo");
	EXPECT_EQ(err(cfg("", 9, -1, -1)), "--recomp-level needs --recomp-algorithm (the secondary "
					   "codec recompression uses)");
	EXPECT_EQ(err(cfg("", 0, 5, -1)), "--recomp-budget needs --recomp-algorithm (the secondary "
					  "codec recompression uses)");
	EXPECT_EQ(err(cfg("", 0, -1, 5)), "--recomp-interval needs --recomp-algorithm (the "
					  "secondary codec recompression uses)");
	EXPECT_EQ(err(cfg("zstd", 23, -1, -1)), "--recomp-level 23: zstd levels are -131072 to 22 "
						"(negative: faster; 0: the default, 3)");
	EXPECT_EQ(err(cfg("lzo", 1, -1, -1)), "--recomp-level 1: lzo has no compression levels");
	auto big = zbatch::check_swapdev_config(cfg("zstd", 9, -1, -1, "64k"));
	ASSERT_FALSE(big);
	EXPECT_EQ(big.error().code, E2BIG);
	EXPECT_EQ(err(cfg("zstd", 0, 101, -1)), "--recomp-budget 101: 0 to 100 (percent of one CPU; "
						"0: no background recompression)");
	EXPECT_EQ(err(cfg("zstd", 0, -1, 0)), "--recomp-interval 0: 1 to 86400 (seconds)");
	EXPECT_EQ(err(cfg("zstd", 0, -1, 86401)), "--recomp-interval 86401: 1 to 86400 (seconds)");
}

// The secondary codec and its level before disksize (which fixes them),
// the background thread's interval then budget after it.
TEST(Swapdev, CreateSetsRecompressionAroundTheSize)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/swapdev/hot_add", "3\n");
	t.put("/sys/kernel/zbatch/swapdev/hot_remove", "");
	device(t, 3);
	const std::string d = "/sys/block/zbatchswap3/zbatch/";
	for (const char *f : {"recomp_algorithm", "recomp_budget", "recomp_interval"})
		t.put(d + f, "");
	zbatch::SysfsTree tree(t.root());
	zbatch::SwapdevConfig c{1ull << 30, "lz4", "16k", 0, "", "zstd", 9, 10, 5};
	auto id = zbatch::swapdev_create(tree, c);
	ASSERT_TRUE(id) << id.error().message;
	auto dir = t.root() / "sys/block/zbatchswap3/zbatch";
	EXPECT_EQ(slurp(dir / "recomp_algorithm"), "algo=zstd level=9");
	EXPECT_EQ(slurp(dir / "recomp_interval"), "5");
	EXPECT_EQ(slurp(dir / "recomp_budget"), "10");
	// without a level, budget or interval: the codec alone, nothing after
	t.put(d + "recomp_budget", "");
	t.put(d + "recomp_interval", "");
	c = {1ull << 30, "lz4", "16k", 0, "", "deflate"};
	ASSERT_TRUE(zbatch::swapdev_create(tree, c));
	EXPECT_EQ(slurp(dir / "recomp_algorithm"), "algo=deflate");
	EXPECT_EQ(slurp(dir / "recomp_budget"), "");
	EXPECT_EQ(slurp(dir / "recomp_interval"), "");
	// disksize refused: the codec was set before it, the budget never
	t.unreadable(d + "disksize");
	c = {1ull << 30, "lz4", "16k", 0, "", "zstd", 0, 10, 5};
	auto r = zbatch::swapdev_create(tree, c);
	ASSERT_FALSE(r);
	EXPECT_EQ(slurp(dir / "recomp_algorithm"), "algo=zstd");
	EXPECT_EQ(slurp(dir / "recomp_budget"), "");
	EXPECT_EQ(slurp(t.root() / "sys/kernel/zbatch/swapdev/hot_remove"), "3");
}

// A module older than recompression: the device goes again and the error
// says which file is missing.
TEST(Swapdev, CreateWithRecompressionOnAModuleWithout)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/swapdev/hot_add", "3\n");
	t.put("/sys/kernel/zbatch/swapdev/hot_remove", "");
	device(t, 3);
	zbatch::SysfsTree tree(t.root());
	auto r = zbatch::swapdev_create(tree, {1ull << 30, "lz4", "4k", 0, "", "zstd"});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().code, ENOENT);
	EXPECT_EQ(r.error().message, "zbatchswap3: the loaded zbatch has no recompression "
				     "(recomp_algorithm): load this version's module");
	EXPECT_EQ(slurp(t.root() / "sys/kernel/zbatch/swapdev/hot_remove"), "3");
	// the codec there, the budget not (written after disksize)
	t.put("/sys/block/zbatchswap3/zbatch/recomp_algorithm", "");
	r = zbatch::swapdev_create(tree, {1ull << 30, "lz4", "4k", 0, "", "zstd", 0, 5});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "zbatchswap3: the loaded zbatch has no recompression "
				     "(recomp_budget): load this version's module");
}

TEST(Swapdev, ListParsesRecompression)
{
	FakeTree t;
	device(t, 0);
	t.put("/sys/kernel/zbatch/swapdev/hot_add", "");
	auto d = std::string("/sys/block/zbatchswap0/zbatch/");
	zbatch::SysfsTree tree(t.root());
	// a module without recompression, or a device without a secondary codec
	auto none = zbatch::swapdev_list(tree)->at(0);
	EXPECT_EQ(none.recomp_codec, "");
	EXPECT_EQ(zbatch::swapdev_recomp_summary(none), "");
	auto nj = zbatch::swapdev_to_json(none);
	EXPECT_TRUE(nj["recomp_algorithm"].is_null()) << nj;
	EXPECT_EQ(nj["recomp_recompressed"], 0) << nj;
	t.put(d + "recomp_algorithm", "");
	t.put(d + "algorithm_params", "algo=lz4 level=5\n");
	EXPECT_EQ(zbatch::swapdev_list(tree)->at(0).recomp_codec, "");
	EXPECT_EQ(zbatch::swapdev_list(tree)->at(0).level, 5);
	// the primary's level from the first line only, the secondary's from its own
	t.put(d + "recomp_algorithm", "#1: deflate lz4 [zstd] lzo\n");
	t.put(d + "algorithm_params", "algo=lz4 level=5\nalgo=zstd level=9 priority=1\n");
	t.put(d + "recomp_budget", "10\n");
	t.put(d + "recomp_interval", "5\n");
	t.put(d + "recomp_stat", "    1200     1500     1210      290  3145728 412000000\n");
	t.put(d + "unit_stat", "units 3\nsecondary_reads 52\n");
	auto l = zbatch::swapdev_list(tree);
	ASSERT_TRUE(l) << l.error().message;
	const auto &i = l->at(0);
	EXPECT_EQ(i.level, 5);
	EXPECT_EQ(i.recomp_codec, "zstd");
	EXPECT_EQ(i.recomp_level, 9);
	EXPECT_EQ(i.recomp_budget, 10u);
	EXPECT_EQ(i.recomp_interval, 5u);
	EXPECT_EQ(i.recomp_pages, 1200u);
	EXPECT_EQ(i.recomp_tried, 1500u);
	EXPECT_EQ(i.recomp_done, 1210u);
	EXPECT_EQ(i.recomp_incomp, 290u);
	EXPECT_EQ(i.recomp_saved, 3145728u);
	EXPECT_EQ(i.recomp_cpu_ns, 412000000u);
	auto j = zbatch::swapdev_to_json(i);
	EXPECT_EQ(j["level"], 5);
	EXPECT_EQ(j["recomp_algorithm"], "zstd");
	EXPECT_EQ(j["recomp_level"], 9);
	EXPECT_EQ(j["recomp_budget"], 10);
	EXPECT_EQ(j["recomp_interval"], 5);
	EXPECT_EQ(j["recomp_pages"], 1200);
	EXPECT_EQ(j["recomp_tried"], 1500);
	EXPECT_EQ(j["recomp_recompressed"], 1210);
	EXPECT_EQ(j["recomp_incompressible"], 290);
	EXPECT_EQ(j["recomp_saved_bytes"], 3145728);
	EXPECT_EQ(j["recomp_cpu_ns"], 412000000);
	EXPECT_EQ(j["secondary_reads"], 52);
	EXPECT_EQ(zbatch::swapdev_recomp_summary(i),
		  "zstd:9, background 10% of a CPU every 5 s: 1200 pages stored so now, 52 reads "
		  "decompressed with it; ever: 1500 tried, 1210 recompressed, 290 incompressible, "
		  "3.0M saved, 0.412 s of CPU");
	// a secondary level of 0, no priority=1 line before the first
	t.put(d + "algorithm_params", "algo=lz4 level=0\nalgo=zstd level=0 priority=1\n");
	t.put(d + "recomp_budget", "0\n");
	auto z = zbatch::swapdev_list(tree)->at(0);
	EXPECT_EQ(z.level, 0);
	EXPECT_EQ(z.recomp_level, 0);
	EXPECT_TRUE(zbatch::swapdev_recomp_summary(z).starts_with("zstd, no background: "))
		<< zbatch::swapdev_recomp_summary(z);
}

TEST(Swapdev, RecompressWritesItsArgumentsAndRefusesBadOnes)
{
	FakeTree t;
	device(t, 0);
	zbatch::SysfsTree tree(t.root());
	const std::string f = "/sys/block/zbatchswap0/zbatch/recompress";
	auto old = zbatch::swapdev_recompress(tree, 0, {});
	ASSERT_FALSE(old);
	EXPECT_EQ(old.error().message, "zbatchswap0: the loaded zbatch has no recompression "
				       "(recompress): load this version's module");
	t.put(f, "");
	ASSERT_TRUE(zbatch::swapdev_recompress(tree, 0, {}));
	EXPECT_EQ(slurp(t.root() / f.substr(1)), "\n") << "every page: an empty line";
	ASSERT_TRUE(zbatch::swapdev_recompress(tree, 0, {"huge_idle", 10, 100}));
	EXPECT_EQ(slurp(t.root() / f.substr(1)), "type=huge_idle max_pages=10 threshold=100");
	ASSERT_TRUE(zbatch::swapdev_recompress(tree, 0, {"", 0, 3000}));
	EXPECT_EQ(slurp(t.root() / f.substr(1)), "threshold=3000");
	auto bad = zbatch::swapdev_recompress(tree, 0, {"cold"});
	ASSERT_FALSE(bad);
	EXPECT_EQ(bad.error().message, "--type cold: one of idle, huge, huge_idle (or none: every "
				       "page in memory)");
	bad = zbatch::swapdev_recompress(tree, 0, {"", 0, 4096});
	ASSERT_FALSE(bad);
	EXPECT_EQ(bad.error().message, "--threshold 4096: below 4096 (bytes a page)");
	auto gone = zbatch::swapdev_recompress(tree, 4, {});
	ASSERT_FALSE(gone);
	EXPECT_EQ(gone.error().code, ENODEV);
	EXPECT_EQ(slurp(t.root() / f.substr(1)), "threshold=3000") << "a refusal wrote";
}

TEST(Swapdev, DestroyRefusesASwappedOnDevice)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/swapdev/hot_remove", "");
	device(t, 1);
	t.put("/proc/swaps", "Filename Type Size Used Priority\n/dev/zbatchswap1 partition 1 0 -2\n");
	zbatch::SysfsTree tree(t.root());
	auto r = zbatch::swapdev_destroy(tree, 1);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().code, EBUSY);
	EXPECT_NE(r.error().message.find("swapoff /dev/zbatchswap1"), std::string::npos);
	auto none = zbatch::swapdev_destroy(tree, 5);
	ASSERT_FALSE(none);
	EXPECT_EQ(none.error().code, ENODEV);
}

} // namespace
