#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: build what make check builds, boot the VM and run bench/demo
# there: what each knob changes, by mechanism, on a small swap workload;
# then what to run next.
#
# Environment: VM_ICOUNT (1 on 6.12, 0 on 6.1, which does not boot under
#   -icount here: bench/ab.sh): the guest clock counts instructions, and
#   the demo gives skip_wb_tags' guest instructions per page, over
#   DEMO_RUNS (5) runs a side; without it, no timing figure at all.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
cd "$top"

prepare_vm patched module
mkdir -p "$BUILD_DIR/vm"
vm/make-initramfs.sh "$BUILD_DIR/vm/initramfs.cpio.gz"
# Idle time passes at the host's pace under -icount, as in make ab: the
# slow device's 3 s holds are 3 s, not one jump of the guest clock
icount=${VM_ICOUNT:-$([ "$KVER" = 6.1 ] && echo 0 || echo 1)}
VM_ICOUNT=$icount VM_ICOUNT_SLEEP=${VM_ICOUNT_SLEEP:-on} vm/run-vm.sh "$KERNEL_DIR/arch/x86/boot/bzImage" "$BUILD_DIR/vm/initramfs.cpio.gz" \
	demo "icount=$icount,runs=${DEMO_RUNS:-5}"
cat <<EOF
== next
  make ab      the A/B: each knob's sides in paired runs, with intervals and A/A
               rows, into build/ab-results/ (bench/README.md: the method)
  make check   the tests as CI runs them: the debug kernels, the selftests in
               this VM, TAP and "N passed, N failed"
  README.md    "Using the knobs": the knobs, stats/, per-cgroup settings, and
               the ABI files that describe every one (core-patch/$KVER/0006)
EOF
