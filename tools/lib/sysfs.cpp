// SPDX-License-Identifier: GPL-2.0
#include "zbatch/sysfs.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include <fmt/core.h>

namespace zbatch {

SysfsTree::SysfsTree(std::filesystem::path root) : root_(std::move(root)) {}

std::filesystem::path SysfsTree::resolve(const std::string &path) const
{
	std::string rel = path;
	while (!rel.empty() && rel.front() == '/')
		rel.erase(rel.begin());
	return root_ / rel;
}

bool SysfsTree::exists(const std::string &path) const
{
	std::error_code ec;
	return std::filesystem::exists(resolve(path), ec);
}

Result<std::string> SysfsTree::read(const std::string &path) const
{
	const auto full = resolve(path);
	int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return fail(e, fmt::format("cannot read {}: {}", full.string(), std::strerror(e)));
	}
	std::string out;
	char buf[4096];
	for (;;) {
		ssize_t n = ::read(fd, buf, sizeof(buf));
		if (n < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			::close(fd);
			return fail(e, fmt::format("cannot read {}: {}", full.string(), std::strerror(e)));
		}
		if (n == 0)
			break;
		out.append(buf, static_cast<size_t>(n));
	}
	::close(fd);
	if (!out.empty() && out.back() == '\n')
		out.pop_back();
	return out;
}

Result<void> SysfsTree::write(const std::string &path, const std::string &value) const
{
	const auto full = resolve(path);
	int fd = ::open(full.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);	// as the shell's >
	if (fd < 0) {
		int e = errno;
		return fail(e, fmt::format("cannot open {} for writing: {}", full.string(),
					   std::strerror(e)));
	}
	// One write() call: sysfs applies or refuses a value whole.
	ssize_t n = ::write(fd, value.data(), value.size());
	int e = errno;
	::close(fd);
	if (n < 0)
		return fail(e, fmt::format("{} refused '{}': {}", full.string(), value,
					   std::strerror(e)));
	return {};
}

std::string SysfsTree::read_choice(const std::string &path) const
{
	auto v = read(path);
	if (!v)
		return "";
	auto l = v->find('['), r = v->find(']');
	if (l == std::string::npos || r == std::string::npos || r < l)
		return "";
	return v->substr(l + 1, r - l - 1);
}

Result<std::vector<std::string>> SysfsTree::list(const std::string &path) const
{
	const auto full = resolve(path);
	std::error_code ec;
	std::vector<std::string> names;
	for (const auto &ent : std::filesystem::directory_iterator(full, ec))
		names.push_back(ent.path().filename().string());
	if (ec)
		return fail(ec.value(), fmt::format("cannot list {}: {}", full.string(), ec.message()));
	std::sort(names.begin(), names.end());
	return names;
}

} // namespace zbatch
