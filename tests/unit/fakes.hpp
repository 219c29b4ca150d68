// SPDX-License-Identifier: GPL-2.0
// Fakes of everything a command touches (zbatch/context.hpp), so that every
// subcommand's logic, output and exit codes are tested on the host:
// FakeSystem holds a fake sysfs tree, a captured console and a Context
// wired to FakeModules, FakeAccel, FakeDevice and a scripted workload.
#pragma once

#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "fake_tree.hpp"
#include "zbatch/context.hpp"

// The module loader: which modules are loaded, what load() was asked.
class FakeModules : public zbatch::Modules {
public:
	std::set<std::string> mods;
	std::map<std::string, int> refs;
	std::vector<std::string> holder_list;
	std::vector<std::pair<std::string, std::string>> loads;	// module, params
	zbatch::Result<void> load_result;

	bool loaded(const std::string &name) override { return mods.count(name); }
	zbatch::Result<void> load(const std::string &module, const std::string &params) override
	{
		loads.emplace_back(module, params);
		if (load_result)
			mods.insert("zbatch");
		return load_result;
	}
	zbatch::Result<void> unload(const std::string &name) override
	{
		mods.erase(name);
		return {};
	}
	int refcount(const std::string &name) override { return refs.count(name) ? refs[name] : 0; }
	std::vector<std::string> holders(const std::string &) override { return holder_list; }
};

// IAA devices as libaccel-config would list them; every call recorded.
class FakeAccel : public zbatch::AccelConfig {
public:
	std::vector<zbatch::IaaDevice> devs;
	zbatch::Result<std::vector<zbatch::IaaDevice>> devices_error;	// used when set to an error
	std::vector<std::string> calls;
	std::string fail_call;	// a call (as recorded in calls) that fails

	zbatch::Result<void> record(std::string call)
	{
		calls.push_back(call);
		if (call == fail_call)
			return zbatch::fail(EIO, call + ": failed (FakeAccel)");
		return {};
	}

	zbatch::Result<std::vector<zbatch::IaaDevice>> devices() override
	{
		if (!devices_error)
			return devices_error;
		return devs;
	}
	zbatch::Result<void> configure_wq(const std::string &d, const std::string &w,
					  const zbatch::WqSettings &s) override
	{
		return record("configure " + d + "/" + w + " " + s.mode);
	}
	zbatch::Result<void> engines_to_group(const std::string &d, int g) override
	{
		return record("engines " + d + " " + std::to_string(g));
	}
	zbatch::Result<void> enable_device(const std::string &d) override
	{
		return record("enable " + d);
	}
	zbatch::Result<void> enable_wq(const std::string &d, const std::string &w) override
	{
		return record("enable " + d + "/" + w);
	}
	zbatch::Result<void> disable_wq(const std::string &d, const std::string &w) override
	{
		return record("disable " + d + "/" + w);
	}
};

// /dev/zbatch without a kernel: "compresses" by copying, and reports kernel
// time as a device that overlaps a batch would: batched, 1000 ns per
// submit plus 100 per request; one by one, 1000 ns per request.
class FakeDevice : public zbatch::BatchDevice {
public:
	mutable unsigned int submits = 0;
	int fail_status = 0;	// every request's status when not 0

	zbatch::Result<zbatch_ioc_info> info() const override { return zbatch_ioc_info{}; }
	zbatch::Result<zbatch::BatchResult> submit(enum zbatch_op, unsigned int,
						   std::vector<zbatch::Request> &reqs,
						   unsigned int flags) const override
	{
		submits++;
		for (auto &r : reqs) {
			r.status = fail_status;
			if (fail_status)
				continue;
			std::memcpy(r.dst.data(), r.src.data(), r.src.size());
			r.produced = r.src.size();
		}
		uint64_t ns = flags & ZBATCH_F_ONE_BY_ONE ? 1000 * reqs.size() : 1000 + 100 * reqs.size();
		return zbatch::BatchResult{ns, static_cast<uint32_t>(reqs.size())};
	}
};

// mkswap, swapon and swapoff: every call recorded, each may be failed.
class FakeSwap : public zbatch::SwapControl {
public:
	std::vector<std::string> calls;		// "format DEV BYTES", "enable DEV PRIO d", ...
	zbatch::Result<void> format_result, enable_result, disable_result;
	std::function<void()> after_disable;	// e.g. the device leaves /proc/swaps
	std::function<void(const std::string &)> after_format;	// e.g. the next device
	std::map<std::string, std::string> uuids;	// device -> its swap header's UUID
	zbatch::Result<std::string> format(const std::string &dev, uint64_t bytes) override
	{
		calls.push_back("format " + dev + " " + std::to_string(bytes));
		if (!format_result)
			return std::unexpected(format_result.error());
		uuids[dev] = "uuid-" + std::to_string(++formatted);
		std::string uuid = uuids[dev];
		if (after_format)
			after_format(dev);
		return uuid;
	}
	zbatch::Result<void> uuid_error;	// uuid() fails with it when set
	zbatch::Result<std::string> uuid(const std::string &dev) override
	{
		if (!uuid_error)
			return std::unexpected(uuid_error.error());
		return uuids.count(dev) ? uuids[dev] : "";
	}
	unsigned int formatted = 0;
	zbatch::Result<void> enable(const std::string &dev, int prio, bool discard) override
	{
		calls.push_back("enable " + dev + " " + std::to_string(prio) + (discard ? " discard" : ""));
		return enable_result;
	}
	zbatch::Result<void> disable(const std::string &dev) override
	{
		calls.push_back("disable " + dev);
		if (disable_result && after_disable)
			after_disable();
		return disable_result;
	}
};

// The context hands out owning pointers; these forward to the fakes, which
// the test inspects afterwards.
struct ForwardModules : zbatch::Modules {
	explicit ForwardModules(FakeModules &m) : m(m) {}
	bool loaded(const std::string &n) override { return m.loaded(n); }
	zbatch::Result<void> load(const std::string &a, const std::string &p) override
	{
		return m.load(a, p);
	}
	zbatch::Result<void> unload(const std::string &n) override { return m.unload(n); }
	int refcount(const std::string &n) override { return m.refcount(n); }
	std::vector<std::string> holders(const std::string &n) override { return m.holders(n); }
	FakeModules &m;
};

struct ForwardAccel : zbatch::AccelConfig {
	explicit ForwardAccel(FakeAccel &a) : a(a) {}
	zbatch::Result<std::vector<zbatch::IaaDevice>> devices() override { return a.devices(); }
	zbatch::Result<void> configure_wq(const std::string &d, const std::string &w,
					  const zbatch::WqSettings &s) override
	{
		return a.configure_wq(d, w, s);
	}
	zbatch::Result<void> engines_to_group(const std::string &d, int g) override
	{
		return a.engines_to_group(d, g);
	}
	zbatch::Result<void> enable_device(const std::string &d) override
	{
		return a.enable_device(d);
	}
	zbatch::Result<void> enable_wq(const std::string &d, const std::string &w) override
	{
		return a.enable_wq(d, w);
	}
	zbatch::Result<void> disable_wq(const std::string &d, const std::string &w) override
	{
		return a.disable_wq(d, w);
	}
	FakeAccel &a;
};

struct ForwardDevice : zbatch::BatchDevice {
	explicit ForwardDevice(FakeDevice &d) : d(d) {}
	zbatch::Result<zbatch_ioc_info> info() const override { return d.info(); }
	zbatch::Result<zbatch::BatchResult> submit(enum zbatch_op op, unsigned int c,
						   std::vector<zbatch::Request> &r,
						   unsigned int f) const override
	{
		return d.submit(op, c, r, f);
	}
	FakeDevice &d;
};

struct ForwardSwap : zbatch::SwapControl {
	explicit ForwardSwap(FakeSwap &s) : s(s) {}
	zbatch::Result<std::string> format(const std::string &d, uint64_t b) override
	{
		return s.format(d, b);
	}
	zbatch::Result<std::string> uuid(const std::string &d) override { return s.uuid(d); }
	zbatch::Result<void> enable(const std::string &d, int p, bool x) override
	{
		return s.enable(d, p, x);
	}
	zbatch::Result<void> disable(const std::string &d) override { return s.disable(d); }
	FakeSwap &s;
};

struct FakeSystem {
	explicit FakeSystem(zbatch::Verbosity v = zbatch::Verbosity::Normal, bool tty = false)
		: con(v, tty), ctx(zbatch::SysfsTree(tree.root()), con)
	{
		ctx.modules = [this] { return std::make_unique<ForwardModules>(modules); };
		ctx.accel = [this] { return std::make_unique<ForwardAccel>(accel); };
		ctx.open_device = [this]() -> zbatch::Result<std::unique_ptr<zbatch::BatchDevice>> {
			if (!device_error.empty())
				return zbatch::fail(ENOENT, device_error);
			return std::make_unique<ForwardDevice>(device);
		};
		ctx.workload = [this](const zbatch::WorkloadConfig &c) {
			workload_cfg = c;
			if (c.between)
				if (auto b = c.between(); !b)
					return zbatch::Result<zbatch::WorkloadResult>(std::unexpected(b.error()));
			if (c.progress)
				c.progress(1.0, 10, 5);
			return workload_result;
		};
		ctx.sleep = [this](std::chrono::seconds s) { slept.push_back(s.count()); };
		ctx.is_root = [this] { return root; };
		ctx.swap = [this] { return std::make_unique<ForwardSwap>(swap); };
	}

	// A loaded module: version, tunables, one device with one WQ, debugfs.
	void load_module()
	{
		tree.put("/sys/kernel/zbatch/version", "0.3.0\n");
		tree.put("/sys/kernel/zbatch/codec", "default deflate [lz4] zstd lzo\n");
		tree.put("/sys/kernel/zbatch/sync_mode", "[sync] async async_irq\n");
		tree.put("/sys/kernel/zbatch/distribute_comps", "1\n");
		tree.put("/sys/kernel/zbatch/distribute_decomps", "0\n");
		tree.put("/sys/kernel/zbatch/g_comp_wqs_per_iaa", "0\n");
		tree.put("/sys/kernel/zbatch/verify_compress", "0\n");
		tree.put("/sys/kernel/zbatch/timeout_ms", "1000\n");
		tree.put("/sys/kernel/zbatch/acomp_inline", "1\n");
		tree.put("/sys/kernel/zbatch/dev0/node", "0\n");
		tree.put("/sys/kernel/zbatch/dev0/engines", "2\n");
		tree.put("/sys/kernel/zbatch/dev0/cpus", "0-1\n");
		tree.put("/sys/kernel/zbatch/dev0/wq0/mode", "dedicated\n");
		tree.put("/sys/kernel/zbatch/dev0/wq0/type", "generic\n");
		tree.put("/sys/kernel/zbatch/dev0/wq0/size", "64\n");
		tree.put("/sys/kernel/zbatch/dev0/wq0/priority", "10\n");
		tree.put("/sys/kernel/zbatch/dev0/wq0/queued", "0\n");
		tree.put("/sys/kernel/zbatch/dev0/wq0/enabled", "1\n");
		tree.put("/sys/kernel/zbatch/swapdev/hot_add", "0\n");
		tree.put("/sys/kernel/zbatch/swapdev/hot_remove", "");
		tree.put("/sys/kernel/debug/zbatch/stats",
			 "compress_calls 10\ndecompress_calls 5\ncompletions 15\ntimeouts 0\n"
			 "err_verify 0\n");
		tree.put("/sys/kernel/debug/zbatch/reset", "");
		modules.mods.insert("zbatch");
	}

	std::string read(const std::string &path)
	{
		auto v = zbatch::SysfsTree(tree.root()).read(path);
		return v ? *v : "<unreadable>";
	}

	FakeTree tree;
	zbatch::StringConsole con;
	zbatch::Context ctx;
	FakeModules modules;
	FakeAccel accel;
	FakeDevice device;
	FakeSwap swap;
	std::string device_error;	// open_device fails with it when set
	zbatch::Result<zbatch::WorkloadResult> workload_result = zbatch::WorkloadResult{};
	zbatch::WorkloadConfig workload_cfg;
	std::vector<long> slept;
	bool root = true;
};
