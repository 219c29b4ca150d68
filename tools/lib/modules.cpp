// SPDX-License-Identifier: GPL-2.0
// What keeps zbatch loaded, in words: logic over the Modules interface.
#include "zbatch/kmod.hpp"
#include "zbatch/paths.hpp"

#include <fmt/core.h>

namespace zbatch {

std::vector<std::string> zbatch_users(Modules &mods, const SysfsTree &tree)
{
	std::vector<std::string> users;
	for (const auto &h : mods.holders("zbatch"))
		users.push_back("module " + h);
	bool devices = false;
	for (const auto &b : tree.list(kSysBlockDir).value_or(std::vector<std::string>{}))
		if (b.rfind(kSwapdevPrefix, 0) == 0) {
			users.push_back(fmt::format("swap device /dev/{} (swapoff it, then zbatch dev "
						    "destroy {})", b, b.substr(kSwapdevPrefix.size())));
			devices = true;
		}
	auto comp = tree.read(kZswapParamsDir + "/compressor");
	if (comp && comp->ends_with("-zbatch"))
		users.push_back(fmt::format("zswap (compressor {}: switch it away, e.g. echo lzo > "
					    "{}/compressor)", *comp, kZswapParamsDir));
	else if (!devices && mods.refcount("zbatch") > 0)
		users.push_back("crypto transforms of zbatch's algorithms (zswap pools holding "
				"pages compressed by zbatch: swapoff/swapon releases them)");
	return users;
}

} // namespace zbatch
