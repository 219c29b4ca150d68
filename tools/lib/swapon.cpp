// SPDX-License-Identifier: GPL-2.0
#include "zbatch/swapon.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/swap.h>
#include <chrono>
#include <unistd.h>

#include <fmt/core.h>

namespace zbatch {

Result<std::vector<uint8_t>> swap_header(uint64_t bytes, size_t page, const uint8_t (&uuid)[16])
{
	const uint64_t pages = bytes / page;
	if (pages < 10)
		return fail(EINVAL, fmt::format("{} bytes: a swap area needs 10 pages at least", bytes));
	if (pages - 1 > UINT32_MAX)
		return fail(EINVAL, fmt::format("{} bytes: too large for a swap header", bytes));
	std::vector<uint8_t> h(page, 0);
	// after 1024 bytes of boot block: version, last_page, nr_badpages, uuid
	const uint32_t version = 1, last = static_cast<uint32_t>(pages - 1);
	memcpy(&h[1024], &version, 4);
	memcpy(&h[1028], &last, 4);
	memcpy(&h[1036], uuid, 16);
	memcpy(&h[page - 10], "SWAPSPACE2", 10);
	return h;
}

std::string swap_header_uuid(const std::vector<uint8_t> &h)
{
	if (h.size() < 4096 || memcmp(&h[h.size() - 10], "SWAPSPACE2", 10))
		return "";
	std::string u;
	for (int i = 0; i < 16; i++)
		u += fmt::format("{}{:02x}", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
				 h[1036 + i]);
	return u;
}

namespace {

// A random (version 4) UUID; getrandom(2) without waiting for the entropy
// pool, which early boot (and a fresh VM) may not have filled yet: the
// clock and pid then (a RAM swap area's UUID only needs to differ).
void random_uuid(uint8_t (&u)[16])
{
	if (getrandom(u, sizeof(u), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(u))) {
		uint64_t a = std::chrono::steady_clock::now().time_since_epoch().count();
		uint64_t b = std::chrono::system_clock::now().time_since_epoch().count() ^
			     (static_cast<uint64_t>(getpid()) << 32);
		memcpy(u, &a, 8);
		memcpy(u + 8, &b, 8);
	}
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
}

class RealSwap final : public SwapControl {
public:
	Result<std::string> format(const std::string &dev, uint64_t bytes) override
	{
		uint8_t uuid[16];
		random_uuid(uuid);
		long page = sysconf(_SC_PAGESIZE);
		auto h = swap_header(bytes, page > 0 ? static_cast<size_t>(page) : 4096, uuid);
		if (!h)
			return std::unexpected(h.error());
		int fd = open(dev.c_str(), O_WRONLY | O_EXCL | O_CLOEXEC);
		if (fd < 0)
			return fail(errno, fmt::format("{}: cannot open to format: {}{}", dev,
						       strerror(errno), errno == EBUSY ?
						       " (in use: swapped on or mounted)" : ""));
		ssize_t w = pwrite(fd, h->data(), h->size(), 0);
		int e = w < 0 ? errno : EIO;
		if (w != static_cast<ssize_t>(h->size()) || fsync(fd) != 0) {
			e = w == static_cast<ssize_t>(h->size()) ? errno : e;
			close(fd);
			return fail(e, fmt::format("{}: cannot write the swap header: {}", dev,
						   strerror(e)));
		}
		close(fd);
		return swap_header_uuid(*h);
	}
	Result<std::string> uuid(const std::string &dev) override
	{
		long page = sysconf(_SC_PAGESIZE);
		std::vector<uint8_t> h(page > 0 ? static_cast<size_t>(page) : 4096);
		int fd = open(dev.c_str(), O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return fail(errno, fmt::format("{}: {}", dev, strerror(errno)));
		ssize_t n = pread(fd, h.data(), h.size(), 0);
		int e = errno;
		close(fd);
		if (n != static_cast<ssize_t>(h.size()))
			return fail(n < 0 ? e : EIO, fmt::format("{}: cannot read its first page",
								 dev));
		return swap_header_uuid(h);
	}
	Result<void> enable(const std::string &dev, int priority, bool discard) override
	{
		int flags = discard ? SWAP_FLAG_DISCARD : 0;
		if (priority >= 0)
			flags |= SWAP_FLAG_PREFER |
				 ((priority << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK);
		if (swapon(dev.c_str(), flags) != 0)
			return fail(errno, fmt::format("swapon {}: {}", dev, strerror(errno)));
		return {};
	}
	Result<void> disable(const std::string &dev) override
	{
		if (swapoff(dev.c_str()) != 0)
			return fail(errno, fmt::format("swapoff {}: {}{}", dev, strerror(errno),
						       errno == ENOMEM ? " (not enough memory to "
						       "bring its pages back)" : ""));
		return {};
	}
};

} // namespace

std::unique_ptr<SwapControl> make_swap_control()
{
	return std::make_unique<RealSwap>();
}

} // namespace zbatch
