// SPDX-License-Identifier: GPL-2.0
// The real system behind a Context: libkmod, libaccel-config, /dev/zbatch,
// the workload's processes, the wall clock and the effective user.
#pragma once

#include "zbatch/context.hpp"

namespace zbatch::cli {

void use_real_system(Context &ctx);

} // namespace zbatch::cli
