// SPDX-License-Identifier: GPL-2.0
// zbatch dev create|list|idle|writeback|recompress|destroy|setup|teardown:
// the batched compressed swap devices, by hand or from
// /etc/zbatch/swap.conf (at boot: zbatch-swap.service).
#include <filesystem>
#include <map>
#include <sstream>

#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/codec.hpp"
#include "zbatch/json.hpp"
#include "zbatch/atomic_file.hpp"
#include "zbatch/parse.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/swapconf.hpp"
#include "zbatch/swapdev.hpp"

namespace zbatch::cli {

namespace {

// Formats device @id as swap and enables it; on failure the device is
// destroyed again (nothing is left half set up). Return: the swap UUID.
Result<std::string> swap_on(Context &ctx, int id, uint64_t size, int priority, bool discard)
{
	auto node = ctx.tree.resolve(swapdev_node(id)).string();
	auto sw = ctx.swap();
	auto uuid = sw->format(node, size);
	Result<void> r;
	if (!uuid)
		r = std::unexpected(uuid.error());
	else
		r = sw->enable(node, priority, discard);
	if (!r) {
		if (auto d = swapdev_destroy(ctx.tree, id); !d)
			return fail(r.error().code, r.error().message + "; and destroying " +
					    swapdev_name(id) + " again failed: " +
					    d.error().message);
		return std::unexpected(r.error());
	}
	return *uuid;
}

// What zbatch dev setup made: a device, and the UUID of the swap header
// it wrote (device numbers are reused: the UUID says it is still ours).
struct Made {
	int id = -1;
	std::string uuid;
};
using State = std::map<std::string, Made>;	// section -> device

State read_state(const SysfsTree &t)
{
	State m;
	std::istringstream in(t.read(kSwapState).value_or(""));
	std::string line;
	while (std::getline(in, line)) {
		std::istringstream l(line);
		std::string name;
		Made d;
		// "NAME ID UUID"; "NAME ID" from an older zbatch: no UUID to check
		if (l >> name >> d.id) {
			l >> d.uuid;
			m[name] = d;
		}
	}
	return m;
}

Result<void> write_state(const SysfsTree &t, const State &m)
{
	auto path = t.resolve(kSwapState);
	std::error_code ec;
	std::filesystem::create_directories(path.parent_path(), ec);
	if (ec)
		return fail(ec.value(), fmt::format("{}: {}", path.parent_path().string(),
						    ec.message()));
	std::string text;
	for (const auto &[name, d] : m)
		text += fmt::format("{} {} {}\n", name, d.id, d.uuid);
	return write_file_atomic(path.string(), text);
}

bool swapped_on(const SysfsTree &t, int id)
{
	auto devs = swapdev_list(t);
	if (!devs)
		return false;
	for (const auto &d : *devs)
		if (d.id == id)
			return !d.swap_use.empty();
	return false;
}

// Device @d exists and still carries the swap header setup wrote (an
// entry of an older zbatch, without a UUID: that it exists). A header
// that cannot be read is an error, not a "no": the entry is kept.
Result<bool> ours(Context &ctx, const Made &d)
{
	if (!ctx.tree.exists(kSysBlockDir + "/" + swapdev_name(d.id)))
		return false;
	if (d.uuid.empty())
		return true;
	auto u = ctx.swap()->uuid(ctx.tree.resolve(swapdev_node(d.id)).string());
	if (!u)
		return std::unexpected(u.error());
	return *u == d.uuid;
}

// ", recompression zstd:9 (background 10% of a CPU every 5 s)": what a
// device is made with (-1: not set, the module's default); "" without a
// secondary codec.
std::string recomp_label(const std::string &codec, int level, int budget, int interval)
{
	if (codec.empty())
		return "";
	std::string bg;
	if (budget > 0)
		bg = fmt::format(" (background {}% of a CPU{})", budget,
				 interval == -1 ? "" : fmt::format(" every {} s", interval));
	return fmt::format(", recompression {}{}", codec_label(codec, level), bg);
}

// A size from the file, within what a device takes.
Result<void> check_size(const SwapConfDevice &d, const std::string &file, uint64_t bytes,
			uint64_t ram)
{
	if (bytes >= 10 * 4096 && bytes <= (1ULL << 40))
		return {};
	return fail(EINVAL, fmt::format("{}:{}: key 'size': {} bytes{}: a device takes 40k to 1T",
					file, d.size_line, bytes, d.size.percent ?
					fmt::format(" ({}% of {} bytes of RAM)", d.size.percent, ram) :
					""));
}

// The JSON document of a setup or teardown, then its failures, one a line
// under @what, as the command's error.
Result<int> finish(Context &ctx, const Json &out, const std::vector<std::string> &failed,
		   const std::string &what)
{
	if (ctx.json)
		ctx.con.print("{}", json_text(out));
	if (failed.empty())
		return kExitOk;
	std::string all;
	for (const auto &f : failed)
		all += "\n  " + f;
	return fail(EIO, what + ":" + all);
}

} // namespace

Result<int> run_dev_create(Context &ctx, const DevOptions &o)
{
	auto &con = ctx.con;
	auto size = parse_bytes(o.size);
	if (!size)
		return fail(EINVAL, "--size " + size.error().message);
	if (o.swap && !ctx.is_root())
		return skip(EPERM, "zbatch dev create --swap needs root");
	// the module opens the path in its own context: give it whole
	const std::string backing = o.backing.empty() || o.backing.front() == '/' ?
				    o.backing : std::filesystem::absolute(o.backing).string();
	auto id = swapdev_create(ctx.tree, {*size, o.codec, o.unit, o.level, backing,
					    o.recomp_codec, o.recomp_level, o.recomp_budget,
					    o.recomp_interval});
	if (!id)
		return std::unexpected(id.error());
	if (o.swap)
		if (auto r = swap_on(ctx, *id, *size, o.priority, o.discard); !r)
			return std::unexpected(r.error());
	const std::string recomp = recomp_label(o.recomp_codec, o.recomp_level, o.recomp_budget,
						o.recomp_interval);
	if (ctx.json)
		con.print("{}", json_text({{"id", *id}, {"name", swapdev_name(*id)},
					    {"device", swapdev_node(*id)},
					    {"swap", o.swap}}));
	else if (o.swap)
		con.print("{0}: {1} bytes, {2}, {3} units{5}, swap on with priority {4}\n",
			   swapdev_node(*id), *size, codec_label(o.codec, o.level), o.unit,
			   o.priority, recomp);
	else
		con.print("{0}: {1} bytes, {2}, {3} units{4}\n"
			   "use it: mkswap {0} && swapon -p 100 {0} (or create with --swap)\n",
			   swapdev_node(*id), *size, codec_label(o.codec, o.level), o.unit, recomp);
	return kExitOk;
}

Result<int> run_dev_setup(Context &ctx, const SetupOptions &o)
{
	auto &con = ctx.con;
	// a relative path is the user's, from where they are (not the tree's root)
	const std::string config = std::filesystem::path(o.config).is_absolute() ?
				   o.config : std::filesystem::absolute(o.config).string();
	auto text = ctx.tree.read(config);
	if (!text)
		return fail(text.error().code, fmt::format("{}: cannot read: {}", o.config,
							   text.error().message));
	auto devs = parse_swap_conf(o.config, *text);
	if (!devs)
		return std::unexpected(devs.error());
	auto ram = ram_bytes(ctx.tree);
	if (!ram)
		return std::unexpected(ram.error());
	for (const auto &d : *devs)
		if (auto c = check_size(d, o.config, conf_bytes(d.size, *ram), *ram); !c)
			return std::unexpected(c.error());
	Json out = Json::array();
	if (devs->empty()) {
		if (ctx.json)
			con.print("{}", json_text(out));
		else
			con.note("{}: no device configured\n", o.config);
		return kExitOk;
	}
	if (!o.dry_run && !ctx.is_root())
		return skip(EPERM, "zbatch dev setup needs root");
	if (!o.dry_run && !ctx.modules()->loaded("zbatch")) {
		con.detail("loading zbatch\n");
		if (auto r = ctx.modules()->load("zbatch", ""); !r)
			return std::unexpected(r.error());
	}
	auto state = read_state(ctx.tree);
	std::vector<std::string> failed;
	auto note = [&](const std::string &line) {
		if (!ctx.json)
			con.note("{}\n", line);
	};
	for (const auto &d : *devs) {
		const uint64_t size = conf_bytes(d.size, *ram);
		const uint64_t limit = conf_bytes(d.mem_limit, *ram);
		auto line = fmt::format("[{}] {} bytes, {}, {} units, priority {}{}{}{}{}{}", d.name,
					size, codec_label(d.codec, d.level), d.unit, d.priority,
					limit ? fmt::format(", mem_limit {}", limit) : "",
					d.discard ? ", discard" : "",
					d.unit_adapt ? "" : ", unit_adapt 0",
					d.writeback_device.empty() ? "" :
					", writeback to " + d.writeback_device,
					recomp_label(d.recomp_codec, d.recomp_level, d.recomp_budget,
						     d.recomp_interval));
		if (o.dry_run) {
			auto or_null = [](int v) { return v == -1 ? Json(nullptr) : Json(v); };
			if (ctx.json)
				out.push_back({{"section", d.name}, {"size", size}, {"codec", d.codec},
					       {"level", d.level}, {"unit", d.unit}, {"priority", d.priority},
					       {"mem_limit", limit}, {"discard", d.discard},
					       {"writeback_device", d.writeback_device.empty() ?
								    Json(nullptr) :
								    Json(d.writeback_device)},
					       {"recomp_algorithm", d.recomp_codec.empty() ?
								    Json(nullptr) :
								    Json(d.recomp_codec)},
					       {"recomp_level", d.recomp_level},
					       {"recomp_budget", or_null(d.recomp_budget)},
					       {"recomp_interval", or_null(d.recomp_interval)}});
			else
				con.print("would set up {}\n", line);
			continue;
		}
		if (auto it = state.find(d.name); it != state.end()) {
			const Made m = it->second;
			auto mine = ours(ctx, m);
			if (!mine) {
				failed.push_back(fmt::format("[{}] (line {}): {}", d.name, d.line,
							     mine.error().message));
				continue;
			}
			if (!*mine) {
				// gone, or its number reused by another device: not touched
				state.erase(it);
			} else if (swapped_on(ctx.tree, m.id)) {
				note(fmt::format("[{}] already set up: {}", d.name, swapdev_node(m.id)));
				out.push_back({{"section", d.name}, {"device", swapdev_node(m.id)},
					       {"created", false}});
				continue;
			} else if (auto r = swapdev_destroy(ctx.tree, m.id); !r) {
				// ours, swapped off since: made again
				failed.push_back(fmt::format("[{}] (line {}): {}", d.name, d.line,
							     r.error().message));
				continue;
			} else {
				state.erase(it);
			}
		}
		auto id = swapdev_create(ctx.tree, {size, d.codec, d.unit, d.level,
						    d.writeback_device, d.recomp_codec,
						    d.recomp_level, d.recomp_budget,
						    d.recomp_interval});
		Result<std::string> uuid = std::string();
		if (!id) {
			uuid = std::unexpected(id.error());
		} else {
			Result<void> w;
			if (limit)
				w = ctx.tree.write(swapdev_dir(*id) + "/mem_limit", std::to_string(limit));
			if (w && !d.unit_adapt)
				w = ctx.tree.write(swapdev_dir(*id) + "/unit_adapt", "0");
			if (w) {
				uuid = swap_on(ctx, *id, size, d.priority, d.discard);
			} else {
				uuid = std::unexpected(w.error());
				(void)swapdev_destroy(ctx.tree, *id);
			}
		}
		if (!uuid) {
			failed.push_back(fmt::format("[{}] (line {}): {}", d.name, d.line,
						     uuid.error().message));
			continue;
		}
		state[d.name] = {*id, *uuid};
		// after each device: a setup stopped half-way is still torn down
		if (auto w = write_state(ctx.tree, state); !w)
			failed.push_back(fmt::format("[{}]: {} (zbatch dev teardown will not know "
						     "{})", d.name, w.error().message,
						     swapdev_node(*id)));
		note(fmt::format("{}: {}", swapdev_node(*id), line));
		out.push_back({{"section", d.name}, {"device", swapdev_node(*id)}, {"created", true}});
	}
	if (!o.dry_run)
		if (auto w = write_state(ctx.tree, state); !w)
			failed.push_back(w.error().message);
	return finish(ctx, out, failed, fmt::format("{}: {} of {} devices not set up", o.config,
						     failed.size(), devs->size()));
}

namespace {

// How long teardown waits for a device another swapoff is emptying
// (systemd's dev-zbatchswapN.swap unit at shutdown: minutes on a full
// device; under the unit's TimeoutStopSec), then for it to be closed.
constexpr int kSwapoffWaitS = 14 * 60;
constexpr int kCloseWaitS = 30;

// Swaps off and destroys a device setup made, tolerating a swapoff that
// someone else is doing at the same time.
Result<void> take_down(Context &ctx, const Made &m)
{
	auto node = ctx.tree.resolve(swapdev_node(m.id)).string();
	if (swapped_on(ctx.tree, m.id)) {
		auto r = ctx.swap()->disable(node);
		// EINVAL: not (or no longer) a swap area: another swapoff
		if (!r && r.error().code != EINVAL)
			return r;
	}
	for (int waited = 0; swapped_on(ctx.tree, m.id); waited++) {
		if (waited >= kSwapoffWaitS)
			return fail(EBUSY, fmt::format("{} is still swapped on after {} s (another "
						       "swapoff?)", swapdev_node(m.id), waited));
		ctx.sleep(std::chrono::seconds(1));
	}
	for (int waited = 0;; waited++) {
		auto r = swapdev_destroy(ctx.tree, m.id);
		if (r || r.error().code != EBUSY || waited >= kCloseWaitS)
			return r;
		ctx.sleep(std::chrono::seconds(1));
	}
}

} // namespace

Result<int> run_dev_teardown(Context &ctx)
{
	auto &con = ctx.con;
	auto state = read_state(ctx.tree);
	Json out = Json::array();
	auto note = [&](const std::string &line) {
		if (!ctx.json)
			con.note("{}\n", line);
	};
	if (state.empty()) {
		if (ctx.json)
			con.print("{}", json_text(out));
		else
			note(fmt::format("nothing to tear down ({} lists no device of zbatch dev "
					 "setup)", kSwapState));
		return kExitOk;
	}
	if (!ctx.is_root())
		return skip(EPERM, "zbatch dev teardown needs root");
	std::vector<std::string> failed;
	for (auto it = state.begin(); it != state.end();) {
		const auto &[name, m] = *it;
		auto mine = ours(ctx, m);
		if (!mine) {
			failed.push_back(fmt::format("[{}] {}: {}", name, swapdev_node(m.id),
						     mine.error().message));
			++it;
			continue;
		}
		if (!*mine) {
			note(fmt::format("[{}] {} is gone, or no longer the device setup made: left "
					 "alone", name, swapdev_node(m.id)));
			it = state.erase(it);
			continue;
		}
		if (auto r = take_down(ctx, m); !r) {
			failed.push_back(fmt::format("[{}] {}: {}", name, swapdev_node(m.id),
						     r.error().message));
			++it;
			continue;
		}
		note(fmt::format("[{}] {} torn down", name, swapdev_node(m.id)));
		out.push_back({{"section", name}, {"device", swapdev_node(m.id)}});
		it = state.erase(it);
	}
	if (auto w = write_state(ctx.tree, state); !w)
		failed.push_back(w.error().message);
	return finish(ctx, out, failed, fmt::format("{} devices not torn down (still in {})",
						     failed.size(), kSwapState));
}

namespace {

std::string mib(uint64_t b)
{
	return fmt::format("{:.1f}M", b / 1048576.0);
}

} // namespace

Result<int> run_dev_list(Context &ctx)
{
	auto &con = ctx.con;
	auto devs = swapdev_list(ctx.tree);
	if (!devs)
		return std::unexpected(devs.error());
	if (ctx.json) {
		Json a = Json::array();
		for (const auto &d : *devs)
			a.push_back(swapdev_to_json(d));
		con.print("{}", json_text(a));
		return kExitOk;
	}
	if (devs->empty()) {
		con.print("no zbatch swap device (create one: zbatch dev create --size 1G)\n");
		return kExitOk;
	}
	con.print("{:<12} {:>9} {:<12} {:<5} {:>9} {:>9} {:>9} {:>6} {:>6} {:>6} {:>7}  {}\n",
		   "device", "size", "codec", "unit", "stored", "compr", "used", "same", "huge",
		   "units", "partial", "swap");
	for (const auto &d : *devs) {
		auto us = [&](const char *k) {
			auto it = d.unit_stat.find(k);
			return it == d.unit_stat.end() ? 0 : it->second;
		};
		con.print("{:<12} {:>9} {:<12} {:<5} {:>9} {:>9} {:>9} {:>6} {:>6} {:>6} {:>7}  {}\n",
			   d.name, mib(d.disksize), codec_label(d.codec, d.level), d.unit, mib(d.orig_bytes),
			   mib(d.compr_bytes), mib(d.used_bytes), d.same_pages, d.huge_pages,
			   us("units"), us("partial_reads"), d.swap_use.empty() ? "no" : "yes");
		if (!d.backing_dev.empty())
			con.print("  writeback to {}: {} pages there, {} read back, {} written{}{}\n",
				   d.backing_dev, d.bd_count, d.bd_reads, d.bd_writes,
				   us("writeback_failed") ?
				   fmt::format(", {} failed (kept in memory)", us("writeback_failed")) : "",
				   d.wb_limit_on ? fmt::format("; limit: {} pages left", d.wb_limit) : "");
		if (!d.recomp_codec.empty())
			con.print("  recompression with {}\n", swapdev_recomp_summary(d));
		if (d.failed_reads || d.failed_writes)
			con.print("  failed reads {}, failed writes {} (limit refusals {})\n",
				   d.failed_reads, d.failed_writes, us("limit_refused"));
		std::string hist;
		for (const auto &[n, wr] : d.batches)
			hist += fmt::format(" {}:{}/{}", n, wr.first, wr.second);
		if (!hist.empty())
			con.print("  batches (requests:writes/reads):{}\n", hist);
	}
	return kExitOk;
}

Result<int> run_dev_idle(Context &ctx, int id, long long age)
{
	std::optional<std::uint64_t> a;
	if (age >= 0)
		a = static_cast<std::uint64_t>(age);
	if (auto r = swapdev_mark_idle(ctx.tree, id, a); !r)
		return std::unexpected(r.error());
	if (ctx.json)
		ctx.con.print("{}", a ? json_text({{"idle", swapdev_name(id)}, {"age_s", *a}}) :
				      json_text({{"idle", swapdev_name(id)}}));
	else if (a)
		ctx.con.note("{}: pages in memory not written or read in the last {} s marked "
			     "idle, the others not (reading or writing a page clears it)\n",
			     swapdev_name(id), *a);
	else
		ctx.con.note("{}: every page in memory marked idle (reading or writing a page "
			     "clears it)\n", swapdev_name(id));
	return kExitOk;
}

Result<int> run_dev_writeback(Context &ctx, int id, const std::string &mode)
{
	auto before = swapdev_list(ctx.tree);
	auto r = swapdev_writeback(ctx.tree, id, mode);
	auto after = swapdev_list(ctx.tree);
	uint64_t written = 0, there = 0;
	int64_t failed = 0;	// writes the disk failed during this writeback
	bool spent = false;	// the limit is on and spent
	auto us = [](const SwapdevInfo &d, const char *k) {
		auto it = d.unit_stat.find(k);
		return it == d.unit_stat.end() ? 0 : it->second;
	};
	if (before && after)
		for (const auto &a : *after)
			for (const auto &b : *before)
				if (a.id == id && b.id == id) {
					written = a.bd_writes - b.bd_writes;
					there = a.bd_count;
					failed = us(a, "writeback_failed") - us(b, "writeback_failed");
					spent = a.wb_limit_on && !a.wb_limit;
				}
	// EIO at a spent limit, no write failed: the limit did its job (a
	// timer running this is not failing)
	const bool limited = !r && r.error().code == EIO && spent && !failed;
	if (!r && !limited)
		return std::unexpected(r.error());
	if (ctx.json)
		ctx.con.print("{}", json_text({{"device", swapdev_name(id)}, {"mode", mode},
					       {"written", written}, {"bd_count", there},
					       {"limit_reached", limited}}));
	else
		ctx.con.note("{}: {} pages written back ({}){}; {} pages on the writeback device\n",
			     swapdev_name(id), written, mode,
			     limited ? ", then writeback_limit was reached" : "", there);
	return kExitOk;
}

Result<int> run_dev_recompress(Context &ctx, int id, const RecompressArgs &a)
{
	auto before = swapdev_list(ctx.tree);
	if (auto r = swapdev_recompress(ctx.tree, id, a); !r)
		return std::unexpected(r.error());
	auto after = swapdev_list(ctx.tree);
	// what this run did (and the background thread's passes meanwhile)
	SwapdevInfo b, n;
	if (before && after)
		for (const auto &x : *before)
			for (const auto &y : *after)
				if (x.id == id && y.id == id) {
					b = x;
					n = y;
				}
	const uint64_t tried = n.recomp_tried - b.recomp_tried,
		       done = n.recomp_done - b.recomp_done,
		       incomp = n.recomp_incomp - b.recomp_incomp,
		       saved = n.recomp_saved - b.recomp_saved;
	if (ctx.json)
		ctx.con.print("{}", json_text({{"device", swapdev_name(id)},
					       {"type", a.type.empty() ? Json(nullptr) :
									 Json(a.type)},
					       {"tried", tried}, {"recompressed", done},
					       {"incompressible", incomp}, {"saved_bytes", saved},
					       {"recomp_pages", n.recomp_pages}}));
	else
		ctx.con.note("{}: {} pages tried ({}), {} recompressed ({} bytes saved), {} "
			     "incompressible; {} pages stored with {} now\n",
			     swapdev_name(id), tried, a.type.empty() ? "every page" : a.type, done,
			     saved, incomp, n.recomp_pages,
			     n.recomp_codec.empty() ? "the secondary codec" : n.recomp_codec);
	return kExitOk;
}

Result<int> run_dev_destroy(Context &ctx, int id)
{
	if (auto r = swapdev_destroy(ctx.tree, id); !r)
		return std::unexpected(r.error());
	// a device zbatch dev setup made: forgotten (its number may be reused)
	auto state = read_state(ctx.tree);
	if (std::erase_if(state, [id](const auto &e) { return e.second.id == id; }))
		if (auto w = write_state(ctx.tree, state); !w)
			ctx.con.warning("{}\n", w.error().message);
	if (ctx.json)
		ctx.con.print("{}", json_text({{"destroyed", swapdev_name(id)}}));
	else
		ctx.con.note("{} destroyed\n", swapdev_name(id));
	return kExitOk;
}

void add_dev(CLI::App &app, Action &action)
{
	auto o = std::make_shared<DevOptions>();
	auto *dev = app.add_subcommand("dev", "Batched compressed swap devices (/dev/zbatchswapN)");
	dev->require_subcommand(1);
	dev->footer("Documentation/admin-guide.md (swap device) has the details.\n"
		    "Examples:\n  zbatch dev create --size 2G --codec lz4 --unit 16k\n"
		    "  zbatch dev create --size 4G --swap --priority 100\n"
		    "  zbatch dev create --size 4G --recomp-algorithm zstd --recomp-budget 5\n"
		    "  zbatch dev list --json\n  zbatch dev destroy 0");

	auto *c = dev->add_subcommand("create", "Create a device; size, codec and unit are fixed "
				      "for its life");
	c->add_option("--size", o->size, "Capacity, e.g. 512M, 2G (required)")->required();
	c->add_option("--codec", o->codec, codec_list() + " (default lz4)");
	c->add_option("--level", o->level,
		      "The codec's compression level, zram's algorithm_params level: zstd -131072 "
		      "to 22 (default 3; above 3 not with 64k units), deflate 1-9 (default 6), lz4 "
		      "1-65537 (its acceleration: higher is faster and larger; default 1); lzo has "
		      "none. Only where software compresses: IAA compresses at its own settings");
	c->add_option("--unit", o->unit,
		      "Compression unit: 4k (per page, as zram), 16k or 64k (the pages of a large "
		      "folio compressed together: smaller, but reading one page decompresses the "
		      "unit) (default 4k)");
	c->add_option("--writeback-device", o->backing,
		      "A block device pages may be written back to (zram's backing_dev): "
		      "zbatch dev writeback moves idle or huge (incompressible) pages there; "
		      "opened exclusively for the device's life");
	c->add_option("--recomp-algorithm", o->recomp_codec,
		      "A secondary codec, " + codec_list() + " (zram's recomp_algorithm): zbatch "
		      "dev recompress, or the background thread (--recomp-budget), compresses "
		      "cold pages again with it, keeping what comes out smaller (e.g. lz4 on "
		      "swap-out, zstd later)");
	c->add_option("--recomp-level", o->recomp_level,
		      "With --recomp-algorithm: its compression level, as --level (zram's "
		      "algorithm_params priority=1)");
	c->add_option("--recomp-budget", o->recomp_budget,
		      "With --recomp-algorithm: percent of one CPU a background thread may take "
		      "recompressing the pages idle since its previous pass, 0 to 100 (default 0: "
		      "no thread)")
		->check(CLI::Range(0, 100));
	c->add_option("--recomp-interval", o->recomp_interval,
		      "With --recomp-algorithm: seconds between the background thread's passes "
		      "(the least age of what it recompresses), 1 to 86400 (default 60)")
		->check(CLI::Range(1, 86400));
	auto *swap = c->add_flag("--swap", o->swap,
				 "Also format it as swap and swap on (mkswap and swapon in one step)");
	c->add_option("--priority", o->priority,
		      "With --swap: swap priority, -1 (the kernel's default) or 0 to 32767 "
		      "(default 100: before disk swap)")
		->check(CLI::Range(-1, 32767))->needs(swap);
	c->add_flag("--discard", o->discard, "With --swap: swapon --discard")->needs(swap);
	c->callback([&action, o] { action = [o](Context &ctx) { return run_dev_create(ctx, *o); }; });

	auto so = std::make_shared<SetupOptions>();
	auto *su = dev->add_subcommand("setup", "Create, format and swap on every device of the "
				       "configuration file (what zbatch-swap.service runs at boot)");
	su->add_option("--config", so->config, "The configuration file (default " + kSwapConf +
		       "; format: Documentation/admin-guide.md, Swap at boot)");
	su->add_flag("--dry-run", so->dry_run, "Check the file and print what would be set up");
	su->footer("Devices already set up (listed in " + kSwapState + " and swapped on) are "
		   "left as they are.\nExamples:\n  zbatch dev setup --dry-run\n"
		   "  zbatch dev setup --config /etc/zbatch/swap.conf");
	su->callback([&action, so] { action = [so](Context &ctx) { return run_dev_setup(ctx, *so); }; });

	auto *td = dev->add_subcommand("teardown", "Swap off and destroy every device zbatch dev "
				       "setup created (at shutdown)");
	td->footer("Reads " + kSwapState + "; a device that cannot be swapped off (not "
		   "enough memory) stays listed there.\nExamples:\n  zbatch dev teardown");
	td->callback([&action] { action = run_dev_teardown; });

	auto *l = dev->add_subcommand("list", "Devices with their zram-style statistics and the "
				      "batch sizes their I/O had");
	l->callback([&action] { action = run_dev_list; });

	auto *id = dev->add_subcommand("idle", "Mark every page a device holds in memory idle "
				       "(zram's idle all), or with --age those not written or "
				       "read in the last SECONDS (zram's idle N): writeback idle "
				       "and recompress --type idle then take those not read or "
				       "written since");
	id->add_option("N", o->id, "Device number (zbatchswapN)")->required()->check(CLI::Range(0, 31));
	id->add_option("--age", o->idle_age, "Only pages not written or read for at least this "
		       "many seconds (to the second); the others lose their idle mark")
		->check(CLI::Range(0LL, static_cast<long long>(kIdleAgeMax)));
	id->footer("Examples:\n  zbatch dev idle 0; sleep 3600; zbatch dev writeback 0 idle\n"
		   "  zbatch dev idle 0 --age 3600; zbatch dev writeback 0 idle");
	id->callback([&action, o] {
		action = [o](Context &ctx) { return run_dev_idle(ctx, o->id, o->idle_age); };
	});

	auto *wb = dev->add_subcommand("writeback", "Move pages to the device's writeback device "
				       "(zram's writeback): they read back from there");
	wb->add_option("N", o->id, "Device number (zbatchswapN)")->required()->check(CLI::Range(0, 31));
	wb->add_option("MODE", o->mode,
		       "idle (pages marked idle and not touched since), huge (pages that did "
		       "not compress), huge_idle (both), incompressible (pages recompression "
		       "could not shrink), page_index=N (one page)")->required();
	wb->footer("A writeback limit (zram's writeback_limit, in 4 KiB pages) is set in "
		   "sysfs: Documentation/admin-guide.md, Writeback.\nExamples:\n"
		   "  zbatch dev idle 0; sleep 3600; zbatch dev writeback 0 idle\n"
		   "  zbatch dev writeback 0 huge");
	wb->callback([&action, o] {
		action = [o](Context &ctx) { return run_dev_writeback(ctx, o->id, o->mode); };
	});

	auto ra = std::make_shared<RecompressArgs>();
	auto *rc = dev->add_subcommand("recompress", "Compress pages again with the device's "
				       "secondary codec (zram's recompress), keeping what comes "
				       "out smaller");
	rc->add_option("N", o->id, "Device number (zbatchswapN)")->required()->check(CLI::Range(0, 31));
	rc->add_option("--type", ra->type,
		       "idle (pages marked idle and not touched since), huge (pages that did "
		       "not compress), huge_idle (both); default: every page in memory");
	rc->add_option("--max-pages", ra->max_pages, "At most N pages (default: no limit)")
		->check(CLI::Validator(
			[](std::string &v) -> std::string {
				if (v.find_first_not_of('0') == std::string::npos)
					return "at least 1 (leave it out: no limit)";
				return "";
			},
			"1 or more"));
	rc->add_option("--threshold", ra->threshold,
		       "Only objects of at least BYTES bytes a page, and keep only what comes "
		       "out below it, 1 to 4095 (default: any)")
		->check(CLI::Range(1, 4095));
	rc->footer("The secondary codec is set at creation: zbatch dev create --recomp-algorithm.\n"
		   "Pages it cannot shrink are marked incompressible and tried no more;\n"
		   "zbatch dev writeback N incompressible moves them to the writeback device.\n"
		   "Documentation/admin-guide.md, Recompression.\nExamples:\n"
		   "  zbatch dev idle 0; sleep 3600; zbatch dev recompress 0 --type idle\n"
		   "  zbatch dev recompress 0 --type huge --max-pages 10000");
	rc->callback([&action, o, ra] {
		action = [o, ra](Context &ctx) { return run_dev_recompress(ctx, o->id, *ra); };
	});

	auto *d = dev->add_subcommand("destroy", "Destroy a device (refused while swapped on or "
				      "open)");
	d->add_option("N", o->id, "Device number (zbatchswapN)")->required()->check(CLI::Range(0, 31));
	d->callback([&action, o] { action = [o](Context &ctx) { return run_dev_destroy(ctx, o->id); }; });
}

} // namespace zbatch::cli
