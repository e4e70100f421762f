#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own tools/testing/selftests/mm/cow, with swap on.
#
# UPSTREAM_PROFILE=full (default): first without the module (the
# reference: mainline behaviour on this kernel), then with swapcache_ab
# loaded at mainline settings and with each knob at 0.  Every run must
# pass, fail and skip as many tests as the reference.
#
# UPSTREAM_PROFILE=short (the debug kernel's: one cow run there takes more
# than ten minutes): one run, with the module loaded and every knob at 0,
# so that each hook takes its pre-upstream path; it must fail none.
#
# Either way, a set-up step that fails (insmod, a knob write read back,
# swapon) fails the run, a swap case that cow skipped because nothing was
# paged out fails it, and each knob at 0 must have moved the counter of
# its pre-upstream policy: the module was exercised, not just loaded.
KO=${SWAPCACHE_AB_KO:-/swapcache_ab.ko}
COW=${UPSTREAM_COW:-/kselftest/upstream/cow}
K=/sys/kernel/mm/swapcache_ab

[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 4; }

# The swap the other selftests use: the device under test is type 1
swap_off() { ./swap_setup off; }
swap_on() { ./swap_setup on; }

# cow's totals, "pass fail skip", or "set-up failed: why".  On one CPU:
# its swap cases page out what they just faulted in, and MADV_PAGEOUT only
# finds pages on the LRU after draining the calling CPU's batch; a
# migration in between (likelier with preempt=full) leaves them in another
# CPU's batch, and the case skips ("MADV_PAGEOUT did not work")
run_cow() {
	taskset -c 0 "$COW" >/tmp/cow.out 2>&1
	unswapped=$(grep -c 'MADV_PAGEOUT did not work' /tmp/cow.out)
	if [ "$unswapped" -gt 0 ]; then
		echo "set-up failed: $unswapped of cow's swap cases found nothing paged out"
		return
	fi
	totals=$(sed -n 's/^# Totals: pass:\([0-9]*\) fail:\([0-9]*\).* skip:\([0-9]*\).*/\1 \2 \3/p' /tmp/cow.out)
	echo "${totals:-set-up failed: no totals from cow}"
}

# Unloading needs the offset key back and the key site unhooked, which
# need swap off
module_unload() {
	swap_off && echo 1 >$K/offset_key &&
		echo 0 >/sys/module/swapcache_ab/parameters/key_hooked && rmmod swapcache_ab
}

# The counter that moves while knob $1 is 0.  offset_key has none: the
# kernel applies the key inline, and the knob reads 0 only once it has
policy_counter() {
	case $1 in
	skip_wb_tags) echo wb_tagged ;;
	cow_free) echo cow_kept ;;
	esac
}

# cow with the module loaded at "offset_key skip_wb_tags cow_free": its
# totals, or why the set-up or the module's part failed
run_cow_with() {
	swap_off >&2 || { echo "set-up failed: swapoff"; return; }
	insmod "$KO" >&2 || { echo "set-up failed: insmod $KO"; return; }
	set -- offset_key "$1" skip_wb_tags "$2" cow_free "$3"
	knobs="$*"
	while [ $# -gt 0 ]; do
		echo "$2" 2>/dev/null >$K/"$1" && [ "$(cat $K/"$1")" = "$2" ] ||
			{ echo "set-up failed: $1=$2 did not stick"; return; }
		[ "$2" = 0 ] && [ -n "$(policy_counter "$1")" ] &&
			eval "before_$1=\$(cat $K/stats/$(policy_counter "$1"))"
		shift 2
	done
	swap_on >&2 || { echo "set-up failed: swapon"; return; }
	got=$(run_cow)
	set -- $knobs
	while [ $# -gt 0 ]; do
		counter=$(policy_counter "$1")
		if [ "$2" = 0 ] && [ -n "$counter" ]; then
			eval "before=\$before_$1"
			# shellcheck disable=SC2154 # before: assigned by the eval
			[ "$(cat $K/stats/"$counter")" -gt "$before" ] ||
				got="module not exercised: $counter did not move with $1=0"
		fi
		shift 2
	done
	module_unload >&2 || got="unloading the module failed"
	echo "$got"
}

echo "TAP version 13"
[ -x "$COW" ] || { echo "1..1"; echo "not ok 1 $COW not built"; exit 1; }
if [ -d $K ] && ! module_unload; then
	echo "Bail out! the module was loaded and did not unload"
	exit 1
fi

case ${UPSTREAM_PROFILE:-full} in
short)
	echo "1..1"
	got=$(run_cow_with 0 0 0)
	echo "# module loaded, every knob at 0: pass/fail/skip $got"
	set -- $got
	if [ "$1" -gt 0 ] 2>/dev/null && [ "$2" = 0 ]; then
		echo "ok 1 cow with offset_key=0 skip_wb_tags=0 cow_free=0: $1 passed, 0 failed, $3 skipped"
		exit 0
	fi
	echo "not ok 1 cow with offset_key=0 skip_wb_tags=0 cow_free=0: $got"
	grep '^not ok' /tmp/cow.out | head -20 | sed 's/^/# /'
	exit 1
	;;
full) ;;
*) echo "Bail out! UPSTREAM_PROFILE must be full or short"; exit 1 ;;
esac

echo "1..5"
status=0
if swap_on; then
	ref=$(run_cow)
else
	ref="set-up failed: swapon"
fi
echo "# reference, module not loaded: pass/fail/skip $ref"
set -- $ref
if [ "$1" -gt 0 ] 2>/dev/null; then
	echo "ok 1 cow without the module: $1 passed, $2 failed, $3 skipped"
else
	echo "not ok 1 cow without the module: $ref"
	status=1
fi
n=1
for setting in "1 1 1" "0 1 1" "1 0 1" "1 1 0"; do
	set -- $setting
	got=$(run_cow_with "$@")
	n=$((n + 1))
	label="offset_key=$1 skip_wb_tags=$2 cow_free=$3"
	if [ "$got" = "$ref" ] && [ $status = 0 ]; then
		echo "ok $n cow with $label: pass/fail/skip $got, as without the module"
	else
		echo "not ok $n cow with $label: $got; without the module $ref"
		grep '^not ok' /tmp/cow.out | head -20 | sed 's/^/# /'
		status=1
	fi
done
exit $status
