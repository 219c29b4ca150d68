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

.PHONY: all setup kmod tools canary bench-kmod check check-unit check-vm demo bench \
	checkpatch clean help

all: kmod tools

help:
	@echo "make            build kmod/zbatch.ko and the C++ tools"
	@echo "make demo       set up, build, boot the guest and run the demo"
	@echo "make check      set up, build, run every test tier (host, VM, KTAP)"
	@echo "make bench      batching benchmark in the guest, report in Documentation/"
	@echo "make checkpatch kernel style check of kmod/"
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

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(CMAKE_BUILD_TYPE)

tools: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

check: setup
	@$(MAKE) --no-print-directory all canary bench-kmod
	@scripts/check

check-unit: tools
	@scripts/check --unit-only

check-vm: kmod tools canary bench-kmod
	@scripts/check --vm-only

demo: setup
	@$(MAKE) --no-print-directory all
	@scripts/vm-run -m 1G -- scripts/demo-guest

bench: setup
	@$(MAKE) --no-print-directory all bench-kmod
	@scripts/bench

checkpatch:
	@scripts/checkpatch

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/vm/canary clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/iaa_double clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/bench/acomp clean
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/bench/batch clean
	rm -rf $(BUILD)
