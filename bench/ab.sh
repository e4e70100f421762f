#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make ab: the user's A/B in the VM, one boot of the patched kernel with
# the module, each knob flipped at runtime, and the cost of the hook
# points (bench/README.md has the method and the pre-registration):
#   1. the knob pass: one boot of the patched kernel, for each knob pairs
#      of runs at 0 and 1 (its headline workload: swap-w-seq, and
#      anon-cow-swap for cow_free), beside them the in-boot A/A pairs
#      (every knob at 1 on both sides) and the hook dispatch pairs
#      (hooked at mainline against unhooked), in rounds whose order is
#      drawn from SEED, each comparison's n as pre-registered (PAIRS);
#   2. the overhead rounds: BOOT_RUNS rounds of boots, in an order drawn
#      per round, of the stock kernel, the patched kernel without the
#      module and with it loaded, every knob at 1: what the hook points
#      and the loaded module cost;
# then bench/report.py's tables and verdicts: each knob's in-boot effect
# and its difference from the reboot A/B as published (the registration's
# constants), in a results folder.
# make study STUDY=... runs one of the validation studies instead, each
# into its own folder:
#   fidelity      the knob pass (1.) and BOOT_RUNS rounds of boots of the
#                 stock kernel, the same source built a second time
#                 (stock2: the boot A/A), the reference kernels of
#                 bench/reference/knobs and fresh boots of the patched
#                 kernel with each knob set after boot to one side: each
#                 knob's reboot A/B measured again beside its runtime A/Bs
#   locks         one boot of the lock pass kernel (vm/locks.config:
#                 lock_stat, no runtime text patching; LOCK_KERNEL=
#                 contention: the same without lockdep) on multi-threaded
#                 TCG: locktorture's positive control, then pairs of
#                 skip_wb_tags, offset_key.trunks0 and trunks (and A/A)
#                 under global memory pressure, counting contentions and
#                 wait time over each window, per lock class and
#                 contention point from lock_stat and per caller from
#                 perf's lock:contention_begin/end tracepoints (where this
#                 host has perf), each where the kernel has it
#   simultaneous  on skip_wb_tags and cow_free, the knob pairs one after
#                 the other against both sides at once in two sibling
#                 cgroups, one boot each in an order drawn from SEED
# Every figure comes from bench/bench's RESULT lines; a failed run or VM
# fails the run after the report.
#
# Profile (environment); bench/README.md "Profile variables" lists which
# each study reads:
#   STUDY=            empty: the A/B above; fidelity, locks, simultaneous
#   RUNS=             every comparison's pairs (and the lock pass's);
#                     unset: the pre-registered n per comparison (PAIRS
#                     below; RUNS=8 for the lock pass, SIM_RUNS=2*8)
#   BOOT_RUNS=5       boot rounds (10 in STUDY=fidelity)
#   KNOBS=offset_key+offset_key.trunks0+trunks+skip_wb_tags+cow_free
#                     (none: the overhead rounds only)
#   WORKLOADS=swap-w-seq+anon-cow-swap   the knob pass's workloads (the
#                     knobs' headline ones; empty: all of each knob's)
#   NR_TASK=2 MEM=32  usemem processes; memory.high (MB) of the cgroup
#   PMEM_MB=128       of the VM's RAM as the pmem swap device
#   SWAP_DISK_MB=256  the virtio-blk swap device of the *-async workloads
#                     (the lock pass: the disk perf's records go to)
#   FULL=0            1: every workload everywhere, 10 s pmbench
#   AA=1 HOOK=1 OVERHEAD=1   0 leaves out the A/A pairs, the hook
#                     dispatch pairs, the overhead rounds
#   LOCK_CPUS=2       vCPUs of the lock study: at most the host's cores,
#                     since a vCPU preempted while it holds a guest lock
#                     makes contention that no machine has (LOCK_OVERSUB=1
#                     allows more, for perf's counter: it sees a spin
#                     lock's waiters from the second on, at 3 CPUs or
#                     more); each vCPU thread pinned to a host core
#   LOCK_KERNEL=locks the lock pass kernel: locks (lock_stat and perf's
#                     counter, on the same runs) or contention (no
#                     lockdep: perf's counter alone)
#   LOCKPERF=         1: perf's counter required, 0: off (default: where
#                     this host has perf, packed into the initramfs)
#   LOCK_TASKS=2*LOCK_CPUS  usemem processes of the lock study
#   LOCK_PMEM_MB=512  its pmem swap device, of the VM's 1536 MB
#   ICOUNT=1          -icount: guest time counts instructions, so timings
#                     measure path length and barely move with host load
#                     (0 for KVER=6.1, which does not boot under it here)
#   BOOT_WARM=        1: each boot runs each of its workloads once first,
#                     unrecorded (default: 1 without icount, 0 under it)
#   MODULE_KO=        pack this swapcache_ab.ko instead of module/'s
#   SEED=             seed of every random order (default: the time)
#   PERF=0            1: perf stat over each usemem window (perf.* rows),
#                     where this host has perf (linux-perf): packed into
#                     the initramfs; else a NOTE in the report says so.
#                     Off by default: its software events add kernel work
#                     per fault and switch to the window the per-page
#                     figures count (both sides; not yet measured)
#   PROFILE=0         1: perf record -a -g -e cpu-clock over each usemem
#                     window too, LKP's perf-profile rows (its sampling adds
#                     to the per-page figures, on both sides)
#   AB_RESULTS=dir    where the results go (build/ab-results/<date>)
#   PUBLISH=1         into a new run folder under bench/results/ instead,
#                     <date>-<KVER>-<ab|fidelity|locks|simultaneous>[-noicount][-2...]:
#                     results.txt.gz, provenance.json, table.txt and a
#                     README.md (bench/results/.gitignore); refused from a
#                     tree with changes (git status --porcelain outside
#                     build/)
# The hooking of each knob's sides is not a choice: bench/bench's rule
# (bench/README.md, "Hooked sides").
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
cd "$top"

# The pre-registered pairs per comparison of the knob pass (bench/README.md,
# "Pre-registration"; report.py's REGISTERED_PAIRS, which test-report.py
# checks against this line and against the n rule)
REGISTERED_PAIRS=offset_key:6+offset_key.trunks0:7+trunks:19+skip_wb_tags:6+cow_free:40+aa@swap-w-seq:16+aa@anon-cow-swap:16+hook_dispatch:8
STUDY=${STUDY:-}
# What each study runs: the knob pass, the overhead rounds, the
# reference kernels and fresh boots, the lock pass, the mode
KNOB_PASS=1 FIDELITY=0 LOCKS=0 MODE=sequential
case $STUDY in
'') OVERHEAD=${OVERHEAD:-1} BOOT_RUNS=${BOOT_RUNS:-5} ;;
fidelity) OVERHEAD=0 FIDELITY=1 BOOT_RUNS=${BOOT_RUNS:-10} ;;
locks) OVERHEAD=0 KNOB_PASS=0 LOCKS=1 ;;
simultaneous) OVERHEAD=0 MODE=simultaneous ;;
*) die "STUDY is fidelity, locks or simultaneous (or empty: the A/B), not '$STUDY'" ;;
esac
BOOT_RUNS=${BOOT_RUNS:-0}
[ -z "${HOOKED:-}" ] || die "HOOKED is gone: the hooking is bench/bench's rule (bench/README.md, Hooked sides)"
[ -z "${FRESH:-}" ] || die "FRESH is gone: the fresh boots are in STUDY=fidelity"
PAIRS=''
if [ -n "${RUNS:-}" ]; then
	case $RUNS in '' | *[!0-9]* | 0) die "RUNS is a positive number, not '$RUNS'" ;; esac
elif [ "$MODE" = sequential ] && [ "$LOCKS" = 0 ]; then
	PAIRS=$REGISTERED_PAIRS
fi
RUNS=${RUNS:-8}
case $MODE in
sequential)
	KNOBS=${KNOBS:-offset_key+offset_key.trunks0+trunks+skip_wb_tags+cow_free}
	WORKLOADS=${WORKLOADS-swap-w-seq+anon-cow-swap} ;;
simultaneous)
	KNOBS=${KNOBS:-skip_wb_tags+cow_free} WORKLOADS=${WORKLOADS:-swap-w-seq+anon-cow-swap}
	SIM_RUNS=${SIM_RUNS:-$((2 * RUNS))} ;;
esac
# pairs= names only knobs of the pass: the registered n of the others drop
if [ -n "$PAIRS" ]; then
	PAIRS=$(echo "$PAIRS" | tr + '\n' | while IFS=: read -r c n; do
		case ${c%%@*} in aa) [ "${AA:-1}" = 1 ] || continue ;; hook_dispatch) [ "${HOOK:-1}" = 1 ] || continue ;;
		*) case +$KNOBS+ in *"+${c%%@*}+"*) ;; *) continue ;; esac ;; esac
		case $c in *@*) case "+$WORKLOADS+" in "++" | *"+${c#*@}+"*) ;; *) continue ;; esac ;; esac
		echo "$c:$n"
	done | paste -sd+)
fi
SIM_RUNS=${SIM_RUNS:-0}
NR_TASK=${NR_TASK:-2} MEM=${MEM:-32} FULL=${FULL:-0}
AA=${AA:-1} HOOK=${HOOK:-1}
LOCK_CPUS=${LOCK_CPUS:-2} LOCK_PMEM_MB=${LOCK_PMEM_MB:-512}
LOCK_TASKS=${LOCK_TASKS:-$((2 * LOCK_CPUS))}
LOCK_KERNEL=${LOCK_KERNEL:-locks} LOCKPERF=${LOCKPERF:-} LOCK_OVERSUB=${LOCK_OVERSUB:-0}
case $LOCK_KERNEL in locks | contention) ;; *) die "LOCK_KERNEL is locks or contention, not '$LOCK_KERNEL'" ;; esac
case $LOCKPERF in '' | 0 | 1) ;; *) die "LOCKPERF is 0 or 1 (or empty: where perf is), not '$LOCKPERF'" ;; esac
# Whether pass 3 runs (it needs knobs to pair)
lock_pass=0
[ "$LOCKS" = 1 ] && [ "$KNOBS" != none ] && lock_pass=1
if [ "$lock_pass" = 1 ] && [ "$LOCK_CPUS" -gt "$(nproc)" ]; then
	[ "$LOCK_OVERSUB" = 1 ] ||
		die "LOCK_CPUS=$LOCK_CPUS is more than this host's $(nproc) cores: a vCPU preempted while holding a guest lock would make contention no machine has (LOCK_OVERSUB=1 runs it anyway)"
	log "LOCK_CPUS=$LOCK_CPUS on $(nproc) cores (LOCK_OVERSUB=1): a vCPU preempted while holding a guest lock makes contention no machine has; a counter's check, not a measurement"
fi
# perf in the lock pass's initramfs: its counter (bench/bench lockperf)
lock_vm_perf=0
if [ "$lock_pass" = 1 ] && [ "$LOCKPERF" != 0 ]; then
	if command -v perf >/dev/null; then
		lock_vm_perf=1
	else
		[ "$LOCKPERF" = 1 ] && die "LOCKPERF=1: no perf on this host (linux-perf)"
		log "no perf on this host (linux-perf): the lock pass counts from lock_stat alone"
	fi
fi
[ "$LOCK_KERNEL" = contention ] && [ "$lock_pass" = 1 ] && [ "$lock_vm_perf" = 0 ] &&
	die "LOCK_KERNEL=contention counts with perf alone: it needs perf (linux-perf) and LOCKPERF unset or 1"
# The reboot A/Bs: reference kernels are stock 6.12 plus a patch
fid_knobs='' ref_kernels=''
if [ "$FIDELITY" = 1 ]; then
	[ "$KVER" = 6.12 ] || die "STUDY=fidelity: bench/reference/ has reference kernels for 6.12 only"
	while read -r knob a b; do
		case $knob in '' | '#'*) continue ;; esac
		echo "+$KNOBS+" | grep -q "+$knob+" || continue
		fid_knobs+="${fid_knobs:++}$knob"
		for k in $a $b; do
			case " $ref_kernels " in *" $k "*) ;; *) [ "$k" = stock ] || ref_kernels+="${ref_kernels:+ }$k" ;; esac
		done
	done <"$top/bench/reference/knobs"
	[ -n "$fid_knobs" ] || die "STUDY=fidelity: none of KNOBS=$KNOBS is in bench/reference/knobs"
fi
# The fresh boots (STUDY=fidelity): each the patched kernel with the
# module, the knobs set after boot as the sides listed (one setting:
# offset_key.trunks0=1 is trunks=0 with offset_key=1, and every knob's
# side 1 is every knob at 1), running the workloads of those knobs; the
# key knobs (hooked on both sides, bench/bench's rule) boot apart from
# the others; cow_free's side 1 boots on its own, so that both its sides
# run the same workloads in the same order
HOOKED=offset_key+offset_key.trunks0+trunks
fresh_boots=''
if [ "$FIDELITY" = 1 ]; then
	for sides in offset_key:0 offset_key.trunks0:0 offset_key.trunks0:1+trunks:0 skip_wb_tags:0 \
		offset_key:1+trunks:1+skip_wb_tags:1 cow_free:0 cow_free:1; do
		for hooked in 1 0; do
			kept=$(echo "$sides" | tr + '\n' | while IFS=: read -r knob side; do
				case +$fid_knobs+ in *"+$knob+"*) ;; *) continue ;; esac
				case +$HOOKED+ in *"+$knob+"*) h=1 ;; *) h=0 ;; esac
				if [ "$h" = "$hooked" ]; then echo "$knob:$side"; fi
			done | paste -sd+)
			[ -n "$kept" ] && fresh_boots+="${fresh_boots:+ }fresh:$kept"
		done
	done
fi
# A reference kernel's boot runs the workloads of the knobs it stands for
ref_knobs() { # ref-kernel
	awk -v k="$1" -v knobs="+$KNOBS+" '$1 !~ /^#/ && NF == 3 && ($2 == k || $3 == k) &&
		index(knobs, "+" $1 "+") { printf "%s%s", (n++ ? "+" : ""), $1 }' "$top/bench/reference/knobs"
}
# 6.1 does not boot past SMP bring-up under -icount here (QEMU 7.2 TCG,
# with sleep on or off): its default is without
icount_default=1
[ "$KVER" = 6.1 ] && icount_default=0
ICOUNT=${ICOUNT:-$icount_default} SEED=${SEED:-$(date +%s)} SWAP_DISK_MB=${SWAP_DISK_MB:-256}
PMEM_MB=${PMEM_MB:-128}
PERF=${PERF:-0} PROFILE=${PROFILE:-0}
case $PERF$PROFILE in [01][01]) ;; *) die "PERF and PROFILE are 0 or 1" ;; esac
export VM_PERF=0
if [ "$PERF$PROFILE" != 00 ]; then
	if command -v perf >/dev/null; then
		VM_PERF=1
	else
		log "no perf on this host (linux-perf): no perf stat or perf-profile rows"
	fi
fi
BOOT_WARM=${BOOT_WARM:-$((1 - ICOUNT))}
# What the tree holds now, before the run writes anything
tree_changes=$(git status --porcelain -- . ':(exclude)build' 2>/dev/null || echo "not a git tree")
# The commit the kernels and the module are built from, read before they
# are: a commit made while the run goes on is not the one measured
head_commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ "${PUBLISH:-0}" = 1 ]; then
	[ -z "${AB_RESULTS:-}" ] || die "PUBLISH=1 picks the folder itself: leave AB_RESULTS unset"
	# A second run of a day gets -2, -3...: a run folder is never written twice
	run_base=$top/bench/results/$(date +%Y%m%d)-$KVER-${STUDY:-ab}$([ "$ICOUNT" = 1 ] || echo -noicount)
	AB_RESULTS=$run_base run_nr=1
	while [ -e "$AB_RESULTS" ]; do
		run_nr=$((run_nr + 1))
		AB_RESULTS=$run_base-$run_nr
	done
fi
out=${AB_RESULTS:-$BUILD_DIR/ab-results/$(date +%Y%m%d-%H%M%S)}
# A committed results folder is written from a clean commit only
case $(realpath -m "$out")/ in
"$top"/bench/results/*)
	[ -z "$tree_changes" ] || die "$out is under bench/results/, and the tree has changes (commit them first):
$tree_changes" ;;
esac
export VM_PMEM_MB=$PMEM_MB VM_LOG_DIR=$out/vm VM_SWAP_DISK_MB=$SWAP_DISK_MB
# One boot runs a whole pass: hours at most, not run-vm.sh's default
export VM_TIMEOUT=${VM_TIMEOUT:-10800}
# Idle time at the host's pace: the virtio disk's latency is real, not a
# tick (VM_ICOUNT_SLEEP=off, vm/run-vm.sh's: the idle-time check)
export VM_ICOUNT_SLEEP=${VM_ICOUNT_SLEEP:-on}

start=$SECONDS
prepare_vm patched module
# stock for the overhead rounds and the reboot A/Bs, stock2 (the boot
# A/A) for the reboot A/Bs only
if [ "$OVERHEAD" = 1 ] || [ "$FIDELITY" = 1 ]; then
	vm/build-kernel.sh stock
fi
[ "$FIDELITY" = 1 ] && vm/build-kernel.sh stock2
for k in $ref_kernels; do vm/build-kernel.sh "$k"; done
mkdir -p "$out/vm" "$BUILD_DIR/vm"
initrd=$BUILD_DIR/vm/initramfs.cpio.gz
vm/make-initramfs.sh "$initrd" ${MODULE_KO:+"$MODULE_KO"}
if [ "$lock_pass" = 1 ]; then
	# The lock pass kernel, the module built for it in a copy of its
	# sources, locktorture for the control
	vm/build-kernel.sh "$LOCK_KERNEL"
	locks_kdir=$(kernel_dir "$LOCK_KERNEL")
	# Nothing but bench's own static call updates may patch its text
	# once the second vCPU runs
	vm/text-patch-audit.sh "$locks_kdir" >"$out/text-patch-audit.txt" ||
		die "the lock pass kernel can patch its text at runtime: see $out/text-patch-audit.txt"
	vm/build-module.sh "$locks_kdir" "$BUILD_DIR/$LOCK_KERNEL/module"
	# make-initramfs.sh packs selftests/api's module of the kernel's release
	vm/build-selftests.sh "$locks_kdir"
	initrd_locks=$BUILD_DIR/vm/initramfs-$LOCK_KERNEL.cpio.gz
	VM_PERF=$lock_vm_perf vm/make-initramfs.sh "$initrd_locks" "$BUILD_DIR/$LOCK_KERNEL/module/module/swapcache_ab.ko" \
		"$locks_kdir/kernel/torture.ko" "$locks_kdir/kernel/locking/locktorture.ko"
fi

# A random permutation of the arguments, reproducible from SEED and a salt
shuffle() { # salt words...
	python3 -c 'import random, sys; w = sys.argv[2:]; random.Random(sys.argv[1]).shuffle(w); print(" ".join(w))' \
		"$SEED-$1" "${@:2}"
}

# bench/bench's arguments that every pass shares
common_args() { # nr_task icount
	echo "nr_task=$1,mem=$MEM,full=$FULL,seed=$SEED,icount=$2,perf=$PERF,profile=$PROFILE${WORKLOADS:+,workloads=$WORKLOADS}"
}
common=$(common_args "$NR_TASK" "$ICOUNT")

# PROGRESS lines from the guest carry "k/N" in guest time: give them host
# wall time and an estimate of the phase's end
annotate() { # phase
	local line k total el eta phase_start=$SECONDS
	while IFS= read -r line; do
		if [[ $line =~ ^PROGRESS\ ([0-9]+)/([0-9]+)\  ]]; then
			k=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
			el=$((SECONDS - phase_start))
			eta='?'
			[ "$k" -gt 1 ] && eta=$(((el * (total - k + 1) / (k - 1) + 59) / 60))m
			printf '[%s %dm%02ds, phase %s ETA %s] %s\n' "$(date +%T)" \
				$(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$1" "$eta" "$line"
		else
			printf '%s\n' "$line"
		fi
	done
}

vm_failed=()
boot_orders=()
# Pin the vCPU threads ("CPU N/TCG") of the QEMU whose console is the
# file given, vCPU N to host core N mod nproc, as soon as they all exist
pin_vcpus() { # console-log
	local pid='' p t n i=0
	# (in the background: a thread or process that goes meanwhile is no error)
	set +e +o pipefail
	while [ "$i" -lt 600 ]; do
		for p in /proc/[0-9]*; do
			[ -r "$p/cmdline" ] && tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "-serial file:$1 " &&
				[ "$(cat "$p/comm" 2>/dev/null)" = qemu-system-x86 ] && pid=${p#/proc/}
		done
		if [ -n "$pid" ] && [ "$(grep -lx 'CPU [0-9]*/TCG' /proc/"$pid"/task/*/comm 2>/dev/null | wc -l)" -ge "$LOCK_CPUS" ]; then
			for t in /proc/"$pid"/task/*; do
				n=$(sed -n 's|^CPU \([0-9]*\)/TCG$|\1|p' "$t/comm" 2>/dev/null)
				[ -n "$n" ] || continue
				taskset -p -c $((n % $(nproc))) "${t##*/}" >/dev/null &&
					echo "vCPU $n: thread ${t##*/} pinned to host core $((n % $(nproc)))"
			done
			return 0
		fi
		sleep 0.5
		i=$((i + 1))
	done
	echo "vCPU pinning: no QEMU with $LOCK_CPUS vCPU threads found in 300 s: not pinned"
}
declare -A pass_seconds
boot() { # name kernel-variant label bench-args phase
	local boot_start=$SECONDS
	if ! VM_NAME=$1 vm/run-vm.sh "$(kernel_dir "$2")/arch/x86/boot/bzImage" "${BOOT_INITRD:-$initrd}" bench \
		"kernel=$3,$4" | annotate "$5"; then
		vm_failed+=("$1")
		echo "FAILED $3 - - 0 vm-$1 the VM failed: see $out/vm/$1-console.log" >>"$out/vm/failed-vms.log"
	fi
	pass_seconds[$1]=$((SECONDS - boot_start))
}

if [ "$MODE" = simultaneous ]; then
	# In an order drawn from SEED: neither pass always runs first
	pass_order=$(shuffle passes sequential simultaneous)
	boot_orders+=("$pass_order")
	for p in $pass_order; do
		if [ "$p" = sequential ]; then
			log "pass $p: knob pairs one after the other: $KNOBS, $RUNS pairs each, seed $SEED"
			VM_ICOUNT=$ICOUNT boot sequential patched sequential \
				"mode=knobs,runs=$RUNS,knobs=$KNOBS,aa=$AA,$common" "sequential"
		else
			log "pass $p: both sides at once, one cgroup each: $KNOBS, $SIM_RUNS pairs each"
			VM_ICOUNT=$ICOUNT boot simultaneous patched simultaneous \
				"mode=simultaneous,runs=$SIM_RUNS,knobs=$KNOBS,aa=$AA,$common" "simultaneous"
		fi
	done
elif [ "$KNOBS" != none ] && [ "$KNOB_PASS" = 1 ]; then
	log "pass 1: knob pairs on the patched kernel: $KNOBS, ${PAIRS:-$RUNS pairs each}, seed $SEED"
	VM_ICOUNT=$ICOUNT boot knobs patched patched \
		"mode=knobs,runs=$RUNS${PAIRS:+,pairs=$PAIRS},knobs=$KNOBS,aa=$AA,hook=$HOOK,$common" "knob pairs"
fi

if [ "$OVERHEAD" = 1 ] || [ "$FIDELITY" = 1 ]; then
	round=(stock)
	[ "$FIDELITY" = 1 ] && round+=(stock2)
	[ "$OVERHEAD" = 1 ] && round+=(patched module)
	[ "$FIDELITY" = 1 ] && log "fidelity: the reboot A/B of $fid_knobs on $ref_kernels, in the boot rounds"
	[ -n "$fresh_boots" ] && log "fidelity: fresh boots of the patched kernel, one side each: ${fresh_boots//fresh:/}"
	for run in $(seq "$BOOT_RUNS"); do
		# shellcheck disable=SC2086
		order=$(shuffle "boots-$run" "${round[@]}" $ref_kernels $fresh_boots)
		boot_orders+=("$order")
		log "pass 2: boot round $run/$BOOT_RUNS, in the order $order"
		for k in $order; do
			variant=$k label=$k name=$k args="mode=overhead,run=$run,warm=$BOOT_WARM,$common"
			case $k in
			module) variant=patched args+=",load=1" ;;
			stock | stock2) args+=",overhead=$OVERHEAD,fidelity=$fid_knobs" ;;
			ref-*) args+=",overhead=0,fidelity=$(ref_knobs "$k")" ;;
			fresh:*)
				sides=${k#fresh:}
				variant=patched label=fresh name=fresh-${sides%%+*}
				args+=",load=1,sides=$sides" ;;
			esac
			VM_ICOUNT=$ICOUNT boot "overhead-${name//:/-}-$run" "$variant" "$label" "$args" "boot round $run/$BOOT_RUNS"
		done
	done
fi

if [ "$lock_pass" = 1 ]; then
	log "pass 3: lock contention, multi-threaded TCG, $LOCK_CPUS vCPUs, $LOCK_TASKS tasks"
	# Single-threaded TCG switches vCPUs seldom, so a vCPU rarely spins
	# on a lock another holds: one host thread per vCPU.  The lock pass
	# kernel patches no text at runtime except the static calls, which
	# bench updates with CPU 0 alone online (one_cpu_text=1), since
	# QEMU 7.2's multi-threaded TCG lets a vCPU execute a finished text
	# patch's int3 (vm/run-vm.sh).  Global pressure: usemem sized from
	# the VM's memory, no cgroup limit
	# Each vCPU's host thread pinned to a core (vCPU i to core i mod the
	# host's cores) once QEMU has started it: the same placement in
	# every run; the lines say where each went
	pin_vcpus "$out/vm/locks-console.log" >"$out/vm/locks-pinning.log" 2>&1 &
	pinner=$!
	# perf's records on the virtio disk (SWAP_DISK_MB, which no workload
	# of this pass swaps to), not in the guest's /tmp: a tmpfs, RAM that
	# the pass fills (bench/bench lockperf_dev)
	lock_dev=''
	[ "$lock_vm_perf" = 1 ] && [ "$SWAP_DISK_MB" -gt 0 ] && lock_dev=,lockperf_dev=/dev/vda
	BOOT_INITRD=$initrd_locks VM_PMEM_MB=$LOCK_PMEM_MB VM_ICOUNT=0 VM_CPUS=$LOCK_CPUS VM_TCG_THREAD=multi \
		boot locks "$LOCK_KERNEL" locks \
		"mode=locks,runs=$RUNS,knobs=$KNOBS,aa=$AA,one_cpu_text=1${LOCKPERF:+,lockperf=$LOCKPERF}$lock_dev,$(common_args "$LOCK_TASKS" 0)" \
		"locks"
	kill "$pinner" 2>/dev/null || true
	wait "$pinner" 2>/dev/null || true
	cat "$out/vm/locks-pinning.log"
fi

# PROFILE: perf record's folded chains (bench/perfprofile.py)
cat "$out"/vm/*-output.log "$out/vm/failed-vms.log" 2>/dev/null |
	grep -a -E '^(PLAN|RESULT|FAILED|NOTE|PROFILE) ' >"$out/results.txt" || true

# Where and from what the figures came: the .config of every kernel
# booted, the srcversion of the module packed into the initramfs
config_sha256() { sha256sum "$(kernel_dir "$1")/.config" 2>/dev/null | cut -d' ' -f1; }
module_srcversion() {
	modinfo -F srcversion "$1" 2>/dev/null || tr '\0' '\n' <"$1" | sed -n 's/^srcversion=//p' | head -1
}
module_ko=${MODULE_KO:-$top/module/swapcache_ab.ko}
booted=patched
{ [ "$OVERHEAD" = 1 ] || [ "$FIDELITY" = 1 ]; } && booted+=" stock"
[ "$FIDELITY" = 1 ] && booted+=" stock2"
booted+=" $ref_kernels"
[ "$lock_pass" = 1 ] && booted+=" $LOCK_KERNEL"
python3 - "$out/provenance.json" <<EOF
import json, sys
json.dump({
    "date_utc": "$(date -u +%FT%TZ)",
    "kernel_version": "$KVER",
    "project_commit": "$head_commit$([ -z "$tree_changes" ] || echo -dirty)",
    "kernel_config_sha256": "$(config_sha256 patched)",
    "kernel_config_sha256_by_kernel": {$(for k in $booted; do printf '"%s": "%s", ' "$k" "$(config_sha256 "$k")"; done)},
    "module_ko": "$module_ko",
    "module_srcversion": "$(module_srcversion "$module_ko")",
    "profile": {"STUDY": "$STUDY", "MODE": "$MODE", "RUNS": $RUNS, "PAIRS": "$PAIRS", "BOOT_RUNS": $BOOT_RUNS, "SIM_RUNS": $SIM_RUNS,
                "KNOBS": "$KNOBS", "WORKLOADS": "$WORKLOADS",
                "NR_TASK": $NR_TASK, "MEM": $MEM, "PMEM_MB": $PMEM_MB,
                "SWAP_DISK_MB": $SWAP_DISK_MB, "FULL": $FULL, "AA": $AA,
                "OVERHEAD": $OVERHEAD, "LOCKS": $LOCKS, "KNOB_PASS": $KNOB_PASS, "LOCK_CPUS": $LOCK_CPUS,
                "LOCK_TASKS": $LOCK_TASKS, "LOCK_PMEM_MB": $LOCK_PMEM_MB,
                "LOCK_KERNEL": "$LOCK_KERNEL", "LOCKPERF": "$LOCKPERF", "LOCK_OVERSUB": $LOCK_OVERSUB,
                "LOCK_VM_PERF": $lock_vm_perf,
                "FIDELITY": $FIDELITY, "HOOK": $HOOK, "BOOT_WARM": $BOOT_WARM,
                "MODULE_KO": "${MODULE_KO:-}",
                "ICOUNT": $ICOUNT, "VM_ICOUNT_SLEEP": "$VM_ICOUNT_SLEEP", "SEED": $SEED, "VM_CPUS": ${VM_CPUS:-2},
                "PERF": $PERF, "PROFILE": $PROFILE, "VM_PERF": $VM_PERF},
    "kernel_releases": {"patched": "$(kernel_release patched)",
                        "stock": "$([ "$OVERHEAD" = 1 ] || [ "$FIDELITY" = 1 ] && kernel_release stock)",
                        "stock2": "$([ "$FIDELITY" = 1 ] && kernel_release stock2)",
                        $(for k in $ref_kernels $([ "$lock_pass" = 1 ] && echo "$LOCK_KERNEL"); do printf '"%s": "%s", ' "$k" "$(kernel_release "$k")"; done)},
    "boot_orders": "$(printf '%s; ' "${boot_orders[@]}")",
    "pass_seconds": {$(for k in "${!pass_seconds[@]}"; do printf '"%s": %s, ' "$k" "${pass_seconds[$k]}"; done)},
    "qemu": "$(qemu-system-x86_64 --version | head -1)",
    "host_cpu": "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)",
    "host_cpus": $(nproc),
    "wall_seconds": $((SECONDS - start)),
}, open(sys.argv[1], "w"), indent=1)
EOF

report_rc=0
# The tables, CSV, JSON and plots (make report RESULTS=dir makes them again)
bench/make-report.sh "$out" || report_rc=$?
if [ "${PUBLISH:-0}" = 1 ]; then
	# The run folder: raw lines, provenance, table and what it shows
	gzip -9nc "$out/results.txt" >"$out/results.txt.gz"
	{
		echo "# $(basename "$out")"
		echo
		echo "\`$([ -n "$STUDY" ] && echo "make study STUDY=$STUDY" || echo "make ab") PUBLISH=1\` on ${head_commit:0:7} (Linux $KVER, ${PAIRS:+pairs $PAIRS, }RUNS=$RUNS,"
		echo "BOOT_RUNS=$BOOT_RUNS, ICOUNT=$ICOUNT, SEED=$SEED; the rest in provenance.json), wall time"
		echo "$(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s.  \`make report RESULTS=bench/results/$(basename "$out")\`"
		echo "makes the CSV, JSON and plots again from results.txt.gz."
		echo
		echo "Passes: knob pairs $KNOB_PASS, boot rounds $([ "$OVERHEAD$FIDELITY" = 00 ] && echo 0 || echo 1), lock pass $LOCKS"
		echo "(ICOUNT is for the first two: the lock pass runs on multi-threaded TCG without it)."
		echo
		echo "What it shows (table.txt's verdicts, fidelity and lock pass lines):"
		echo
		echo '```'
		grep -E '^(verdict|fidelity|control|locks) ' "$out/table.txt" || true
		echo '```'
	} >"$out/README.md"
fi
log "done in $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s; results in $out"
if [ ${#vm_failed[@]} -gt 0 ] || [ "$report_rc" != 0 ]; then
	die "make ab failed: VMs ${vm_failed[*]:-none}; report exit $report_rc"
fi
