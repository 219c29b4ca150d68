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

namespace {

std::vector<zbatch::IaaDevice> server(unsigned ndev, unsigned nwq, const std::string &state = "disabled")
{
	std::vector<zbatch::IaaDevice> v;
	for (unsigned i = 0; i < ndev; i++) {
		zbatch::IaaDevice d;
		d.name = "iax" + std::to_string(2 * i + 1);
		d.state = state;
		d.engines = 8;
		for (unsigned w = 0; w < nwq; w++) {
			zbatch::IaaWq q;
			q.name = "wq" + std::to_string(2 * i + 1) + "." + std::to_string(w);
			q.state = "disabled";
			d.wqs.push_back(q);
		}
		v.push_back(d);
	}
	return v;
}

void iaa_crypto(FakeTree &t, const std::string &mode, const std::string &verify)
{
	t.put("/sys/bus/dsa/drivers/crypto/sync_mode", mode + "\n");
	t.put("/sys/bus/dsa/drivers/crypto/verify_compress", verify + "\n");
}

std::vector<std::string> texts(const std::vector<zbatch::IaaStep> &plan)
{
	std::vector<std::string> v;
	for (const auto &s : plan)
		v.push_back(s.what);
	return v;
}

} // namespace

using ::testing::HasSubstr;

TEST(SetupIaa, DryRunPlansEveryWriteInOrderAndTouchesNothing)
{
	MockAccel ac;
	FakeTree t;
	iaa_crypto(t, "sync", "1");
	t.put("/sys/kernel/zbatch/iaa/driver", "deflate-iaa\n");
	t.put("/sys/module/zswap/parameters/compressor", "lzo\n");
	EXPECT_CALL(ac, devices()).WillOnce(Return(server(2, 8)));
	// planning calls nothing that writes
	EXPECT_CALL(ac, configure_wq(_, _, _)).Times(0);
	EXPECT_CALL(ac, enable_wq(_, _)).Times(0);
	zbatch::SysfsTree tree(t.root());
	zbatch::IaaSetupOptions o;
	o.wqs = 2;
	auto plan = zbatch::plan_iaa_setup(ac, tree, o);
	ASSERT_TRUE(plan) << plan.error().message;
	auto v = texts(*plan);
	ASSERT_EQ(v.size(), 2u + 2 * (2 + 1 + 1 + 2) + 2u);
	EXPECT_EQ(v[0], "write /sys/bus/dsa/drivers/crypto/sync_mode = async_irq");
	EXPECT_EQ(v[1], "write /sys/bus/dsa/drivers/crypto/verify_compress = 0");
	EXPECT_THAT(v[2], HasSubstr("configure iax1/wq1.0: dedicated, kernel, driver crypto, size 64"));
	EXPECT_THAT(v[3], HasSubstr("configure iax1/wq1.1"));
	EXPECT_THAT(v[4], HasSubstr("iax1: its 8 engines into group 0"));
	EXPECT_EQ(v[5], "enable iax1");
	EXPECT_THAT(v[6], HasSubstr("enable iax1/wq1.0"));
	EXPECT_THAT(v[8], HasSubstr("configure iax3/wq3.0"));
	EXPECT_EQ(v[v.size() - 2], "write /sys/kernel/zbatch/iaa/driver = deflate-iaa");
	EXPECT_EQ(v.back(), "write /sys/module/zswap/parameters/compressor = deflate-zbatch");
	// the files are untouched until the steps run
	EXPECT_EQ(*tree.read("/sys/bus/dsa/drivers/crypto/sync_mode"), "sync");
}

TEST(SetupIaa, RunningThePlanWritesAndCallsInOrder)
{
	MockAccel ac;
	FakeTree t;
	iaa_crypto(t, "sync", "0");
	EXPECT_CALL(ac, devices()).WillOnce(Return(server(1, 1, "enabled")));
	zbatch::SysfsTree tree(t.root());
	zbatch::IaaSetupOptions o;
	o.zswap = "";
	auto plan = zbatch::plan_iaa_setup(ac, tree, o);
	ASSERT_TRUE(plan) << plan.error().message;
	// verify_compress is already 0: not written; device enabled: not re-enabled
	ASSERT_EQ(plan->size(), 4u);
	{
		InSequence seq;
		EXPECT_CALL(ac, configure_wq("iax1", "wq1.0", _)).WillOnce(Return(zbatch::Result<void>{}));
		EXPECT_CALL(ac, engines_to_group("iax1", 0)).WillOnce(Return(zbatch::Result<void>{}));
		EXPECT_CALL(ac, enable_wq("iax1", "wq1.0")).WillOnce(Return(zbatch::Result<void>{}));
	}
	for (auto &s : *plan)
		ASSERT_TRUE(s.run()) << s.what;
	EXPECT_EQ(*tree.read("/sys/bus/dsa/drivers/crypto/sync_mode"), "async_irq");
}

TEST(SetupIaa, SyncModeWithBoundWqsIsEbusyNamingThem)
{
	MockAccel ac;
	FakeTree t;
	iaa_crypto(t, "sync", "1");
	auto devs = server(2, 1, "enabled");
	devs[1].wqs[0].state = "enabled";
	devs[1].wqs[0].driver = "crypto";
	EXPECT_CALL(ac, devices()).WillOnce(Return(devs));
	zbatch::SysfsTree tree(t.root());
	auto plan = zbatch::plan_iaa_setup(ac, tree, {});
	ASSERT_FALSE(plan);
	EXPECT_EQ(plan.error().code, EBUSY);
	EXPECT_THAT(plan.error().message, HasSubstr("iax3/wq3.0 bound"));
	EXPECT_THAT(plan.error().message, HasSubstr("reload iaa_crypto"));
}

TEST(SetupIaa, BoundWqsAreFineWhenTheModeIsAlreadyRight)
{
	MockAccel ac;
	FakeTree t;
	iaa_crypto(t, "async_irq", "0");
	auto devs = server(1, 1, "enabled");
	devs[0].wqs[0].state = "enabled";
	devs[0].wqs[0].driver = "crypto";
	EXPECT_CALL(ac, devices()).WillOnce(Return(devs));
	zbatch::SysfsTree tree(t.root());
	auto plan = zbatch::plan_iaa_setup(ac, tree, {});
	ASSERT_TRUE(plan) << plan.error().message;
	EXPECT_TRUE(plan->empty()) << "nothing to do on a set-up server";
}

TEST(SetupIaa, WqOfAnotherDriverIsRefused)
{
	MockAccel ac;
	FakeTree t;
	iaa_crypto(t, "async_irq", "0");
	auto devs = server(1, 1, "enabled");
	devs[0].wqs[0].state = "enabled";
	devs[0].wqs[0].driver = "user";
	EXPECT_CALL(ac, devices()).WillOnce(Return(devs));
	zbatch::SysfsTree tree(t.root());
	auto plan = zbatch::plan_iaa_setup(ac, tree, {});
	ASSERT_FALSE(plan);
	EXPECT_EQ(plan.error().code, EBUSY);
	EXPECT_THAT(plan.error().message, HasSubstr("driver 'user'"));
}

TEST(SetupIaa, NoDeviceNoIaaCryptoAndBadOptionsSayWhat)
{
	FakeTree t;
	zbatch::SysfsTree tree(t.root());
	{
		MockAccel ac;
		EXPECT_CALL(ac, devices()).WillOnce(Return(std::vector<zbatch::IaaDevice>{}));
		auto p = zbatch::plan_iaa_setup(ac, tree, {});
		ASSERT_FALSE(p);
		EXPECT_EQ(p.error().code, ENODEV);
		EXPECT_THAT(p.error().message, HasSubstr("no IAA device found"));
	}
	{
		MockAccel ac;
		EXPECT_CALL(ac, devices()).WillOnce(Return(server(1, 1)));
		auto p = zbatch::plan_iaa_setup(ac, tree, {});
		ASSERT_FALSE(p);
		EXPECT_THAT(p.error().message, HasSubstr("modprobe iaa_crypto"));
	}
	{
		MockAccel ac;
		iaa_crypto(t, "sync", "0");
		EXPECT_CALL(ac, devices()).WillOnce(Return(server(1, 1)));
		zbatch::IaaSetupOptions o;
		o.wqs = 2;
		auto p = zbatch::plan_iaa_setup(ac, tree, o);
		ASSERT_FALSE(p);
		EXPECT_THAT(p.error().message, HasSubstr("iax1 has 1 WQs, --wqs 2 asked"));
	}
	{
		MockAccel ac;
		zbatch::IaaSetupOptions o;
		o.wqs = 9;
		auto p = zbatch::plan_iaa_setup(ac, tree, o);
		ASSERT_FALSE(p);
		EXPECT_EQ(p.error().code, EINVAL);
	}
	{
		MockAccel ac;
		EXPECT_CALL(ac, devices())
			.WillOnce(Return(zbatch::Result<std::vector<zbatch::IaaDevice>>(
				std::unexpected(zbatch::Error{EACCES, "libaccel-config: permission denied"}))));
		auto p = zbatch::plan_iaa_setup(ac, tree, {});
		ASSERT_FALSE(p);
		EXPECT_EQ(p.error().code, EACCES);
	}
}

TEST(SetupIaa, AFailingStepReportsItselfAndStops)
{
	MockAccel ac;
	FakeTree t;
	iaa_crypto(t, "async_irq", "0");
	EXPECT_CALL(ac, devices()).WillOnce(Return(server(1, 1)));
	zbatch::SysfsTree tree(t.root());
	auto plan = zbatch::plan_iaa_setup(ac, tree, {});
	ASSERT_TRUE(plan);
	EXPECT_CALL(ac, configure_wq("iax1", "wq1.0", _))
		.WillOnce(Return(zbatch::Result<void>(
			std::unexpected(zbatch::Error{EINVAL, "iax1/wq1.0: configuring failed"}))));
	auto r = (*plan)[0].run();
	ASSERT_FALSE(r);
	EXPECT_THAT(r.error().message, HasSubstr("configuring failed"));
}
