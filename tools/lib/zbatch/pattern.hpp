// SPDX-License-Identifier: GPL-2.0
// Test and benchmark data: generated patterns or a corpus file, in pages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zbatch/error.hpp"

namespace zbatch {

// Real: pages as real programs leave memory (real_corpus()); the others
// are generated. Same: each page one 64-bit word repeated, never zero
// (a device's same-filled page, which it stores without its codec; the
// kernel itself keeps zero pages off swap devices).
enum class Pattern { Text, Zeros, Random, Mixed, Real, Same };

Result<Pattern> pattern_from_name(const std::string &name);
std::string pattern_name(Pattern p);

// @len bytes of @p, deterministic for a given @seed. Real: @len bytes of
// real_corpus() from a page chosen by @seed on, wrapping (empty when no
// corpus could be built: check real_corpus() first).
std::vector<uint8_t> generate(Pattern p, size_t len, uint64_t seed);

// Same: page @page of @seed's pages, @len bytes (at most a page): one
// nonzero word repeated, a different word for every page, so that a
// device stores it as same-filled (no codec, no allocation) and a
// read-back still checks it.
void same_page(uint64_t seed, uint64_t page, uint8_t *out, size_t len = 4096);

// What a Debian system's memory holds, about 16 MiB, built once per
// process from files every system has, the same on every run (sorted
// file lists, fixed budgets): the pages of executables and shared
// libraries as mapped, text (headers, licences), files that are already
// compressed, a heap as a program leaves it after parsing and sorting
// that text (malloc-style chunks: headers, pointers, strings), and some
// zero pages. The kinds alternate in runs of 256 KiB, so that a large
// folio is mostly of one kind, as in a process's address space. An
// error names what is missing when the system has too little of it.
Result<const std::vector<uint8_t> *> real_corpus();

// The share of each kind in real_corpus(), for reports: "kind bytes".
std::vector<std::pair<std::string, size_t>> real_corpus_mix();

// The first @len bytes of @path, repeated when the file is shorter.
Result<std::vector<uint8_t>> load_corpus(const std::string &path, size_t len);

} // namespace zbatch
