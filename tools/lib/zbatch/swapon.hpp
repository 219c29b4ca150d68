// SPDX-License-Identifier: GPL-2.0
// Formatting a device as swap and enabling it: what mkswap and swapon do,
// behind an interface the host tests replace.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zbatch/error.hpp"

namespace zbatch {

class SwapControl {
public:
	virtual ~SwapControl() = default;
	// A swap signature (mkswap's, version 1) over the first page of @dev,
	// a device of @bytes; refused while @dev is in use (O_EXCL).
	// Return: the UUID written (what identifies the area later).
	virtual Result<std::string> format(const std::string &dev, uint64_t bytes) = 0;
	// The UUID of @dev's swap header; "" when it has none.
	virtual Result<std::string> uuid(const std::string &dev) = 0;
	// swapon(2) with @priority (-1: the kernel's default) and discard.
	virtual Result<void> enable(const std::string &dev, int priority, bool discard) = 0;
	// swapoff(2): brings the device's pages back into memory first.
	virtual Result<void> disable(const std::string &dev) = 0;
};

std::unique_ptr<SwapControl> make_swap_control();

// The first page of a swap area of @bytes as mkswap writes it (union
// swap_header of <linux/swap.h>: version 1, last page, no bad pages,
// @uuid, no label, "SWAPSPACE2" at its end). Fails under 10 pages.
Result<std::vector<uint8_t>> swap_header(uint64_t bytes, size_t page_size,
					 const uint8_t (&uuid)[16]);
// The UUID of a swap header (its first page), "" without the signature.
std::string swap_header_uuid(const std::vector<uint8_t> &page);

} // namespace zbatch
