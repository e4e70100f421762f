#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make mutants: deliberate bugs the suite must catch.  Each vm/mutants/*.patch
# breaks one thing, in the kernel (Tree: kernel, applied on top of the
# series) or in this repository (Tree: repo: the module, a selftest, the
# harness), and names the selftests that must go red (Expect:).  In turn,
# each is applied to a scratch copy, what it touches is rebuilt (kernel
# mutants: the debug kernel in a scratch tree, from ccache; others: the
# module or the selftests only), the expected selftests run in the VM on
# the debug kernel with make check's debug profile, and the mutant is
# caught when vm/tap-summary.py names every expected selftest as failed
# (run, and red), or when the kernel reported a problem (WARN, a sysfs
# duplicate, lockdep, KASAN, ...) on the console while they ran, which
# fails make check as well; one that did not apply, build or get its selftests run
# counts as an error, never as caught.
#
# Usage: vm/mutants.sh [NAME...]   (default: every vm/mutants/*.patch)
# Prints a table: mutant, expected selftests, caught or survived, time.
# Exits non-zero when one survived.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
[ "$KVER" = 6.12 ] || die "make mutants: vm/mutants/ is written against 6.12's series"
cd "$top"

work=$BUILD_DIR/mutants
# The scratch kernel mirrors build/linux + build/debug/kernel one level
# down, so that the relative paths, and so ccache, are the debug kernel's
msrc=$work/linux
mobj=$work/debug/kernel

if [ $# -gt 0 ]; then
	mutants=()
	for m in "$@"; do mutants+=("vm/mutants/${m%.patch}.patch"); done
else
	mutants=(vm/mutants/*.patch)
fi

prepare_kernel debug

field() { sed -n "s/^$1: //p;/^---$/q" "$2"; }

# The scratch kernel source: hard links to build/linux, each file a mutant
# patches copied first so that build/linux itself never changes
scratch_kernel_reset() {
	# Re-applying a changed series replaces files in build/linux: link again
	if [ -d "$msrc" ] &&
		! diff -qr "$SRC_DIR/.swapcache_ab-applied" "$msrc/.swapcache_ab-applied" >/dev/null; then
		rm -rf "$msrc" "$work/kernel-applied"
	fi
	if [ ! -d "$msrc" ]; then
		log "hard-linking $SRC_DIR to $msrc"
		cp -al "$SRC_DIR" "$msrc"
	fi
	if [ -f "$work/kernel-applied" ]; then
		while read -r f; do
			cp --remove-destination "$SRC_DIR/$f" "$msrc/$f"
		done <"$work/kernel-applied"
		rm -f "$work/kernel-applied"
	fi
}

# Mutants name only files they change: no file is created or deleted
scratch_kernel_apply() { # patch name
	local f

	scratch_kernel_reset
	sed -n 's|^+++ b/||p' "$1" >"$work/kernel-applied"
	while read -r f; do
		cp --remove-destination "$SRC_DIR/$f" "$msrc/$f" || return
	done <"$work/kernel-applied"
	patch -s --fuzz=0 -d "$msrc" -p1 <"$1" || return
	mkdir -p "$mobj"
	cp "$DEBUG_KERNEL_DIR/.config" "$DEBUG_KERNEL_DIR/localversion-swapcache-ab" "$mobj/" ||
		return
	rm -f "$mobj/arch/x86/boot/bzImage"
	log "building the debug kernel with $(basename "$1") in $mobj"
	make -s -C "$msrc" O="$mobj" olddefconfig || return
	# The build number (uname -v) names the mutant: the VM must show it
	CCACHE_DIR=$CCACHE_DIR make -s -C "$msrc" O="$mobj" -j"$(nproc)" CC="ccache gcc" \
		KBUILD_BUILD_VERSION="$2" bzImage modules
}

# Build what the mutant touches and run its expected selftests: 0 if the
# suite caught it (every expected selftest ran and failed), 1 if it
# survived, 2 if the mutant could not be tried (it did not apply, a build
# failed, the VM never ran the selftest)
run_mutant() { # patch
	local patch=$1 name tree expect tests kernel kobj build_tag repo logdir rc vm_rc

	name=$(basename "$patch" .patch)
	if [ "$patch" = baseline ]; then
		tree=none expect=$baseline_tests
	else
		tree=$(field Tree "$patch")
		expect=$(field Expect "$patch")
	fi
	repo=$work/repo
	logdir=$work/logs/$name
	rm -rf "$repo" "$logdir"
	mkdir -p "$repo" "$logdir"
	# The scratch copy: what the mutant may touch, and what runs the VM;
	# tracked files only, no build products
	git ls-files -z Kbuild dkms.conf module selftests vm bench | xargs -0 cp --parents -t "$repo"
	case $tree in
	kernel)
		scratch_kernel_apply "$patch" "$name" || return 2
		kernel=$mobj/arch/x86/boot/bzImage kobj=$mobj build_tag=$name
		;;
	repo)
		patch -s --fuzz=0 -d "$repo" -p1 <"$patch" || return 2
		kernel=$DEBUG_KERNEL_DIR/arch/x86/boot/bzImage kobj=$DEBUG_KERNEL_DIR
		build_tag=$(kernel_pkg_revision)
		;;
	none) # the baseline: the tree as it is must pass what the mutants break
		kernel=$DEBUG_KERNEL_DIR/arch/x86/boot/bzImage kobj=$DEBUG_KERNEL_DIR
		build_tag=$(kernel_pkg_revision)
		;;
	*) die "$patch: Tree must be kernel or repo" ;;
	esac

	# The module, then the selftests, bench/ (for bench_guard) and the
	# initramfs by the scratch copy's own scripts, in a build folder whose
	# kernel source and tree are make check's
	rm -rf "$work/build/selftests" "$work/build/bench"
	mkdir -p "$work/build"
	ln -sfn "$SRC_DIR" "$work/build/linux"
	ln -sfn "$KERNEL_DIR" "$work/build/kernel"
	{
		make -s -C "$kobj" M="$repo" modules &&
		sign_module "$kobj" "$repo/module/swapcache_ab.ko" &&
		BUILD_DIR=$work/build "$repo/vm/build-selftests.sh" "$kobj" &&
		make -s -C "$repo/bench" OUT="$work/build/bench" &&
		BUILD_DIR=$work/build "$repo/vm/make-initramfs.sh" "$logdir/initramfs.cpio.gz" \
			"$repo/module/swapcache_ab.ko"
	} || return 2

	tests=$(echo "$expect" | tr ' ' ,)
	: >"$logdir/host.tap"
	vm_rc=0
	VM_LOG_DIR=$logdir VM_PROFILE=debug VM_TESTS=$tests VM_ENV=$DEBUG_VM_ENV VM_APPEND=$DEBUG_VM_APPEND \
		VM_TIMEOUT=$(selftests_vm_timeout debug "$tests") \
		"$repo/vm/run-vm.sh" "$kernel" "$logdir/initramfs.cpio.gz" \
		selftests >"$logdir/run.log" 2>&1 || vm_rc=$?
	rc=0
	"$repo/vm/tap-summary.py" "$logdir/host.tap" "$logdir/selftests-output.log" debug \
		"$tests" >"$logdir/summary.txt" || rc=$?
	cat "$logdir/summary.txt" >&2
	if ! grep -q "^swapcache_ab VM: .* #$build_tag " "$logdir/selftests-output.log"; then
		log "the VM did not run the kernel built for $name"
		return 2
	fi
	# The baseline "survives": its selftests pass, its console is clean
	if [ "$tree" = none ]; then
		[ "$rc" -eq 0 ] && [ "$vm_rc" -eq 0 ] && return 1
		return 2
	fi
	# Caught: each expected selftest started, and went red, or the kernel
	# reported a problem on the console while they ran (make check fails
	# on that too; the baseline's console was clean)
	for t in $expect; do
		grep -qE "^not ok - $t: did not run(;|$)" "$logdir/summary.txt" && return 2
	done
	grep -q '^VM: kernel reported a problem' "$logdir/run.log" && return 0
	for t in $expect; do
		grep -q "^not ok - $t:" "$logdir/summary.txt" || return 1
	done
	return 0
}

table=$work/table.txt
mkdir -p "$work"
printf '%-40s %-20s %-9s %s\n' mutant expected result time >"$table"

# First the tree as it is, on every selftest the mutants name: a test
# that fails here would "catch" every mutant aimed at it
baseline_tests=$(for p in "${mutants[@]}"; do field Expect "$p"; done | tr ' ' '\n' | sort -u |
	paste -sd ' ')
start=$(date +%s)
log "baseline: the unmutated tree on $baseline_tests"
rc=0
run_mutant baseline || rc=$?
secs=$(($(date +%s) - start))
case $rc in
1) result=passed ;;
*) result=FAILED ;;
esac
printf '%-40s %-20s %-9s %dm%02ds\n' "(baseline, no mutant)" all "$result" $((secs / 60)) \
	$((secs % 60)) | tee -a "$table"
[ "$rc" -eq 1 ] || die "the unmutated tree fails the selftests: see $work/logs/baseline"

survived=0 errors=0
for patch in "${mutants[@]}"; do
	[ -f "$patch" ] || die "no mutant $patch"
	start=$(date +%s)
	log "mutant $(basename "$patch" .patch): $(field Why "$patch")"
	rc=0
	run_mutant "$patch" || rc=$?
	case $rc in
	0) result=caught ;;
	1) result=SURVIVED survived=$((survived + 1)) ;;
	*) result=ERROR errors=$((errors + 1)) ;;
	esac
	secs=$(($(date +%s) - start))
	printf '%-40s %-20s %-9s %dm%02ds\n' "$(basename "$patch" .patch)" \
		"$(field Expect "$patch" | tr ' ' ,)" "$result" $((secs / 60)) $((secs % 60)) |
		tee -a "$table"
done
scratch_kernel_reset
echo
cat "$table"
echo "$(( ${#mutants[@]} - survived - errors )) caught, $survived survived, $errors could not be tried (logs: $work/logs)"
[ "$survived" -eq 0 ] && [ "$errors" -eq 0 ]
