// SPDX-License-Identifier: GPL-2.0
// zbatch dev create|list|destroy: the batched compressed swap devices.
#include <fmt/core.h>

#include "commands.hpp"
#include "zbatch/codec.hpp"
#include "zbatch/json.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/swapdev.hpp"

namespace zbatch::cli {

Result<int> run_dev_create(Context &ctx, const DevOptions &o)
{
	auto &con = ctx.con;
	auto size = parse_bytes(o.size);
	if (!size)
		return fail(EINVAL, "--size " + size.error().message);
	auto id = swapdev_create(ctx.tree, {*size, o.codec, o.unit});
	if (!id)
		return std::unexpected(id.error());
	if (ctx.json)
		con.print("{}", json_text({{"id", *id}, {"name", swapdev_name(*id)},
					    {"device", swapdev_node(*id)}}));
	else
		con.print("{0}: {1} bytes, {2}, {3} units\n"
			   "use it: mkswap {0} && swapon -p 100 {0}\n",
			   swapdev_node(*id), *size, o.codec, o.unit);
	return kExitOk;
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
	con.print("{:<12} {:>9} {:<7} {:<5} {:>9} {:>9} {:>9} {:>6} {:>6} {:>6} {:>7}  {}\n",
		   "device", "size", "codec", "unit", "stored", "compr", "used", "same", "huge",
		   "units", "partial", "swap");
	for (const auto &d : *devs) {
		auto us = [&](const char *k) {
			auto it = d.unit_stat.find(k);
			return it == d.unit_stat.end() ? 0 : it->second;
		};
		con.print("{:<12} {:>9} {:<7} {:<5} {:>9} {:>9} {:>9} {:>6} {:>6} {:>6} {:>7}  {}\n",
			   d.name, mib(d.disksize), d.codec, d.unit, mib(d.orig_bytes),
			   mib(d.compr_bytes), mib(d.used_bytes), d.same_pages, d.huge_pages,
			   us("units"), us("partial_reads"), d.swap_use.empty() ? "no" : "yes");
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

Result<int> run_dev_destroy(Context &ctx, int id)
{
	if (auto r = swapdev_destroy(ctx.tree, id); !r)
		return std::unexpected(r.error());
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
		    "  zbatch dev list --json\n  zbatch dev destroy 0");

	auto *c = dev->add_subcommand("create", "Create a device; size, codec and unit are fixed "
				      "for its life");
	c->add_option("--size", o->size, "Capacity, e.g. 512M, 2G (required)")->required();
	c->add_option("--codec", o->codec, codec_list() + " (default lz4)");
	c->add_option("--unit", o->unit,
		      "Compression unit: 4k (per page, as zram), 16k or 64k (the pages of a large "
		      "folio compressed together: smaller, but reading one page decompresses the "
		      "unit) (default 4k)");
	c->callback([&action, o] { action = [o](Context &ctx) { return run_dev_create(ctx, *o); }; });

	auto *l = dev->add_subcommand("list", "Devices with their zram-style statistics and the "
				      "batch sizes their I/O had");
	l->callback([&action] { action = run_dev_list; });

	auto *d = dev->add_subcommand("destroy", "Destroy a device (refused while swapped on or "
				      "open)");
	d->add_option("N", o->id, "Device number (zbatchswapN)")->required()->check(CLI::Range(0, 31));
	d->callback([&action, o] { action = [o](Context &ctx) { return run_dev_destroy(ctx, o->id); }; });
}

} // namespace zbatch::cli
