// SPDX-License-Identifier: GPL-2.0
#include "zbatch/device.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/core.h>

namespace zbatch {

Result<Device> Device::open(const std::string &path)
{
	int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		std::string hint = e == ENOENT ? " (is the zbatch module loaded?)" :
				   e == EACCES || e == EPERM ? " (root is needed)" : "";
		return fail(e, fmt::format("cannot open {}: {}{}", path, std::strerror(e), hint));
	}
	return Device(fd);
}

Device::Device(Device &&other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

Device &Device::operator=(Device &&other) noexcept
{
	if (this != &other) {
		if (fd_ >= 0)
			::close(fd_);
		fd_ = other.fd_;
		other.fd_ = -1;
	}
	return *this;
}

Device::~Device()
{
	if (fd_ >= 0)
		::close(fd_);
}

Result<zbatch_ioc_info> Device::info() const
{
	zbatch_ioc_info info{};
	info.size = sizeof(info);
	if (::ioctl(fd_, ZBATCH_IOC_INFO, &info) < 0) {
		int e = errno;
		return fail(e, fmt::format("ZBATCH_IOC_INFO: {}", std::strerror(e)));
	}
	return info;
}

Result<BatchResult> Device::submit(enum zbatch_op op, unsigned int codec,
				   std::vector<Request> &reqs, unsigned int flags) const
{
	std::vector<zbatch_ioc_req> ureqs(reqs.size());
	for (size_t i = 0; i < reqs.size(); i++) {
		ureqs[i] = {};
		ureqs[i].src = reinterpret_cast<uintptr_t>(reqs[i].src.data());
		ureqs[i].dst = reinterpret_cast<uintptr_t>(reqs[i].dst.data());
		ureqs[i].src_len = static_cast<uint32_t>(reqs[i].src.size());
		ureqs[i].dst_len = static_cast<uint32_t>(reqs[i].dst.size());
	}
	zbatch_ioc_batch b{};
	b.size = sizeof(b);
	b.req_size = sizeof(zbatch_ioc_req);
	b.op = op;
	b.codec = codec;
	b.flags = flags;
	b.nr_reqs = static_cast<uint32_t>(reqs.size());
	b.reqs = reinterpret_cast<uintptr_t>(ureqs.data());
	if (::ioctl(fd_, ZBATCH_IOC_SUBMIT, &b) < 0) {
		int e = errno;
		return fail(e, fmt::format("ZBATCH_IOC_SUBMIT ({} requests): {}", reqs.size(),
					   std::strerror(e)));
	}
	for (size_t i = 0; i < reqs.size(); i++) {
		reqs[i].status = ureqs[i].status;
		reqs[i].produced = ureqs[i].status ? 0 : ureqs[i].dst_len;
	}
	return BatchResult{b.elapsed_ns, b.nr_done};
}

} // namespace zbatch
