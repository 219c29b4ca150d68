// SPDX-License-Identifier: GPL-2.0
#include <gtest/gtest.h>

#include "fake_tree.hpp"
#include "zbatch/json.hpp"
#include "zbatch/status.hpp"

TEST(Status, NotLoadedSaysHowToLoad)
{
	FakeTree t;
	zbatch::SysfsTree tree(t.root());
	auto st = zbatch::read_status(tree);
	ASSERT_FALSE(st.has_value());
	EXPECT_EQ(st.error().code, ENOENT);
	EXPECT_NE(st.error().message.find("not loaded"), std::string::npos);
	EXPECT_NE(st.error().message.find("zbatch load"), std::string::npos);
}

TEST(Status, ReadsVersionAndAttributes)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/version", "0.1.0\n");
	t.put("/sys/kernel/zbatch/codec", "lz4\n");
	t.put("/sys/kernel/zbatch/devices/dev0/wqs", "2\n");
	zbatch::SysfsTree tree(t.root());
	auto st = zbatch::read_status(tree);
	ASSERT_TRUE(st.has_value()) << st.error().message;
	EXPECT_EQ(st->version, "0.1.0");
	EXPECT_EQ(st->attributes.at("codec"), "lz4");
	EXPECT_EQ(st->attributes.count("devices"), 0u);
}

TEST(Status, LayoutParamsAlgorithmsAndZswap)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/version", "0.2.0\n");
	t.put("/sys/kernel/zbatch/dev0/node", "0\n");
	t.put("/sys/kernel/zbatch/dev0/engines", "2\n");
	t.put("/sys/kernel/zbatch/dev0/wq0/mode", "dedicated\n");
	t.put("/sys/kernel/zbatch/dev0/wq0/enabled", "1\n");
	t.put("/sys/module/zbatch/parameters/devices", "0\n");
	t.put("/sys/module/zswap/parameters/compressor", "lz4-zbatch\n");
	t.put("/sys/module/zswap/parameters/enabled", "Y\n");
	t.put("/proc/crypto", "name         : lzo\ndriver       : lzo-scomp\nmodule       : kernel\n"
			      "priority     : 0\n\nname         : lz4-zbatch\ndriver       : lz4-zbatch\n"
			      "module       : zbatch\npriority     : 0\nselftest     : passed\n\n");
	zbatch::SysfsTree tree(t.root());
	auto st = zbatch::read_status(tree);
	ASSERT_TRUE(st) << st.error().message;
	ASSERT_EQ(st->devices.size(), 1u);
	EXPECT_EQ(st->devices[0].engines, "2");
	ASSERT_EQ(st->devices[0].wqs.size(), 1u);
	EXPECT_EQ(st->devices[0].wqs[0].mode, "dedicated");
	EXPECT_EQ(st->params.at("devices"), "0");
	ASSERT_EQ(st->algorithms.size(), 1u);
	EXPECT_EQ(st->algorithms[0].driver, "lz4-zbatch");
	EXPECT_EQ(st->algorithms[0].selftest, "passed");
	EXPECT_TRUE(st->zswap_enabled);
	EXPECT_TRUE(st->zswap_uses_zbatch);
	auto json = zbatch::status_to_json(*st);
	EXPECT_NE(json.find("\"uses_zbatch\": true"), std::string::npos) << json;
}

TEST(Status, ExecutorPerCodecFollowsTheIaaState)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/version", "0.3.0\n");
	t.put("/sys/kernel/zbatch/codec", "deflate [lz4] zstd lzo\n");
	t.put("/sys/kernel/zbatch/iaa/driver", "deflate-iaa\n");
	t.put("/sys/kernel/zbatch/iaa/state", "disabled offline probing [online]\n");
	t.put("/sys/kernel/zbatch/iaa/reason", "deflate-iaa passed its probe\n");
	zbatch::SysfsTree tree(t.root());
	auto st = zbatch::read_status(tree);
	ASSERT_TRUE(st) << st.error().message;
	EXPECT_EQ(st->iaa.state, "online");
	auto rows = zbatch::executor_table(*st);
	ASSERT_EQ(rows.size(), 4u);
	EXPECT_EQ(rows[0].codec, "deflate");
	EXPECT_EQ(rows[0].executor, "iaa");
	EXPECT_EQ(rows[0].why, "deflate-iaa, online");
	EXPECT_EQ(rows[1].codec, "lz4");
	EXPECT_EQ(rows[1].executor, "software engines");
	EXPECT_EQ(rows[1].why, "IAA runs deflate only");

	t.put("/sys/kernel/zbatch/iaa/state", "disabled [offline] probing online\n");
	t.put("/sys/kernel/zbatch/iaa/reason", "deflate-iaa is not registered \"quoted\"\n");
	st = zbatch::read_status(tree);
	ASSERT_TRUE(st);
	rows = zbatch::executor_table(*st);
	EXPECT_EQ(rows[0].executor, "software engines");
	EXPECT_EQ(rows[0].why, "IAA offline: deflate-iaa is not registered \"quoted\"");
	auto json = zbatch::status_to_json(*st);
	EXPECT_NE(json.find("\"why\": \"IAA offline: deflate-iaa is not registered \\\"quoted\\\"\""),
		  std::string::npos) << json;
}

// The device executor runs the codec its driver's algorithm names
// (iaa/codec); without that file (older modules) it is deflate.
TEST(Status, ExecutorRunsTheCodecItsDriverNames)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/version", "0.3.0\n");
	t.put("/sys/kernel/zbatch/codec", "deflate [lz4] zstd lzo\n");
	t.put("/sys/kernel/zbatch/iaa/driver", "lzo-scomp\n");
	t.put("/sys/kernel/zbatch/iaa/state", "disabled offline probing [online]\n");
	t.put("/sys/kernel/zbatch/iaa/reason", "lzo-scomp passed its probe: lzo runs on it\n");
	t.put("/sys/kernel/zbatch/iaa/codec", "lzo\n");
	zbatch::SysfsTree tree(t.root());
	auto st = zbatch::read_status(tree);
	ASSERT_TRUE(st) << st.error().message;
	EXPECT_EQ(st->iaa.codec, "lzo");
	auto rows = zbatch::executor_table(*st);
	ASSERT_EQ(rows.size(), 4u);
	EXPECT_EQ(rows[0].codec, "deflate");
	EXPECT_EQ(rows[0].executor, "software engines");
	EXPECT_EQ(rows[0].why, "IAA runs lzo only");
	EXPECT_EQ(rows[3].codec, "lzo");
	EXPECT_EQ(rows[3].executor, "iaa");
	EXPECT_EQ(rows[3].why, "lzo-scomp, online");
	EXPECT_NE(zbatch::status_to_json(*st).find("\"codec\": \"lzo\""), std::string::npos);

	t.put("/sys/kernel/zbatch/iaa/codec", "\n");	// none attached yet
	st = zbatch::read_status(tree);
	ASSERT_TRUE(st);
	EXPECT_EQ(st->iaa.codec, "deflate");
}

TEST(Status, OlderModuleWithoutIaaSaysSo)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/version", "0.2.0\n");
	t.put("/sys/kernel/zbatch/codec", "[deflate] lz4\n");
	zbatch::SysfsTree tree(t.root());
	auto st = zbatch::read_status(tree);
	ASSERT_TRUE(st);
	auto rows = zbatch::executor_table(*st);
	ASSERT_EQ(rows.size(), 2u);
	EXPECT_EQ(rows[0].why, "this module has no IAA executor");
}

// Whatever sysfs holds, --json status is valid JSON: an attribute that
// cannot be read is null, and the errors list says which and why.
TEST(Status, JsonIsValidWithUnreadableAndOddAttributes)
{
	FakeTree t;
	t.put("/sys/kernel/zbatch/version", "0.3.0\n");
	t.put("/sys/kernel/zbatch/codec", "de\"fl\\ate [lz4]\n");
	t.put("/sys/kernel/zbatch/dev0/engines", "2\n");
	t.put("/sys/kernel/zbatch/dev0/node/x", "a directory where a file should be\n");
	t.put("/sys/kernel/zbatch/iaa/reason", "tab\tand \x01 control\n");
	zbatch::SysfsTree tree(t.root());
	auto st = zbatch::read_status(tree);
	ASSERT_TRUE(st) << st.error().message;
	auto text = zbatch::status_to_json(*st);
	auto j = zbatch::Json::parse(text, nullptr, false);
	ASSERT_FALSE(j.is_discarded()) << text;
	EXPECT_EQ(j["attributes"]["codec"], "de\"fl\\ate [lz4]");
	EXPECT_TRUE(j["devices"][0]["node"].is_null()) << text;
	EXPECT_EQ(j["devices"][0]["engines"], 2);
	ASSERT_FALSE(j["errors"].empty()) << text;
	EXPECT_NE(j["errors"][0]["path"].get<std::string>().find("dev0/node"), std::string::npos);
	EXPECT_EQ(j["iaa"]["reason"], "tab\tand \x01 control");
}
