// SPDX-License-Identifier: GPL-2.0
#include "zbatch/pattern.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <utility>

#include <unistd.h>

#include <fmt/core.h>

namespace zbatch {

Result<Pattern> pattern_from_name(const std::string &name)
{
	if (name == "text")
		return Pattern::Text;
	if (name == "zeros")
		return Pattern::Zeros;
	if (name == "random")
		return Pattern::Random;
	if (name == "mixed")
		return Pattern::Mixed;
	if (name == "real")
		return Pattern::Real;
	if (name == "same")
		return Pattern::Same;
	return fail(EINVAL,
		    fmt::format("unknown pattern '{}' (text, zeros, random, mixed, real, same)", name));
}

std::string pattern_name(Pattern p)
{
	switch (p) {
	case Pattern::Text: return "text";
	case Pattern::Zeros: return "zeros";
	case Pattern::Random: return "random";
	case Pattern::Mixed: return "mixed";
	case Pattern::Real: return "real";
	case Pattern::Same: return "same";
	}
	return "?";
}

void same_page(uint64_t seed, uint64_t page, uint8_t *out, size_t len)
{
	// one word per page, never zero
	uint64_t w = ((seed + 1) * 0xbf58476d1ce4e5b9ULL ^ page * 0x9e3779b97f4a7c15ULL) | 1;

	for (size_t off = 0; off < len; off += sizeof(w))
		std::memcpy(out + off, &w, std::min(sizeof(w), len - off));
}

static void fill_text(uint8_t *p, size_t len, std::mt19937_64 &rng)
{
	static constexpr std::array<const char *, 16> words = {
		"the ", "page ", "swap ", "memory ", "of ", "and ", "kernel ", "batch ",
		"compress ", "a ", "to ", "queue ", "engine ", "folio ", "data\n", "in ",
	};
	size_t i = 0;
	while (i < len) {
		const char *w = words[rng() % words.size()];
		size_t n = std::min(std::strlen(w), len - i);
		std::memcpy(p + i, w, n);
		i += n;
	}
}

std::vector<uint8_t> generate(Pattern p, size_t len, uint64_t seed)
{
	std::vector<uint8_t> v(len);
	std::mt19937_64 rng(seed);
	switch (p) {
	case Pattern::Zeros:
		break;
	case Pattern::Random:
		for (auto &b : v)
			b = static_cast<uint8_t>(rng());
		break;
	case Pattern::Text:
		fill_text(v.data(), len, rng);
		break;
	case Pattern::Mixed:
		// per 4 KiB page: a random quarter, text for the rest
		for (size_t off = 0; off < len; off += 4096) {
			size_t n = std::min<size_t>(4096, len - off);
			size_t r = n / 4;
			for (size_t i = 0; i < r; i++)
				v[off + i] = static_cast<uint8_t>(rng());
			fill_text(v.data() + off + r, n - r, rng);
		}
		break;
	case Pattern::Same:
		for (size_t off = 0; off < len; off += 4096)
			same_page(seed, off / 4096, v.data() + off, std::min<size_t>(4096, len - off));
		break;
	case Pattern::Real: {
		auto c = real_corpus();
		if (!c || (*c)->empty())
			return {};
		const auto &d = **c;
		size_t pages = d.size() / 4096, off = (seed % pages) * 4096;
		for (size_t i = 0; i < len; i++)
			v[i] = d[(off + i) % d.size()];
		break;
	}
	}
	return v;
}

namespace {

constexpr size_t kCorpusPage = 4096;
constexpr size_t kRun = 256 * 1024;	// bytes of one kind in a row

// The entries of @dirs whose names @keep, sorted by path: names only
// (no stat: over a slow file system, e.g. a guest's 9p root, a stat per
// entry of a large directory costs minutes).
std::vector<std::filesystem::path> names_in(const std::vector<std::string> &dirs,
					    bool (*keep)(const std::filesystem::path &))
{
	std::vector<std::filesystem::path> out;
	std::error_code ec;
	for (const auto &d : dirs) {
		for (auto it = std::filesystem::directory_iterator(d, ec);
		     !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
			if (keep(it->path()))
				out.push_back(it->path());
		ec.clear();
	}
	std::sort(out.begin(), out.end());
	return out;
}

bool ends_with(const std::string &s, const std::string &x)
{
	return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

// Up to @budget bytes of the regular files (not links: no file twice)
// of @files whose first bytes @keep, each whole as mapped (its last
// page padded with zeros), at most @per_file of each.
std::vector<uint8_t> gather(const std::vector<std::filesystem::path> &files, size_t budget,
			    size_t per_file, bool (*keep)(const std::vector<uint8_t> &))
{
	std::vector<uint8_t> out;
	std::error_code ec;
	for (const auto &f : files) {
		if (out.size() >= budget)
			break;
		if (std::filesystem::is_symlink(f, ec))
			continue;
		std::ifstream in(f, std::ios::binary);
		if (!in)
			continue;
		std::vector<uint8_t> b(std::min(per_file, budget - out.size()));
		in.read(reinterpret_cast<char *>(b.data()), static_cast<std::streamsize>(b.size()));
		b.resize(in ? b.size() : static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
		if (b.size() < kCorpusPage || !keep(b))
			continue;
		b.resize((b.size() + kCorpusPage - 1) / kCorpusPage * kCorpusPage, 0);
		out.insert(out.end(), b.begin(), b.end());
	}
	out.resize(std::min(out.size(), budget));
	return out;
}

// A heap as a program leaves it after reading @text into words, sorting
// them and keeping them in a linked structure: malloc chunks (an 8-byte
// size word, then the object: next and string pointers, a length, the
// characters), 16-byte aligned, pointers into a plausible heap range.
std::vector<uint8_t> heap_of(const std::vector<uint8_t> &text, size_t budget)
{
	std::vector<std::string> words;
	std::string w;
	for (uint8_t c : text) {
		if (std::isalnum(c) || c == '_') {
			w.push_back(static_cast<char>(c));
		} else if (!w.empty()) {
			if (w.size() <= 48)
				words.push_back(std::move(w));
			w.clear();
		}
	}
	std::sort(words.begin(), words.end());
	std::vector<uint8_t> out;
	uint64_t base = 0x55d0c0a00000ULL;
	auto put64 = [&](uint64_t x) {
		for (int i = 0; i < 8; i++)
			out.push_back(static_cast<uint8_t>(x >> (8 * i)));
	};
	for (size_t i = 0; i < words.size() && out.size() + 128 < budget; i++) {
		size_t obj = 24 + words[i].size() + 1;
		size_t chunk = (obj + 8 + 15) / 16 * 16;
		put64(chunk | 1);				// size | PREV_INUSE
		put64(base + out.size() + chunk + 8);		// next node
		put64(base + out.size() + 8);			// the string (inline)
		put64(words[i].size());
		out.insert(out.end(), words[i].begin(), words[i].end());
		out.resize(out.size() + (chunk - 8 - 24 - words[i].size()), 0);
	}
	out.resize(std::min(budget, out.size()) / kCorpusPage * kCorpusPage);
	return out;
}

struct Corpus {
	std::vector<uint8_t> data;
	std::vector<std::pair<std::string, size_t>> mix;
	std::string error;
};

Corpus build_corpus()
{
	Corpus c;
	constexpr size_t MiB = 1024 * 1024;
	auto any_name = [](const std::filesystem::path &) { return true; };
	auto so = [](const std::filesystem::path &p) {
		return p.filename().string().find(".so") != std::string::npos;
	};
	auto header = [](const std::filesystem::path &p) { return ends_with(p.string(), ".h"); };
	auto packed = [](const std::filesystem::path &p) {
		auto s = p.string();
		return ends_with(s, ".gz") || ends_with(s, ".xz");
	};
	auto elf = [](const std::vector<uint8_t> &b) {
		return std::memcmp(b.data(), "\x7f" "ELF", 4) == 0;
	};
	auto all = [](const std::vector<uint8_t> &) { return true; };
	std::vector<std::pair<std::string, std::vector<uint8_t>>> kinds;
	kinds.emplace_back("executables", gather(names_in({"/usr/bin", "/usr/sbin"}, any_name),
						 4 * MiB, 512 * 1024, elf));
	kinds.emplace_back("libraries",
			   gather(names_in({"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu"}, so),
				  4 * MiB, 1 * MiB, elf));
	auto txt = gather(names_in({"/usr/share/common-licenses"}, any_name), 3 * MiB, 256 * 1024,
			  all);
	auto hdr = gather(names_in({"/usr/include", "/usr/include/linux"}, header),
			  3 * MiB - txt.size(), 256 * 1024, all);
	txt.insert(txt.end(), hdr.begin(), hdr.end());
	kinds.emplace_back("heap", heap_of(txt, 3 * MiB));
	kinds.emplace_back("text", std::move(txt));
	kinds.emplace_back("compressed",
			   gather(names_in({"/usr/share/man/man1", "/usr/share/man/man8"}, packed),
				  1536 * 1024, 64 * 1024, all));
	kinds.emplace_back("zeros", std::vector<uint8_t>(512 * 1024, 0));
	for (const auto &[name, bytes] : kinds) {
		c.mix.emplace_back(name, bytes.size());
		if (bytes.size() < kRun && name != "zeros")
			c.error += (c.error.empty() ? "" : ", ") + name;
	}
	if (!c.error.empty()) {
		c.error = "real data: too little on this system of: " + c.error;
		return c;
	}
	// runs of each kind in turn, until every kind is used up
	std::vector<size_t> at(kinds.size(), 0);
	for (bool more = true; more;) {
		more = false;
		for (size_t k = 0; k < kinds.size(); k++) {
			const auto &b = kinds[k].second;
			size_t n = std::min(kRun, b.size() - at[k]);
			if (!n)
				continue;
			c.data.insert(c.data.end(), b.begin() + static_cast<ptrdiff_t>(at[k]),
				      b.begin() + static_cast<ptrdiff_t>(at[k] + n));
			at[k] += n;
			more = true;
		}
	}
	return c;
}

// Built once per system and kept: ZBATCH_REAL_CACHE, else
// /tmp/zbatch-real-v1.bin (over a guest's 9p root, building it takes a
// minute or two; a benchmark starts many processes). The file holds the
// kinds' sizes, then the data; one that does not match is rebuilt.
constexpr char kCacheMagic[16] = "zbatch-real-v1";

std::string cache_path()
{
	const char *p = std::getenv("ZBATCH_REAL_CACHE");
	return p && *p ? p : "/tmp/zbatch-real-v1.bin";
}

bool cache_load(Corpus &c, const std::vector<std::string> &names)
{
	std::ifstream in(cache_path(), std::ios::binary);
	char magic[sizeof(kCacheMagic)] = {};
	uint64_t total = 0;
	in.read(magic, sizeof(magic));
	if (!in || std::memcmp(magic, kCacheMagic, sizeof(magic)))
		return false;
	for (const auto &n : names) {
		uint64_t b = 0;
		in.read(reinterpret_cast<char *>(&b), sizeof(b));
		c.mix.emplace_back(n, b);
		total += b;
	}
	c.data.resize(total);
	in.read(reinterpret_cast<char *>(c.data.data()), static_cast<std::streamsize>(total));
	if (!in || total % kCorpusPage || !total) {
		c = Corpus{};
		return false;
	}
	return true;
}

void cache_store(const Corpus &c)
{
	std::string tmp = cache_path() + "." + std::to_string(getpid());
	{
		std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
		out.write(kCacheMagic, sizeof(kCacheMagic));
		for (const auto &m : c.mix) {
			uint64_t b = m.second;
			out.write(reinterpret_cast<const char *>(&b), sizeof(b));
		}
		out.write(reinterpret_cast<const char *>(c.data.data()),
			  static_cast<std::streamsize>(c.data.size()));
		if (!out)
			return (void)std::remove(tmp.c_str());
	}
	std::rename(tmp.c_str(), cache_path().c_str());	/* whole or not at all */
}

const Corpus &corpus()
{
	static const Corpus c = [] {
		Corpus k;
		if (cache_load(k, {"executables", "libraries", "heap", "text", "compressed",
				   "zeros"}))
			return k;
		k = build_corpus();
		if (k.error.empty())
			cache_store(k);
		return k;
	}();
	return c;
}

} // namespace

Result<const std::vector<uint8_t> *> real_corpus()
{
	const Corpus &c = corpus();
	if (!c.error.empty())
		return fail(ENOENT, c.error);
	return &c.data;
}

std::vector<std::pair<std::string, size_t>> real_corpus_mix()
{
	return corpus().mix;
}

Result<std::vector<uint8_t>> load_corpus(const std::string &path, size_t len)
{
	std::ifstream f(path, std::ios::binary);
	if (!f)
		return fail(errno ? errno : ENOENT,
			    fmt::format("cannot read corpus file {}: {}", path, std::strerror(errno)));
	std::vector<uint8_t> data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	if (data.empty())
		return fail(EINVAL, fmt::format("corpus file {} is empty", path));
	std::vector<uint8_t> v(len);
	for (size_t i = 0; i < len; i++)
		v[i] = data[i % data.size()];
	return v;
}

} // namespace zbatch
