# SPDX-License-Identifier: GPL-2.0
#
# zbatch top-level build. The module follows Documentation/kbuild/modules.rst
# (KDIR, M=); the C++ tree is CMake. KDIR defaults to the target kernel's
# build directory (scripts/kabi), never to the running kernel.

KABI   ?= $(shell scripts/kabi 2>/dev/null)
KDIR   ?= /lib/modules/$(KABI)/build
BUILD  ?= build
CMAKE_BUILD_TYPE ?= RelWithDebInfo
JOBS   ?= $(shell nproc)

.PHONY: all setup kmod tools canary bench-kmod zram-recomp check check-unit check-vm demo bench \
	checkpatch clean help install deb fuzz check-debug check-full

all: kmod tools

help:
	@echo "make            build kmod/zbatch.ko and the C++ tools"
	@echo "make demo       set up, build, boot the guest: zbatch against the stock"
	@echo "                crypto API and against zram, in small (a few minutes)"
	@echo "make check      set up, build, run every test tier (host, VM, KTAP)"
	@echo "make check-full the same with the soak tests at full length and the"
	@echo "                IAA tiers unfiltered (ZBATCH_FULL=1; about 10 minutes more)"
	@echo "make bench      batching benchmark in the guest, report in Documentation/"
	@echo "make checkpatch kernel style check of kmod/"
	@echo "make install    zbatch.ko into /lib/modules/KABI/updates (depmod: modprobe"
	@echo "                zbatch then loads its dependencies), the CLI into PREFIX/sbin,"
	@echo "                zbatch(8) and bash completion under PREFIX/share, the systemd"
	@echo "                units (zbatch-swap.service: swap devices at boot from"
	@echo "                /etc/zbatch/swap.conf; zbatch-metrics.timer) under SYSTEMDDIR"
	@echo "                (PREFIX/lib/systemd/system), swap.conf.example in PREFIX/share/doc;"
	@echo "                SIGN_KEY=key SIGN_CERT=cert.der sign the module first (Secure Boot)"
	@echo "make deb        build/deb/zbatch-dkms_VERSION_all.deb (DKMS) and"
	@echo "                zbatch-tools_VERSION_amd64.deb (CLI, units; Debian tooling)"
	@echo "make fuzz       the hostile-input fuzzer, then the swap device's model checker,"
	@echo "                in the guest (SECONDS=300 each, SEED=, FUZZ=input|model: one)"
	@echo "make check-debug every tier on a lockdep/KASAN kernel (VARIANT=kcsan: KCSAN;"
	@echo "                TIERS=\"zswap-iaa swapdev-iaa\": only these guest tiers)"
	@echo "variables: KABI=$(KABI) KDIR=$(KDIR) BUILD=$(BUILD)"

setup:
	@scripts/setup.sh

kmod:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

canary:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/vm/canary modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/iaa_double modules

# The batch benchmark calls zbatch's exported API: modpost needs its symbols,
# and reruns only when its own Module.symvers is gone (zbatch's symbol CRCs
# change with its structures).
bench-kmod: kmod
	$(MAKE) -C $(KDIR) M=$(CURDIR)/bench/acomp modules
	rm -f bench/batch/Module.symvers
	$(MAKE) -C $(KDIR) M=$(CURDIR)/bench/batch \
		KBUILD_EXTRA_SYMBOLS=$(CURDIR)/Module.symvers modules

# zram built with recompression from Debian's own source, for the
# benchmark's recompression runs and their smoke test (scripts/zram-recomp;
# never installed)
zram-recomp:
	@KDIR=$(KDIR) BUILD=$(abspath $(BUILD)) scripts/zram-recomp

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE)

tools: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

check: setup
	@$(MAKE) --no-print-directory -j$(JOBS) all canary bench-kmod zram-recomp
	@scripts/check

check-full: setup
	@$(MAKE) --no-print-directory -j$(JOBS) all canary bench-kmod zram-recomp
	@ZBATCH_FULL=1 scripts/check

check-unit: tools
	@scripts/check --unit-only

check-vm: kmod tools canary bench-kmod zram-recomp
	@scripts/check --vm-only

demo: setup
	@$(MAKE) --no-print-directory all bench-kmod
	@mkdir -p $(BUILD)/demo
	@scripts/vm-run -t 1800 -m 1G -c 2 -o $(BUILD)/demo -- scripts/demo-guest
	@scripts/bench-report demo $(BUILD)/demo
	@echo "   x: zram time / zbatch time (above 1: zbatch faster); CPU x: zbatch CPU /"
	@echo "   zram CPU (below 1: cheaper); used / stored: the zbatch device's memory per"
	@echo "   byte stored; size vs 4k units: '-' (the demo runs no 4k units; make bench does)."

# canary builds the IAA test double the batch part's IAA rows run on
bench: setup
	@$(MAKE) --no-print-directory all canary bench-kmod zram-recomp
	@scripts/bench

checkpatch:
	@scripts/checkpatch

# make install: the module where modprobe finds it, with depmod so that its
# dependencies (lz4_compress, ...) load with it; INSTALL_MOD_PATH stages it
# under another root. SIGN_KEY/SIGN_CERT: sign it with the kernel's
# sign-file first (a MOK enrolled with mokutil, Documentation/iaa.md).
PREFIX ?= /usr/local
# systemd reads units from PREFIX/lib/systemd/system for /usr and /usr/local
SYSTEMDDIR ?= $(PREFIX)/lib/systemd/system
install: kmod tools
ifneq ($(SIGN_KEY),)
	$(KDIR)/scripts/sign-file sha256 $(SIGN_KEY) $(SIGN_CERT) kmod/zbatch.ko
endif
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install
	depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KABI)
	install -D -m 0755 $(BUILD)/tools/zbatch $(DESTDIR)$(PREFIX)/sbin/zbatch
	install -D -m 0644 $(BUILD)/zbatch.8 $(DESTDIR)$(PREFIX)/share/man/man8/zbatch.8
	install -D -m 0644 tools/completion/zbatch.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/zbatch
	for u in zbatch-swap.service zbatch-metrics.service; do \
		sed 's|@SBINDIR@|$(PREFIX)/sbin|g' packaging/systemd/$$u.in >$(BUILD)/$$u && \
		install -D -m 0644 $(BUILD)/$$u $(DESTDIR)$(SYSTEMDDIR)/$$u || exit 1; \
	done
	install -D -m 0644 packaging/systemd/zbatch-metrics.timer \
		$(DESTDIR)$(SYSTEMDDIR)/zbatch-metrics.timer
	install -D -m 0644 packaging/swap.conf.example \
		$(DESTDIR)$(PREFIX)/share/doc/zbatch/swap.conf.example

deb: tools
	@scripts/mkdeb

# every tier on the debug kernel (built once, cached outside the checkout)
VARIANT ?= debug
check-debug: setup
	@ZBATCH_TIERS="$(TIERS)" scripts/check-debug $(VARIANT)

# make fuzz SECONDS=600 [SEED=S] [FUZZ=input|model]: the hostile-input
# fuzzer, then the swap device's model checker, each for SECONDS
SECONDS ?= 300
FUZZ ?= all
fuzz: all
	@if [ "$(FUZZ)" != model ]; then scripts/vm-run -t $$(( $(SECONDS) + 300 )) -m 1G -c 2 -- \
		scripts/guest-fuzz $(SECONDS) $(SEED); fi
	@if [ "$(FUZZ)" != input ]; then scripts/vm-run -t $$(( $(SECONDS) + 300 )) -m 512M -c 2 -- \
		scripts/guest-model $(SECONDS) $(SEED); fi

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/vm/canary clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/iaa_double clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/bench/acomp clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/bench/batch clean
	rm -rf $(BUILD)
