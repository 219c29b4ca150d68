// SPDX-License-Identifier: GPL-2.0
#include "zbatch/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>

#include <fmt/core.h>

namespace zbatch {

Spread spread_of(std::vector<double> v)
{
	Spread s;
	if (v.empty())
		return s;
	std::sort(v.begin(), v.end());
	s.min = v.front();
	s.max = v.back();
	size_t n = v.size();
	s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	return s;
}

namespace {

struct Pages {
	std::vector<std::vector<uint8_t>> comp;	// compressed (empty: stored raw)
	std::vector<std::vector<uint8_t>> back;	// decompressed
};

struct PassNs {
	uint64_t kernel = 0;	// submit to last completion, in the kernel
	uint64_t wall = 0;	// the ioctls as userspace sees them: copies too
};

// One pass over every page in batches of @batch.
Result<PassNs> pass(const BatchDevice &dev, enum zbatch_op op, unsigned int codec,
		      unsigned int batch, unsigned int flags, const BenchConfig &cfg,
		      Pages &pg, unsigned int &incompressible)
{
	PassNs ns;
	incompressible = 0;
	for (size_t first = 0; first < cfg.pages; first += batch) {
		size_t n = std::min<size_t>(batch, cfg.pages - first);
		std::vector<Request> reqs;
		std::vector<size_t> idx;
		for (size_t i = first; i < first + n; i++) {
			std::span<const uint8_t> page(cfg.data.data() + i * cfg.page_size, cfg.page_size);
			if (op == ZBATCH_OP_COMPRESS) {
				pg.comp[i].resize(cfg.page_size);
				reqs.push_back({page, pg.comp[i]});
			} else {
				if (pg.comp[i].empty())
					continue;	// stored raw
				pg.back[i].resize(cfg.page_size);
				reqs.push_back({pg.comp[i], pg.back[i]});
			}
			idx.push_back(i);
		}
		if (reqs.empty())
			continue;
		auto t0 = std::chrono::steady_clock::now();
		auto r = dev.submit(op, codec, reqs, flags);
		auto t1 = std::chrono::steady_clock::now();
		if (!r)
			return std::unexpected(r.error());
		ns.kernel += r->elapsed_ns;
		ns.wall += std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
		for (size_t k = 0; k < reqs.size(); k++) {
			size_t i = idx[k];
			if (op == ZBATCH_OP_COMPRESS && reqs[k].status == -ENOSPC) {
				pg.comp[i].clear();
				incompressible++;
				continue;
			}
			if (reqs[k].status)
				return fail(-reqs[k].status,
					    fmt::format("{} of page {} failed: {}",
							op == ZBATCH_OP_COMPRESS ? "compress" : "decompress",
							i, std::strerror(-reqs[k].status)));
			if (op == ZBATCH_OP_COMPRESS) {
				pg.comp[i].resize(reqs[k].produced);
			} else if (reqs[k].produced != cfg.page_size ||
				   std::memcmp(pg.back[i].data(), cfg.data.data() + i * cfg.page_size,
					       cfg.page_size)) {
				return fail(EIO, fmt::format("page {} did not round-trip", i));
			}
		}
	}
	return ns;
}

} // namespace

Result<std::vector<BenchRow>> run_bench(const BatchDevice &dev, const BenchConfig &cfg)
{
	if (cfg.data.size() < cfg.pages * cfg.page_size)
		return fail(EINVAL, "benchmark data shorter than pages * page size");
	std::vector<BenchRow> rows;
	const double bytes = static_cast<double>(cfg.pages * cfg.page_size);
	const unsigned int total = cfg.codecs.size() * cfg.batch_sizes.size() * cfg.rounds;
	unsigned int done = 0;
	for (unsigned int codec : cfg.codecs) {
		for (unsigned int batch : cfg.batch_sizes) {
			std::vector<double> bc, sc, bd, sd, wc, wd;
			Pages pg{std::vector<std::vector<uint8_t>>(cfg.pages),
				 std::vector<std::vector<uint8_t>>(cfg.pages)};
			unsigned int incompressible = 0;
			size_t comp_bytes = 0;
			for (unsigned int round = 0; round < cfg.rounds; round++) {
				// alternate which goes first, so drift hits both alike
				for (int k = 0; k < 2; k++) {
					bool batched = (k == 0) == (round % 2 == 0);
					unsigned int flags = batched ? 0 : ZBATCH_F_ONE_BY_ONE;
					auto c = pass(dev, ZBATCH_OP_COMPRESS, codec, batch, flags, cfg, pg,
						      incompressible);
					if (!c)
						return std::unexpected(c.error());
					unsigned int dummy;
					auto d = pass(dev, ZBATCH_OP_DECOMPRESS, codec, batch, flags, cfg,
						      pg, dummy);
					if (!d)
						return std::unexpected(d.error());
					(batched ? bc : sc).push_back(bytes / 1e6 / (c->kernel / 1e9));
					(batched ? bd : sd).push_back(bytes / 1e6 / (d->kernel / 1e9));
					if (batched) {
						wc.push_back(bytes / 1e6 / (c->wall / 1e9));
						wd.push_back(bytes / 1e6 / (d->wall / 1e9));
					}
				}
				if (cfg.progress)
					cfg.progress(++done, total);
			}
			comp_bytes = 0;
			for (const auto &c : pg.comp)
				comp_bytes += c.empty() ? cfg.page_size : c.size();
			BenchRow rc{codec_name(codec), batch, "compress", spread_of(bc), spread_of(sc),
				    0, comp_bytes / bytes, incompressible, spread_of(wc)};
			BenchRow rd{codec_name(codec), batch, "decompress", spread_of(bd), spread_of(sd),
				    0, 0, 0, spread_of(wd)};
			for (auto *r : {&rc, &rd})
				r->speedup = r->single_mbps.median > 0 ?
					r->batched_mbps.median / r->single_mbps.median : 0;
			rows.push_back(rc);
			rows.push_back(rd);
		}
	}
	return rows;
}

} // namespace zbatch
