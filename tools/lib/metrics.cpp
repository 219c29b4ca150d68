// SPDX-License-Identifier: GPL-2.0
#include "zbatch/metrics.hpp"

#include <cctype>
#include <map>
#include <set>

#include <fmt/core.h>
#include <linux/zbatch.h>

namespace zbatch {

namespace {

// A sample's labels, already escaped: {"device", "0"} -> device="0".
using Labels = std::vector<std::pair<std::string, std::string>>;

std::string escape(const std::string &v)
{
	std::string o;
	for (char c : v) {
		if (c == '\\' || c == '"')
			o += '\\';
		if (c == '\n') {
			o += "\\n";
			continue;
		}
		o += c;
	}
	return o;
}

// A metric name from a counter's: [a-zA-Z0-9_] only.
std::string name_part(const std::string &s)
{
	std::string o;
	for (char c : s)
		o += (isalnum(static_cast<unsigned char>(c)) ? c : '_');
	return o;
}

// Families in the order first written, each with its HELP and TYPE once
// and its samples together, as the format requires.
class Exposition {
public:
	void add(const std::string &name, const std::string &type, const std::string &help,
		 const Labels &labels, const std::string &value)
	{
		declare(name, type, help);
		sample(name, "", labels, value);
	}
	void add(const std::string &name, const std::string &type, const std::string &help,
		 const Labels &labels, uint64_t value)
	{
		add(name, type, help, labels, std::to_string(value));
	}
	// A sample of a family already declared (histogram/summary series).
	void sample(const std::string &family, const std::string &suffix, const Labels &labels,
		    const std::string &value)
	{
		auto it = index_.find(family);
		if (it == index_.end())
			return;	/* not declared: a bug of this file, never a sample */
		std::string line = family + suffix;
		if (!labels.empty()) {
			line += '{';
			for (size_t i = 0; i < labels.size(); i++)
				line += fmt::format("{}{}=\"{}\"", i ? "," : "", labels[i].first,
						    escape(labels[i].second));
			line += '}';
		}
		families_[it->second].samples.push_back(line + " " + value);
	}
	void declare(const std::string &name, const std::string &type, const std::string &help)
	{
		if (index_.try_emplace(name, families_.size()).second)
			families_.push_back({name, type, help, {}});
	}
	std::string text() const
	{
		std::string o;
		for (const auto &f : families_) {
			o += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, f.help, f.name, f.type);
			for (const auto &s : f.samples)
				o += s + "\n";
		}
		return o;
	}

private:
	struct Family {
		std::string name, type, help;
		std::vector<std::string> samples;
	};
	std::vector<Family> families_;
	std::map<std::string, size_t> index_;
};

std::string seconds(uint64_t ns)
{
	return fmt::format("{:.9f}", static_cast<double>(ns) / 1e9);
}

// What each counter of debugfs stats means (Documentation/ABI/zbatch);
// the operation and error counters become labels of one family each.
const std::map<std::string, std::string> &counter_help()
{
	static const std::map<std::string, std::string> h = {
		{"completions", "Requests completed with status 0."},
		{"enqueue_retries", "Descriptors a work queue refused because it was full."},
		{"timeouts", "Descriptors that timed out on a work queue."},
		{"sw_fallbacks", "Requests run by the submitter because a work queue was full, "
				 "missing or timed out."},
		{"submitter_helped", "Requests the submitter ran from an engine's slice."},
		{"engine_stolen", "Requests an engine ran from another slice."},
		{"handoffs", "Slices posted to engines (one wake-up each)."},
		{"helper_misses", "Posted slices no engine took in time (run by others)."},
		{"engine_yields", "Slices an engine gave back because its CPU got busy."},
		{"inline_batches", "Batches run on the submitting CPU only."},
		{"inline_runs", "Requests run on the calling CPU by request (acomp)."},
		{"inline_atomic", "Inline requests from callers that cannot sleep."},
		{"device_errors", "Requests a device failed, redone in software."},
		{"bad_input", "Requests software failed too after a device error: the data."},
	};
	return h;
}

// The debugfs counters of one scope as families named @prefix*.
void add_counters(Exposition &x, const std::string &prefix, const std::string &what,
		  const Counters &c, const Labels &labels)
{
	for (const auto &[k, v] : c) {
		Labels l = labels;
		if (k == "compress_calls" || k == "decompress_calls") {
			l.emplace_back("op", k.substr(0, k.find('_')));
			x.add(prefix + "requests_total", "counter",
			      "Requests submitted " + what + ", by operation.", l, v);
		} else if (k.rfind("compress_bytes_", 0) == 0 ||
			   k.rfind("decompress_bytes_", 0) == 0) {
			l.emplace_back("op", k.substr(0, k.find('_')));
			l.emplace_back("direction", k.substr(k.rfind('_') + 1));
			x.add(prefix + "request_bytes_total", "counter",
			      "Bytes into and out of requests " + what +
			      ", by operation and direction.", l, v);
		} else if (k.rfind("err_", 0) == 0) {
			l.emplace_back("kind", k.substr(4));
			x.add(prefix + "errors_total", "counter",
			      "Requests that ended in an error " + what + ", by kind.", l, v);
		} else {
			auto h = counter_help().find(k);
			x.add(prefix + name_part(k) + "_total", "counter",
			      h != counter_help().end() ? h->second.substr(0, h->second.size() - 1) +
							  " (" + what + ")." :
			      fmt::format("The counter {} of debugfs stats ({}; "
					  "Documentation/ABI/zbatch).", k, what),
			      l, v);
		}
	}
}

// unit_stat's gauges: what a device holds now, what a read's copy costs;
// every other line counts.
const std::set<std::string> unit_gauges = {"units", "copy_ns_per_4k"};

void add_swapdev(Exposition &x, const SwapdevInfo &d)
{
	const Labels dev = {{"device", d.name}};
	const std::string p = "zbatch_swapdev_";
	x.add(p + "info", "gauge",
	      "A swap device and its settings (value 1; level 0: the codec's default; "
	      "recomp_codec: the secondary codec of recompression, empty: none).",
	      {{"device", d.name}, {"codec", d.codec}, {"level", std::to_string(d.level)},
	       {"unit", d.unit}, {"recomp_codec", d.recomp_codec},
	       {"recomp_level", std::to_string(d.recomp_level)}},
	      1);
	x.add(p + "disksize_bytes", "gauge", "Size of the device.", dev, d.disksize);
	x.add(p + "mem_limit_bytes", "gauge", "Memory the device may use (0: no limit).", dev,
	      d.mem_limit);
	x.add(p + "swap_active", "gauge", "1 while the device is in use as swap.", dev,
	      d.swap_use.empty() ? 0 : 1);
	x.add(p + "orig_data_bytes", "gauge", "Uncompressed size of the data stored (mm_stat).",
	      dev, d.orig_bytes);
	x.add(p + "compr_data_bytes", "gauge", "Compressed size of the data stored (mm_stat).",
	      dev, d.compr_bytes);
	x.add(p + "mem_used_bytes", "gauge", "Memory the device takes now (mm_stat).", dev,
	      d.used_bytes);
	x.add(p + "mem_used_max_bytes", "gauge", "Most memory the device took (mm_stat).", dev,
	      d.max_used_bytes);
	x.add(p + "same_pages", "gauge", "Same-filled pages stored without memory (mm_stat).",
	      dev, d.same_pages);
	x.add(p + "huge_pages", "gauge", "Pages stored uncompressed (mm_stat).", dev,
	      d.huge_pages);
	x.add(p + "failed_reads_total", "counter", "Reads that failed (io_stat).", dev,
	      d.failed_reads);
	x.add(p + "failed_writes_total", "counter", "Writes that failed (io_stat).", dev,
	      d.failed_writes);
	x.add(p + "invalid_io_total", "counter", "I/O refused as not page-aligned (io_stat).",
	      dev, d.invalid_io);
	x.add(p + "notify_free_total", "counter", "Swap slots freed by the kernel (io_stat).",
	      dev, d.notify_free);
	if (!d.backing_dev.empty()) {
		x.add(p + "bd_pages", "gauge", "Pages on the writeback device now (bd_stat).", dev,
		      d.bd_count);
		x.add(p + "bd_reads_total", "counter",
		      "Pages read from the writeback device (bd_stat).", dev, d.bd_reads);
		x.add(p + "bd_writes_total", "counter",
		      "Pages written to the writeback device (bd_stat).", dev, d.bd_writes);
	}
	if (!d.recomp_codec.empty()) {
		x.add(p + "recomp_budget_ratio", "gauge",
		      "Share of one CPU the background recompression thread may take "
		      "(recomp_budget; 0: no thread).",
		      dev, fmt::format("{:.2f}", d.recomp_budget / 100.0));
		x.add(p + "recomp_interval_seconds", "gauge",
		      "Time between the background recompression thread's passes (recomp_interval).",
		      dev, d.recomp_interval);
		x.add(p + "recomp_pages", "gauge",
		      "Pages stored with the secondary codec now (recomp_stat).", dev,
		      d.recomp_pages);
		x.add(p + "recomp_tried_pages_total", "counter",
		      "Pages recompression compressed again (recomp_stat).", dev, d.recomp_tried);
		x.add(p + "recomp_recompressed_pages_total", "counter",
		      "Pages recompression stored smaller (recomp_stat).", dev, d.recomp_done);
		x.add(p + "recomp_incompressible_pages_total", "counter",
		      "Pages recompression could not shrink, not tried again (recomp_stat).", dev,
		      d.recomp_incomp);
		x.add(p + "recomp_saved_bytes_total", "counter",
		      "Bytes recompression saved (recomp_stat).", dev, d.recomp_saved);
		x.add(p + "recomp_cpu_seconds_total", "counter",
		      "CPU time recompression took, its own and the engines' (recomp_stat).", dev,
		      seconds(d.recomp_cpu_ns));
	}
	for (const auto &[k, v] : d.unit_stat) {
		const bool gauge = unit_gauges.count(k);
		x.add(p + name_part(k) + (gauge ? "" : "_total"), gauge ? "gauge" : "counter",
		      fmt::format("unit_stat's {} (Documentation/ABI/zbatch).", k), dev,
		      std::to_string(v));
	}
	for (const auto &[n, wr] : d.batches) {
		for (const auto &[op, count] : {std::pair<const char *, uint64_t>{"write", wr.first},
						{"read", wr.second}})
			x.add(p + "batches_total", "counter",
			      "Batches of device I/O, by operation and requests per batch "
			      "(batch_stat).",
			      {{"device", d.name}, {"op", op}, {"requests", std::to_string(n)}}, count);
	}
}

void add_stats(Exposition &x, const Stats &s)
{
	add_counters(x, "zbatch_", "to zbatch", s.global, {});
	for (const auto &[scope, c] : s.scopes) {
		// "dev0" or "dev0/wq1": a modelled device, one of its work queues
		auto slash = scope.find('/');
		Labels l = {{"device", scope.substr(3, slash == std::string::npos ?
								std::string::npos : slash - 3)}};
		if (slash == std::string::npos) {
			add_counters(x, "zbatch_dev_", "to a device", c, l);
		} else {
			l.emplace_back("wq", scope.substr(slash + 3));
			add_counters(x, "zbatch_wq_", "to a work queue", c, l);
		}
	}
	// requests per batch: cumulative buckets of powers of two
	const std::string hist = "zbatch_batch_requests";
	x.declare(hist, "histogram", "Requests per batch submitted to zbatch.");
	uint64_t count = 0, sum = 0;
	for (unsigned int le = 1;; le *= 2) {
		uint64_t below = 0;
		for (const auto &[n, c] : s.batch_hist)
			if (n <= le)
				below += c;
		x.sample(hist, "_bucket", {{"le", std::to_string(le)}}, std::to_string(below));
		if (le >= ZBATCH_MAX_BATCH)
			break;
	}
	for (const auto &[n, c] : s.batch_hist) {
		count += c;
		sum += static_cast<uint64_t>(n) * c;
	}
	x.sample(hist, "_bucket", {{"le", "+Inf"}}, std::to_string(count));
	x.sample(hist, "_sum", {}, std::to_string(sum));
	x.sample(hist, "_count", {}, std::to_string(count));
	// sampled latency percentiles: a summary without a sum (not kept)
	const std::string lat = "zbatch_request_latency_seconds";
	if (!s.latency.empty())
		x.declare(lat, "summary", "Latency of sampled requests, by stage or operation "
			  "(debugfs latency; no _sum: the module keeps percentiles only).");
	for (const auto &l : s.latency) {
		for (const auto &[q, v] : {std::pair<const char *, uint64_t>{"0.5", l.p50},
					   {"0.95", l.p95}, {"0.99", l.p99}})
			x.sample(lat, "", {{"op", l.op}, {"quantile", q}}, seconds(v));
		x.sample(lat, "_count", {{"op", l.op}}, std::to_string(l.samples));
	}
	if (s.engine_cpu_known)
		x.add("zbatch_engine_cpu_seconds_total", "counter",
		      "CPU time zbatch's engine threads ran since the module was loaded.", {},
		      seconds(s.engine_cpu_ns));
}

} // namespace

std::string prometheus_text(bool loaded, const Stats *stats,
			    const std::vector<SwapdevInfo> &devs)
{
	Exposition x;
	x.add("zbatch_module_loaded", "gauge", "1 when the zbatch module is loaded.", {},
	      loaded ? 1 : 0);
	x.add("zbatch_stats_readable", "gauge",
	      "1 when zbatch's statistics (debugfs, root) could be read.", {}, stats ? 1 : 0);
	if (stats)
		add_stats(x, *stats);
	for (const auto &d : devs)
		add_swapdev(x, d);
	return x.text();
}

} // namespace zbatch
