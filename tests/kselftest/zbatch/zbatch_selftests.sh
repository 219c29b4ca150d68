#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The module's in-kernel self-tests (KTAP straight from debugfs).
# shellcheck source=tests/kselftest/zbatch/ksft_zbatch.sh
. "$(dirname "$0")/ksft_zbatch.sh"
ksft_need "$ko"
ksft_load
[ -e /sys/kernel/debug/zbatch/selftest ] || ksft_skip "debugfs is not mounted"
echo 1 >/sys/kernel/debug/zbatch/selftest || exit "$KSFT_FAIL"
cat /sys/kernel/debug/zbatch/selftest_results
grep -q '^not ok' /sys/kernel/debug/zbatch/selftest_results && exit "$KSFT_FAIL"
exit "$KSFT_PASS"
