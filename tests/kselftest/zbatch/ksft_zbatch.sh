#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Shared by the zbatch kselftests: where zbatch is built, skipping (exit 4,
# as kselftest expects) when something needed is missing, loading the
# module with its dependencies, and GoogleTest output turned into KTAP.
KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

here=$(cd "$(dirname "$0")" && pwd)
# the zbatch tree: $ZBATCH_DIR, or this directory's repository
ZBATCH_DIR=${ZBATCH_DIR:-$(cd "$here/../../.." 2>/dev/null && pwd)}
ko=$ZBATCH_DIR/kmod/zbatch.ko
# shellcheck disable=SC2034 # used by the scripts that source this
build=${ZBATCH_BUILD:-$ZBATCH_DIR/build}

ksft_skip() {
	echo "# SKIP: $*"
	exit "$KSFT_SKIP"
}

ksft_need() {	# files that must exist
	[ "$(id -u)" = 0 ] || ksft_skip "needs root"
	for f in "$@"; do
		[ -e "$f" ] || ksft_skip "$f is missing (build zbatch: make all canary; ZBATCH_DIR=$ZBATCH_DIR)"
	done
	[ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" = "$(uname -r)" ] ||
		ksft_skip "$ko was built for $(modinfo -F vermagic "$ko" | cut -d' ' -f1), this is $(uname -r)"
}

ksft_load() {
	lsmod | grep -q '^zbatch ' && return 0
	for dep in $(modinfo -F depends "$ko" | tr , ' '); do
		modprobe "$dep" || ksft_skip "cannot load $dep"
	done
	insmod "$ko" || { echo "# insmod $ko failed"; exit "$KSFT_FAIL"; }
}

# Run a GoogleTest binary; print KTAP (one result per test); exit status
# 0 when every test passed, 1 otherwise.
ksft_gtest() {
	out=$(mktemp)
	"$@" >"$out" 2>&1
	rc=$?
	echo "KTAP version 1"
	n=$(grep -c -E '^\[ +(OK|FAILED|SKIPPED) +\] [A-Za-z0-9_/.]+ \(' "$out")
	echo "1..$n"
	awk '/^\[ +(OK|FAILED|SKIPPED) +\] [A-Za-z0-9_\/.]+ \(/ {
		i++; name = $0; sub(/^\[[^]]*\] /, "", name); sub(/ \(.*/, "", name)
		if ($0 ~ /OK/) print "ok " i " " name
		else if ($0 ~ /SKIPPED/) print "ok " i " " name " # SKIP"
		else print "not ok " i " " name
	}' "$out"
	grep -E '^(.*Failure|Expected|  Actual|Which is)' "$out" | sed 's/^/# /' | head -n 50
	rm -f "$out"
	[ "$rc" = 0 ] && return "$KSFT_PASS"
	return "$KSFT_FAIL"
}
