// SPDX-License-Identifier: GPL-2.0
// Batching benchmark through /dev/zbatch: the same pages submitted in
// batches and one request at a time, side by side, in one run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "zbatch/device.hpp"

namespace zbatch {

struct BenchConfig {
	std::vector<unsigned int> codecs;	// enum zbatch_codec
	std::vector<unsigned int> batch_sizes;	// e.g. {16} or 1..32
	size_t page_size = 4096;
	size_t pages = 512;
	unsigned int rounds = 5;
	std::vector<uint8_t> data;		// pages * page_size bytes
	// Called after each round: rounds done and rounds in all (over every
	// codec and batch size), for a progress display.
	std::function<void(unsigned int, unsigned int)> progress;
};

struct Spread {
	double median = 0, min = 0, max = 0;
};

struct BenchRow {
	std::string codec;
	unsigned int batch = 0;
	std::string op;			// "compress" or "decompress"
	Spread batched_mbps;		// MB/s of input, kernel time
	Spread single_mbps;		// same pages, one request per submit
	double speedup = 0;		// median batched / median single
	double ratio = 0;		// compressed / original (compress rows)
	unsigned int incompressible = 0;	// pages that came back -ENOSPC
	Spread batched_wall_mbps;	// batched, over the ioctls' wall time (copies too)
};

Spread spread_of(std::vector<double> v);

// Runs the configuration; fails on the first request that errs in a way
// other than -ENOSPC, or when a round trip does not give the input back.
Result<std::vector<BenchRow>> run_bench(const BatchDevice &dev, const BenchConfig &cfg);

} // namespace zbatch
