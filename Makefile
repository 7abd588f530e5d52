# SPDX-License-Identifier: GPL-2.0
#
# kfd-criu top-level Makefile. `make help` lists the targets.
#
# The kernel module itself is described by Kbuild (kbuild reads that file,
# not this one, when it builds in this directory).

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DEFAULT_GOAL := modules

# The Debian kernel the guest boots and the module is built for; see
# scripts/kver. Empty until scripts/install-deps has run on a fresh machine,
# so targets that need it run in a sub-make after install-deps.
ifeq ($(KVER),)
KVER := $(shell scripts/kver 2>/dev/null)
endif
export KVER
KDIR := /lib/modules/$(KVER)/build

BUILD := build
CHECKPATCH := $(BUILD)/linux-source/scripts/checkpatch.pl
LINT_TREE := $(BUILD)/lint-tree
DEMO := $(BUILD)/demo/kfd-demo
CHECK_OUT := $(BUILD)/check
# Guest time limit of `make check` (seconds); the whole suite runs in one VM.
CHECK_TIMEOUT ?= 3600

LINT_FILES := $(shell find drivers include/uapi -name '*.[ch]' 2>/dev/null | \
	LC_ALL=C sort)

USER_CFLAGS := -Wall -Wextra -Werror -O2 -g

.PHONY: all modules lint checkpatch kbuild-lint layering linux-source deps \
	install selftests plugin check check-debug demo bench fuzz scale failslab \
	compat containers clean distclean help need-kver klog-tests

all: modules

help:
	@echo "make deps       install the Debian packages needed (as root)"
	@echo "make [modules]  build kfdsim.ko here (W=1, fails on any warning)"
	@echo "make lint       checkpatch --strict, sparse, a clean W=1 build, klog-check tests, layering"
	@echo "make install    build and install kfdsim with DKMS for \$$KVER"
	@echo "make selftests  build the test binaries into $(BUILD)/selftests/"
	@echo "make check      everything: deps, lint, install, selftests in the VM"
	@echo "make check-debug  make check under a debug kernel (KASAN, lockdep, ...)"
	@echo "make demo       in the VM: memory, then a CRIU checkpoint/restore"
	@echo "make bench      criu dump/restore speed, VRAM vs anonymous memory"
	@echo "make fuzz       the plugin's image fuzzer, then the RESTORE fuzzer in the VM"
	@echo "make scale      CRIU at scale in the VM: 10k BOs, 8 GPUs, a multi-GiB BO"
	@echo "make failslab   every allocation of every ioctl failed in turn (debug kernel)"
	@echo "make compat CRIU_SRC=DIR  AMD's CRIU plugin from a CRIU checkout, e2e"
	@echo "make containers  podman checkpoint/restore of a GPU container in the VM"
	@echo "make clean      remove build results (distclean: all of $(BUILD)/)"

need-kver:
	@if [ -z "$(KVER)" ] || [ ! -d "$(KDIR)" ]; then \
		echo "No kernel headers for '$(KVER)'; run scripts/install-deps" >&2; \
		exit 1; \
	fi

deps:
	scripts/install-deps

linux-source:
	@scripts/linux-source

# kbuild prints warnings only for what it recompiles, so this catches new
# ones; `make lint` rebuilds everything from scratch.
modules: need-kver
	@mkdir -p $(BUILD)
	@echo "  KBUILD W=1 modules"
	@$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules 2>&1 | tee $(BUILD)/modules.log
	@if grep -q 'warning:' $(BUILD)/modules.log; then \
		echo "error: the module build has warnings" >&2; exit 1; \
	fi

lint: checkpatch kbuild-lint klog-tests layering

# The three layers of the module keep to their folders' rules: the KFD
# layer reaches the device only through the seam in drivers/kfdsim/include/,
# the device calls up only through kgd2kfd.h (Documentation/
# architecture.rst, "Layers"). scripts/layering-check checks the includes
# and the functions and variables every file uses; its self-test plants a
# violation of each kind in a copy of the tree and must see each caught.
layering:
	@echo "  LAYERING $$(find drivers/kfdsim -name '*.[ch]' | wc -l) files"
	@mkdir -p $(BUILD)
	@scripts/layering-check drivers/kfdsim
	@scripts/layering-check --self-test >$(BUILD)/layering-self-test.log \
		2>&1 || { cat $(BUILD)/layering-self-test.log >&2; exit 1; }

# scripts/klog-check, which decides whether a guest kernel log holds a
# report, against recorded logs: banners pass, every report kind fails.
klog-tests:
	@mkdir -p $(BUILD)
	@echo "  KLOG-CHECK tests"
	@scripts/klog-tests/run >$(BUILD)/klog-tests.log 2>&1 || \
		{ cat $(BUILD)/klog-tests.log >&2; exit 1; }
	@scripts/check-summary-test >$(BUILD)/check-summary-test.log 2>&1 || \
		{ cat $(BUILD)/check-summary-test.log >&2; exit 1; }

# In file mode (-f) checkpatch skips the checks that only make sense for
# patches (FILE_PATH_CHANGES) and, with --no-tree, the SPDX license list
# lookup; every file carries an SPDX tag anyway. So nothing is ignored.
# CamelCase identifiers declared in our include/ are accepted (the uAPI
# keeps upstream's field names such as NoExecute). checkpatch learns them
# from `git ls-files include`, which misses uncommitted headers, or without
# git from --root/include: force the latter so that every checkout lints
# the same way.
checkpatch: linux-source
	@echo "  CHECKPATCH --strict $(words $(LINT_FILES)) files"
	@GIT_DIR=/nonexistent perl $(CHECKPATCH) --strict --no-tree \
		--root=$(CURDIR) --quiet --show-types -f $(LINT_FILES) || \
		{ echo "error: checkpatch found problems" >&2; exit 1; }

# A fresh copy of the sources is built with W=1, which must print no
# warning at all, then sparse checks every file (C=2). Sparse also complains
# about kernel headers; only its reports about our own files count. The
# copy leaves the objects in the working tree alone.
kbuild-lint: need-kver
	@rm -rf $(LINT_TREE)
	@mkdir -p $(LINT_TREE)
	@cp -r Kbuild drivers include $(LINT_TREE)/
	@find $(LINT_TREE) \( -name '*.o' -o -name '*.ko' -o -name '*.mod*' \
		-o -name '.*.cmd' \) -delete
	@echo "  KBUILD W=1 (fresh copy in $(LINT_TREE))"
	@$(MAKE) -s -C $(KDIR) M=$(CURDIR)/$(LINT_TREE) W=1 modules \
		>$(BUILD)/lint-w1.log 2>&1 || \
		{ cat $(BUILD)/lint-w1.log >&2; exit 1; }
	@if grep -q 'warning:' $(BUILD)/lint-w1.log; then \
		sed 's|$(CURDIR)/$(LINT_TREE)/||g' $(BUILD)/lint-w1.log >&2; \
		echo "error: the W=1 build has warnings" >&2; exit 1; \
	fi
	@echo "  SPARSE"
	@$(MAKE) -s -C $(KDIR) M=$(CURDIR)/$(LINT_TREE) W=1 C=2 modules \
		>$(BUILD)/lint-sparse.log 2>&1 || \
		{ cat $(BUILD)/lint-sparse.log >&2; exit 1; }
	@sed -i 's|$(CURDIR)/$(LINT_TREE)/||g' $(BUILD)/lint-sparse.log
	@if grep -E '^(drivers/kfdsim|include/uapi)/[^:]+:[0-9]+(:[0-9]+)?: (warning|error):' \
			$(BUILD)/lint-sparse.log >&2; then \
		echo "error: sparse warnings in our sources" >&2; exit 1; \
	fi

# DKMS installs into /lib/modules/$(KVER)/updates/dkms/, where the guest's
# modprobe finds it. Skipped when the installed module was built from
# exactly these sources, whoever installed it.
install: need-kver
	@scripts/dkms-install --if-changed $(KVER)

selftests: linux-source plugin
	$(MAKE) -C selftests
	$(MAKE) -C selftests/f32
	$(MAKE) -C selftests/e2e

# The plugin, and its host-side unit tests (a failure stops the build).
plugin:
	$(MAKE) -C userspace-plugin
	$(MAKE) -C userspace-plugin check

# install-deps first, then a sub-make: only then is KVER known on a fresh
# machine. A lint failure stops everything before the VM boots; lint then
# counts as one passed test in the summary, which is the last line.
# The guest gets a clean environment: none of the caller's KFDSIM_*, KFD_*
# or CRIU_* variables (which could drop or skip tests), only CHECK_ENV's
# NAME=VALUE words, empty unless given on make's command line.
CHECK_ENV :=
check:
	@scripts/install-deps
	@$(MAKE) --no-print-directory linux-source lint modules install selftests
	@rc=0; scripts/vm-run --timeout $(CHECK_TIMEOUT) --out $(CHECK_OUT) \
		--clean-env $(foreach e,$(CHECK_ENV),--env $(e)) \
		-- selftests/run.sh || rc=$$?; \
		scripts/check-summary $(CHECK_OUT) $$rc

# The same suite under a debug kernel (KASAN, lockdep, kmemleak, UBSAN, ...)
# built once per machine by scripts/debug-kernel and cached outside the
# clone. Opt-in: the first build takes about 12 minutes on 2 idle cores.
# The tests' own time limits (hang guards) are multiplied by
# CHECK_DEBUG_SCALE there. The end-to-end apps run smaller there
# (CHECK_DEBUG_E2E): the detectors look at the same kernel paths whatever
# the array sizes, and at make check's sizes the e2e part alone would take
# over three hours (`run` 392 s, `dump` 417 s, `rocr` 630 s under KASAN).
# The loop steps stay as in make check: with fewer, the loop kernels are
# done before criu freezes the app and the mid-kernel tests fail.
CHECK_DEBUG_TIMEOUT ?= 14400
CHECK_DEBUG_SCALE ?= 4
CHECK_DEBUG_E2E ?= KFDSIM_E2E_SIZE=256K KFDSIM_E2E_SPARSE_SIZE=16M \
	KFDSIM_E2E_HIP_STEPS=128
check-debug:
	@scripts/install-deps
	@kver=$$(scripts/debug-kernel | tail -n 1) && \
		$(MAKE) --no-print-directory check KVER=$$kver \
			CHECK_TIMEOUT=$(CHECK_DEBUG_TIMEOUT) \
			CHECK_ENV="KFDSIM_TIMEOUT_SCALE=$(CHECK_DEBUG_SCALE) $(CHECK_DEBUG_E2E) $(CHECK_ENV)"

$(DEMO): scripts/demo-memory.c include/uapi/linux/kfd_ioctl.h
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -I include/uapi -o $@ $<

# The compute demo uses the selftests' small GPU runtime (selftests/lib),
# not the CRIU workload and GPU-state harness that live there too.
DEMO_LIB := $(filter-out selftests/lib/criu_work.c selftests/lib/gs_snap.c, \
	$(wildcard selftests/lib/*.c))
$(DEMO)-compute: scripts/demo-compute.c $(wildcard selftests/lib/*.[ch]) \
		include/uapi/linux/kfdsim.h linux-source
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -I include/uapi -I $(BUILD)/ksft -I selftests/lib \
		-o $@ scripts/demo-compute.c $(DEMO_LIB) -lpthread

demo: install $(DEMO) $(DEMO)-compute selftests
	@scripts/vm-run -- scripts/demo
	@scripts/vm-run -- scripts/demo-criu

# criu dump/restore of data in VRAM vs anonymous memory; BENCH_SIZE=1G.
BENCH_SIZE ?= 1G
bench: modules selftests
	scripts/bench $(BENCH_SIZE)

# Fuzzing (opt-in). 1. The plugin's image readers and restore path under
# libFuzzer with ASan and UBSan for FUZZ_TIME seconds, from seeds made by
# the plugin's own writer (build/plugin/fuzz/corpus keeps what it learns;
# crashes land in build/plugin/fuzz/artifacts). 2. The RESTORE mutation
# fuzzer in the VM: FUZZ_COUNT blobs (at about 200 a second under TCG,
# 300000 take about 25 minutes) on the module built here, FUZZ_JOBS
# processes at once (one per guest CPU), for at most FUZZ_SECONDS; the
# guest's kernel log must stay clean (use KVER= a debug kernel for KASAN
# etc.). 3. The gfx9 instruction fuzzer in the VM (gfx9_fuzz_test):
# GFX9_FUZZ_COUNT random instruction words from GFX9_FUZZ_SEED, each a
# wave program, 64 to a dispatch, in GFX9_FUZZ_JOBS processes (about 290
# words a second under TCG on a host loaded with four other VMs, where the
# old one-dispatch-per-word test ran about 60: a million take about an
# hour there, less on a quiet host).
FUZZ_TIME ?= 600
FUZZ_COUNT ?= 300000
FUZZ_JOBS ?= 2
FUZZ_SECONDS ?= $$(($(FUZZ_COUNT) / 50 + 300))
GFX9_FUZZ_COUNT ?= 1000000
GFX9_FUZZ_SEED ?= 0x67667839
GFX9_FUZZ_JOBS ?= 8
FUZZ_DIR := $(BUILD)/plugin/fuzz
fuzz: modules selftests
	$(MAKE) -C userspace-plugin fuzz
	@mkdir -p $(FUZZ_DIR)/corpus $(FUZZ_DIR)/artifacts
	@$(FUZZ_DIR)/kfd-fuzz-seeds $(FUZZ_DIR)/corpus
	$(FUZZ_DIR)/kfd-image-fuzz -max_total_time=$(FUZZ_TIME) \
		-max_len=65536 -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_DIR)/artifacts/ $(FUZZ_DIR)/corpus \
		2>&1 | grep -E '^(stat::|==|SUMMARY|Done|INFO: Seed)|ERROR'
	scripts/vm-run --timeout $$(($(FUZZ_SECONDS) + 300)) \
		--env KFDSIM_INSMOD=only --env KFDSIM_KO=$(CURDIR)/kfdsim.ko \
		--env KFDSIM_FUZZ_COUNT=$(FUZZ_COUNT) \
		--env KFDSIM_FUZZ_JOBS=$(FUZZ_JOBS) \
		--env KFDSIM_FUZZ_SECONDS=$(FUZZ_SECONDS) \
		-- sh -c '. selftests/lib/ksft-lib.sh; load 0 && \
			build/selftests/restore_fuzz_test; r=$$?; \
			unload fuzz; [ $$r -eq 0 ] && [ "$$failed" -eq 0 ]'
	scripts/vm-run --timeout $$(($(GFX9_FUZZ_COUNT) / 100 + 600)) \
		--env KFDSIM_INSMOD=only --env KFDSIM_KO=$(CURDIR)/kfdsim.ko \
		--env KFDSIM_GFX9_FUZZ_COUNT=$(GFX9_FUZZ_COUNT) \
		--env KFDSIM_GFX9_FUZZ_SEED=$(GFX9_FUZZ_SEED) \
		--env KFDSIM_GFX9_FUZZ_JOBS=$(GFX9_FUZZ_JOBS) \
		-- sh -c '. selftests/lib/ksft-lib.sh; load 0 && \
			build/selftests/gfx9_fuzz_test; r=$$?; \
			unload gfx9_fuzz; [ $$r -eq 0 ] && [ "$$failed" -eq 0 ]'

# CRIU at scale (opt-in), in one VM of SCALE_MEM: 100/1k/10k BOs and a
# restore short of VRAM (2 GPUs of 256 MiB), 8 GPUs, then one VRAM BO of
# SCALE_BIG_MB MiB on a GPU of SCALE_BIG_MB + 64 MiB. Prints the timings.
SCALE_MEM ?= 6G
SCALE_BIG_MB ?= 2048
scale: modules selftests
	scripts/vm-run --mem $(SCALE_MEM) --timeout 7200 \
		--env KFDSIM_INSMOD=only --env KFDSIM_KO=$(CURDIR)/kfdsim.ko \
		--env KFDSIM_SCALE_BIG_MB=$(SCALE_BIG_MB) \
		-- selftests/scale/run.sh

# The kernel's fault injection (opt-in): every slab allocation, page
# allocation and user copy of each ioctl and CRIU op failed in turn through
# /proc/thread-self/fail-nth (selftests/failslab/), on the debug kernel
# (scripts/debug-kernel, built on first use), for which the module is
# built here. Each failure must be a clean error with nothing leaked.
FAILSLAB_TIMEOUT ?= 5400
failslab:
	@scripts/install-deps
	@kver=$$(scripts/debug-kernel | tail -n 1) && \
		$(MAKE) --no-print-directory modules selftests KVER=$$kver && \
		KVER=$$kver scripts/vm-run --smp 1 --timeout $(FAILSLAB_TIMEOUT) \
		--env KFDSIM_INSMOD=only --env KFDSIM_KO=$(CURDIR)/kfdsim.ko \
		-- sh -c '. selftests/lib/ksft-lib.sh; load 0 && \
			build/selftests/failslab_test; r=$$?; \
			unload failslab; [ $$r -eq 0 ] && [ "$$failed" -eq 0 ]'

# Opt-in, not part of `make check`: AMD's own CRIU amdgpu plugin (and, for
# a CRIU other than Debian's, criu itself) built from the CRIU checkout
# CRIU_SRC, then the end-to-end tests with it (scripts/compat).
compat: modules plugin
	@if [ -z "$(CRIU_SRC)" ]; then \
		echo "usage: make compat CRIU_SRC=DIR (a CRIU checkout, e.g. tag v3.17.1)" >&2; \
		exit 2; \
	fi
	@scripts/install-deps
	@scripts/install-deps compat
	$(MAKE) -C selftests/e2e
	scripts/compat $(CRIU_SRC)

# A GPU container checkpointed and restored by podman (opt-in: installs
# podman and runc, about 10 minutes in the VM). Results in build/containers/.
containers: modules plugin
	@scripts/install-deps
	@scripts/install-deps containers
	$(MAKE) -C selftests/e2e
	scripts/vm-run --env KFDSIM_KO=$(CURDIR)/kfdsim.ko --out $(BUILD)/containers \
		-- selftests/containers/run.sh

# Not Kbuild's "M=... clean": it deletes every *.s below the module's
# directory, and the GPU kernels' sources (selftests/, userspace-plugin/gpu/)
# are .s files. The module's outputs are these.
clean:
	rm -f kfdsim.ko kfdsim.mod kfdsim.mod.c kfdsim.mod.o kfdsim.o \
		Module.symvers modules.order .*.cmd
	find drivers \( -name '*.o' -o -name '.*.cmd' \) -type f -delete
	@if [ -f selftests/Makefile ]; then $(MAKE) -s -C selftests clean; fi
	@$(MAKE) -s -C selftests/e2e clean
	@$(MAKE) -s -C userspace-plugin clean
	rm -rf $(LINT_TREE) $(BUILD)/demo $(CHECK_OUT) $(BUILD)/vm $(BUILD)/compat \
		$(BUILD)/containers \
		$(BUILD)/*.log

distclean: clean
	rm -rf $(BUILD)
