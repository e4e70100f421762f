# SPDX-License-Identifier: GPL-2.0
#
# make check   build the patched kernel, module and selftests; run the
#              selftests in a QEMU VM; TAP totals and "N passed, N failed"
# make demo    boot the VM and show the knobs and counters moving on a
#              small swap workload
# The module itself builds with kbuild through ./Kbuild:
#   make -C <kernel build dir> M=$PWD

.PHONY: check demo clean

check:
	vm/check.sh

demo:
	vm/demo.sh

clean:
	rm -rf build/vm build/selftests build/bench
	find module \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '.*.cmd' -o -name modules.order \) -delete
	rm -f Module.symvers modules.order .*.cmd
