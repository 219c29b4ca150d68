#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install every Debian package zbatch needs to build and test (run as root).
# Idempotent: when everything is present it returns at once without apt.
set -Eeuo pipefail

PIN_ABI="${ZBATCH_KABI:-6.12.117+deb12-amd64}"
PKGS=(
	build-essential cmake pkg-config kmod xz-utils cpio bc
	qemu-system-x86 busybox-static
	libkmod-dev libfmt-dev libcli11-dev libaccel-config-dev uuid-dev
	libgtest-dev libgmock-dev zlib1g-dev liblz4-dev libzstd-dev liblzo2-dev
	shellcheck
	gnuplot-nox
	debhelper dh-dkms dkms dpkg-dev
	bison flex libelf-dev libssl-dev
	nlohmann-json3-dev jq pandoc rsync
	python3 python3-prometheus-client systemd
)

say() { printf 'setup: %s\n' "$*"; }

have_kernel() {
	local abi=$1
	[ -d "/lib/modules/$abi/build" ] && [ -f "/boot/vmlinuz-$abi" ]
}

missing_pkgs() {
	local p
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || printf '%s\n' "$p"
	done
}

installed_abi() {
	local d
	if have_kernel "$PIN_ABI"; then
		echo "$PIN_ABI"
		return 0
	fi
	for d in $(ls -1d /lib/modules/6.12.*+deb12-amd64 2>/dev/null | sort -V -r); do
		d=${d##*/}
		if have_kernel "$d"; then
			echo "$d"
			return 0
		fi
	done
	return 1
}

# (empty when not installed: never a failure under set -e)
source_version() {
	{ dpkg-query -W -f='${Status} ${Version}\n' linux-source-6.12 2>/dev/null || true; } |
		sed -n 's/^install ok installed //p'
}

# linux-source-6.12 at the version of the target kernel's image
source_matches() {
	local want
	want=$(dpkg-query -W -f='${Version}' "linux-image-$1" 2>/dev/null) || return 1
	[ "$(source_version)" = "$want" ]
}

mapfile -t need < <(missing_pkgs)
if abi=$(installed_abi) && [ ${#need[@]} -eq 0 ]; then
	if source_matches "$abi"; then
		say "all packages present, target kernel $abi"
		exit 0
	fi
	# only make check-debug needs the source at the image's version: say
	# so, and get it only where we can (root, and apt offers it)
	want=$(dpkg-query -W -f='${Version}' "linux-image-$abi" 2>/dev/null || true)
	have=$(source_version)
	if [ "$(id -u)" -ne 0 ] || ! apt-cache show "linux-source-6.12=$want" >/dev/null 2>&1; then
		say "warning: linux-source-6.12 is ${have:-not installed}, the target kernel is $want: make check-debug cannot build its kernel (as root, when apt offers $want: scripts/setup.sh)" >&2
		say "all packages present, target kernel $abi"
		exit 0
	fi
fi

if [ "$(id -u)" -ne 0 ]; then
	say "error: missing packages (${need[*]:-kernel $PIN_ABI}); run as root: sudo scripts/setup.sh" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
say "apt-get update"
apt-get update -q

abi=$(installed_abi || true)
if [ -z "$abi" ]; then
	if apt-cache show "linux-headers-$PIN_ABI" >/dev/null 2>&1; then
		abi=$PIN_ABI
	else
		abi=$(apt-cache pkgnames linux-headers-6.12. |
			grep -E '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' |
			sed 's/^linux-headers-//' | sort -V | tail -n 1)
		[ -n "$abi" ] || { say "error: no linux-headers-6.12.*+deb12-amd64 offered by apt" >&2; exit 1; }
		say "pinned ABI $PIN_ABI not offered; taking newest: $abi"
	fi
	say "installing target kernel $abi (headers + image, a few minutes)"
	apt-get install -y -q --no-install-recommends \
		"linux-headers-$abi" "linux-image-$abi"
fi

# the debug kernel (scripts/debug-kernel) is built from the target
# kernel's own source: linux-source-6.12 at the image's version, which
# apt may offer older than its newest (or no longer at all: then the
# debug kernel cannot be built here, and make check does not need it)
src_want=$(dpkg-query -W -f='${Version}' "linux-image-$abi" 2>/dev/null || true)
if [ -n "$src_want" ] && [ "$(source_version)" != "$src_want" ]; then
	if apt-cache show "linux-source-6.12=$src_want" >/dev/null 2>&1; then
		need+=("linux-source-6.12=$src_want")
	else
		say "warning: apt offers no linux-source-6.12 $src_want (the target kernel's): make check-debug cannot build its kernel here" >&2
		[ -n "$(source_version)" ] || need+=(linux-source-6.12)
	fi
fi

if [ ${#need[@]} -gt 0 ]; then
	say "installing: ${need[*]}"
	apt-get install -y -q --no-install-recommends --allow-downgrades "${need[@]}"
fi
say "done, target kernel $abi"
