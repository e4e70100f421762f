# SPDX-License-Identifier: GPL-2.0
#
# make ab      the A/B benchmark: each knob at 0 and 1 in the VM, and the
#              stock kernel against the patched one without the module;
#              LKP-style tables, CSV/JSON and plots (bench/ab.sh has the
#              profile variables: RUNS, KNOBS, WORKLOADS, NR_TASK, MEM, ...)
# make check   build the patched kernel, module and selftests; run the
#              selftests in a QEMU VM; TAP totals and "N passed, N failed"
# make check-debug  the same on a debug kernel (KASAN, lockdep, DEBUG_VM,
#              kmemleak: vm/debug.config)
# make lint    checkpatch --strict and sparse on the series and the module
# make demo    boot the VM and show the knobs and counters moving on a
#              small swap workload
# The module itself builds with kbuild through ./Kbuild:
#   make -C <kernel build dir> M=$PWD

.PHONY: ab check check-debug demo lint clean

ab:
	bench/ab.sh

check:
	vm/check.sh

check-debug:
	vm/check.sh debug

demo:
	vm/demo.sh

lint:
	vm/build-kernel.sh patched
	vm/build-kernel.sh stock prepare
	vm/lint.sh

clean:
	rm -rf build/vm build/selftests build/bench
	find module \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '.*.cmd' -o -name modules.order \) -delete
	rm -f Module.symvers modules.order .*.cmd
