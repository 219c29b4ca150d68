// SPDX-License-Identifier: GPL-2.0
// The iaa-crypto WQ recipe over a mocked libaccel-config, and the
// description of who uses zbatch over mocked module operations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_tree.hpp"
#include "zbatch/accel.hpp"
#include "zbatch/kmod.hpp"

using ::testing::_;
using ::testing::InSequence;
using ::testing::Return;

namespace {

class MockAccel : public zbatch::AccelConfig {
public:
	MOCK_METHOD(zbatch::Result<std::vector<zbatch::IaaDevice>>, devices, (), (override));
	MOCK_METHOD(zbatch::Result<void>, configure_wq,
		    (const std::string &, const std::string &, const zbatch::WqSettings &), (override));
	MOCK_METHOD(zbatch::Result<void>, engines_to_group, (const std::string &, int), (override));
	MOCK_METHOD(zbatch::Result<void>, enable_device, (const std::string &), (override));
	MOCK_METHOD(zbatch::Result<void>, enable_wq, (const std::string &, const std::string &),
		    (override));
	MOCK_METHOD(zbatch::Result<void>, disable_wq, (const std::string &, const std::string &),
		    (override));
};

std::vector<zbatch::IaaDevice> one_device(const std::string &dev_state, const std::string &wq_state)
{
	zbatch::IaaDevice d;
	d.name = "iax1";
	d.state = dev_state;
	d.engines = 8;
	zbatch::IaaWq q;
	q.name = "wq1.0";
	q.state = wq_state;
	d.wqs.push_back(q);
	return {d};
}

} // namespace

TEST(IaaRecipe, ConfiguresGroupsEnablesDeviceThenWq)
{
	MockAccel ac;
	InSequence seq;
	EXPECT_CALL(ac, devices()).WillOnce(Return(one_device("disabled", "disabled")));
	EXPECT_CALL(ac, configure_wq("iax1", "wq1.0", _)).WillOnce(Return(zbatch::Result<void>{}));
	EXPECT_CALL(ac, engines_to_group("iax1", 0)).WillOnce(Return(zbatch::Result<void>{}));
	EXPECT_CALL(ac, enable_device("iax1")).WillOnce(Return(zbatch::Result<void>{}));
	EXPECT_CALL(ac, enable_wq("iax1", "wq1.0")).WillOnce(Return(zbatch::Result<void>{}));
	EXPECT_TRUE(zbatch::setup_iaa_crypto_wq(ac, "iax1", "wq1.0", {}));
}

TEST(IaaRecipe, EnabledDeviceIsNotReEnabled)
{
	MockAccel ac;
	EXPECT_CALL(ac, devices()).WillOnce(Return(one_device("enabled", "disabled")));
	EXPECT_CALL(ac, configure_wq(_, _, _)).WillOnce(Return(zbatch::Result<void>{}));
	EXPECT_CALL(ac, engines_to_group(_, _)).WillOnce(Return(zbatch::Result<void>{}));
	EXPECT_CALL(ac, enable_device(_)).Times(0);
	EXPECT_CALL(ac, enable_wq(_, _)).WillOnce(Return(zbatch::Result<void>{}));
	EXPECT_TRUE(zbatch::setup_iaa_crypto_wq(ac, "iax1", "wq1.0", {}));
}

TEST(IaaRecipe, RefusesBadSettingsEnabledWqAndMissingDevice)
{
	MockAccel ac;
	zbatch::WqSettings s;
	s.mode = "exclusive";
	EXPECT_FALSE(zbatch::setup_iaa_crypto_wq(ac, "iax1", "wq1.0", s));
	s = {};
	s.size = 0;
	EXPECT_FALSE(zbatch::setup_iaa_crypto_wq(ac, "iax1", "wq1.0", s));

	EXPECT_CALL(ac, devices()).WillOnce(Return(one_device("enabled", "enabled")))
		.WillOnce(Return(std::vector<zbatch::IaaDevice>{}));
	EXPECT_CALL(ac, configure_wq(_, _, _)).Times(0);
	auto busy = zbatch::setup_iaa_crypto_wq(ac, "iax1", "wq1.0", {});
	ASSERT_FALSE(busy);
	EXPECT_EQ(busy.error().code, EBUSY);
	EXPECT_NE(busy.error().message.find("disable it first"), std::string::npos);
	auto none = zbatch::setup_iaa_crypto_wq(ac, "iax1", "wq1.0", {});
	ASSERT_FALSE(none);
	EXPECT_EQ(none.error().exit, zbatch::kExitSkipped);
}

TEST(IaaRecipe, AFailedStepStopsTheRecipe)
{
	MockAccel ac;
	EXPECT_CALL(ac, devices()).WillOnce(Return(one_device("disabled", "disabled")));
	EXPECT_CALL(ac, configure_wq(_, _, _)).WillOnce(Return(zbatch::fail(EINVAL, "bad size")));
	EXPECT_CALL(ac, engines_to_group(_, _)).Times(0);
	EXPECT_CALL(ac, enable_wq(_, _)).Times(0);
	auto r = zbatch::setup_iaa_crypto_wq(ac, "iax1", "wq1.0", {});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "bad size");
}

namespace {

class MockModules : public zbatch::Modules {
public:
	MOCK_METHOD(bool, loaded, (const std::string &), (override));
	MOCK_METHOD(zbatch::Result<void>, load, (const std::string &, const std::string &),
		    (override));
	MOCK_METHOD(zbatch::Result<void>, unload, (const std::string &), (override));
	MOCK_METHOD(int, refcount, (const std::string &), (override));
	MOCK_METHOD(std::vector<std::string>, holders, (const std::string &), (override));
};

} // namespace

TEST(ZbatchUsers, NamesHolderModulesAndZswap)
{
	MockModules m;
	FakeTree t;
	t.put("/sys/module/zswap/parameters/compressor", "zstd-zbatch\n");
	zbatch::SysfsTree tree(t.root());
	EXPECT_CALL(m, holders("zbatch")).WillOnce(Return(std::vector<std::string>{"zbatch_acomp_bench"}));
	auto u = zbatch::zbatch_users(m, tree);
	ASSERT_EQ(u.size(), 2u);
	EXPECT_EQ(u[0], "module zbatch_acomp_bench");
	EXPECT_NE(u[1].find("zswap (compressor zstd-zbatch"), std::string::npos);
}

TEST(ZbatchUsers, OldZswapPoolsWhenTheCompressorMovedOn)
{
	MockModules m;
	FakeTree t;
	t.put("/sys/module/zswap/parameters/compressor", "lzo\n");
	zbatch::SysfsTree tree(t.root());
	EXPECT_CALL(m, holders("zbatch")).WillOnce(Return(std::vector<std::string>{}));
	EXPECT_CALL(m, refcount("zbatch")).WillOnce(Return(4));
	auto u = zbatch::zbatch_users(m, tree);
	ASSERT_EQ(u.size(), 1u);
	EXPECT_NE(u[0].find("swapoff"), std::string::npos);
}
