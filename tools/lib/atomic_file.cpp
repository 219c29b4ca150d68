// SPDX-License-Identifier: GPL-2.0
#include "zbatch/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <unistd.h>

#include <fmt/core.h>

namespace zbatch {

Result<void> write_file_atomic(const std::string &path, const std::string &text)
{
	auto slash = path.rfind('/');
	std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
	std::string tmp = fmt::format("{}/.{}.{}", dir,
				      slash == std::string::npos ? path : path.substr(slash + 1),
				      getpid());
	{
		std::ofstream out(tmp, std::ios::trunc);
		if (!out)
			return fail(errno ? errno : EIO, fmt::format("{}: cannot create: {}", tmp,
								     strerror(errno)));
		out << text;
		out.flush();
		if (!out) {
			int e = errno ? errno : EIO;
			std::remove(tmp.c_str());
			return fail(e, fmt::format("{}: cannot write: {}", tmp, strerror(e)));
		}
	}
	if (std::rename(tmp.c_str(), path.c_str()) != 0) {
		int e = errno;
		std::remove(tmp.c_str());
		return fail(e, fmt::format("{}: cannot replace with {}: {}", path, tmp, strerror(e)));
	}
	return {};
}

} // namespace zbatch
