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
	EXPECT_NE(bad.error().message.find("idle, huge, huge_idle or page_index=N"),
		  std::string::npos) << bad.error().message;
	auto old = zbatch::swapdev_writeback(tree, 0, "idle");
	ASSERT_FALSE(old);
	EXPECT_NE(old.error().message.find("no writeback"), std::string::npos)
		<< old.error().message;
	auto gone = zbatch::swapdev_mark_idle(tree, 4);
	ASSERT_FALSE(gone);
	EXPECT_EQ(gone.error().code, ENODEV);
	t.put("/sys/block/zbatchswap0/zbatch/writeback", "");
	EXPECT_TRUE(zbatch::swapdev_writeback(tree, 0, "page_index=12"));
	EXPECT_EQ(slurp(t.root() / "sys/block/zbatchswap0/zbatch/writeback"), "page_index=12");
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
