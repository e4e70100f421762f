#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench_guard: make ab's bench/bench started on a machine that already
# swaps, as a real host does.  A loop device over tmpfs stands for the
# host's own swap, on at priority 5.  bench must refuse to start while it
# is on (exit 2, the device named, /proc/swaps unchanged); with
# other_swap=off it must take it off for the run and, when the run is
# killed, put it back at its priority; a bad other_swap value is refused
# before anything changes, and so are a hooked= naming no knob and a
# fresh boot's sides= mixing a hooked knob with an unhooked one.  Needs /bench, which make check builds.
BENCH=${BENCH:-/bench/bench}
SWAPON_PRIO=${BENCH%/*}/swapon-prio
HOST_FILE=/tmp/bench_guard-host-swap
LOG=/tmp/bench_guard.log
ARGS="kernel=guard mode=knobs knobs=cow_free workloads=anon-cow-swap runs=1 aa=0 hook=0
	small_swap=/dev/ram0 test_swap=/dev/pmem0"

n=0
failed=0
result() { # status description
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi
}
swaps() { awk 'NR > 1 { print $1, $5 }' /proc/swaps | sort; }
host=
# The host's stand-in goes at any exit, a bail-out's too
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	[ -n "$host" ] && { swapoff "$host" 2>/dev/null; losetup -d "$host"; }
	rm -f $HOST_FILE $LOG
}
trap cleanup EXIT
# busybox ash runs the EXIT trap at a signal only if the signal is trapped:
# guest-timeout stops a test with TERM
trap 'exit 143' TERM
trap 'exit 130' INT

echo "TAP version 13"
echo "1..5"
[ "$(id -u)" = 0 ] || { echo "Bail out! needs root"; exit 1; }
[ -x "$BENCH" ] || { echo "Bail out! no $BENCH: make check builds bench into the VM"; exit 1; }

./swap_setup off || { echo "Bail out! swap off"; exit 1; }
dd if=/dev/zero of=$HOST_FILE bs=1M count=16 2>/dev/null &&
	host=$(losetup -f) && losetup "$host" $HOST_FILE && mkswap "$host" >/dev/null &&
	"$SWAPON_PRIO" "$host" 5 || { echo "Bail out! the host's swap on a loop device"; exit 1; }
before=$(swaps)

# shellcheck disable=SC2086 # ARGS is a list of words
$BENCH $ARGS >$LOG 2>&1
rc=$?
grep -q "swap devices other than those given are on: $host " $LOG
named=$?
[ "$(swaps)" = "$before" ]
unchanged=$?
[ $rc -eq 2 ] && [ $named -eq 0 ] && [ $unchanged -eq 0 ]
result $? "refused while $host is on: exit $rc, the device named, /proc/swaps unchanged"
[ $rc -eq 2 ] || sed 's/^/# /' $LOG

# shellcheck disable=SC2086
$BENCH $ARGS other_swap=off >$LOG 2>&1 &
pid=$!
off=1
for _ in $(seq 600); do
	if grep -q "other_swap=off: $host (priority 5) off for the run" $LOG &&
		! grep -q "^$host " /proc/swaps; then
		off=0
		break
	fi
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
kill -TERM $pid 2>/dev/null
# The shell takes the signal once its running command returns
for _ in $(seq 3000); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
kill -0 $pid 2>/dev/null && { kill -KILL $pid; echo "# bench still running 300 s after SIGTERM"; }
wait $pid
rc=$?
prio=$(awk -v d="$host" '$1 == d { print $5 }' /proc/swaps)
[ $off -eq 0 ] && [ "$prio" = 5 ]
result $? "other_swap=off: $host off for the run, back on at priority ${prio:-none} after SIGTERM (bench exit $rc)"
[ $off -eq 0 ] || sed 's/^/# /' $LOG

./swap_setup off
grep -q "^$host " /proc/swaps || "$SWAPON_PRIO" "$host" 5
before=$(swaps)
# shellcheck disable=SC2086
$BENCH $ARGS other_swap=maybe >$LOG 2>&1
rc=$?
grep -q "other_swap is refuse or off, not 'maybe'" $LOG && [ $rc -eq 2 ] && [ "$(swaps)" = "$before" ]
result $? "other_swap=maybe refused (exit $rc), nothing changed"

# shellcheck disable=SC2086
$BENCH $ARGS hooked=offset_key+swap_cache >$LOG 2>&1
rc=$?
grep -q "hooked: unknown knob 'swap_cache'" $LOG && [ $rc -eq 2 ] && [ "$(swaps)" = "$before" ]
result $? "hooked=offset_key+swap_cache refused (exit $rc), nothing changed"
# Side 1 of both, one setting, but offset_key hooked and skip_wb_tags not
$BENCH kernel=guard mode=overhead load=1 hooked=offset_key sides=offset_key:1+skip_wb_tags:1 >$LOG 2>&1
rc=$?
grep -q "sides: skip_wb_tags and offset_key are not both hooked" $LOG && [ $rc -eq 2 ] &&
	[ "$(swaps)" = "$before" ]
result $? "sides= mixing a hooked knob with an unhooked one refused (exit $rc), nothing changed"

./swap_setup off
if [ -d /sys/kernel/mm/swapcache_ab ]; then
	echo 0 >/sys/module/swapcache_ab/parameters/key_hooked 2>/dev/null
	rmmod swapcache_ab 2>/dev/null
fi
exit $failed
