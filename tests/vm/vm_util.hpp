// SPDX-License-Identifier: GPL-2.0
// Helpers shared by the guest tests.
#pragma once

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "zbatch/sysfs.hpp"
#include "zbatch/workload.hpp"

namespace vmtest {

struct Cmd {
	int status;
	std::string output;
};

inline Cmd run(const std::string &cmd)
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

inline const std::string kKo = std::string(ZBATCH_SOURCE_DIR) + "/kmod/zbatch.ko";
// Load parameters every (re)load of the module in a tier uses, e.g. the
// IAA tier's "iaa_driver=deflate-iaa-double" (ZBATCH_KO_ARGS).
inline const std::string kKoArgs = std::getenv("ZBATCH_KO_ARGS") ? std::getenv("ZBATCH_KO_ARGS") : "";
inline const std::string kInsmod = "insmod " + kKo + (kKoArgs.empty() ? "" : " " + kKoArgs);
// The same as 'zbatch load' options: " -p KEY=VALUE" each.
inline std::string load_params()
{
	std::istringstream in(kKoArgs);
	std::string kv, out;
	while (in >> kv)
		out += " -p " + kv;
	return out;
}
inline const std::string kCli = ZBATCH_CLI;
inline const std::string kSys = "/sys/kernel/zbatch";
inline const std::string kDbg = "/sys/kernel/debug/zbatch";

// Writes a sysfs value; returns 0 or the errno the kernel gave.
inline int sysfs_write(const std::string &path, const std::string &v)
{
	zbatch::SysfsTree t;
	auto r = t.write(path, v);
	return r ? 0 : r.error().code;
}

inline std::string sysfs_read(const std::string &path)
{
	zbatch::SysfsTree t;
	auto r = t.read(path);
	return r ? *r : std::string("<") + r.error().message + ">";
}

// zbatch's global counters (debugfs stats), name -> value.
inline std::map<std::string, int64_t> debug_stats()
{
	return zbatch::parse_kv(sysfs_read(kDbg + "/stats"));
}

// A /proc/meminfo value in kB (e.g. "SUnreclaim"), -1 when absent.
inline long meminfo_kb(const std::string &key)
{
	zbatch::SysfsTree t;
	auto text = t.read("/proc/meminfo");
	if (!text)
		return -1;
	auto p = text->find("\n" + key + ":");
	if (p == std::string::npos && text->rfind(key + ":", 0) != 0)
		return -1;
	p = p == std::string::npos ? key.size() + 1 : p + key.size() + 2;
	return std::stol(text->substr(p));
}

// A KASAN kernel (make check-debug): its quarantine keeps freed objects
// allocated for a while, so SUnreclaim does not come back after frees and
// "slab stays flat" cannot be measured there (the stock kernel of make
// check measures it).
// How much slower than the stock kernel the guest's kernel is (make
// check-debug sets ZBATCH_CHECK_SLOW=4 and vm-run passes it in): the factor
// for the time limits that only guard against a hang.
inline unsigned slow_factor()
{
	const char *s = std::getenv("ZBATCH_CHECK_SLOW");
	unsigned long v = s ? std::strtoul(s, nullptr, 10) : 1;
	return v >= 1 && v <= 16 ? static_cast<unsigned>(v) : 1;
}

// A block device for a swap device's writeback, of @kib KiB: a brd RAM
// disk (/dev/ram0; brd loaded afresh, its size being a module parameter),
// or where the kernel has no brd (the debug kernel builds only the
// modules its guests load) a zram device of that size. "" on failure.
inline std::string backing_disk(unsigned kib)
{
	run("rmmod brd 2>/dev/null");
	if (run("modprobe brd rd_nr=1 rd_size=" + std::to_string(kib) + " && test -b /dev/ram0")
		    .status == 0)
		return "/dev/ram0";
	auto z = run("modprobe zram num_devices=0 && id=$(cat /sys/class/zram-control/hot_add) && "
		     "echo " + std::to_string(kib) + "K > /sys/block/zram$id/disksize && "
		     "echo -n /dev/zram$id");
	return z.status == 0 ? z.output : "";
}

// A null_blk disk /dev/@name made through configfs with @attrs (then
// powered on): removed when it goes out of scope. available() false where
// the kernel has no null_blk (the debug kernel builds only the modules its
// guests load): the caller skips, saying so; ok() false, with error(),
// when null_blk refused a setting: the caller fails.
class NullBlk {
public:
	NullBlk(const std::string &name,
		std::initializer_list<std::pair<const char *, const char *>> attrs)
		: dir_("/sys/kernel/config/nullb/" + name)
	{
		if (run("modprobe configfs && { mountpoint -q /sys/kernel/config || "
			"mount -t configfs none /sys/kernel/config; } && "
			"modprobe null_blk nr_devices=0").status)
			return;
		available_ = true;
		if (run("mkdir -p " + dir_).status) {
			error_ = "mkdir " + dir_ + " failed";
			return;
		}
		for (auto [k, v] : attrs)
			if (int e = sysfs_write(dir_ + "/" + k, v)) {
				error_ = std::string(k) + "=" + v + ": " + std::strerror(e);
				return;
			}
		if (int e = sysfs_write(dir_ + "/power", "1"))
			error_ = std::string("power=1: ") + std::strerror(e);
		else
			ok_ = true;
	}
	NullBlk(const NullBlk &) = delete;
	~NullBlk()
	{
		sysfs_write(dir_ + "/power", "0");
		run("rmdir " + dir_ + " 2>/dev/null");
	}
	bool available() const { return available_; }
	bool ok() const { return ok_; }
	const std::string &error() const { return error_; }
	// Write @v to the device's configfs attribute @k; the errno.
	int set(const std::string &k, const std::string &v) const
	{
		return sysfs_write(dir_ + "/" + k, v);
	}

private:
	std::string dir_, error_;
	bool available_ = false, ok_ = false;
};

// A suspend's freezer, tested (CONFIG_PM_DEBUG's pm_test "freezer"):
// every task and freezable kernel thread frozen within @timeout_ms, held
// 1 s, thawed; the settings restored. 0, or the errno of the write
// (EBUSY: a task refused to freeze); ENOENT without pm_test.
inline int pm_test_freeze(unsigned timeout_ms = 2000)
{
	const std::string timeout = "/sys/power/pm_freeze_timeout",
			  delay = "/sys/module/suspend/parameters/pm_test_delay";
	if (access("/sys/power/pm_test", W_OK))
		return ENOENT;
	auto timeout0 = sysfs_read(timeout), delay0 = sysfs_read(delay);
	sysfs_write(timeout, std::to_string(timeout_ms));
	sysfs_write(delay, "1");
	int e = sysfs_write("/sys/power/pm_test", "freezer");
	if (!e)
		e = sysfs_write("/sys/power/state", "freeze");
	sysfs_write("/sys/power/pm_test", "none");
	sysfs_write(timeout, timeout0);
	sysfs_write(delay, delay0);
	return e;
}

// make check-full and make check-debug (ZBATCH_FULL=1, passed in by
// vm-run): the soak tests at full length; make check runs a short form.
inline bool full_run()
{
	const char *s = std::getenv("ZBATCH_FULL");
	return s && std::string(s) == "1";
}

inline bool kasan_kernel()
{
	return run("grep -q ' kasan_quarantine_put$' /proc/kallsyms").status == 0;
}

// The bracketed choice of a list attribute: "a [b] c" -> "b".
inline std::string choice(const std::string &v)
{
	auto l = v.find('['), r = v.find(']');
	return l == std::string::npos || r == std::string::npos ? v : v.substr(l + 1, r - l - 1);
}

// Transparent huge pages on request (MADV_HUGEPAGE) while it lives: the
// guest boots with THP off, and O_DIRECT from a THP-backed buffer is how a
// test hands a block device one multi-page bvec, as a large folio does.
struct ThpMadvise {
	const std::string knob = "/sys/kernel/mm/transparent_hugepage/enabled";
	std::string old = choice(sysfs_read(knob));

	ThpMadvise() { sysfs_write(knob, "madvise"); }
	~ThpMadvise() { sysfs_write(knob, old); }
	ThpMadvise(const ThpMadvise &) = delete;
	ThpMadvise &operator=(const ThpMadvise &) = delete;
};

} // namespace vmtest
