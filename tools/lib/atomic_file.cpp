// SPDX-License-Identifier: GPL-2.0
#include "zbatch/atomic_file.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

namespace zbatch {

Result<void> write_file_atomic(const std::string &path, const std::string &text)
{
	auto slash = path.rfind('/');
	const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
	const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
	// a fresh name nobody can have planted (mkstemp: O_CREAT | O_EXCL,
	// never through a symbolic link), readable by all as the file it
	// replaces would be (node_exporter runs as its own user)
	std::string tmp = dir + "/." + base + ".XXXXXX";
	int fd = mkstemp(tmp.data());
	if (fd < 0)
		return fail(errno, fmt::format("{}: cannot create a file beside it: {}", path,
					       strerror(errno)));
	auto bad = [&](const char *what) {
		int e = errno ? errno : EIO;
		close(fd);
		unlink(tmp.c_str());
		return fail(e, fmt::format("{}: cannot {} {}: {}", path, what, tmp, strerror(e)));
	};
	if (fchmod(fd, 0644) != 0)
		return bad("set the mode of");
	for (size_t done = 0; done < text.size();) {
		ssize_t n = write(fd, text.data() + done, text.size() - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return bad("write");
		done += static_cast<size_t>(n);
	}
	if (fsync(fd) != 0)
		return bad("sync");
	if (close(fd) != 0) {
		int e = errno;
		unlink(tmp.c_str());
		return fail(e, fmt::format("{}: cannot close {}: {}", path, tmp, strerror(e)));
	}
	if (rename(tmp.c_str(), path.c_str()) != 0) {
		int e = errno;
		unlink(tmp.c_str());
		return fail(e, fmt::format("{}: cannot replace it with {}: {}", path, tmp,
					   strerror(e)));
	}
	// the rename itself, durable
	int d = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d >= 0) {
		fsync(d);
		close(d);
	}
	return {};
}

} // namespace zbatch
