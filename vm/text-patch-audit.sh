#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What can patch the lock pass kernel's text at runtime (make ab's pass 3
# runs it on multi-threaded TCG, where a vCPU can execute the int3 of a
# text patch that another vCPU finished: vm/run-vm.sh).  From the machine
# code of its vmlinux: every function that calls one of x86's text
# patching entry points or updates a static call, each with why it cannot
# patch text while a second CPU runs: it runs before the second CPU is
# up, or patches a module's own text before that module runs, or bench
# makes it happen with CPU 0 alone online (one_cpu_text=1).  Any other
# caller fails the audit (exit 1) until it is sorted here.
# Also fails if the kernel has jump labels, dynamic ftrace, kprobes, BPF
# or a runtime-switchable preemption model.
#
# Usage: vm/text-patch-audit.sh [KERNEL_BUILD_DIR]   (default: the locks
# variant's, vm/build-kernel.sh locks)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

kdir=${1:-$(kernel_dir locks)}
[ -f "$kdir/vmlinux" ] || die "$kdir/vmlinux missing: vm/build-kernel.sh locks"

for opt in JUMP_LABEL DYNAMIC_FTRACE FUNCTION_TRACER KPROBES BPF_SYSCALL LIVEPATCH PREEMPT_DYNAMIC; do
	if grep -q "^CONFIG_$opt=y" "$kdir/.config"; then
		tap_result 1 "CONFIG_$opt=y patches text at runtime"
	fi
done

# Each function that calls (or tail-calls) a patching entry point, outside
# the patching code itself
entries='(text_poke|text_poke_bp|text_poke_queue|text_poke_finish|text_poke_copy|text_poke_set|text_poke_bp_batch|__static_call_update|arch_static_call_transform|__static_call_transform|arch_jump_label_transform|arch_jump_label_transform_queue)(\.[a-z]+\.[0-9]+)?'
callers=$(objdump -d --no-show-raw-insn "$kdir/vmlinux" |
	awk -v e="^<$entries>\$" '
		/^[0-9a-f]+ <.*>:$/ { fn = $2; sub(/:$/, "", fn); next }
		/\t(call|jmp) +[0-9a-f]+ </ { t = $NF; if (t ~ e && fn !~ e) print fn, t }' |
	sort -u | tr -d '<>')

# Sorted by hand from the 6.12 and 6.1 sources
declare -A why=(
	# before smp_init(): setup_arch(), the APIC driver, early initcalls
	[acpi_parse_mp_wake]="boot: MADT parsing in setup_arch(), before the second CPU"
	[update_static_calls]="boot: __init, the APIC driver's calls, before the second CPU"
	[select_idle_routine]="boot: arch_cpu_finalize_init(), before the second CPU"
	[init_hw_perf_events]="boot: early_initcall, before smp_init()"
	[intel_pmu_init]="boot: from init_hw_perf_events(), an early_initcall"
	[amd_pmu_init]="boot: from init_hw_perf_events(), an early_initcall"
	[__static_call_init]="module loading: the new module's own sites, before any of its code runs (and bench loads modules with CPU 0 alone online)"
	# what bench/bench makes with CPU 0 alone online
	[__swapcache_ab_register]="bench: the swapcache_ab sites, set with CPU 0 alone online (one_cpu_text=1)"
	[swapcache_ab_unregister]="bench: the swapcache_ab sites, reset with CPU 0 alone online (one_cpu_text=1)"
	[tracepoint_add_func]="bench: a tracepoint enabled; the lock pass enables lock:contention_begin/end alone (perf's counter), from a perf stat started with CPU 0 alone online that holds them until bench ends (bench WQ=0)"
	[tracepoint_probe_unregister]="bench: a tracepoint disabled; the lock pass's two, when that perf stat ends with CPU 0 alone online"
)
while read -r fn entry; do
	[ -n "$fn" ] || continue
	if [ -n "${why[$fn]:-}" ]; then
		tap_result 0 "$fn -> $entry: ${why[$fn]}"
	else
		tap_result 1 "$fn -> $entry: a runtime text patch that vm/text-patch-audit.sh has not sorted"
	fi
done <<<"$callers"
exit $((tap_failed > 0))
