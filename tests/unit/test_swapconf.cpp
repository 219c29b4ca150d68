// SPDX-License-Identifier: GPL-2.0
// The swap devices' configuration file (/etc/zbatch/swap.conf) and the swap
// header zbatch dev setup writes (checked against util-linux's mkswap).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "fake_tree.hpp"
#include "zbatch/swapconf.hpp"
#include "zbatch/swapon.hpp"

using zbatch::parse_swap_conf;

TEST(SwapConf, ReadsEverySetting)
{
	auto d = parse_swap_conf("f", "# devices\n\n[swap0]\nsize = 25%   # of RAM\n"
				       "codec = zstd\nunit = 16k\npriority = 5\n"
				       "mem-limit = 1G\ndiscard = yes\nunit-adapt = no\n"
				       "level = 9\n"
				       "[big_1]\nsize=2G\n");
	ASSERT_TRUE(d) << d.error().message;
	ASSERT_EQ(d->size(), 2u);
	const auto &a = (*d)[0];
	EXPECT_EQ(a.name, "swap0");
	EXPECT_EQ(a.line, 3u);
	EXPECT_EQ(a.size.percent, 25u);
	EXPECT_EQ(a.codec, "zstd");
	EXPECT_EQ(a.unit, "16k");
	EXPECT_EQ(a.priority, 5);
	EXPECT_EQ(a.mem_limit.bytes, 1ULL << 30);
	EXPECT_TRUE(a.discard);
	EXPECT_FALSE(a.unit_adapt);
	EXPECT_EQ(a.level, 9);
	const auto &b = (*d)[1];
	EXPECT_EQ(b.size.bytes, 2ULL << 30);
	EXPECT_EQ(b.codec, "lz4");	// the defaults
	EXPECT_EQ(b.unit, "4k");
	EXPECT_EQ(b.priority, 100);
	EXPECT_FALSE(b.discard);
	EXPECT_TRUE(b.unit_adapt);
	EXPECT_EQ(b.level, 0);
	EXPECT_EQ(zbatch::conf_bytes(a.size, 8ULL << 30), 2ULL << 30);
	EXPECT_EQ(zbatch::conf_bytes({0, 33}, 1000000) % 4096, 0u) << "whole pages";
	EXPECT_TRUE(parse_swap_conf("f", "")->empty());
}

// Every error names the file, the line and the key or section.
TEST(SwapConf, ErrorsNameFileLineAndKey)
{
	const std::pair<const char *, const char *> cases[] = {
		{"size = 1G\n", "swap.conf:1: key 'size' before any [device] section"},
		{"[a]\nsize = 1G\ncolour = red\n", "swap.conf:3: key 'colour': unknown (one of size, "
						    "codec, level, unit, priority, mem-limit, discard, "
						    "unit-adapt, writeback-device, recomp-algorithm, "
						    "recomp-level, recomp-budget, recomp-interval)"},
		// the level is checked against the section's codec, set before or after it
		{"[a]\nsize = 1G\nlevel = 23\ncodec = zstd\n",
		 "swap.conf:3: key 'level': zstd levels are -131072 to 22 (negative: faster; 0: "
		 "the default, 3)"},
		{"[a]\nsize = 1G\ncodec = zstd\nlevel = 9\nunit = 64k\n",
		 "swap.conf:4: key 'level': zstd levels above 3 need larger tables than 64k units "
		 "allow; they fit 4k and 16k units"},
		{"[a]\nsize = 1G\nlevel = 3\ncodec = lzo\n",
		 "swap.conf:3: key 'level': lzo has no compression levels"},
		{"[a]\nsize = 1G\nlevel = 70000\n",
		 "swap.conf:3: key 'level': lz4 levels are 1 to 65537, lz4's acceleration: higher is "
		 "faster and compresses less, default 1"},
		{"[a]\nsize = 1G\nlevel = high\n", "swap.conf:3: key 'level': 'high' is not a number"},
		{"[a]\nsize = 1G\ndict = /etc/zbatch/d\n",
		 "swap.conf:3: key 'dict': a zstd dictionary is not in this zbatch yet "
		 "(Documentation/admin-guide.md, replacing zram)"},
		{"[a]\nsize = 1G\nsize = 2G\n", "swap.conf:3: key 'size': set twice in [a]"},
		{"[a]\nsize = 1x\n", "swap.conf:2: key 'size': '1x': a size (4G, 512M) or a share of "
				     "the RAM (25%)"},
		{"[a]\nsize = 0%\n", "swap.conf:2: key 'size': '0%': a share of the RAM is 1% to 100%"},
		{"[a]\nsize = 0\n", "swap.conf:2: key 'size': '0': must not be 0"},
		{"[a]\nsize = 1G\ncodec = gzip\n", "swap.conf:3: key 'codec': 'gzip' is not one of "
						   "deflate, lz4, zstd, lzo"},
		{"[a]\nsize = 1G\nunit = 8k\n", "swap.conf:3: key 'unit': '8k' is not one of 4k, "
						"16k, 64k"},
		{"[a]\nsize = 1G\npriority = 40000\n", "swap.conf:3: key 'priority': '40000' is not "
						       "-1 (the kernel's default) or 0 to 32767"},
		{"[a]\nsize = 1G\ndiscard = maybe\n", "swap.conf:3: key 'discard': 'maybe' is not "
						      "yes or no"},
		{"[a]\nsize\n", "swap.conf:2: 'size': expected KEY = VALUE"},
		{"[a]\nsize =\n", "swap.conf:2: key 'size': no value"},
		{"[a b]\n", "swap.conf:1: [a b]: a device's name is 1 to 32 letters, digits, '-' or '_'"},
		{"[a\n", "swap.conf:1: '[a': a section is [NAME]"},
		{"[a]\nsize=1G\n[a]\nsize=1G\n", "swap.conf:3: [a]: named twice (also line 1)"},
		{"\n[a]\ncodec = lz4\n", "swap.conf:2: [a] has no size (size = 25% or size = 4G)"},
		{"[a]\nsize=1G\nwriteback-device = sdb\n",
		 "swap.conf:3: key 'writeback-device': 'sdb' is not a path (/dev/...)"},
		{"[a]\nsize=1G\nbacking-dev = /dev/sdb\n",
		 "swap.conf:3: key 'backing-dev': this key (writeback is set with "
		 "writeback-device = PATH, as zram-generator's) is not in this zbatch yet "
		 "(Documentation/admin-guide.md, replacing zram)"},
		{"[a]\nsize=1G\nrecompression-algorithm = zstd\n",
		 "swap.conf:3: key 'recompression-algorithm': this key (recompression is set with "
		 "recomp-algorithm = CODEC) is not in this zbatch yet (Documentation/admin-guide.md, "
		 "replacing zram)"},
		{"[a]\nsize=1G\nrecomp-algorithm = gzip\n",
		 "swap.conf:3: key 'recomp-algorithm': 'gzip' is not one of deflate, lz4, zstd, lzo"},
		// recompression's keys need its codec, in the section, before or after them
		{"[a]\nsize=1G\nrecomp-level = 9\n[b]\nsize=1G\nrecomp-algorithm = zstd\n",
		 "swap.conf:3: key 'recomp-level': needs recomp-algorithm (the secondary codec "
		 "recompression uses)"},
		{"[a]\nsize=1G\nrecomp-budget = 5\n",
		 "swap.conf:3: key 'recomp-budget': needs recomp-algorithm (the secondary codec "
		 "recompression uses)"},
		{"[a]\nsize=1G\nrecomp-interval = 5\n",
		 "swap.conf:3: key 'recomp-interval': needs recomp-algorithm (the secondary codec "
		 "recompression uses)"},
		{"[a]\nsize=1G\nrecomp-level = 9\nunit = 64k\nrecomp-algorithm = zstd\n",
		 "swap.conf:3: key 'recomp-level': zstd levels above 3 need larger tables than 64k "
		 "units allow; they fit 4k and 16k units"},
		{"[a]\nsize=1G\nrecomp-algorithm = lzo\nrecomp-level = 2\n",
		 "swap.conf:4: key 'recomp-level': lzo has no compression levels"},
		{"[a]\nsize=1G\nrecomp-level = x\n",
		 "swap.conf:3: key 'recomp-level': 'x' is not a number"},
		{"[a]\nsize=1G\nrecomp-algorithm = zstd\nrecomp-budget = 101\n",
		 "swap.conf:4: key 'recomp-budget': '101' is not 0 to 100 (percent of one CPU; 0: no "
		 "background recompression)"},
		{"[a]\nsize=1G\nrecomp-algorithm = zstd\nrecomp-interval = 0\n",
		 "swap.conf:4: key 'recomp-interval': '0' is not 1 to 86400 (seconds)"},
		{"[a]\nsize=1G\nrecomp-algorithm = zstd\nrecomp-interval = 86401\n",
		 "swap.conf:4: key 'recomp-interval': '86401' is not 1 to 86400 (seconds)"},
	};
	for (const auto &[text, want] : cases) {
		auto d = parse_swap_conf("swap.conf", text);
		ASSERT_FALSE(d) << text;
		EXPECT_EQ(d.error().message, want);
	}
}

TEST(SwapConf, WritebackDeviceIsKept)
{
	auto d = parse_swap_conf("swap.conf", "[a]\nsize = 1G\nwriteback-device = /dev/sdb2\n");
	ASSERT_TRUE(d) << d.error().message;
	EXPECT_EQ(d->at(0).writeback_device, "/dev/sdb2");
}

TEST(SwapConf, RecompressionKeysAreKept)
{
	auto d = parse_swap_conf("swap.conf", "[a]\nsize = 1G\nrecomp-level = 9\n"
					      "recomp-algorithm = zstd\nrecomp-budget = 0\n"
					      "recomp-interval = 86400\n[b]\nsize = 1G\n");
	ASSERT_TRUE(d) << d.error().message;
	const auto &a = d->at(0);
	EXPECT_EQ(a.recomp_codec, "zstd");
	EXPECT_EQ(a.recomp_level, 9);
	EXPECT_EQ(a.recomp_budget, 0);
	EXPECT_EQ(a.recomp_interval, 86400);
	const auto &b = d->at(1);	// not set: the module's defaults
	EXPECT_EQ(b.recomp_codec, "");
	EXPECT_EQ(b.recomp_level, 0);
	EXPECT_EQ(b.recomp_budget, -1);
	EXPECT_EQ(b.recomp_interval, -1);
}

TEST(SwapConf, RamFromMeminfo)
{
	FakeTree t;
	zbatch::SysfsTree tree(t.root());
	EXPECT_FALSE(zbatch::ram_bytes(tree));
	t.put("/proc/meminfo", "MemTotal:        2014572 kB\nMemFree:  100 kB\n");
	auto r = zbatch::ram_bytes(tree);
	ASSERT_TRUE(r) << r.error().message;
	EXPECT_EQ(*r, 2014572ULL * 1024);
}

// The header is byte for byte what util-linux's mkswap writes with the
// same UUID (the boot block, version, last page, UUID and signature).
TEST(SwapHeader, IsWhatMkswapWrites)
{
	const char *mkswap = "/usr/sbin/mkswap";
	if (access(mkswap, X_OK) != 0)
		GTEST_SKIP() << mkswap << " is missing (util-linux)";
	const uint8_t uuid[16] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef,
				  0x81, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
	FakeTree t;
	auto file = (t.root() / "swap").string();
	const uint64_t bytes = 4 << 20;
	{
		std::ofstream f(file, std::ios::binary);
		f.seekp(bytes - 1);
		f.put(0);
	}
	auto cmd = std::string(mkswap) + " -q -U 12345678-9abc-4def-8123-456789abcdef " + file +
		   " >/dev/null 2>&1";
	ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
	std::ifstream in(file, std::ios::binary);
	std::vector<uint8_t> theirs((std::istreambuf_iterator<char>(in)), {});
	theirs.resize(4096);
	auto ours = zbatch::swap_header(bytes, 4096, uuid);
	ASSERT_TRUE(ours) << ours.error().message;
	ASSERT_EQ(ours->size(), 4096u);
	for (size_t i = 0; i < 4096; i++)
		ASSERT_EQ((*ours)[i], theirs[i]) << "byte " << i;
	EXPECT_FALSE(zbatch::swap_header(9 * 4096, 4096, uuid)) << "under 10 pages";
}
