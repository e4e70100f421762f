#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test command (make check): install what is missing, build the patched
# kernel, the module and the selftests, check the series with checkpatch,
# boot the VM, run the selftests there, and print TAP totals and a final
# "N passed, N failed".  Exits non-zero on any failure.
#
# Usage: vm/check.sh [patched|debug]
#   debug (make check-debug): the same on the kernel built with
#   vm/debug.config (KASAN, lockdep, DEBUG_VM, kmemleak)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
cd "$top"

variant=${1:-patched}
vm/install-deps.sh
vm/build-kernel.sh "$variant"
vm/build-selftests.sh
case $variant in
patched)
	kdir=$KERNEL_DIR logdir=$BUILD_DIR/vm
	vm/build-module.sh
	ko=$top/module/swapcache_ab.ko
	;;
debug)
	kdir=$DEBUG_KERNEL_DIR logdir=$BUILD_DIR/debug/vm
	vm/build-module.sh "$kdir" "$BUILD_DIR/debug/module-src"
	ko=$BUILD_DIR/debug/module-src/module/swapcache_ab.ko
	# Sanitizers slow the VM several times over: a shorter stress profile
	export VM_TIMEOUT=${VM_TIMEOUT:-5400}
	export VM_ENV=${VM_ENV:-STRESS_SECONDS=30 RELOAD_CYCLES=20}
	;;
*) die "unknown variant '$variant'" ;;
esac
mkdir -p "$logdir"
export VM_LOG_DIR=$logdir
initrd=$logdir/initramfs.cpio.gz
vm/make-initramfs.sh "$initrd" "$ko"

host_tap=$logdir/host.tap
: >"$host_tap"
host_result() { # status description
	if [ "$1" -eq 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fi | tee -a "$host_tap"
}

echo "# host checks"
n=$(wc -l <core-patch/series)
host_result 0 "core-patch/: $n patches applied to linux-source-$(make -s -C "$SRC_DIR" kernelversion)"
for p in $(cat core-patch/series); do
	out=$(cd /tmp && "$SRC_DIR/scripts/checkpatch.pl" --strict --no-tree "$top/core-patch/$p" 2>&1) && rc=0 || rc=$?
	grep -qE '^total: 0 errors, 0 warnings, 0 checks' <<<"$out" || { rc=1; echo "$out" | grep -E '^(ERROR|WARNING|CHECK)' -A4; }
	host_result $rc "checkpatch --strict: $p"
done
for f in module/*.[ch]; do
	case $f in *.mod.c) continue ;; esac
	out=$(cd /tmp && "$SRC_DIR/scripts/checkpatch.pl" --strict --no-tree -f "$top/$f" 2>&1) && rc=0 || rc=$?
	grep -qE '^total: 0 errors, 0 warnings, 0 checks' <<<"$out" || { rc=1; echo "$out" | grep -E '^(ERROR|WARNING|CHECK)' -A4; }
	host_result $rc "checkpatch --strict: $f"
done

version=$(modinfo -F version "$ko")
grep -q "swapcache_ab-$version" README.md && grep -q "swapcache_ab/$version" README.md
host_result $? "version $version (dkms.conf, MODULE_VERSION) is the one README.md installs"

echo "# VM: selftests on the $variant kernel"
vm_rc=0
vm/run-vm.sh "$kdir/arch/x86/boot/bzImage" "$initrd" selftests || vm_rc=$?
host_result $vm_rc "VM ($variant): job finished, no WARN/BUG/Oops/lockdep/KASAN/kmemleak report on the console"

vm/tap-summary.sh "$host_tap" "$logdir/selftests-output.log"
