#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make ab: the A/B benchmark.  Builds the patched kernel (and the stock one
# for the hook-overhead comparison), boots the VM and, for each knob, runs
# its workloads with the knob at 1 and at 0, interleaved, RUNS times; then
# boots stock and patched-without-module kernels alternately, RUNS times
# each.  Prints LKP-style tables and leaves them, the raw numbers and
# plots in a results folder.
#
# Profile (environment):
#   RUNS=5            runs per side
#   KNOBS=offset_key+skip_wb_tags+cow_free   (none: overhead comparison only)
#   WORKLOADS=        restrict to some of swap-w-seq swap-w-rand
#                     anon-cow-swap pmbench lru-file-readtwice
#   Default set: offset_key and skip_wb_tags on swap-w-seq, cow_free on
#   anon-cow-swap and pmbench (2 s), overhead on swap-w-seq, anon-cow-swap
#   and lru-file-readtwice
#   NR_TASK=2         usemem processes
#   MEM=32            MB of memory (memory.high) of the workloads' cgroup
#   PMEM_MB=128       MB of the VM's RAM used as the pmem swap device
#   FULL=0            1: every workload for every knob and in the overhead
#                     comparison (swap-w-rand, pmbench there too), longer
#                     pmbench; for real machines, hours under TCG
#   OVERHEAD=1        0 skips the stock-vs-patched comparison
#   ICOUNT=1          -icount: guest time counts instructions, so timings
#                     measure path length and barely move with host load;
#                     0 for plain multi-threaded TCG (contention, noisier)
#   AB_RESULTS=dir    where the results go (build/ab-results/<date>)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
cd "$top"

RUNS=${RUNS:-5} KNOBS=${KNOBS:-offset_key+skip_wb_tags+cow_free}
WORKLOADS=${WORKLOADS:-} NR_TASK=${NR_TASK:-2} MEM=${MEM:-32} FULL=${FULL:-0}
OVERHEAD=${OVERHEAD:-1} ICOUNT=${ICOUNT:-1}
out=${AB_RESULTS:-$BUILD_DIR/ab-results/$(date +%Y%m%d-%H%M%S)}
export VM_PMEM_MB=${PMEM_MB:-128} VM_ICOUNT=$ICOUNT VM_LOG_DIR=$out/vm

start=$(date +%s)
vm/install-deps.sh
vm/build-kernel.sh patched
[ "$OVERHEAD" = 1 ] && vm/build-kernel.sh stock
vm/build-module.sh
vm/build-selftests.sh
make -s -C bench OUT="$BUILD_DIR/bench"
mkdir -p "$out/vm"
initrd=$BUILD_DIR/vm/initramfs.cpio.gz
mkdir -p "$BUILD_DIR/vm"
vm/make-initramfs.sh "$initrd"

common="nr_task=$NR_TASK,mem=$MEM,full=$FULL"
[ -n "$WORKLOADS" ] && common+=",workloads=$WORKLOADS"

if [ "$KNOBS" != none ]; then
	log "knob A/B on the patched kernel: $KNOBS, $RUNS runs per value"
	VM_NAME=knobs vm/run-vm.sh "$KERNEL_DIR/arch/x86/boot/bzImage" "$initrd" bench \
		"kernel=patched,mode=knobs,runs=$RUNS,knobs=$KNOBS,$common"
fi

if [ "$OVERHEAD" = 1 ]; then
	for run in $(seq "$RUNS"); do
		for k in stock patched; do
			dir=$KERNEL_DIR
			[ $k = stock ] && dir=$STOCK_KERNEL_DIR
			log "hook overhead: $k kernel, no module, run $run/$RUNS"
			VM_NAME=overhead-$k-$run vm/run-vm.sh "$dir/arch/x86/boot/bzImage" "$initrd" bench \
				"kernel=$k,mode=overhead,run=$run,$common"
		done
	done
fi

cat "$out"/vm/*-output.log | grep -a '^RESULT ' >"$out/results.txt"
bench/report.py "$out"
for dat in "$out"/*.dat; do
	name=$(basename "$dat" .dat)
	gnuplot -e "dat='$dat'; png='$out/$name.png'; title='$name: throughput (make ab, RUNS=$RUNS, ICOUNT=$ICOUNT)'" bench/plot.gp
done
log "done in $(($(date +%s) - start)) s; results in $out:"
ls "$out" >&2
