// SPDX-License-Identifier: GPL-2.0
#include "zbatch/pattern.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

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
	return fail(EINVAL, fmt::format("unknown pattern '{}' (text, zeros, random, mixed)", name));
}

std::string pattern_name(Pattern p)
{
	switch (p) {
	case Pattern::Text: return "text";
	case Pattern::Zeros: return "zeros";
	case Pattern::Random: return "random";
	case Pattern::Mixed: return "mixed";
	}
	return "?";
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
	}
	return v;
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
