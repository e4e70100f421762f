# SPDX-License-Identifier: GPL-2.0
#
# The project's entry points: make (make help) lists them and their
# variables.  The module builds with kbuild through ./Kbuild, as DKMS
# builds it: make module KDIR=<kernel build dir>.

define HELP
make ab      the user's A/B: one boot of the patched kernel in the VM,
             each knob flipped at runtime, with the in-boot A/A and the
             hook dispatch pairs, the pre-registered n per knob, and
             stock against patched boots; LKP-style tables, verdicts,
             CSV/JSON and plots (bench/README.md: the method and the
             profile variables)
make study STUDY=fidelity|locks|simultaneous  a validation study on
             demand, into its own results folder: the runtime A/B
             against reference kernels, the lock pass, both sides at once
make report  the tables, CSV, JSON and plots of a results folder again,
             from its raw lines and provenance (RESULTS=dir; default:
             bench/results and every folder under it)
make check   the test command (CI runs it), for 6.12 and then 6.1: build
             the debug kernel (KASAN, lockdep, DEBUG_VM, kmemleak:
             vm/debug.config) as bindeb-pkg packages, install the module
             through DKMS into a private root, lint, boot the packaged
             kernel in a QEMU VM and run the selftests there with the
             debug profile; TAP totals per kernel and over both, and
             "N passed, N failed"
make check KERNEL=patched  the same on the plain patched kernel (what
             make ab measures), with the full stress profile; quicker
make lint    checkpatch --strict and sparse on the series and the module,
             shellcheck on the scripts, the server kernel's config; the
             series' core files built with CONFIG_SWAP=n and with the
             hooks off (vm/compile-check.sh)
make mutants apply each deliberate bug in vm/mutants/ in turn, rebuild
             what it touches, run the selftests it must break on the
             debug kernel, and print which were caught (MUTANTS=a,b: some)
make hook-cost  what a hook that is off costs, from the machine code:
             the mainline path of every hooked function, stock 6.12 vs
             patched (objdump), into build/hook-cost.txt
make hook-cost-update  the same into bench/results/hook-cost.txt, the
             committed table
make demo    boot the VM and show what each knob changes, by mechanism
             (xarray shape, writeback marks, counters), on a small swap
             workload; no rates, but under -icount (6.12) guest
             instructions per page, with the run count (make ab is the A/B)
make fleet   the fleet path on 3 local Debian 12 guests (fleet/run.sh):
             the server kernel's .debs (FLEET_KERNEL=guest: the guest
             kernel's), swapcache-ab-dkms and swapcache-ab-bench,
             served from the fleet's apt repository and installed by
             fleet/site.yml (Ansible), reboot, DKMS, the A/B, one
             report; a second run that changes nothing; fleet/remove.yml;
             an unbootable canary that stops the roll-out
make fleet-kernel  the server kernel's .debs (Debian's own config plus
             fleet/server.config: the hooks, no debug info, modules
             signed), into build/packages/server/; hours on 2 cores.
             FLEET_IMAGE_KEY=image.pem (vm/make-signing-key.sh): its
             image signed for Secure Boot (sbsign)
make module  the module in place (module/swapcache_ab.ko) against the
             kernel build directory KDIR (default the running kernel's,
             /lib/modules/$$(uname -r)/build), as DKMS builds it; first
             it checks that KDIR exists, has CONFIG_SWAPCACHE_AB_HOOKS=y
             and this module's hook ABI (dkms.conf), and says what fixes
             it if not
make dkms-deb  the swapcache-ab-dkms .deb (dh-dkms), into build/dkms-deb/
make dkms-src  install the module's DKMS sources into
             $$(DKMS_SOURCE_TREE)/swapcache_ab-<version> (default /usr/src),
             for "dkms add swapcache_ab/<version>"
make clean   what make check, ab and demo leave in build/ (VM logs,
             selftests, bench), and the module's build outputs; the
             kernel trees stay
KVER=6.1     any of these for Linux 6.1 alone (core-patch/6.1/,
             linux-source-6.1, trees in build/6.1/), KVER=6.12 for 6.12
             alone (the default but for make check); make mutants and
             make hook-cost are for 6.12
endef

.DEFAULT_GOAL := help
.PHONY: help ab study check demo fleet fleet-kernel hook-cost hook-cost-update lint module mutants \
	dkms-deb dkms-src clean report

help:
	$(info $(HELP))
	@:

VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)
DKMS_SOURCE_TREE ?= /usr/src
# Sources only: not the swapcache_ab.mod.c of an in-tree build
DKMS_FILES := dkms.conf Kbuild module/Kbuild $(filter-out %.mod.c,$(wildcard module/*.[ch]))

# make check runs every kernel served, 6.12 then 6.1, unless KVER names one
KVERS := $(or $(KVER),6.12 6.1)
KVER ?= 6.12
export KVER

ab:
	STUDY= bench/ab.sh

STUDY ?=
study:
	@[ -n "$(STUDY)" ] || { echo "make study: STUDY=fidelity, locks or simultaneous" >&2; exit 2; }
	STUDY=$(STUDY) bench/ab.sh

RESULTS ?=
report:
	bench/make-report.sh $(RESULTS)

KERNEL ?= debug
comma := ,

check:
	KVERS="$(KVERS)" vm/check-kernels.sh $(KERNEL)

demo:
	vm/demo.sh

fleet:
	fleet/run.sh

fleet-kernel:
	vm/install-deps.sh
	vm/build-kernel.sh server
	vm/build-packages.sh server

dkms-deb:
	vm/build-dkms-deb.sh

# The module against a kernel's build directory, as DKMS projects build it,
# and only for a kernel DKMS would build it for (dkms.conf): the hooks on
# in its auto.conf, its release's -swapcache-ab<N> this module's hook ABI.
# Else make stops with one line that says what fixes it
KDIR ?= /lib/modules/$(shell uname -r)/build
HOOK_ABI := $(shell sed -n 's/^SWAPCACHE_AB_HOOK_ABI=//p' dkms.conf)
kdir_problem = $(shell k='$(KDIR)' c='$(KDIR)/include/config'; \
	if [ ! -d "$$k" ]; then echo "no kernel build directory $$k: install" \
		"linux-headers-$$(uname -r), or set KDIR= to a kernel's build directory"; \
	elif ! grep -qx CONFIG_SWAPCACHE_AB_HOOKS=y "$$c/auto.conf" 2>/dev/null; then echo "$$k is" \
		"not a prepared kernel with CONFIG_SWAPCACHE_AB_HOOKS=y: set KDIR= to one built" \
		"with the core-patch/ series (vm/build-kernel.sh patched: build/kernel)"; \
	elif ! grep -Eq -- '-swapcache-ab$(HOOK_ABI)(-.*)?$$' "$$c/kernel.release"; then echo "$$k is" \
		"$$(cat "$$c/kernel.release"), not hook ABI $(HOOK_ABI) (-swapcache-ab$(HOOK_ABI), dkms.conf):" \
		"set KDIR= to a kernel built with this tree's core-patch/ series"; fi)
module:
	$(if $(kdir_problem),$(error make module: $(kdir_problem)))
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# The core objects whose code holds a hook site, inlined or not (those
# built in vm/kernel.config's configuration)
HOOKED_OBJS := mm/huge_memory.o mm/memory.o mm/mincore.o mm/page-writeback.o \
	mm/shmem.o mm/swap_state.o mm/swapfile.o mm/util.o

hook-cost:
	@[ "$(KVER)" = 6.12 ] || { echo "make hook-cost: its objects and results are 6.12's" >&2; exit 1; }
	vm/build-kernel.sh patched $(HOOKED_OBJS)
	vm/build-kernel.sh stock $(HOOKED_OBJS)
	mkdir -p build
	bench/hook-cost.py build/stock/kernel build/kernel $(HOOKED_OBJS) >build/hook-cost.txt
	sed -n '/^object/,/^$$/p' build/hook-cost.txt

# The committed table, from a run of make hook-cost
hook-cost-update: hook-cost
	cp build/hook-cost.txt bench/results/hook-cost.txt

lint:
	bench/test-report.py
	bench/test-perfprofile.py
	vm/build-kernel.sh patched prepare
	vm/build-kernel.sh stock prepare
	vm/lint.sh
	vm/compile-check.sh

mutants:
	vm/mutants.sh $(subst $(comma), ,$(MUTANTS))

dkms-src:
	install -d $(DKMS_SOURCE_TREE)/swapcache_ab-$(VERSION)/module
	for f in $(DKMS_FILES); do \
		install -m 644 $$f $(DKMS_SOURCE_TREE)/swapcache_ab-$(VERSION)/$$f || exit; \
	done

clean:
	for k in $(KVERS); do \
		KVER=$$k top=$(CURDIR) bash -c '. vm/lib.sh; rm -rf "$$BUILD_DIR/vm" "$$BUILD_DIR/selftests" "$$BUILD_DIR/bench"'; \
	done
	find module \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '.*.cmd' -o -name modules.order \) -delete
	rm -f Module.symvers modules.order .*.cmd
