#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: vm/check.sh on each kernel the project serves, one after the
# other (KVERS, by default "6.12 6.1"; make check KVER=6.1 runs one), each
# kernel's TAP and totals as check.sh prints them, then the sum over the
# kernels, ending with "N passed, N failed".  A kernel whose run printed no
# totals counts as one failure.  Exits non-zero if any kernel failed.
#
# Usage: KVERS="6.12 6.1" vm/check-kernels.sh [debug|patched]
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
variant=${1:-debug}
kvers=${KVERS:-6.12 6.1}

rc=0 passed=0 failed=0 skipped=0
summary=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for kver in $kvers; do
	echo "# ===== Linux $kver: the $variant kernel with core-patch/$kver ====="
	KVER=$kver "$top/vm/check.sh" "$variant" 2>&1 | tee "$log"
	kver_rc=${PIPESTATUS[0]}
	[ "$kver_rc" -eq 0 ] || rc=1
	totals=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -1)
	if [ -z "$totals" ]; then
		totals="0 passed, 1 failed, 0 skipped"
		rc=1
		echo "not ok - Linux $kver: vm/check.sh printed no totals"
	fi
	read -r p _ f _ s _ <<<"${totals//,/}"
	# A failed run counts as a failure even where its totals say none
	if [ "$kver_rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - Linux $kver: vm/check.sh exited $kver_rc"
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	summary+=("Linux $kver: $totals")
done

echo "# ===== make check, every kernel ====="
for line in "${summary[@]}"; do
	echo "# $line"
done
echo "TAP totals: $(echo "$kvers" | wc -w) kernels ($kvers), the $variant profile"
echo "$passed passed, $failed failed, $skipped skipped"
exit $rc
