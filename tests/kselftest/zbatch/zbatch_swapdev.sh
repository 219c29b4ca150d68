#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The batched swap device (build/tests/zbatch_vm_swapdev_tests), as KTAP.
# Needs a machine where zswap was never enabled since boot.
# shellcheck source=tests/kselftest/zbatch/ksft_zbatch.sh
. "$(dirname "$0")/ksft_zbatch.sh"
ksft_need "$ko" "$build/tests/zbatch_vm_swapdev_tests" "$build/tools/zbatch"
grep -q Y /sys/module/zswap/parameters/enabled 2>/dev/null &&
	ksft_skip "zswap is enabled: large folios would not come back whole"
ksft_load
ksft_gtest "$build/tests/zbatch_vm_swapdev_tests"
