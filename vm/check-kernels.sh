#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: vm/check.sh on each kernel the project serves (KVERS, by
# default "6.12 6.1"; make check KVER=6.1 runs one), each kernel's TAP and
# totals as check.sh prints them, then the sum over the kernels, ending
# with "N passed, N failed".  A kernel whose run printed no totals counts
# as one failure.  Exits non-zero if any kernel failed.
#
# The kernels overlap: the next one starts building once the one before
# has booted its VM, which runs TCG in one host thread and leaves the
# other core to the build.  Builds never overlap; where the next build is
# quick (a warm ccache), the two VMs may, a core each.  The output stays
# in order: the first kernel's as it runs, each next one's once the one
# before has ended.
#
# Usage: KVERS="6.12 6.1" vm/check-kernels.sh [debug|patched]
set -uo pipefail
# No job control: setsid (below) then runs check.sh itself, no fork
set +m

top=$(cd "$(dirname "$0")/.." && pwd)
variant=${1:-debug}
read -r -a kvers <<<"${KVERS:-6.12 6.1}"

# Once, before two kernels' checks could run apt-get side by side
"$top/vm/install-deps.sh" || exit 1

logdir=$(mktemp -d)
pids=()
# Each check.sh leads a process group of its own (setsid): stopping it
# stops its make and its QEMU too
cleanup() {
	for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null; done
	rm -rf "$logdir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for i in "${!kvers[@]}"; do
	: >"$logdir/$i"	# there before its tail starts
	KVER=${kvers[$i]} setsid "$top/vm/check.sh" "$variant" >>"$logdir/$i" 2>&1 &
	pids[i]=$!
	if [ "$i" -eq 0 ]; then
		echo "# ===== Linux ${kvers[0]}: the $variant kernel with core-patch/${kvers[0]} ====="
		tail -n +1 -f --pid="${pids[0]}" "$logdir/0" &
		first_tail=$!
	fi
	# The next kernel builds once this one's VM has booted, or it ended
	while [ $((i + 1)) -lt ${#kvers[@]} ] && kill -0 "${pids[$i]}" 2>/dev/null &&
		! grep -q '^\[[0-9:]*\] booting ' "$logdir/$i"; do
		sleep 5
	done
done

rc=0
summary=() counted=()
for i in "${!kvers[@]}"; do
	kver=${kvers[$i]}
	if [ "$i" -eq 0 ]; then
		wait "$first_tail"
	else
		echo "# ===== Linux $kver: the $variant kernel with core-patch/$kver ====="
		# In the background: bash runs the TERM trap only once its
		# foreground command returns, and wait returns at a signal
		tail -n +1 -f --pid="${pids[$i]}" "$logdir/$i" &
		wait $!
	fi
	wait "${pids[$i]}"
	kver_rc=$?
	[ "$kver_rc" -eq 0 ] || rc=1
	if ! totals=$("$top/vm/tap-summary.py" --totals "$logdir/$i"); then
		totals="0 passed, 1 failed, 0 skipped"
		rc=1
		echo "not ok - Linux $kver: vm/check.sh printed no totals"
	fi
	# A failed run counts as a failure even where its totals say none
	if [ "$kver_rc" -ne 0 ] && [[ $totals == *", 0 failed, "* ]]; then
		counted+=("${totals/, 0 failed, /, 1 failed, }")
		echo "not ok - Linux $kver: vm/check.sh exited $kver_rc"
	else
		counted+=("$totals")
	fi
	summary+=("Linux $kver: $totals")
done
pids=()

echo "# ===== make check, every kernel ====="
for line in "${summary[@]}"; do
	echo "# $line"
done
echo "TAP totals: ${#kvers[@]} kernels (${kvers[*]}), the $variant profile"
printf '%s\n' "${counted[@]}" | "$top/vm/tap-summary.py" --sum
exit $rc
