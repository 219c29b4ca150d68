// SPDX-License-Identifier: GPL-2.0
// Device: the /dev/zbatch ioctl interface (include/uapi/linux/zbatch.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <linux/zbatch.h>

#include "zbatch/error.hpp"

namespace zbatch {

inline constexpr const char *kDevicePath = "/dev/zbatch";

struct Request {
	std::span<const uint8_t> src;
	std::span<uint8_t> dst;
	int status = 0;			// filled by submit: 0 or -errno
	uint32_t produced = 0;		// filled by submit
};

struct BatchResult {
	uint64_t elapsed_ns = 0;	// in the kernel, submit to last completion
	uint32_t nr_done = 0;
};

// Names of the codecs as sysfs spells them; index = enum zbatch_codec.
std::string codec_name(unsigned int codec);
Result<unsigned int> codec_from_name(const std::string &name);

class Device {
public:
	static Result<Device> open(const std::string &path = kDevicePath);
	Device(Device &&other) noexcept;
	Device &operator=(Device &&other) noexcept;
	Device(const Device &) = delete;
	Device &operator=(const Device &) = delete;
	~Device();

	Result<zbatch_ioc_info> info() const;
	// One ioctl for the whole batch. The call fails only for errors of the
	// batch itself; each request's own outcome is in its status.
	Result<BatchResult> submit(enum zbatch_op op, unsigned int codec,
				   std::vector<Request> &reqs, unsigned int flags = 0) const;
	int fd() const { return fd_; }

private:
	explicit Device(int fd) : fd_(fd) {}
	int fd_ = -1;
};

} // namespace zbatch
