// SPDX-License-Identifier: GPL-2.0
// Every subcommand of the zbatch CLI on the host, against a fake system
// (fakes.hpp): its logic, its output, its exit code and its failure paths.
// The guest tests (tests/vm/test_cli.cpp) run the same commands for real.
#include <fstream>

#include <gtest/gtest.h>

#include "commands.hpp"
#include "fakes.hpp"
#include "zbatch/json.hpp"

using namespace zbatch;
using namespace zbatch::cli;

namespace {

bool contains(const std::string &text, const std::string &part)
{
	return text.find(part) != std::string::npos;
}

// The exit code main() turns a Result into.
int exit_of(const Result<int> &r)
{
	return r ? *r : r.error().exit;
}

Json parse_json(const std::string &text)
{
	auto j = Json::parse(text, nullptr, false);
	EXPECT_FALSE(j.is_discarded()) << "not JSON:\n" << text;
	return j;
}

} // namespace

// ---- status ----

TEST(CmdStatus, NotLoadedFailsWithTheHint)
{
	FakeSystem s;
	auto r = run_status(s.ctx);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().exit, kExitFailure);
	EXPECT_TRUE(contains(r.error().message, "zbatch load")) << r.error().message;
	EXPECT_EQ(s.con.out, "");
}

TEST(CmdStatus, PrintsLayoutAndMarksAWqOutOfService)
{
	FakeSystem s;
	s.load_module();
	s.tree.put("/sys/kernel/zbatch/dev0/wq0/enabled", "0\n");
	ASSERT_EQ(exit_of(run_status(s.ctx)), 0);
	EXPECT_TRUE(contains(s.con.out, "version 0.3.0")) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "wq0 dedicated size 64 priority 10 OUT OF SERVICE"))
		<< s.con.out;
	EXPECT_FALSE(contains(s.con.out, "\033[")) << "colour without a terminal";
}

TEST(CmdStatus, ColourOnlyOnATerminal)
{
	FakeSystem s(Verbosity::Normal, true);
	s.load_module();
	s.tree.put("/sys/kernel/zbatch/dev0/wq0/enabled", "0\n");
	ASSERT_EQ(exit_of(run_status(s.ctx)), 0);
	EXPECT_TRUE(contains(s.con.out, "\033[31mOUT OF SERVICE\033[0m")) << s.con.out;
}

TEST(CmdStatus, JsonIsOneValidDocument)
{
	FakeSystem s;
	s.load_module();
	s.tree.unreadable("/sys/kernel/zbatch/dev0/engines");
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_status(s.ctx)), 0);
	auto j = parse_json(s.con.out);
	EXPECT_EQ(j["version"], "0.3.0");
	EXPECT_TRUE(j["devices"][0]["engines"].is_null()) << s.con.out;
	EXPECT_FALSE(j["errors"].empty());
}

// ---- load / unload ----

TEST(CmdLoad, LoadsWithParametersAndSaysSo)
{
	FakeSystem s;
	auto r = run_load(s.ctx, {"kmod/zbatch.ko", {"devices=2", "engines=4"}});
	ASSERT_EQ(exit_of(r), 0) << r.error().message;
	ASSERT_EQ(s.modules.loads.size(), 1u);
	EXPECT_EQ(s.modules.loads[0].first, "kmod/zbatch.ko");
	EXPECT_EQ(s.modules.loads[0].second, "devices=2 engines=4");
	EXPECT_EQ(s.con.out, "zbatch loaded\n");
}

TEST(CmdLoad, QuietPrintsNothingVerbosePrintsTheStep)
{
	FakeSystem q(Verbosity::Quiet);
	ASSERT_EQ(exit_of(run_load(q.ctx, {"m.ko", {}})), 0);
	EXPECT_EQ(q.con.out, "");
	FakeSystem v(Verbosity::Verbose);
	ASSERT_EQ(exit_of(run_load(v.ctx, {"m.ko", {"wqs=2"}})), 0);
	EXPECT_TRUE(contains(v.con.err, "loading m.ko with its dependencies, parameters 'wqs=2'"))
		<< v.con.err;
}

TEST(CmdLoad, AlreadyLoadedIsNotAnError)
{
	FakeSystem s;
	s.load_module();
	ASSERT_EQ(exit_of(run_load(s.ctx, {"m.ko", {}})), 0);
	EXPECT_TRUE(s.modules.loads.empty());
	EXPECT_TRUE(contains(s.con.out, "already loaded (version 0.3.0)")) << s.con.out;
}

TEST(CmdLoad, BadParameterAndLoadErrorsFail)
{
	FakeSystem s;
	auto r = run_load(s.ctx, {"m.ko", {"=1"}});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "--param '=1': expected KEY=VALUE");
	EXPECT_TRUE(s.modules.loads.empty());
	s.modules.load_result = fail(EINVAL, "loading m.ko: Invalid argument");
	r = run_load(s.ctx, {"m.ko", {"devices=99"}});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().exit, kExitFailure);
	EXPECT_TRUE(contains(r.error().message, "Invalid argument"));
}

TEST(CmdLoad, NotRootSkips)
{
	FakeSystem s;
	s.root = false;
	auto r = run_load(s.ctx, {"m.ko", {}});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().exit, kExitSkipped);
	EXPECT_EQ(r.error().message, "loading a module needs root");
}

TEST(CmdUnload, InUseNamesTheUsers)
{
	FakeSystem s;
	s.load_module();
	s.modules.refs["zbatch"] = 2;
	s.tree.put("/sys/block/zbatchswap1/size", "0\n");
	s.tree.put("/sys/module/zswap/parameters/compressor", "lz4-zbatch\n");
	auto r = run_unload(s.ctx);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().code, EBUSY);
	EXPECT_TRUE(contains(r.error().message, "refcount 2")) << r.error().message;
	EXPECT_TRUE(contains(r.error().message, "zbatch dev destroy 1")) << r.error().message;
	EXPECT_TRUE(contains(r.error().message, "zswap (compressor lz4-zbatch")) << r.error().message;
	EXPECT_TRUE(s.modules.loaded("zbatch"));
}

TEST(CmdUnload, UnloadsAndNotLoadedIsFine)
{
	FakeSystem s;
	s.load_module();
	ASSERT_EQ(exit_of(run_unload(s.ctx)), 0);
	EXPECT_FALSE(s.modules.loaded("zbatch"));
	EXPECT_EQ(s.con.out, "zbatch unloaded\n");
	ASSERT_EQ(exit_of(run_unload(s.ctx)), 0);
	EXPECT_EQ(s.con.out, "zbatch unloaded\nzbatch is not loaded\n");
}

// ---- config ----

TEST(CmdConfig, WithoutModuleSkips)
{
	FakeSystem s;
	EXPECT_EQ(exit_of(run_config_get(s.ctx, "codec")), kExitSkipped);
	EXPECT_EQ(exit_of(run_config_set(s.ctx, "codec", "lz4")), kExitSkipped);
}

TEST(CmdConfig, GetSetAndValidation)
{
	FakeSystem s(Verbosity::Verbose);
	s.load_module();
	ASSERT_EQ(exit_of(run_config_get(s.ctx, "codec")), 0);
	EXPECT_EQ(s.con.out, "lz4\n");
	ASSERT_EQ(exit_of(run_config_set(s.ctx, "timeout_ms", "250")), 0);
	EXPECT_EQ(s.read("/sys/kernel/zbatch/timeout_ms"), "250");
	EXPECT_TRUE(contains(s.con.err, "writing '250' to /sys/kernel/zbatch/timeout_ms"));
	auto r = run_config_set(s.ctx, "timeout_ms", "60001");
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "timeout_ms: '60001' is not a number from 1 to 60000");
	r = run_config_set(s.ctx, "codec", "gzip");
	ASSERT_FALSE(r);
	EXPECT_TRUE(contains(r.error().message, "not one of: default, deflate, lz4, zstd, lzo"))
		<< r.error().message;
	r = run_config_get(s.ctx, "nope");
	ASSERT_FALSE(r);
	EXPECT_TRUE(contains(r.error().message, "unknown key 'nope'"));
}

TEST(CmdConfig, JsonGetAllAndOne)
{
	FakeSystem s;
	s.load_module();
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_config_get(s.ctx, "")), 0);
	auto j = parse_json(s.con.out);
	EXPECT_EQ(j["sync_mode"], "sync");
	EXPECT_EQ(j["timeout_ms"], "1000");
	s.con.out.clear();
	ASSERT_EQ(exit_of(run_config_get(s.ctx, "codec")), 0);
	EXPECT_EQ(parse_json(s.con.out)["codec"], "lz4");
}

TEST(CmdConfig, SaveThenLoadAllOrNothing)
{
	FakeSystem s;
	s.load_module();
	const std::string file = (s.tree.root() / "cfg.json").string();
	ASSERT_EQ(exit_of(run_config_save(s.ctx, file)), 0);
	EXPECT_TRUE(contains(s.con.out, "tunables saved to")) << s.con.out;
	auto r = run_config_save(s.ctx, "/nonexistent-dir/x.json");
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "cannot write /nonexistent-dir/x.json");
	std::ofstream(file) << R"({"timeout_ms": 20, "codec": "zstd"})";
	ASSERT_EQ(exit_of(run_config_load(s.ctx, file)), 0);
	EXPECT_EQ(s.read("/sys/kernel/zbatch/timeout_ms"), "20");
	EXPECT_EQ(s.read("/sys/kernel/zbatch/codec"), "zstd");
	std::ofstream(file) << R"({"timeout_ms": 30, "codec": "gzip"})";
	r = run_config_load(s.ctx, file);
	ASSERT_FALSE(r);
	EXPECT_TRUE(contains(r.error().message, file + ": codec: 'gzip'")) << r.error().message;
	EXPECT_EQ(s.read("/sys/kernel/zbatch/timeout_ms"), "20");
	r = run_config_load(s.ctx, file + ".missing");
	ASSERT_FALSE(r);
	EXPECT_TRUE(contains(r.error().message, "cannot read"));
}

// ---- wq ----

TEST(CmdWq, ListsTheModelAndSaysWhenThereIsNoIaa)
{
	FakeSystem s;
	s.load_module();
	ASSERT_EQ(exit_of(run_wq_list(s.ctx)), 0);
	EXPECT_TRUE(contains(s.con.out, "dev0/wq0")) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "generic")) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "IAA hardware: none found")) << s.con.out;
}

TEST(CmdWq, ListsIaaDevicesAndJsonHasBoth)
{
	FakeSystem s;
	s.load_module();
	s.tree.unreadable("/sys/kernel/zbatch/dev0/wq0/queued");
	IaaDevice d{"iax1", "enabled", {}, 8};
	d.wqs.push_back({"wq1.0", "dedicated", 128, 10, 0, "kernel", "crypto", "enabled"});
	s.accel.devs.push_back(d);
	ASSERT_EQ(exit_of(run_wq_list(s.ctx)), 0);
	EXPECT_TRUE(contains(s.con.out, "iax1 (enabled, 8 engines)")) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "wq1.0")) << s.con.out;
	s.con.out.clear();
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_wq_list(s.ctx)), 0);
	auto j = parse_json(s.con.out);
	EXPECT_EQ(j["model"][0]["wq"], "dev0/wq0");
	EXPECT_TRUE(j["model"][0]["queued"].is_null()) << s.con.out;
	EXPECT_EQ(j["iaa"][0]["wqs"][0]["driver"], "crypto");
}

TEST(CmdWq, EnableDisableModelAndIaa)
{
	FakeSystem s;
	s.load_module();
	ASSERT_EQ(exit_of(run_wq_enable(s.ctx, "dev0", "wq0", false)), 0);
	EXPECT_EQ(s.read("/sys/kernel/zbatch/dev0/wq0/enabled"), "0");
	EXPECT_EQ(s.con.out, "dev0/wq0 out of service\n");
	auto r = run_wq_enable(s.ctx, "dev3", "wq0", true);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "no WQ dev3/wq0 (see zbatch wq list)");
	ASSERT_EQ(exit_of(run_wq_enable(s.ctx, "iax1", "wq1.0", true)), 0);
	ASSERT_EQ(s.accel.calls.size(), 1u);
	EXPECT_EQ(s.accel.calls[0], "enable iax1/wq1.0");
}

TEST(CmdWq, ConfigRefusesModelDevices)
{
	FakeSystem s;
	auto r = run_wq_config(s.ctx, "dev0", "wq0", {});
	ASSERT_FALSE(r);
	EXPECT_TRUE(contains(r.error().message, "not an IAA device"));
	EXPECT_TRUE(s.accel.calls.empty());
}

// zbatch loaded, iaa_crypto's attributes not as setup-iaa wants them, the
// IAA executor on the test double, one disabled device of @wqs WQs
static void iaa_to_set_up(FakeSystem &s, unsigned int wqs)
{
	s.load_module();
	s.tree.put("/sys/bus/dsa/drivers/crypto/sync_mode", "sync\n");
	s.tree.put("/sys/bus/dsa/drivers/crypto/verify_compress", "1\n");
	s.tree.put("/sys/kernel/zbatch/iaa/driver", "deflate-iaa-double\n");
	IaaDevice d{"iax1", "disabled", {}, 8};
	for (unsigned int i = 0; i < wqs; i++)
		d.wqs.push_back({"wq1." + std::to_string(i), "", 0, 0, -1, "", "", "disabled"});
	s.accel.devs.push_back(d);
}

TEST(CmdWq, SetupIaaDryRunWritesNothing)
{
	FakeSystem s;
	iaa_to_set_up(s, 1);
	ASSERT_EQ(exit_of(run_wq_setup_iaa(s.ctx, {}, true)), 0);
	EXPECT_TRUE(contains(s.con.out, "would ")) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "dry run: nothing written")) << s.con.out;
	EXPECT_TRUE(s.accel.calls.empty());
	EXPECT_EQ(s.read("/sys/bus/dsa/drivers/crypto/sync_mode"), "sync");
	EXPECT_EQ(s.read("/sys/kernel/zbatch/iaa/driver"), "deflate-iaa-double");

	s.con.out.clear();
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_wq_setup_iaa(s.ctx, {}, true)), 0);
	auto j = parse_json(s.con.out);
	EXPECT_EQ(j["dry_run"], true);
	EXPECT_GT(j["steps"].size(), 3u);
	s.ctx.json = false;

	s.con.out.clear();
	ASSERT_EQ(exit_of(run_wq_setup_iaa(s.ctx, {}, false)), 0);
	EXPECT_EQ(s.read("/sys/bus/dsa/drivers/crypto/sync_mode"), "async_irq");
	EXPECT_EQ(s.read("/sys/kernel/zbatch/iaa/driver"), "deflate-iaa");
	EXPECT_FALSE(s.accel.calls.empty());
	EXPECT_TRUE(contains(s.con.out, "IAA set up")) << s.con.out;
}

// A step of setup-iaa fails: what was done before it is undone, last first
// (the WQs enabled disabled again, then iaa_crypto's attributes and
// zbatch's IAA driver back to what they were), and the error says so.
TEST(CmdWq, SetupIaaFailureUndoesWhatItDid)
{
	for (std::string failing : {"enable iax1/wq1.1", "zswap"}) {
		SCOPED_TRACE(failing);
		FakeSystem s;
		iaa_to_set_up(s, 2);
		IaaSetupOptions o;
		o.wqs = 2;
		if (failing == "zswap")	// the last step: zswap's compressor refuses
			s.tree.unreadable("/sys/module/zswap/parameters/compressor");
		else
			s.accel.fail_call = failing;
		auto r = run_wq_setup_iaa(s.ctx, o, false);
		ASSERT_FALSE(r);
		EXPECT_TRUE(contains(r.error().message, "step(s) undone")) << r.error().message;
		EXPECT_FALSE(contains(r.error().message, "undoing")) << r.error().message;
		EXPECT_EQ(s.read("/sys/bus/dsa/drivers/crypto/sync_mode"), "sync");
		EXPECT_EQ(s.read("/sys/bus/dsa/drivers/crypto/verify_compress"), "1");
		EXPECT_EQ(s.read("/sys/kernel/zbatch/iaa/driver"), "deflate-iaa-double");
		// every WQ it enabled is disabled again, after its enable
		auto &c = s.accel.calls;
		auto en = std::ranges::find(c, "enable iax1/wq1.0");
		ASSERT_NE(en, c.end());
		EXPECT_NE(std::find(en, c.end(), "disable iax1/wq1.0"), c.end());
		if (failing == "zswap") {
			EXPECT_NE(std::ranges::find(c, "disable iax1/wq1.1"), c.end());
		}
	}
}

// ---- stats, validate, selftest ----

TEST(CmdStats, WithoutDebugfsSkips)
{
	FakeSystem s;
	EXPECT_EQ(exit_of(run_stats(s.ctx, {})), kExitSkipped);
	EXPECT_EQ(exit_of(run_stats(s.ctx, {0, 0, true, false, ""})), kExitSkipped);
}

TEST(CmdStats, TableWatchAndReset)
{
	FakeSystem s;
	s.load_module();
	ASSERT_EQ(exit_of(run_stats(s.ctx, {})), 0);
	EXPECT_TRUE(contains(s.con.out, "compress_calls")) << s.con.out;
	s.con.out.clear();
	ASSERT_EQ(exit_of(run_stats(s.ctx, {2, 3, false, false, ""})), 0);
	EXPECT_EQ(s.slept, (std::vector<long>{2, 2}));
	ASSERT_EQ(exit_of(run_stats(s.ctx, {0, 0, true, false, ""})), 0);
	EXPECT_EQ(s.read("/sys/kernel/debug/zbatch/reset"), "1");
}

TEST(CmdStats, JsonWatchIsAStreamOfValidDocuments)
{
	FakeSystem s;
	s.load_module();
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_stats(s.ctx, {1, 2, false, false, ""})), 0);
	std::stringstream in(s.con.out);
	int docs = 0;
	while (in >> std::ws && !in.eof()) {
		Json j;
		ASSERT_NO_THROW(in >> j) << s.con.out;
		docs++;
	}
	EXPECT_EQ(docs, 2);
}

TEST(CmdValidate, ExitCodeFollowsTheChecks)
{
	FakeSystem s;
	s.load_module();
	ASSERT_EQ(exit_of(run_validate(s.ctx)), 0) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "ok ")) << s.con.out;
	s.tree.put("/sys/kernel/debug/zbatch/stats",
		   "compress_calls 10\ndecompress_calls 5\ncompletions 14\ntimeouts 1\n");
	s.con.out.clear();
	EXPECT_EQ(exit_of(run_validate(s.ctx)), kExitFailure);
	EXPECT_TRUE(contains(s.con.out, "FAIL")) << s.con.out;
	s.con.out.clear();
	s.ctx.json = true;
	EXPECT_EQ(exit_of(run_validate(s.ctx)), kExitFailure);
	auto j = parse_json(s.con.out);
	EXPECT_EQ(j["ok"], false);
	EXPECT_FALSE(j["checks"].empty());
}

TEST(CmdSelftest, SkipsPassesAndFails)
{
	FakeSystem s;
	EXPECT_EQ(exit_of(run_selftest(s.ctx)), kExitSkipped);
	s.load_module();
	s.tree.put("/sys/kernel/debug/zbatch/selftest", "");
	s.tree.put("/sys/kernel/debug/zbatch/selftest_results", "KTAP version 1\n1..2\nok 1 a\nok 2 b\n");
	EXPECT_EQ(exit_of(run_selftest(s.ctx)), 0);
	EXPECT_EQ(s.read("/sys/kernel/debug/zbatch/selftest"), "1");
	EXPECT_TRUE(contains(s.con.out, "ok 2 b"));
	s.tree.put("/sys/kernel/debug/zbatch/selftest_results", "KTAP version 1\n1..2\nok 1 a\nnot ok 2 b\n");
	EXPECT_EQ(exit_of(run_selftest(s.ctx)), kExitFailure);
}

TEST(CmdSelftest, JsonListsEveryTopLevelResult)
{
	FakeSystem s;
	s.load_module();
	s.ctx.json = true;
	s.tree.put("/sys/kernel/debug/zbatch/selftest", "");
	s.tree.put("/sys/kernel/debug/zbatch/selftest_results",
		   "KTAP version 1\n1..3\n    ok 1 sub\nok 1 round \"trip\"\nok 2 iaa # SKIP no device\n"
		   "not ok 3 stall\n");
	EXPECT_EQ(exit_of(run_selftest(s.ctx)), kExitFailure);
	auto j = parse_json(s.con.out);
	EXPECT_EQ(j["ok"], false);
	ASSERT_EQ(j["tests"].size(), 3u);
	EXPECT_EQ(j["tests"][0]["name"], "round \"trip\"");
	EXPECT_EQ(j["tests"][1]["skip"], true);
	EXPECT_EQ(j["tests"][1]["name"], "iaa");
	EXPECT_EQ(j["tests"][2]["ok"], false);
	EXPECT_EQ(j["tests"][2]["number"], 3);
}

// ---- bench ----

TEST(CmdBench, RowsPerCodecWithTheBaselineSideBySide)
{
	FakeSystem s;
	BenchOptions o;
	o.codecs = {"lz4"};
	o.batches = {16};
	o.pages = 32;
	o.rounds = 3;
	ASSERT_EQ(exit_of(run_bench(s.ctx, o)), 0) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "32 pages of 4096 bytes (mixed), 3 rounds")) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "lz4 ")) << s.con.out;
	// the fake: 2 batches of 16 take 2 x 2600 ns, one by one 2 x 16000 ns
	EXPECT_TRUE(contains(s.con.out, "6.15x")) << s.con.out;
	// per round: compress and decompress, batched and one by one, 2 submits each
	EXPECT_EQ(s.device.submits, 3u * 2 * 2 * 2);
}

TEST(CmdBench, EveryCodecByDefaultAndJson)
{
	FakeSystem s;
	s.ctx.json = true;
	BenchOptions o;
	o.quick = true;
	o.pages = 8;
	ASSERT_EQ(exit_of(run_bench(s.ctx, o)), 0);
	auto j = parse_json(s.con.out);
	ASSERT_EQ(j.size(), 8u);	// 4 codecs x (compress, decompress)
	EXPECT_EQ(j[0]["codec"], "deflate");
	EXPECT_EQ(j[7]["codec"], "lzo");
	EXPECT_GT(j[0]["speedup"].get<double>(), 1.0);
}

TEST(CmdBench, BadOptionsAndDeviceErrors)
{
	FakeSystem s;
	BenchOptions o;
	o.codecs = {"gzip"};
	auto r = run_bench(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "--codec: unknown codec 'gzip' (deflate, lz4, zstd, lzo)");
	o.codecs = {"lz4"};
	o.batches = {65};
	r = run_bench(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "--batch 65: must be 1..64");
	o.batches = {4};
	o.pages = 8;
	s.device_error = "cannot open /dev/zbatch: No such file or directory";
	r = run_bench(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, s.device_error);
	s.device_error.clear();
	s.device.fail_status = -EIO;
	r = run_bench(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_TRUE(contains(r.error().message, "compress of page 0 failed")) << r.error().message;
}

TEST(CmdBench, ModesAreRestoredAndBadModesRefused)
{
	FakeSystem s;
	s.load_module();
	BenchOptions o;
	o.codecs = {"lz4"};
	o.pages = 4;
	o.rounds = 1;
	o.modes = {"async_irq", "bogus"};
	auto r = run_bench(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "--mode bogus: not one of: sync, async, async_irq");
	EXPECT_EQ(s.device.submits, 0u) << "ran before every mode was checked";
	o.modes = {"async_irq", "async"};
	ASSERT_EQ(exit_of(run_bench(s.ctx, o)), 0);
	EXPECT_EQ(s.read("/sys/kernel/zbatch/sync_mode"), "sync");
	EXPECT_TRUE(contains(s.con.out, "sync_mode async_irq")) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "sync_mode async;")) << s.con.out;
	// a run that fails part-way puts the mode back too
	s.device.fail_status = -EIO;
	r = run_bench(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_EQ(s.read("/sys/kernel/zbatch/sync_mode"), "sync") << "left at " << o.modes[0];
}

TEST(CmdBench, ProgressOnlyOnATerminalAndNeverWhenQuiet)
{
	BenchOptions o;
	o.codecs = {"lz4"};
	o.pages = 4;
	o.rounds = 2;
	FakeSystem pipe;
	ASSERT_EQ(exit_of(run_bench(pipe.ctx, o)), 0);
	EXPECT_EQ(pipe.con.err, "");
	FakeSystem tty(Verbosity::Normal, true);
	ASSERT_EQ(exit_of(run_bench(tty.ctx, o)), 0);
	EXPECT_TRUE(contains(tty.con.err, "round 2/2")) << tty.con.err;
	FakeSystem quiet(Verbosity::Quiet, true);
	ASSERT_EQ(exit_of(run_bench(quiet.ctx, o)), 0);
	EXPECT_EQ(quiet.con.err, "");
}

// ---- swap ----

TEST(CmdSwap, ReportsAndVerifies)
{
	FakeSystem s;
	s.workload_result->elapsed_s = 2.5;
	s.workload_result->vmstat_delta["zswpout"] = 100;
	SwapOptions o;
	o.procs = 2;
	o.size = "8M";
	ASSERT_EQ(exit_of(run_swap(s.ctx, o)), 0);
	EXPECT_EQ(s.workload_cfg.procs, 2u);
	EXPECT_EQ(s.workload_cfg.bytes_per_proc, 8u << 20);
	EXPECT_EQ(s.workload_cfg.sysroot, s.tree.root().string());
	EXPECT_TRUE(contains(s.con.out, "2 process(es) x 8 MiB")) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "vmstat zswpout    +100")) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "verify: every byte intact")) << s.con.out;
	EXPECT_FALSE(s.workload_cfg.progress) << "progress without a terminal";
}

TEST(CmdSwap, BadBytesFailAndJsonIsValid)
{
	FakeSystem s;
	s.workload_result->bad_bytes = 7;
	s.tree.put("/sys/block/zram0/mm_stat", "1 2 \"3\"\n");
	s.ctx.json = true;
	SwapOptions o;
	o.snapshots = {"/sys/block/zram0/mm_stat"};
	EXPECT_EQ(exit_of(run_swap(s.ctx, o)), kExitFailure);
	auto j = parse_json(s.con.out);
	EXPECT_EQ(j["bad_bytes"], 7);
	EXPECT_EQ(j["snapshots"]["/sys/block/zram0/mm_stat"], "1 2 \"3\"");
}

TEST(CmdSwap, ErrorsNameTheOptionAtFault)
{
	FakeSystem s;
	SwapOptions o;
	o.size = "12Q";
	auto r = run_swap(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_TRUE(contains(r.error().message, "--size ")) << r.error().message;
	o.size = "1M";
	o.snapshots = {"/no/such/file"};
	r = run_swap(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_TRUE(contains(r.error().message, "--snapshot /no/such/file")) << r.error().message;
	o.snapshots.clear();
	s.workload_result = fail(EPERM, "cgroup zb: Permission denied");
	r = run_swap(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "cgroup zb: Permission denied");
}

TEST(CmdSwap, ProgressOnATerminal)
{
	FakeSystem s(Verbosity::Normal, true);
	ASSERT_EQ(exit_of(run_swap(s.ctx, {})), 0);
	EXPECT_TRUE(contains(s.con.err, "zswpout         10")) << s.con.err;
	EXPECT_TRUE(s.con.err.ends_with("\n"));
}

// ---- dev ----

namespace {

// Device @id as the module lists it: 1 MiB, @codec and @unit choice lines.
void list_device(FakeSystem &s, int id, const char *codec, const char *unit)
{
	const std::string dir = "/sys/block/zbatchswap" + std::to_string(id) + "/zbatch/";
	s.tree.put(dir + "disksize", "1048576\n");
	s.tree.put(dir + "codec", std::string(codec) + "\n");
	s.tree.put(dir + "unit", std::string(unit) + "\n");
}

} // namespace

TEST(CmdDev, CreateWritesTheSettings)
{
	FakeSystem s;
	s.load_module();
	s.tree.put("/sys/kernel/zbatch/swapdev/hot_add", "3\n");
	s.tree.put("/sys/block/zbatchswap3/zbatch/codec", "");
	s.tree.put("/sys/block/zbatchswap3/zbatch/unit", "");
	s.tree.put("/sys/block/zbatchswap3/zbatch/disksize", "");
	ASSERT_EQ(exit_of(run_dev_create(s.ctx, {"1G", "zstd", "16k", -1, false, 100, false})), 0);
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/codec"), "zstd");
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/unit"), "16k");
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/disksize"), "1073741824");
	EXPECT_TRUE(contains(s.con.out, "/dev/zbatchswap3: 1073741824 bytes, zstd, 16k units"))
		<< s.con.out;
	s.con.out.clear();
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_dev_create(s.ctx, {"1G", "lz4", "4k", -1, false, 100, false})), 0);
	EXPECT_EQ(parse_json(s.con.out)["device"], "/dev/zbatchswap3");
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/algorithm_params"), "<unreadable>")
		<< "the default level writes nothing (a module without levels still works)";
}

TEST(CmdDev, CreateWithALevel)
{
	FakeSystem s;
	s.load_module();
	s.tree.put("/sys/kernel/zbatch/swapdev/hot_add", "3\n");
	for (const char *f : {"codec", "unit", "disksize", "algorithm_params"})
		s.tree.put(std::string("/sys/block/zbatchswap3/zbatch/") + f, "");
	DevOptions o{"1G", "zstd", "16k"};
	o.level = 9;
	ASSERT_EQ(exit_of(run_dev_create(s.ctx, o)), 0);
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/algorithm_params"), "level=9");
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/disksize"), "1073741824");
	EXPECT_TRUE(contains(s.con.out, "zstd:9, 16k units")) << s.con.out;
	// refused before anything is written: out of range, a codec without levels
	s.tree.put("/sys/kernel/zbatch/swapdev/hot_add", "4\n");
	s.tree.put("/sys/block/zbatchswap4/zbatch/codec", "");
	o.level = 23;
	auto r = run_dev_create(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "--level 23: zstd levels are -131072 to 22 (negative: "
				     "faster; 0: the default, 3)");
	o.level = 9;
	o.unit = "64k";
	r = run_dev_create(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().code, E2BIG);
	o.unit = "16k";
	o.codec = "lzo";
	o.level = 1;
	r = run_dev_create(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "--level 1: lzo has no compression levels");
	EXPECT_EQ(s.read("/sys/block/zbatchswap4/zbatch/codec"), "") << "no device configured";
	// listed with its level
	list_device(s, 3, "deflate lz4 [zstd] lzo", "4k [16k] 64k");
	s.tree.put("/sys/block/zbatchswap3/zbatch/algorithm_params", "algo=zstd level=9\n");
	s.con.out.clear();
	ASSERT_EQ(exit_of(run_dev_list(s.ctx)), 0);
	EXPECT_TRUE(contains(s.con.out, "zstd:9")) << s.con.out;
	s.con.out.clear();
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_dev_list(s.ctx)), 0);
	EXPECT_EQ(parse_json(s.con.out)[0]["level"], 9) << s.con.out;
}

// An older module without algorithm_params: a level is refused naming why
// and the device is removed again; without --level nothing changes.
TEST(CmdDev, CreateWithALevelOnAModuleWithoutLevels)
{
	FakeSystem s;
	s.load_module();
	s.tree.put("/sys/kernel/zbatch/swapdev/hot_add", "3\n");
	for (const char *f : {"codec", "unit", "disksize"})
		s.tree.put(std::string("/sys/block/zbatchswap3/zbatch/") + f, "");
	DevOptions o{"1G", "zstd", "16k"};
	o.level = 9;
	auto r = run_dev_create(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "zbatchswap3: the loaded zbatch has no compression levels "
				     "(algorithm_params): load this version's module");
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "3");
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/disksize"), "") << "never sized";
}

TEST(CmdDev, CreateRefusesBadSettingsBeforeTouchingSysfs)
{
	FakeSystem s;
	s.load_module();
	auto r = run_dev_create(s.ctx, {"1G", "gzip", "4k", -1, false, 100, false});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "--codec gzip: one of deflate, lz4, zstd, lzo");
	r = run_dev_create(s.ctx, {"1G", "lz4", "8k", -1, false, 100, false});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "--unit 8k: one of 4k, 16k, 64k");
	r = run_dev_create(s.ctx, {"lots", "lz4", "4k", -1, false, 100, false});
	ASSERT_FALSE(r);
	EXPECT_TRUE(contains(r.error().message, "--size ")) << r.error().message;
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_add"), "0");
}

TEST(CmdDev, ListAndDestroy)
{
	FakeSystem s;
	EXPECT_EQ(exit_of(run_dev_list(s.ctx)), kExitSkipped);
	s.load_module();
	ASSERT_EQ(exit_of(run_dev_list(s.ctx)), 0);
	EXPECT_TRUE(contains(s.con.out, "no zbatch swap device")) << s.con.out;
	list_device(s, 0, "deflate [lz4] zstd lzo", "[4k] 16k 64k");
	s.tree.put("/proc/swaps", "Filename Type Size Used Priority\n/dev/zbatchswap0 partition 1024 0 100\n");
	s.con.out.clear();
	ASSERT_EQ(exit_of(run_dev_list(s.ctx)), 0);
	EXPECT_TRUE(contains(s.con.out, "zbatchswap0")) << s.con.out;
	auto r = run_dev_destroy(s.ctx, 0);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().code, EBUSY);
	EXPECT_TRUE(contains(r.error().message, "swapoff /dev/zbatchswap0")) << r.error().message;
	s.tree.put("/proc/swaps", "Filename Type Size Used Priority\n");
	ASSERT_EQ(exit_of(run_dev_destroy(s.ctx, 0)), 0);
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "0");
	r = run_dev_destroy(s.ctx, 5);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().code, ENODEV);
}

// ---- recompression: dev create's settings, dev recompress, dev list ----

TEST(CmdDev, CreateWithRecompression)
{
	FakeSystem s;
	s.load_module();
	s.tree.put("/sys/kernel/zbatch/swapdev/hot_add", "3\n");
	const std::string dir = "/sys/block/zbatchswap3/zbatch/";
	for (const char *f : {"codec", "unit", "disksize", "recomp_algorithm", "recomp_budget",
			      "recomp_interval"})
		s.tree.put(dir + f, "");
	DevOptions o{"1G", "lz4", "16k"};
	o.recomp_codec = "zstd";
	o.recomp_level = 9;
	o.recomp_budget = 10;
	o.recomp_interval = 5;
	ASSERT_EQ(exit_of(run_dev_create(s.ctx, o)), 0);
	EXPECT_EQ(s.read(dir + "recomp_algorithm"), "algo=zstd level=9");
	EXPECT_EQ(s.read(dir + "recomp_budget"), "10");
	EXPECT_EQ(s.read(dir + "recomp_interval"), "5");
	EXPECT_TRUE(contains(s.con.out, "/dev/zbatchswap3: 1073741824 bytes, lz4, 16k units, "
				       "recompression zstd:9 (background 10% of a CPU every 5 s)\n"))
		<< s.con.out;
	// refused before anything is made, naming the option
	s.tree.put("/sys/kernel/zbatch/swapdev/hot_add", "4\n");
	s.tree.put("/sys/block/zbatchswap4/zbatch/codec", "");
	DevOptions bad{"1G", "lz4", "16k"};
	bad.recomp_level = 9;
	auto r = run_dev_create(s.ctx, bad);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "--recomp-level needs --recomp-algorithm (the secondary codec "
				     "recompression uses)");
	bad.recomp_codec = "brotli";
	r = run_dev_create(s.ctx, bad);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "--recomp-algorithm brotli: one of deflate, lz4, zstd, lzo");
	// its own codec at the same level (lz4's default given as 1): nothing to gain
	bad.recomp_codec = "lz4";
	bad.recomp_level = 1;
	r = run_dev_create(s.ctx, bad);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().code, EINVAL);
	EXPECT_TRUE(r.error().message.starts_with("--recomp-algorithm lz4: the device's own codec "
						  "at the same level"))
		<< r.error().message;
	bad.recomp_level = 9;
	bad.recomp_codec = "zstd";
	bad.unit = "64k";
	r = run_dev_create(s.ctx, bad);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().code, E2BIG);
	EXPECT_TRUE(r.error().message.starts_with("--recomp-level 9: zstd levels above 3"))
		<< r.error().message;
	EXPECT_EQ(s.read("/sys/block/zbatchswap4/zbatch/codec"), "") << "no device configured";
	// a module without recompression: named, the device removed again
	s.tree.put("/sys/block/zbatchswap4/zbatch/unit", "");
	s.tree.put("/sys/block/zbatchswap4/zbatch/disksize", "");
	DevOptions old{"1G", "lz4", "4k"};
	old.recomp_codec = "zstd";
	r = run_dev_create(s.ctx, old);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "zbatchswap4: the loaded zbatch has no recompression "
				     "(recomp_algorithm): load this version's module");
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "4");
	EXPECT_EQ(s.read("/sys/block/zbatchswap4/zbatch/disksize"), "") << "never sized";
}

// The budget and interval through the parser: its ranges name the option.
TEST(CmdDev, CreateRefusesABudgetOrIntervalOutOfRange)
{
	for (const auto &[args, opt] :
	     std::vector<std::pair<std::vector<std::string>, std::string>>{
		     {{"--recomp-budget", "101"}, "--recomp-budget"},
		     {{"--recomp-budget", "-1"}, "--recomp-budget"},
		     {{"--recomp-interval", "0"}, "--recomp-interval"},
		     {{"--recomp-interval", "86401"}, "--recomp-interval"}}) {
		CLI::App app;
		Action action;
		add_dev(app, action);
		std::vector<std::string> argv = {"dev", "create", "--size", "1G",
						 "--recomp-algorithm", "zstd"};
		argv.insert(argv.end(), args.begin(), args.end());
		std::reverse(argv.begin(), argv.end());	// CLI11 takes them last first
		try {
			app.parse(argv);
			ADD_FAILURE() << args[0] << " " << args[1] << " was taken";
		} catch (const CLI::ParseError &e) {
			EXPECT_TRUE(contains(e.what(), opt)) << e.what();
		}
	}
}

TEST(CmdDev, ListShowsRecompression)
{
	FakeSystem s;
	s.load_module();
	list_device(s, 0, "deflate [lz4] zstd lzo", "4k [16k] 64k");
	const std::string dir = "/sys/block/zbatchswap0/zbatch/";
	s.tree.put(dir + "recomp_algorithm", "#1: deflate lz4 [zstd] lzo\n");
	s.tree.put(dir + "algorithm_params", "algo=lz4 level=0\nalgo=zstd level=9 priority=1\n");
	s.tree.put(dir + "recomp_budget", "10\n");
	s.tree.put(dir + "recomp_interval", "5\n");
	s.tree.put(dir + "recomp_stat", "     100      150      110       40   409600  2000000\n");
	s.tree.put(dir + "unit_stat", "units 3\nsecondary_reads 7\n");
	ASSERT_EQ(exit_of(run_dev_list(s.ctx)), 0);
	EXPECT_TRUE(contains(s.con.out, "zbatchswap0  ")) << s.con.out;
	EXPECT_TRUE(contains(s.con.out, " lz4  ")) << "the primary's level is 0: " << s.con.out;
	EXPECT_TRUE(contains(s.con.out, "\n  recompression with zstd:9, background 10% of a CPU "
				       "every 5 s: 100 pages stored so now, 7 reads decompressed "
				       "with it; ever: 150 tried, 110 recompressed, 40 "
				       "incompressible, 0.4M saved, 0.002 s of CPU\n"))
		<< s.con.out;
	s.con.out.clear();
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_dev_list(s.ctx)), 0);
	auto j = parse_json(s.con.out)[0];
	EXPECT_EQ(j["level"], 0) << j;
	EXPECT_EQ(j["recomp_algorithm"], "zstd") << j;
	EXPECT_EQ(j["recomp_level"], 9) << j;
	EXPECT_EQ(j["recomp_budget"], 10) << j;
	EXPECT_EQ(j["recomp_interval"], 5) << j;
	EXPECT_EQ(j["recomp_recompressed"], 110) << j;
	EXPECT_EQ(j["recomp_saved_bytes"], 409600) << j;
	EXPECT_EQ(j["secondary_reads"], 7) << j;
	// zbatch stats: a line per device with a secondary codec, under its table
	s.ctx.json = false;
	s.con.out.clear();
	ASSERT_EQ(exit_of(run_stats(s.ctx, {})), 0);
	EXPECT_TRUE(contains(s.con.out, "\n  zbatchswap0 recompression with zstd:9, background 10% "
				       "of a CPU every 5 s: 100 pages")) << s.con.out;
	// none set: no line
	s.tree.put(dir + "recomp_algorithm", "");
	s.con.out.clear();
	ASSERT_EQ(exit_of(run_dev_list(s.ctx)), 0);
	EXPECT_FALSE(contains(s.con.out, "recompression")) << s.con.out;
}

TEST(CmdDev, RecompressAndWritebackIncompressible)
{
	FakeSystem s;
	s.load_module();
	list_device(s, 0, "deflate [lz4] zstd lzo", "[4k] 16k 64k");
	const std::string dir = "/sys/block/zbatchswap0/zbatch/";
	auto r = run_dev_recompress(s.ctx, 0, {});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "zbatchswap0: the loaded zbatch has no recompression "
				     "(recompress): load this version's module");
	s.tree.put(dir + "recompress", "");
	s.tree.put(dir + "recomp_algorithm", "#1: deflate lz4 [zstd] lzo\n");
	s.tree.put(dir + "recomp_stat", "      20       30       20       10    40960  1000000\n");
	ASSERT_EQ(exit_of(run_dev_recompress(s.ctx, 0, {"idle", 500, 2000})), 0);
	EXPECT_EQ(s.read(dir + "recompress"), "type=idle max_pages=500 threshold=2000");
	// the fake's recomp_stat stays as it is: nothing done by this run
	EXPECT_EQ(s.con.out, "zbatchswap0: 0 pages tried (idle), 0 recompressed (0 bytes saved), "
			     "0 incompressible; 20 pages stored with zstd now\n");
	s.con.out.clear();
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_dev_recompress(s.ctx, 0, {})), 0);
	EXPECT_EQ(s.read(dir + "recompress"), "") << "every page: an empty line";
	auto j = parse_json(s.con.out);
	EXPECT_EQ(j["device"], "zbatchswap0");
	EXPECT_TRUE(j["type"].is_null()) << j;
	EXPECT_EQ(j["tried"], 0);
	EXPECT_EQ(j["recomp_pages"], 20);
	r = run_dev_recompress(s.ctx, 0, {"all"});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().exit, 1);
	EXPECT_TRUE(contains(r.error().message, "--type all: one of idle, huge, huge_idle"))
		<< r.error().message;
	EXPECT_EQ(exit_of(run_dev_recompress(s.ctx, 7, {})), 1) << "no such device";
	// pages recompression could not shrink, to the writeback device
	s.tree.put(dir + "writeback", "");
	s.con.out.clear();
	ASSERT_EQ(exit_of(run_dev_writeback(s.ctx, 0, "incompressible")), 0);
	EXPECT_EQ(s.read(dir + "writeback"), "incompressible");
	EXPECT_EQ(parse_json(s.con.out)["mode"], "incompressible");
}

// dev idle: every page ("all"), or by age (zram's "idle N"), said in the
// output and in JSON.
TEST(CmdDev, IdleAllOrByAge)
{
	FakeSystem s;
	s.load_module();
	list_device(s, 0, "deflate [lz4] zstd lzo", "[4k] 16k 64k");
	const std::string dir = "/sys/block/zbatchswap0/zbatch/";
	s.tree.put(dir + "idle", "");
	ASSERT_EQ(exit_of(run_dev_idle(s.ctx, 0, -1)), 0);
	EXPECT_EQ(s.read(dir + "idle"), "all");
	EXPECT_NE(s.con.out.find("every page in memory marked idle"), std::string::npos)
		<< s.con.out;
	s.con.out.clear();
	ASSERT_EQ(exit_of(run_dev_idle(s.ctx, 0, 3600)), 0);
	EXPECT_EQ(s.read(dir + "idle"), "3600");
	EXPECT_NE(s.con.out.find("not written or read in the last 3600 s marked idle"),
		  std::string::npos) << s.con.out;
	s.con.out.clear();
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_dev_idle(s.ctx, 0, 0)), 0);
	EXPECT_EQ(s.read(dir + "idle"), "0");
	auto j = parse_json(s.con.out);
	EXPECT_EQ(j["idle"], "zbatchswap0");
	EXPECT_EQ(j["age_s"], 0);
}

// ---- dev create --swap, dev setup / teardown (the configuration file) ----

namespace {

// A module whose next device is zbatchswap3, and 8 GiB of RAM.
void device_three(FakeSystem &s)
{
	s.load_module();
	s.tree.put("/sys/kernel/zbatch/swapdev/hot_add", "3\n");
	for (const char *f : {"codec", "unit", "disksize", "mem_limit"})
		s.tree.put(std::string("/sys/block/zbatchswap3/zbatch/") + f, "");
	s.tree.put("/proc/meminfo", "MemTotal:        8388608 kB\n");
}

} // namespace

TEST(CmdDev, CreateSwapFormatsAndSwapsOn)
{
	FakeSystem s;
	device_three(s);
	DevOptions o{"1G", "lz4", "16k", -1, false, 100, false};
	o.swap = true;
	o.priority = 7;
	o.discard = true;
	ASSERT_EQ(exit_of(run_dev_create(s.ctx, o)), 0);
	auto node = (s.tree.root() / "dev/zbatchswap3").string();
	ASSERT_EQ(s.swap.calls.size(), 2u);
	EXPECT_EQ(s.swap.calls[0], "format " + node + " 1073741824");
	EXPECT_EQ(s.swap.calls[1], "enable " + node + " 7 discard");
	EXPECT_TRUE(contains(s.con.out, "swap on with priority 7")) << s.con.out;
	// swapon refused: the device is destroyed again, the error says why
	s.swap.calls.clear();
	s.swap.enable_result = zbatch::fail(EINVAL, "swapon /dev/zbatchswap3: Invalid argument");
	auto r = run_dev_create(s.ctx, o);
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "swapon /dev/zbatchswap3: Invalid argument");
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "3");
	// not root: nothing created
	s.root = false;
	s.tree.put("/sys/kernel/zbatch/swapdev/hot_remove", "");
	EXPECT_EQ(exit_of(run_dev_create(s.ctx, o)), kExitSkipped);
}

TEST(CmdDev, SetupCreatesEachDeviceAndTeardownRemovesIt)
{
	FakeSystem s;
	device_three(s);
	s.modules.mods.clear();		// not loaded: setup loads it
	s.tree.put("/etc/zbatch/swap.conf", "[main]\nsize = 25%\ncodec = zstd\nunit = 16k\n"
					    "priority = 50\nmem-limit = 10%\nunit-adapt = no\n");
	s.tree.put("/sys/block/zbatchswap3/zbatch/unit_adapt", "1\n");
	SetupOptions o{"/etc/zbatch/swap.conf", true};
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, o)), 0);
	EXPECT_TRUE(contains(s.con.out, "would set up [main] 2147483648 bytes, zstd, 16k units, "
				       "priority 50, mem_limit 858992640, unit_adapt 0")) << s.con.out;
	EXPECT_TRUE(s.swap.calls.empty()) << "a dry run formatted something";
	EXPECT_TRUE(s.modules.loads.empty()) << "a dry run loaded the module";
	o.dry_run = false;
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, o)), 0);
	ASSERT_EQ(s.modules.loads.size(), 1u);
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/disksize"), "2147483648");
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/mem_limit"), "858992640");
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/unit_adapt"), "0");
	ASSERT_EQ(s.swap.calls.size(), 2u);
	EXPECT_TRUE(s.swap.calls[1].ends_with(" 50")) << s.swap.calls[1];
	EXPECT_EQ(s.read("/run/zbatch/swap.state"), "main 3 uuid-1");
	// set up again while it is swapped on: left alone
	s.tree.put("/proc/swaps", "Filename Type Size Used Priority\n"
				  "/dev/zbatchswap3 partition 1024 0 50\n");
	s.swap.calls.clear();
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, o)), 0);
	EXPECT_TRUE(s.swap.calls.empty());
	EXPECT_TRUE(contains(s.con.out, "[main] already set up: /dev/zbatchswap3")) << s.con.out;
	// teardown: swapoff, destroy, forget
	s.swap.after_disable = [&s] {
		s.tree.put("/proc/swaps", "Filename Type Size Used Priority\n");
	};
	ASSERT_EQ(exit_of(run_dev_teardown(s.ctx)), 0);
	ASSERT_EQ(s.swap.calls.size(), 1u);
	EXPECT_TRUE(s.swap.calls[0].starts_with("disable ")) << s.swap.calls[0];
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "3");
	EXPECT_EQ(s.read("/run/zbatch/swap.state"), "");
	s.con.out.clear();
	ASSERT_EQ(exit_of(run_dev_teardown(s.ctx)), 0);
	EXPECT_TRUE(contains(s.con.out, "nothing to tear down")) << s.con.out;
}

// swap.conf's writeback-device reaches backing_dev, before the size
TEST(CmdDev, SetupSetsTheWritebackDevice)
{
	FakeSystem s;
	device_three(s);
	s.tree.put("/etc/zbatch/swap.conf", "[wb]\nsize = 1G\nunit = 16k\n"
					    "writeback-device = /dev/vdb\n");
	s.tree.put("/sys/block/zbatchswap3/zbatch/backing_dev", "none\n");
	SetupOptions o{"/etc/zbatch/swap.conf", true};
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, o)), 0);
	EXPECT_TRUE(contains(s.con.out, ", writeback to /dev/vdb")) << s.con.out;
	o.dry_run = false;
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, o)), 0);
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/backing_dev"), "/dev/vdb");
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/disksize"), "1073741824");
}

// swap.conf's recompression keys: shown by --dry-run, written around the size
TEST(CmdDev, SetupSetsRecompression)
{
	FakeSystem s;
	device_three(s);
	s.tree.put("/etc/zbatch/swap.conf", "[rc]\nsize = 1G\nrecomp-algorithm = zstd\n"
					    "recomp-level = 7\nrecomp-budget = 5\n");
	const std::string dir = "/sys/block/zbatchswap3/zbatch/";
	for (const char *f : {"recomp_algorithm", "recomp_budget", "recomp_interval"})
		s.tree.put(dir + f, "");
	SetupOptions o{"/etc/zbatch/swap.conf", true};
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, o)), 0);
	EXPECT_TRUE(contains(s.con.out, ", recompression zstd:7 (background 5% of a CPU)\n"))
		<< s.con.out;
	s.con.out.clear();
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, o)), 0);
	auto j = parse_json(s.con.out)[0];
	EXPECT_EQ(j["recomp_algorithm"], "zstd") << j;
	EXPECT_EQ(j["recomp_level"], 7) << j;
	EXPECT_EQ(j["recomp_budget"], 5) << j;
	EXPECT_TRUE(j["recomp_interval"].is_null()) << j;
	s.ctx.json = false;
	o.dry_run = false;
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, o)), 0);
	EXPECT_EQ(s.read(dir + "recomp_algorithm"), "algo=zstd level=7");
	EXPECT_EQ(s.read(dir + "recomp_budget"), "5");
	EXPECT_EQ(s.read(dir + "recomp_interval"), "") << "not set: the module's default";
	EXPECT_EQ(s.read(dir + "disksize"), "1073741824");
	// --dry-run catches what the module would refuse
	s.tree.put("/etc/zbatch/swap.conf", "[rc]\nsize = 1G\nunit = 64k\n"
					    "recomp-algorithm = zstd\nrecomp-level = 9\n");
	auto r = run_dev_setup(s.ctx, {"/etc/zbatch/swap.conf", true});
	ASSERT_FALSE(r);
	EXPECT_TRUE(r.error().message.starts_with("/etc/zbatch/swap.conf:5: key 'recomp-level': "
						  "zstd levels above 3")) << r.error().message;
}

TEST(CmdDev, SetupAndTeardownFailuresNameTheDeviceAndKeepTheState)
{
	FakeSystem s;
	device_three(s);
	s.tree.put("/etc/zbatch/swap.conf", "[main]\nsize = 1G\n");
	s.swap.format_result = zbatch::fail(EBUSY, "/dev/zbatchswap3: cannot open to format");
	auto r = run_dev_setup(s.ctx, {"/etc/zbatch/swap.conf", false});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "/etc/zbatch/swap.conf: 1 of 1 devices not set up:\n"
				     "  [main] (line 1): /dev/zbatchswap3: cannot open to format");
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "3") << "left half set up";
	s.swap.format_result = {};
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, {"/etc/zbatch/swap.conf", false})), 0);
	s.tree.put("/proc/swaps", "Filename Type Size Used Priority\n"
				  "/dev/zbatchswap3 partition 1024 0 100\n");
	s.swap.disable_result = zbatch::fail(ENOMEM, "swapoff /dev/zbatchswap3: Cannot allocate "
						     "memory");
	r = run_dev_teardown(s.ctx);
	ASSERT_FALSE(r);
	EXPECT_TRUE(contains(r.error().message, "[main] /dev/zbatchswap3: swapoff")) << r.error().message;
	EXPECT_EQ(s.read("/run/zbatch/swap.state"), "main 3 uuid-1") << "forgot a device still there";
	// a bad file: named, nothing done
	s.tree.put("/etc/zbatch/swap.conf", "[main]\nsize = lots\n");
	r = run_dev_setup(s.ctx, {"/etc/zbatch/swap.conf", false});
	ASSERT_FALSE(r);
	EXPECT_TRUE(r.error().message.starts_with("/etc/zbatch/swap.conf:2: key 'size'"))
		<< r.error().message;
	r = run_dev_setup(s.ctx, {"/etc/zbatch/none.conf", false});
	ASSERT_FALSE(r);
	EXPECT_TRUE(r.error().message.starts_with("/etc/zbatch/none.conf: cannot read"))
		<< r.error().message;
}

// Two devices, the second failing: the first is set up and recorded, the
// second removed again, the error names only it.
TEST(CmdDev, SetupOfTwoDevicesWhereOneFails)
{
	FakeSystem s;
	device_three(s);
	s.tree.put("/etc/zbatch/swap.conf", "[a]\nsize = 1G\n\n[b]\nsize = 2G\ncodec = zstd\n");
	// once the first device is formatted, the module's next is zbatchswap4,
	// and formatting it fails
	s.swap.after_format = [&s](const std::string &dev) {
		if (!dev.ends_with("/dev/zbatchswap3"))	// under the fake root
			return;
		s.tree.put("/sys/kernel/zbatch/swapdev/hot_add", "4\n");
		for (const char *f : {"codec", "unit", "disksize", "mem_limit"})
			s.tree.put(std::string("/sys/block/zbatchswap4/zbatch/") + f, "");
		s.swap.format_result = zbatch::fail(EIO, "/dev/zbatchswap4: write error");
	};
	auto r = run_dev_setup(s.ctx, {"/etc/zbatch/swap.conf", false});
	ASSERT_FALSE(r) << s.con.out << s.con.err << ::testing::PrintToString(s.swap.calls);
	EXPECT_EQ(r.error().message, "/etc/zbatch/swap.conf: 1 of 2 devices not set up:\n"
				     "  [b] (line 4): /dev/zbatchswap4: write error");
	EXPECT_EQ(s.read("/sys/block/zbatchswap3/zbatch/disksize"), "1073741824");
	EXPECT_EQ(s.read("/sys/block/zbatchswap4/zbatch/codec"), "zstd");
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "4") << "[b] left half set up";
	EXPECT_EQ(s.read("/run/zbatch/swap.state"), "a 3 uuid-1") << "[a] not recorded";
	ASSERT_EQ(s.swap.calls.size(), 3u);
	EXPECT_TRUE(s.swap.calls[1].ends_with("/dev/zbatchswap3 100")) << s.swap.calls[1];
	EXPECT_TRUE(s.swap.calls[2].ends_with("/dev/zbatchswap4 2147483648")) << s.swap.calls[2];
}

// Device numbers are reused: a device setup made, destroyed by hand and
// its number taken by another, is not torn down (its swap header's UUID
// differs); dev destroy forgets what it destroys.
TEST(CmdDev, TeardownLeavesADeviceThatIsNoLongerOurs)
{
	FakeSystem s;
	device_three(s);
	s.tree.put("/etc/zbatch/swap.conf", "[main]\nsize = 1G\n");
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, {"/etc/zbatch/swap.conf", false})), 0);
	auto node = (s.tree.root() / "dev/zbatchswap3").string();
	s.swap.uuids[node] = "someone-else";
	s.swap.calls.clear();
	ASSERT_EQ(exit_of(run_dev_teardown(s.ctx)), 0);
	EXPECT_TRUE(s.swap.calls.empty());
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "") << "destroyed another's device";
	EXPECT_TRUE(contains(s.con.out, "no longer the device setup made")) << s.con.out;
	EXPECT_EQ(s.read("/run/zbatch/swap.state"), "");
	// setup again: a new device, the other left as it is
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, {"/etc/zbatch/swap.conf", false})), 0);
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "");
	EXPECT_EQ(s.read("/run/zbatch/swap.state"), "main 3 uuid-2");
	ASSERT_EQ(exit_of(run_dev_destroy(s.ctx, 3)), 0);
	EXPECT_EQ(s.read("/run/zbatch/swap.state"), "") << "dev destroy kept it";
}

// At shutdown systemd swaps the device off too (its .swap unit): swapoff's
// EINVAL is not a failure, teardown waits for the device to leave.
TEST(CmdDev, TeardownToleratesAConcurrentSwapoff)
{
	FakeSystem s;
	device_three(s);
	s.tree.put("/etc/zbatch/swap.conf", "[main]\nsize = 1G\n");
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, {"/etc/zbatch/swap.conf", false})), 0);
	s.tree.put("/proc/swaps", "Filename Type Size Used Priority\n"
				  "/dev/zbatchswap3 partition 1024 0 100\n");
	s.swap.disable_result = zbatch::fail(EINVAL, "swapoff: Invalid argument");
	s.ctx.sleep = [&s](std::chrono::seconds) {	// the other swapoff ends
		s.tree.put("/proc/swaps", "Filename Type Size Used Priority\n");
	};
	ASSERT_EQ(exit_of(run_dev_teardown(s.ctx)), 0);
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "3");
	EXPECT_EQ(s.read("/run/zbatch/swap.state"), "");
}

TEST(CmdDev, SetupChecksSizesAndPrintsOnlyJsonWithJson)
{
	FakeSystem s;
	device_three(s);
	s.tree.put("/etc/zbatch/swap.conf", "[main]\ncodec = lz4\nsize = 2T\n");
	auto r = run_dev_setup(s.ctx, {"/etc/zbatch/swap.conf", true});
	ASSERT_FALSE(r);
	EXPECT_EQ(r.error().message, "/etc/zbatch/swap.conf:3: key 'size': 2199023255552 bytes: a "
				     "device takes 40k to 1T");
	s.tree.put("/etc/zbatch/swap.conf", "[main]\nsize = 10%\n");
	s.ctx.json = true;
	ASSERT_EQ(exit_of(run_dev_setup(s.ctx, {"/etc/zbatch/swap.conf", false})), 0);
	auto j = parse_json(s.con.out);
	ASSERT_TRUE(j.is_array()) << s.con.out;
	EXPECT_EQ(j[0]["device"], "/dev/zbatchswap3");
	s.tree.put("/proc/swaps", "Filename Type Size Used Priority\n");
	s.con.out.clear();
	ASSERT_EQ(exit_of(run_dev_teardown(s.ctx)), 0);
	EXPECT_EQ(parse_json(s.con.out)[0]["section"], "main") << s.con.out;
}

// A state file of an older zbatch ("NAME ID", no UUID): its devices are
// still torn down; a swap header that cannot be read keeps the entry.
TEST(CmdDev, TeardownKeepsWhatItCannotCheck)
{
	FakeSystem s;
	device_three(s);
	s.tree.put("/run/zbatch/swap.state", "main 3\n");
	s.tree.put("/sys/block/zbatchswap3/zbatch/disksize", "1048576\n");
	ASSERT_EQ(exit_of(run_dev_teardown(s.ctx)), 0);
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "3");
	EXPECT_EQ(s.read("/run/zbatch/swap.state"), "");
	s.tree.put("/sys/kernel/zbatch/swapdev/hot_remove", "");
	s.tree.put("/run/zbatch/swap.state", "main 3 uuid-9\n");
	s.swap.uuid_error = zbatch::fail(EIO, "/dev/zbatchswap3: cannot read its first page");
	auto r = run_dev_teardown(s.ctx);
	ASSERT_FALSE(r);
	EXPECT_TRUE(contains(r.error().message, "cannot read its first page")) << r.error().message;
	EXPECT_EQ(s.read("/run/zbatch/swap.state"), "main 3 uuid-9");
	EXPECT_EQ(s.read("/sys/kernel/zbatch/swapdev/hot_remove"), "");
}
