#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the test VM on a kernel and initramfs, run one job in it and bring
# its output back.  The kernel console goes to a log; any WARN, BUG, Oops,
# panic, lockdep or sanitizer report in it fails the run, as does a job
# that does not report its end.
#
# Usage: vm/run-vm.sh BZIMAGE INITRAMFS JOB [ARGS] 
#   JOB: selftests, demo or bench; ARGS: comma-separated, for bench
# Environment: ACCEL (tcg, or kvm where nested KVM works), VM_CPUS (2),
#   VM_TIMEOUT seconds (1800), VM_ICOUNT=1 for -icount shift=0 (the
#   guest clock counts instructions: path length, not host noise;
#   VM_ICOUNT_SLEEP=on: idle time passes in real time, below),
#   VM_PMEM_MB (768) of the 1536 MB as the pmem swap device, VM_LOG_DIR
#   (build/vm), VM_NAME (JOB) naming the logs, VM_PROFILE and VM_TESTS
#   (the selftests to run, below), VM_APPEND (more kernel parameters),
#   VM_SWAP_DISK_MB (0): a virtio-blk disk of that size, /dev/vda in the
#   guest, backed by a sparse file in the host's /dev/shm.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

kernel=$1 initrd=$2 job=$3 args=${4:-}
logdir=${VM_LOG_DIR:-$BUILD_DIR/vm}
mkdir -p "$logdir"
name=${VM_NAME:-$job}
console=$logdir/$name-console.log
results=$logdir/$name-output.log

# TCG runs the vCPUs in one thread by default: with one host thread per
# vCPU (thread=multi), a vCPU was seen to execute the int3 of a jump label
# that text_poke_bp() had already finished patching, and oops ("Oops: int3"
# in swap_cache_get_folio, while the module flipped its static key under
# swap load) - an emulation race of cross-modifying code, which real CPUs
# are serialised against.  VM_TCG_THREAD=multi brings it back.
#
# The emulated CPU has no 5-level paging (la57=off), as most fleet CPUs:
# on 6.12, identify_cpu() clears the boot CPU's capabilities while it
# reads them again, so an interrupt in that window sees LA57 off while
# the kernel runs 5-level; KASAN then took a per-CPU address of the LA57
# direct map for a wild access and panicked the boot (seen once, a cold
# CI run booting while a second VM ran beside it).
words=$(qemu_accel_args "${VM_TCG_THREAD:-single}") || exit 1
read -r -a accel_args <<<"$words"
accel=${accel_args[1]}
icount=()
# sleep=off jumps the guest clock to its next timer whenever the guest
# idles; VM_ICOUNT_SLEEP=on lets idle time pass at the host's pace, so
# that waiting for a virtio disk costs its real latency, not a tick
[ "${VM_ICOUNT:-0}" = 1 ] && icount=(-icount "shift=0,sleep=${VM_ICOUNT_SLEEP:-off}")

# 1536M of guest RAM, the top VM_PMEM_MB (768) of it as pmem (/dev/pmem0)
# for swap, like the seed's RAM-emulated pmem device.
pmem_mb=${VM_PMEM_MB:-768}
cmdline="console=ttyS0 memmap=${pmem_mb}M!$((1536 - pmem_mb))M"
# /dev/nullb0: null_blk, memory backed (1 GB at most, allocated as it is
# written), each I/O completed 3 s late by a timer: a swap device that
# holds writeback in flight (selftest reload's rmmod)
cmdline+=" null_blk.nr_devices=1 null_blk.gb=1 null_blk.memory_backed=1"
cmdline+=" null_blk.irqmode=2 null_blk.completion_nsec=3000000000"
cmdline+=" panic_on_warn=1 oops=panic panic=-1"
cmdline+=" softlockup_panic=1 swapcache_ab.job=$job"
[ -n "$args" ] && cmdline+=" swapcache_ab.args=$args"
# VM_PROFILE: the selftests' profile in vm/expected-results (patched by
# default); VM_TESTS=a,b: only these selftests.  The guest runs the
# programs named, each under its time limit: NAME:SECONDS,...
[ -n "${VM_PROFILE:-}" ] && cmdline+=" swapcache_ab.profile=$VM_PROFILE"
if [ "$job" = selftests ]; then
	programs=$("$top/vm/tap-summary.py" --programs "${VM_PROFILE:-patched}" "${VM_TESTS:-}" |
		tr ' ' : | paste -sd ,) || exit 1
	cmdline+=" swapcache_ab.programs=$programs"
fi
# VM_ENV="NAME=VALUE ...": for the job
for e in ${VM_ENV:-}; do cmdline+=" swapcache_ab.env.$e"; done
# VM_APPEND: more kernel parameters, e.g. preempt=full
[ -n "${VM_APPEND:-}" ] && cmdline+=" $VM_APPEND"

# An asynchronous swap device, as the NVMe SSD of the post-COW free's
# seed: unlike pmem and brd, virtio-blk is not SWP_SYNCHRONOUS_IO, so
# every swap-in goes through the swap cache
disk=()
if [ "${VM_SWAP_DISK_MB:-0}" -gt 0 ]; then
	disk_file=$(mktemp /dev/shm/swapcache_ab-disk.XXXXXX)
	trap 'rm -f "$disk_file"' EXIT
	truncate -s "${VM_SWAP_DISK_MB}M" "$disk_file"
	disk=(-drive "file=$disk_file,if=virtio,format=raw,cache=unsafe")
fi

log "booting $(basename "$kernel") (accel=$accel${icount:+, icount}) for $job; console: $console"
timeout --foreground "${VM_TIMEOUT:-1800}" \
	qemu-system-x86_64 "${accel_args[@]}" -smp "${VM_CPUS:-2}" -m 1536M \
	"${icount[@]}" "${disk[@]}" -kernel "$kernel" -initrd "$initrd" -append "$cmdline" \
	-display none -monitor none -no-reboot -nodefaults \
	-serial "file:$console" -chardev stdio,id=out,signal=off -serial chardev:out \
	</dev/null | sed -u 's/\r$//' | tee "$results"
qemu_rc=${PIPESTATUS[0]}

status=0
if [ "$qemu_rc" -ne 0 ]; then
	echo "VM: qemu exited with $qemu_rc (124: timed out)" >&2
	status=1
fi
# Boot messages name KASAN, lockdep and kmemleak too: match reports only
splats='WARNING:|BUG:|Oops|Kernel panic|general protection|INFO: lockdep|possible recursive locking|circular locking|UBSAN:|suspected memory leak|Call Trace:'
# The count means something only with the detectors on: name those that
# announced themselves at boot
detectors=
grep -q 'KernelAddressSanitizer initialized' "$console" && detectors+=" KASAN"
grep -q 'Lock dependency validator' "$console" && detectors+=" lockdep"
grep -q 'kmemleak: Kernel memory leak detector initialized' "$console" && detectors+=" kmemleak"
# The OOM killer's report of a kill (selftests/oom's) dumps the stack of
# the task that invoked it: that one Call Trace, the first after its
# "invoked oom-killer" line, is not a problem; anything else still is
reports=$(awk '/ invoked oom-killer: / { oom = 1 }
	oom && /Call Trace:/ { oom = 0; next }
	{ print }' "$console")
echo "VM: $(grep -Ec "$splats" <<<"$reports") lines of kernel reports (WARN, BUG, Oops, lockdep, KASAN, UBSAN, kmemleak); detectors on:${detectors:- none beyond WARN/BUG}"
if grep -Eq "$splats" <<<"$reports"; then
	echo "VM: kernel reported a problem; from $console:" >&2
	grep -E -A20 "$splats" <<<"$reports" | head -60 >&2
	status=1
fi
done_line=$(grep -a '^SWAPCACHE_AB_DONE rc=' "$results" | tail -1)
if [ -z "$done_line" ]; then
	echo "VM: the job never reported its end; console tail:" >&2
	tail -30 "$console" >&2
	status=1
elif [ "$done_line" != "SWAPCACHE_AB_DONE rc=0" ]; then
	echo "VM: job $job ended with ${done_line#SWAPCACHE_AB_DONE }" >&2
	status=1
fi
exit $status
