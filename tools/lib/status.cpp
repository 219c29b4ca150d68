// SPDX-License-Identifier: GPL-2.0
#include "zbatch/status.hpp"
#include "zbatch/paths.hpp"
#include "zbatch/json.hpp"

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
		else
			st.errors.emplace_back(path, v.error().message);
	}
	const std::string &pdir = kParamsDir;
	for (const auto &p : tree.list(pdir).value_or(std::vector<std::string>{}))
		if (auto v = tree.read(pdir + "/" + p))
			st.params[p] = *v;
	for (const auto &d : *names) {
		if (d.rfind("dev", 0) != 0)
			continue;
		const std::string dp = fmt::format("{}/{}", kSysfsDir, d);
		auto rd = [&](const std::string &f) {
			auto v = tree.read(dp + "/" + f);
			if (!v)
				st.errors.emplace_back(dp + "/" + f, v.error().message);
			return v.value_or("?");
		};
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
		st.iaa = {true, rd("driver"), rd("state"), rd("reason"),
			  tree.read(ip + "/codec").value_or("deflate")};
		if (st.iaa.codec.empty())
			st.iaa.codec = "deflate";	// none attached yet: the default driver's
		auto l = st.iaa.state.find('['), r = st.iaa.state.find(']');
		if (l != std::string::npos && r != std::string::npos && r > l)
			st.iaa.state = st.iaa.state.substr(l + 1, r - l - 1);
	}
	st.algorithms = parse_proc_crypto(tree.read(kProcCrypto).value_or(""), "zbatch");
	if (auto c = tree.read(kZswapParamsDir + "/compressor")) {
		st.zswap_compressor = *c;
		st.zswap_enabled = tree.read(kZswapParamsDir + "/enabled").value_or("N") == "Y";
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
		else if (name != st.iaa.codec)
			r.why = "IAA runs " + st.iaa.codec + " only";
		else if (st.iaa.state == "online")
			r = {name, "iaa", st.iaa.driver + ", online"};
		else
			r.why = "IAA " + st.iaa.state + ": " + st.iaa.reason;
		rows.push_back(r);
	}
	return rows;
}

std::string status_to_json(const ModuleStatus &st)
{
	// "?" marks an attribute that could not be read: null in JSON
	auto str = [](const std::string &v) -> Json { return v == "?" ? Json(nullptr) : Json(v); };
	auto num = [](const std::string &v) -> Json { return json_number(v); };
	Json j = {{"loaded", true}, {"version", st.version}};
	j["attributes"] = Json::object();
	for (const auto &[k, v] : st.attributes)
		j["attributes"][k] = v;
	j["params"] = Json::object();
	for (const auto &[k, v] : st.params)
		j["params"][k] = v;
	j["devices"] = Json::array();
	for (const auto &d : st.devices) {
		Json dj = {{"name", d.name}, {"node", num(d.node)}, {"engines", num(d.engines)},
			   {"cpus", str(d.cpus)}, {"wqs", Json::array()}};
		for (const auto &w : d.wqs)
			dj["wqs"].push_back({{"name", w.name}, {"mode", str(w.mode)}, {"size", num(w.size)},
					     {"priority", num(w.priority)},
					     {"enabled", w.enabled == "?" ? Json(nullptr) : Json(w.enabled == "1")},
					     {"queued", num(w.queued)}});
		j["devices"].push_back(dj);
	}
	j["algorithms"] = Json::array();
	for (const auto &a : st.algorithms)
		j["algorithms"].push_back({{"name", a.name}, {"driver", a.driver},
					   {"priority", a.priority.empty() ? Json(0) : num(a.priority)},
					   {"selftest", a.selftest}});
	j["executors"] = Json::array();
	for (const auto &r : executor_table(st))
		j["executors"].push_back({{"codec", r.codec}, {"executor", r.executor}, {"why", r.why}});
	j["iaa"] = {{"present", st.iaa.present}, {"driver", str(st.iaa.driver)},
		    {"state", str(st.iaa.state)}, {"reason", str(st.iaa.reason)},
		    {"codec", st.iaa.codec}};
	j["zswap"] = {{"compressor", st.zswap_compressor}, {"enabled", st.zswap_enabled},
		      {"uses_zbatch", st.zswap_uses_zbatch}};
	j["errors"] = Json::array();
	for (const auto &[path, why] : st.errors)
		j["errors"].push_back({{"path", path}, {"error", why}});
	return json_text(j);
}

} // namespace zbatch
