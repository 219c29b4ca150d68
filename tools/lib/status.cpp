// SPDX-License-Identifier: GPL-2.0
#include "zbatch/status.hpp"

#include <cerrno>
#include <filesystem>

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
	return st;
}

} // namespace zbatch
