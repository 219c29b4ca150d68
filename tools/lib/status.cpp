// SPDX-License-Identifier: GPL-2.0
#include "zbatch/status.hpp"

#include <cerrno>
#include <filesystem>
#include <sstream>

#include <fmt/core.h>

namespace zbatch {

Result<ModuleStatus> read_status(const SysfsTree &tree)
{
	if (!tree.exists(kSysfsDir))
		return fail(ENOENT, fmt::format("module zbatch is not loaded ({} is missing); "
						"load it with 'zbatch load' or 'insmod kmod/zbatch.ko'",
						tree.resolve(kSysfsDir).string()));
	ModuleStatus st;
	auto version = tree.read(fmt::format("{}/version", kSysfsDir));
	if (!version)
		return std::unexpected(version.error());
	st.version = *version;
	auto names = tree.list(kSysfsDir);
	if (!names)
		return std::unexpected(names.error());
	for (const auto &name : *names) {
		const auto path = fmt::format("{}/{}", kSysfsDir, name);
		if (name == "version" || std::filesystem::is_directory(tree.resolve(path)))
			continue;
		if (auto v = tree.read(path))
			st.attributes[name] = *v;
	}
	const std::string pdir = "/sys/module/zbatch/parameters";
	for (const auto &p : tree.list(pdir).value_or(std::vector<std::string>{}))
		if (auto v = tree.read(pdir + "/" + p))
			st.params[p] = *v;
	for (const auto &d : *names) {
		if (d.rfind("dev", 0) != 0)
			continue;
		const std::string dp = fmt::format("{}/{}", kSysfsDir, d);
		auto rd = [&](const std::string &f) { return tree.read(dp + "/" + f).value_or("?"); };
		DeviceStatus ds{d, rd("node"), rd("engines"), rd("cpus"), {}};
		for (const auto &w : tree.list(dp).value_or(std::vector<std::string>{})) {
			if (w.rfind("wq", 0) != 0)
				continue;
			ds.wqs.push_back({w, rd(w + "/mode"), rd(w + "/size"), rd(w + "/priority"),
					  rd(w + "/enabled"), rd(w + "/queued")});
		}
		st.devices.push_back(ds);
	}
	const std::string ip = fmt::format("{}/iaa", kSysfsDir);
	if (tree.exists(ip)) {
		auto rd = [&](const std::string &f) { return tree.read(ip + "/" + f).value_or("?"); };
		st.iaa = {true, rd("driver"), rd("state"), rd("reason")};
		auto l = st.iaa.state.find('['), r = st.iaa.state.find(']');
		if (l != std::string::npos && r != std::string::npos && r > l)
			st.iaa.state = st.iaa.state.substr(l + 1, r - l - 1);
	}
	st.algorithms = parse_proc_crypto(tree.read("/proc/crypto").value_or(""), "zbatch");
	if (auto c = tree.read("/sys/module/zswap/parameters/compressor")) {
		st.zswap_compressor = *c;
		st.zswap_enabled = tree.read("/sys/module/zswap/parameters/enabled").value_or("N") == "Y";
		for (const auto &a : st.algorithms)
			if (a.driver == *c || (a.name == *c && a.priority != "0"))
				st.zswap_uses_zbatch = true;
	}
	return st;
}

std::vector<CryptoAlg> parse_proc_crypto(const std::string &text, const std::string &module)
{
	std::vector<CryptoAlg> out;
	std::map<std::string, std::string> kv;
	auto flush = [&] {
		if (kv["module"] == module)
			out.push_back({kv["name"], kv["driver"], kv["priority"], kv["selftest"]});
		kv.clear();
	};
	size_t pos = 0;
	while (pos <= text.size()) {
		size_t eol = text.find('\n', pos);
		std::string line = text.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos);
		if (line.empty()) {
			flush();
		} else {
			auto colon = line.find(':');
			if (colon != std::string::npos) {
				auto trim = [](std::string x) {
					x.erase(0, x.find_first_not_of(' '));
					x.erase(x.find_last_not_of(' ') + 1);
					return x;
				};
				kv[trim(line.substr(0, colon))] = trim(line.substr(colon + 1));
			}
		}
		if (eol == std::string::npos)
			break;
		pos = eol + 1;
	}
	flush();
	return out;
}

std::vector<ExecutorRow> executor_table(const ModuleStatus &st)
{
	std::vector<ExecutorRow> rows;
	auto it = st.attributes.find("codec");
	if (it == st.attributes.end())
		return rows;
	std::string list = it->second, name;
	for (char &c : list)
		if (c == '[' || c == ']')
			c = ' ';
	std::istringstream in(list);
	while (in >> name) {
		ExecutorRow r{name, "software engines", ""};
		if (!st.iaa.present)
			r.why = "this module has no IAA executor";
		else if (name != "deflate")
			r.why = "IAA runs deflate only";
		else if (st.iaa.state == "online")
			r = {name, "iaa", st.iaa.driver + ", online"};
		else
			r.why = "IAA " + st.iaa.state + ": " + st.iaa.reason;
		rows.push_back(r);
	}
	return rows;
}

namespace {

std::string esc(const std::string &s)
{
	std::string o;
	for (char c : s) {
		if (c == '"' || c == '\\')
			o += '\\';
		if (static_cast<unsigned char>(c) < 0x20)
			o += fmt::format("\\u{:04x}", static_cast<int>(c));
		else
			o += c;
	}
	return o;
}

} // namespace

std::string status_to_json(const ModuleStatus &st)
{
	std::string o = fmt::format("{{\"loaded\": true, \"version\": \"{}\", \"attributes\": {{", st.version);
	size_t i = 0;
	for (const auto &[k, v] : st.attributes)
		o += fmt::format("{}\"{}\": \"{}\"", i++ ? ", " : "", k, v);
	o += "}, \"params\": {";
	i = 0;
	for (const auto &[k, v] : st.params)
		o += fmt::format("{}\"{}\": \"{}\"", i++ ? ", " : "", k, v);
	o += "}, \"devices\": [";
	i = 0;
	for (const auto &d : st.devices) {
		o += fmt::format("{}{{\"name\": \"{}\", \"node\": {}, \"engines\": {}, \"wqs\": [",
				 i++ ? ", " : "", d.name, d.node, d.engines);
		size_t j = 0;
		for (const auto &w : d.wqs)
			o += fmt::format("{}{{\"name\": \"{}\", \"mode\": \"{}\", \"size\": {}, "
					 "\"enabled\": {}}}", j++ ? ", " : "", w.name, w.mode, w.size,
					 w.enabled == "1" ? "true" : "false");
		o += "]}";
	}
	o += "], \"algorithms\": [";
	i = 0;
	for (const auto &a : st.algorithms)
		o += fmt::format("{}{{\"name\": \"{}\", \"driver\": \"{}\", \"priority\": {}, "
				 "\"selftest\": \"{}\"}}", i++ ? ", " : "", a.name, a.driver,
				 a.priority.empty() ? "0" : a.priority, a.selftest);
	o += "], \"executors\": [";
	i = 0;
	for (const auto &r : executor_table(st))
		o += fmt::format("{}{{\"codec\": \"{}\", \"executor\": \"{}\", \"why\": \"{}\"}}",
				 i++ ? ", " : "", esc(r.codec), esc(r.executor), esc(r.why));
	o += fmt::format("], \"iaa\": {{\"present\": {}, \"driver\": \"{}\", \"state\": \"{}\", "
			 "\"reason\": \"{}\"}}", st.iaa.present ? "true" : "false",
			 esc(st.iaa.driver), esc(st.iaa.state), esc(st.iaa.reason));
	o += fmt::format(", \"zswap\": {{\"compressor\": \"{}\", \"enabled\": {}, "
			 "\"uses_zbatch\": {}}}}}\n", st.zswap_compressor,
			 st.zswap_enabled ? "true" : "false", st.zswap_uses_zbatch ? "true" : "false");
	return o;
}

} // namespace zbatch
