#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The module, /dev/zbatch, the CLI, fault injection and the stress test
# (build/tests/zbatch_vm_tests), as KTAP.
# shellcheck source=tests/kselftest/zbatch/ksft_zbatch.sh
. "$(dirname "$0")/ksft_zbatch.sh"
ksft_need "$ko" "$build/tests/zbatch_vm_tests" "$build/tools/zbatch"
ksft_load
ksft_gtest "$build/tests/zbatch_vm_tests"
