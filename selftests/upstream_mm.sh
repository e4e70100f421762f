#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own tools/testing/selftests/mm/cow, with swap on.
#
# UPSTREAM_PROFILE=full (default): first without the module (the
# reference: mainline behaviour on this kernel), then with swapcache_ab
# loaded at mainline settings and with each knob at 0.  Every run must pass
# as many tests, and fail as many, as the reference.
#
# UPSTREAM_PROFILE=short (the debug kernel's: one cow run there takes more
# than ten minutes): one run, with the module loaded and every knob at 0,
# so that each hook takes its pre-upstream path; it must fail none.
KO=${SWAPCACHE_AB_KO:-/swapcache_ab.ko}
COW=${UPSTREAM_COW:-/kselftest/upstream/cow}
K=/sys/kernel/mm/swapcache_ab

[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP needs root"; exit 4; }
[ -x "$COW" ] || { echo "1..0 # SKIP $COW not built"; exit 4; }

# The swap the other selftests use: the device under test is type 1
swap_off() { ./swap_setup off; }
swap_on() { ./swap_setup on; }

# "pass fail" from cow's kselftest totals
run_cow() {
	"$COW" >/tmp/cow.out 2>&1
	sed -n 's/^# Totals: pass:\([0-9]*\) fail:\([0-9]*\).*/\1 \2/p' /tmp/cow.out
}

# Unloading needs the offset key back, which needs swap off
module_unload() {
	swap_off
	echo 1 >$K/offset_key
	rmmod swapcache_ab
}

# cow with the module loaded at "offset_key skip_wb_tags cow_free"
run_cow_with() {
	{
		swap_off
		insmod "$KO" && echo "$1" >$K/offset_key &&
			echo "$2" >$K/skip_wb_tags && echo "$3" >$K/cow_free && swap_on
	} >&2
	run_cow
	module_unload >&2
}

echo "TAP version 13"
[ -d $K ] && module_unload

case ${UPSTREAM_PROFILE:-full} in
short)
	echo "1..1"
	got=$(run_cow_with 0 0 0)
	set -- $got
	echo "# module loaded, every knob at 0: pass/fail $got"
	if [ -n "$1" ] && [ "$1" -gt 0 ] && [ "$2" = 0 ]; then
		echo "ok 1 cow with offset_key=0 skip_wb_tags=0 cow_free=0: $1 passed, 0 failed"
		exit 0
	fi
	echo "not ok 1 cow with offset_key=0 skip_wb_tags=0 cow_free=0: pass/fail '$got'"
	grep '^not ok' /tmp/cow.out | head -20 | sed 's/^/# /'
	exit 1
	;;
full) ;;
*) echo "Bail out! UPSTREAM_PROFILE must be full or short"; exit 1 ;;
esac

echo "1..5"
swap_on || { echo "Bail out! swapon failed"; exit 1; }
ref=$(run_cow)
echo "# reference, module not loaded: pass/fail $ref"
set -- $ref
[ -n "$1" ] && [ "$1" -gt 0 ]
echo "$([ $? = 0 ] || echo "not ")ok 1 cow without the module: $1 passed, $2 failed"
n=1 status=0
for setting in "1 1 1" "0 1 1" "1 0 1" "1 1 0"; do
	set -- $setting
	got=$(run_cow_with "$@")
	n=$((n + 1))
	label="offset_key=$1 skip_wb_tags=$2 cow_free=$3"
	if [ "$got" = "$ref" ]; then
		echo "ok $n cow with $label: pass/fail $got, as without the module"
	else
		echo "not ok $n cow with $label: pass/fail $got, without the module $ref"
		grep '^not ok' /tmp/cow.out | head -20 | sed 's/^/# /'
		status=1
	fi
done
exit $status
