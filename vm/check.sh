#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test command (make check): install what is missing, build the patched
# kernel and package it with bindeb-pkg, install the module from those
# packages' headers with real DKMS into a private root, run the review
# checks (vm/lint.sh), boot the packaged kernel in the VM with the module
# DKMS installed, run the selftests there, and print TAP totals and a final
# "N passed, N failed".  Exits non-zero on any failure.
#
# Usage: [KVER=6.12|6.1] vm/check.sh [debug|patched]
#   debug (make check, CI): the kernel built with vm/debug.config (KASAN,
#     lockdep, DEBUG_VM, kmemleak), and the short profile below
#   patched (make check KERNEL=patched): the plain patched kernel that
#     make ab measures, and the selftests' full default profile
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
cd "$top"

variant=${1:-debug}
case $variant in
patched) logdir=$BUILD_DIR/vm ;;
debug)
	logdir=$BUILD_DIR/debug/vm
	export VM_ENV=${VM_ENV:-$DEBUG_VM_ENV}
	export VM_APPEND=${VM_APPEND:-$DEBUG_VM_APPEND}
	;;
*) die "unknown variant '$variant'" ;;
esac
# The kernel, the selftests and the benchmark (for selftests/bench_guard.sh:
# make ab's guards against a host's own swap); the module comes from the
# kernel's packages, through DKMS
prepare_vm "$variant"
# lint compares sparse on the touched files with stock $KVER under the same
# plain config as the patched tree: prepared trees are enough for that, not
# built ones
vm/build-kernel.sh stock prepare
vm/build-packages.sh "$variant"
mkdir -p "$logdir"
export VM_LOG_DIR=$logdir VM_PROFILE=$variant
export VM_TIMEOUT=${VM_TIMEOUT:-$(selftests_vm_timeout "$variant" "${VM_TESTS:-}")}

host_tap=$logdir/host.tap
: >"$host_tap"
host_result() { # status description
	tap_result "$@" | tee -a "$host_tap"
}

echo "# host: the series on linux-source-$(make -s -C "$SRC_DIR" kernelversion), checkpatch and sparse"
vm/lint.sh | tee -a "$host_tap" || true
echo "# host: make ab's statistics on inputs with known answers"
bench/test-report.py | tee -a "$host_tap" || true
echo "# host: perf-profile's reduction and the guest's fold on inputs with known answers"
pp_rc=0
bench/test-perfprofile.py >"$logdir/test-perfprofile.log" 2>&1 || pp_rc=$?
host_result "$pp_rc" "bench/test-perfprofile.py: $(tail -1 "$logdir/test-perfprofile.log") (log: $logdir/test-perfprofile.log)"
echo "# host: the series' core files in configurations the VM kernels do not cover"
vm/compile-check.sh | tee -a "$host_tap" || true

# Once per make check: it boots Debian's own kernel, whichever KVER this is
if [ "$KVER" = 6.12 ]; then
	echo "# host: the fleet's Secure Boot chain under OVMF, on Debian 12's own kernel"
	# Its set-up can stop it before any TAP line: its exit status counts
	sb_rc=0
	vm/secure-boot-check.sh | tee -a "$host_tap" || sb_rc=${PIPESTATUS[0]}
	host_result "$sb_rc" "vm/secure-boot-check.sh ran to its end, every check passed: exit $sb_rc"
fi

echo "# host: the $variant kernel's packages, the module through DKMS into a private root"
vm/dkms-install.sh "$variant" | tee -a "$host_tap" || true
release=$(kernel_release "$variant")
root=$(dkms_root "$variant")
kernel=$root/boot/vmlinuz-$release
ko=$root/lib/modules/$release/updates/dkms/swapcache_ab.ko
if [ ! -f "$kernel" ] || [ ! -f "$ko" ]; then
	host_result 1 "packaged kernel and DKMS-installed module to boot"
	vm/tap-summary.py "$host_tap" /dev/null "$variant" "${VM_TESTS:-}"
	exit 1
fi

# The VM runs what vm/expected-results lists: a selftest missing there
# would never run, unless it says why not
listed=$(vm/tap-summary.py --listed "$variant")
unlisted=$(sed -n 's/^swapcache_ab://p' "$BUILD_DIR/selftests/kselftest-list.txt" |
	grep -vxF "$listed" || true)
[ -z "$unlisted" ]
host_result $? "every selftest is in vm/expected-results for $variant${unlisted:+; not: $unlisted}"

version=$(modinfo -F version "$ko")
grep -qF "swapcache-ab-{dkms,bench}_${version}_" README.md &&
	grep -q "swapcache-ab-dkms_${version}_all.deb" fleet/README.md && grep -q "swapcache_ab/$version" fleet/README.md
host_result $? "version $version (dkms.conf, MODULE_VERSION) is the one README.md and fleet/README.md install"

initrd=$logdir/initramfs.cpio.gz
vm/make-initramfs.sh "$initrd" "$ko"
echo "# VM: selftests on the packaged $variant kernel ($release) with the DKMS module"
vm_rc=0
vm/run-vm.sh "$kernel" "$initrd" selftests || vm_rc=$?
host_result $vm_rc "VM ($variant): job finished, no WARN/BUG/Oops/lockdep/KASAN/kmemleak report on the console"

vm/tap-summary.py "$host_tap" "$logdir/selftests-output.log" "$variant" "${VM_TESTS:-}"
