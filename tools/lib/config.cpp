// SPDX-License-Identifier: GPL-2.0
#include "zbatch/config.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/json.hpp"
#include "zbatch/parse.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <sstream>

#include <fmt/core.h>
#include <linux/zbatch.h>

namespace zbatch {

static const std::string kDir = kSysfsDir + "/";

const std::vector<Tunable> &tunables()
{
	static const std::vector<Tunable> t = {
		{"codec", TunableKind::Choice, 0, 0,
		 "codec of batches that ask for the default (choices: the module's list)"},
		{"sync_mode", TunableKind::Choice, 0, 0,
		 "how a submitter awaits completion (choices: the module's list)"},
		{"distribute_comps", TunableKind::Bool, 0, 1,
		 "compress jobs round-robin over the package's devices"},
		{"distribute_decomps", TunableKind::Bool, 0, 1,
		 "decompress jobs round-robin too (default: local device)"},
		{"g_comp_wqs_per_iaa", TunableKind::Uint, 0, ZBATCH_MAX_WQS,
		 "compress-only WQs per device (the rest decompress-only)"},
		{"verify_compress", TunableKind::Bool, 0, 1, "decompress and compare every output"},
		{"timeout_ms", TunableKind::Uint, ZBATCH_TIMEOUT_MS_MIN, ZBATCH_TIMEOUT_MS_MAX,
		 "descriptor timeout"},
		{"acomp_inline", TunableKind::Bool, 0, 1, "acomp calls run on the calling CPU"},
	};
	return t;
}

std::string tunable_help(const Tunable &t)
{
	if (t.kind == TunableKind::Uint)
		return fmt::format("{} ({}..{})", t.help, t.min, t.max);
	return t.help;
}

const Tunable *find_tunable(const std::string &key)
{
	for (const auto &t : tunables())
		if (key == t.name)
			return &t;
	return nullptr;
}

static std::string known_keys()
{
	std::string s;
	for (const auto &t : tunables())
		s += (s.empty() ? "" : ", ") + std::string(t.name);
	return s;
}

static Result<const Tunable *> lookup(const std::string &key)
{
	const Tunable *t = find_tunable(key);
	if (!t)
		return fail(EINVAL, fmt::format("unknown key '{}' (known: {})", key, known_keys()));
	return t;
}

Result<std::vector<std::string>> config_choices(const SysfsTree &tree, const std::string &key)
{
	auto raw = tree.read(kDir + key);
	if (!raw)
		return std::unexpected(raw.error());
	std::vector<std::string> out;
	std::istringstream in(*raw);
	std::string w;
	while (in >> w) {
		if (w.front() == '[' && w.back() == ']')
			w = w.substr(1, w.size() - 2);
		out.push_back(w);
	}
	return out;
}

Result<std::string> config_get(const SysfsTree &tree, const std::string &key)
{
	auto t = lookup(key);
	if (!t)
		return std::unexpected(t.error());
	auto raw = tree.read(kDir + key);
	if (!raw)
		return std::unexpected(raw.error());
	if ((*t)->kind == TunableKind::Choice) {
		auto c = tree.read_choice(kDir + key);
		if (c.empty())
			return fail(EINVAL, fmt::format("{}{}: unexpected content '{}'", kDir, key, *raw));
		return c;
	}
	return *raw;
}

static Result<std::string> normalise(const SysfsTree &tree, const Tunable &t,
				     const std::string &value)
{
	switch (t.kind) {
	case TunableKind::Choice: {
		auto choices = config_choices(tree, t.name);
		if (!choices)
			return std::unexpected(choices.error());
		if (std::find(choices->begin(), choices->end(), value) == choices->end()) {
			std::string all;
			for (const auto &c : *choices)
				all += (all.empty() ? "" : ", ") + c;
			return fail(EINVAL, fmt::format("{}: '{}' is not one of: {}", t.name, value, all));
		}
		return value;
	}
	case TunableKind::Bool:
		if (value == "1" || value == "true" || value == "on" || value == "yes")
			return std::string("1");
		if (value == "0" || value == "false" || value == "off" || value == "no")
			return std::string("0");
		return fail(EINVAL, fmt::format("{}: '{}' is not a boolean (0/1, on/off, true/false)",
						t.name, value));
	case TunableKind::Uint: {
		auto v = parse_number<unsigned long>(value, t.name);
		if (!v || *v < t.min || *v > t.max)
			return fail(EINVAL, fmt::format("{}: '{}' is not a number from {} to {}", t.name,
							value, t.min, t.max));
		return std::to_string(*v);
	}
	}
	return fail(EINVAL, "unreachable");
}

Result<void> config_set(const SysfsTree &tree, const std::string &key, const std::string &value)
{
	auto t = lookup(key);
	if (!t)
		return std::unexpected(t.error());
	auto v = normalise(tree, **t, value);
	if (!v)
		return std::unexpected(v.error());
	return tree.write(kDir + key, *v);
}

Result<Config> config_snapshot(const SysfsTree &tree)
{
	Config cfg;
	for (const auto &t : tunables()) {
		auto v = config_get(tree, t.name);
		if (!v)
			return std::unexpected(v.error());
		cfg[t.name] = *v;
	}
	return cfg;
}

Result<void> config_apply(const SysfsTree &tree, const Config &cfg)
{
	Config norm;
	for (const auto &[k, v] : cfg) {
		auto t = lookup(k);
		if (!t)
			return std::unexpected(t.error());
		auto n = normalise(tree, **t, v);
		if (!n)
			return std::unexpected(n.error());
		norm[k] = *n;
	}
	auto before = config_snapshot(tree);
	if (!before)
		return std::unexpected(before.error());
	std::vector<std::string> done;
	for (const auto &[k, v] : norm) {
		if (auto w = tree.write(kDir + k, v); !w) {
			for (const auto &d : done)
				(void)tree.write(kDir + d, before->at(d));
			return fail(w.error().code, fmt::format("{} (nothing applied: {} restored)",
								 w.error().message,
								 done.empty() ? "none" : fmt::format("{} key(s)", done.size())));
		}
		done.push_back(k);
	}
	return {};
}

std::string config_to_json(const Config &cfg)
{
	Json j = Json::object();
	for (const auto &[k, v] : cfg)
		j[k] = v;
	return json_text(j);
}

Result<Config> config_from_json(const std::string &text)
{
	// nlohmann keeps the last of duplicate keys: refuse them while parsing
	std::string dup;
	auto cb = [&dup, seen = std::vector<std::string>{}](int depth, Json::parse_event_t ev,
							      Json &v) mutable {
		if (ev == Json::parse_event_t::key && depth == 1) {
			auto k = v.get<std::string>();
			if (std::find(seen.begin(), seen.end(), k) != seen.end() && dup.empty())
				dup = k;
			seen.push_back(k);
		}
		return true;
	};
	Json j;
	try {
		j = Json::parse(text, cb);
	} catch (const Json::parse_error &e) {
		return fail(EINVAL, fmt::format("JSON: {}", e.what()));
	}
	if (!dup.empty())
		return fail(EINVAL, fmt::format("JSON: duplicate key '{}'", dup));
	if (!j.is_object())
		return fail(EINVAL, "JSON: expected an object of settings");
	Config cfg;
	for (const auto &[k, v] : j.items()) {
		if (v.is_string())
			cfg[k] = v.get<std::string>();
		else if (v.is_boolean())
			cfg[k] = v.get<bool>() ? "true" : "false";
		else if (v.is_number_integer() || v.is_number_unsigned())
			cfg[k] = v.dump();
		else
			return fail(EINVAL, fmt::format("JSON: '{}' must be a string, an integer or a "
							"boolean, not {}", k, v.type_name()));
	}
	return cfg;
}

} // namespace zbatch
