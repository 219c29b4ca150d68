// SPDX-License-Identifier: GPL-2.0
// BatchDevice: what submits batches (the bench, the CLI); Device is the
// /dev/zbatch ioctl implementation (include/uapi/linux/zbatch.h), host
// tests give the commands a fake.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <linux/zbatch.h>

#include "zbatch/codec.hpp"
#include "zbatch/error.hpp"
#include "zbatch/paths.hpp"

namespace zbatch {

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

class BatchDevice {
public:
	virtual ~BatchDevice() = default;
	virtual Result<zbatch_ioc_info> info() const = 0;
	// The whole batch at once. The call fails only for errors of the batch
	// itself; each request's own outcome is in its status.
	virtual Result<BatchResult> submit(enum zbatch_op op, unsigned int codec,
					   std::vector<Request> &reqs,
					   unsigned int flags = 0) const = 0;
};

class Device final : public BatchDevice {
public:
	static Result<Device> open(const std::string &path = kDevicePath);
	Device(Device &&other) noexcept;
	Device &operator=(Device &&other) noexcept;
	Device(const Device &) = delete;
	Device &operator=(const Device &) = delete;
	~Device() override;

	Result<zbatch_ioc_info> info() const override;
	// One ioctl (ZBATCH_IOC_SUBMIT) for the whole batch.
	Result<BatchResult> submit(enum zbatch_op op, unsigned int codec,
				   std::vector<Request> &reqs, unsigned int flags = 0) const override;
	int fd() const { return fd_; }

private:
	explicit Device(int fd) : fd_(fd) {}
	int fd_ = -1;
};

} // namespace zbatch
