#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench/report.py's statistics on inputs whose answers are known.

Prints TAP lines ("ok - ...", "not ok - ..."), as vm/check.sh's host
checks do, and exits 1 if any is not ok.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("report", os.path.join(HERE, "report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

failures = 0


def check(ok, what):
    global failures
    print(f"{'ok' if ok else 'not ok'} - bench statistics: {what}")
    failures += not ok


def near(x, y):
    return x is not None and abs(x - y) < 1e-9


def pairs_from_changes(changes, base=1000.0):
    a = {str(i + 1): base for i in range(len(changes))}
    b = {str(i + 1): base * (1 + c / 100) for i, c in enumerate(changes)}
    return a, b


def results_text(knob_changes, aa_changes, throughput=1000.0, extra=""):
    lines = []
    for knob, sides, changes in (("skip_wb_tags", ("0", "1"), knob_changes),
                                 ("aa", ("a1", "a2"), aa_changes)):
        for i, c in enumerate(changes, 1):
            for side, x in zip(sides, (throughput, throughput * (1 + c / 100))):
                lines.append(f"PLAN patched {knob} {side} {i} swap-w-seq")
                lines.append(f"RESULT patched {knob} {side} {i} swap-w-seq throughput {x:.6f}")
                lines.append(f"RESULT patched {knob} {side} {i} swap-w-seq position 1")
    return "\n".join(lines) + "\n" + extra


def run_report(text):
    d = tempfile.mkdtemp(prefix="test-report.")
    with open(os.path.join(d, "results.txt"), "w") as f:
        f.write(text)
    p = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), d],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


# 1. Five pairs changing by exactly 1..5%: median 3%, and for n = 5 the 95%
# percentile bootstrap of the median spans the smallest to the largest
# (a resample's median is the smallest with probability 0.058 > 0.025)
r = report.paired(*pairs_from_changes([1, 2, 3, 4, 5]))
check(r["n"] == 5 and near(r["median_change_pct"], 3.0), "median of paired changes 1..5% is +3.0%")
check(near(round(r["ci_low_pct"], 6), 1.0) and near(round(r["ci_high_pct"], 6), 5.0),
      f"95% interval of 1..5% is [+1.0%, +5.0%] (got {r['ci_low_pct']}, {r['ci_high_pct']})")
check(r["within_noise"] is False, "an interval above 0 is a change")

# 2. Pairs, not pooled means: B is A + 2% in every pair although the runs
# spread 20% from pair to pair, so the paired interval is exactly [2%, 2%]
a = {"1": 100.0, "2": 120.0, "3": 90.0, "4": 110.0, "5": 100.0}
b = {k: v * 1.02 for k, v in a.items()}
r = report.paired(a, b)
check(near(round(r["ci_low_pct"], 9), 2.0) and near(round(r["ci_high_pct"], 9), 2.0),
      "a constant +2% per pair under 10% run-to-run spread gives [+2.0%, +2.0%]")

# 3. Mixed signs: the interval contains 0, the row is marked as noise
r = report.paired(*pairs_from_changes([-2, -1, 1, 2, 3]))
check(r["within_noise"] is True and r["ci_low_pct"] < 0 < r["ci_high_pct"],
      "changes of both signs give an interval containing 0 (~)")

# 4. Fewer than 3 pairs give no interval and no claim
r = report.paired(*pairs_from_changes([5, 6]))
check(r["ci_low_pct"] is None and r["within_noise"] is True, "n = 2 gives no interval and no claim")

# 5. A base of 0 gives no ratio; 0 against 0 is no change
r = report.paired({"1": 0.0, "2": 0.0, "3": 0.0}, {"1": 5.0, "2": 6.0, "3": 7.0})
check(r["paired_changes_pct"] is None and near(r["b_mean"], 6.0), "a base of 0 gives no ratio")
r = report.paired({"1": 0.0, "2": 0.0, "3": 0.0}, {"1": 0.0, "2": 0.0, "3": 0.0})
check(near(r["median_change_pct"], 0.0), "0 against 0 is no change")

# 6. Whole reports: the verdict weighs the A/B interval against the A/A one
rc, out, err = run_report(results_text([9, 10, 10, 11, 12], [-1, 0, 1, 0.5, -0.5]))
check(rc == 0 and "verdict skip_wb_tags: swap-w-seq.throughput +10.0% [+9.0%, +12.0%] (n=5; A/A +0.0% [-1.0%, +1.0%])" in out
      and "B (mainline) better" in out, "a +10% change beside a ±1% A/A is a verdict")
rc, out, err = run_report(results_text([2, 3, 3, 3, 4], [-5, -2, 0, 2, 5]))
check(rc == 0 and "within the A/A spread" in out, "a +3% change inside a ±5% A/A is not measurable")
rc, out, err = run_report(results_text([-3, -1, 1, 2, 3], [-1, 0, 1, 0, 0]))
check(rc == 0 and "the interval contains 0" in out and "~" in out, "an interval containing 0 is not measurable")

# 7. Failures are loud: a FAILED line, a planned run without a result, a
# malformed or duplicated line each fail the report and name the run
rc, out, err = run_report(results_text([1, 2, 3], [0, 0, 0],
                                       extra="FAILED patched skip_wb_tags 1 4 swap-w-seq exit 1: usemem: worker 0 died\n"))
check(rc == 1 and "FAILED RUN: patched skip_wb_tags 1 4 swap-w-seq: exit 1" in out, "a FAILED line fails the report and names the run")
rc, out, err = run_report(results_text([1, 2, 3], [0, 0, 0], extra="PLAN patched skip_wb_tags 0 4 swap-w-seq\n"))
check(rc == 1 and "patched skip_wb_tags 0 4 swap-w-seq: printed no throughput" in out, "a planned run without a result fails the report")
rc, out, err = run_report(results_text([1, 2, 3], [0, 0, 0], extra="RESULT patched skip_wb_tags 0 9 swap-w-seq throughput\n"))
check(rc == 1 and "malformed" in err and "line " in err, "a malformed RESULT line fails the report, naming the line")
rc, out, err = run_report(results_text([1, 2, 3], [0, 0, 0], extra="RESULT patched skip_wb_tags 0 1 swap-w-seq throughput 5\n"))
check(rc == 1 and "measured twice" in err, "a duplicated measurement fails the report")

# 8. MODE=simultaneous: a mainline side next to an old-policy partner at
# 900 against A/A pairs at 1000 is -10% interference; the section comparing
# the passes gives each one's interval width (1..5% spans 4 points, 2..4%
# spans 2: a ratio of 0.50)
def mode_pass(kernel, knob_changes, mainline, aa_value):
    """A pass's lines: the knob's pairs (side 1 at mainline, side 0 by the
    change below it) and five A/A pairs with both sides at aa_value"""
    lines = []
    for knob, sides, changes in (("skip_wb_tags", ("0", "1"), knob_changes),
                                 ("aa", ("a1", "a2"), [0] * 5)):
        for i, c in enumerate(changes, 1):
            base = mainline / (1 + c / 100) if knob != "aa" else aa_value
            for y, (side, x) in enumerate(zip(sides, (base, base * (1 + c / 100)))):
                lines.append(f"PLAN {kernel} {knob} {side} {i} swap-w-seq")
                lines.append(f"RESULT {kernel} {knob} {side} {i} swap-w-seq throughput {x:.6f}")
                if kernel == "simultaneous":
                    lines.append(f"RESULT {kernel} {knob} {side} {i} swap-w-seq cgroup_y {y}")
    return lines


lines = (mode_pass("sequential", [1, 2, 3, 4, 5], 1000.0, 1000.0)
         + mode_pass("simultaneous", [2, 3, 3, 3, 4], 900.0, 1000.0))
rc, out, err = run_report("\n".join(lines) + "\n")
check(rc == 0 and "simultaneous   skip_wb_tags   swap-w-seq.throughput" in out
      and "-10.0% [-10.0%, -10.0%]  the partner's policy moves this side" in out,
      "a mainline side at 900 next to an old partner vs 1000 in A/A pairs is -10% interference")
check("skip_wb_tags: simultaneous/sequential interval width 0.50" in out
      and "pass wall time sequential None s" in out,
      "the mode comparison gives each pass's interval width and their ratio")
check("cgroup_y" not in out, "which cgroup a side ran in is not compared as a measurement")
check("verdict skip_wb_tags@simultaneous: swap-w-seq.throughput +3.0% [+2.0%, +4.0%]" in out,
      "each pass has its own verdict, named by its label")

# 9. The position effect: in A/A pairs whose cgroup y side runs 2% faster,
# whichever side (a1 or a2) it was, y against x is +2% in every pair
lines = []
for i in range(1, 6):
    for side, y in (("a1", i % 2), ("a2", 1 - i % 2)):
        lines.append(f"PLAN simultaneous aa {side} {i} swap-w-seq")
        lines.append(f"RESULT simultaneous aa {side} {i} swap-w-seq throughput {1020.0 if y else 1000.0}")
        lines.append(f"RESULT simultaneous aa {side} {i} swap-w-seq cgroup_y {y}")
rc, out, err = run_report("\n".join(lines) + "\n")
check(rc == 0 and "position y/x   swap-w-seq.throughput          5          +2.0% [+2.0%, +2.0%]" in out,
      "cgroup y 2% faster in every A/A pair is a +2.0% position effect, whatever side it ran")

# 10. fleet/report.py: host1's pairs change by 1..3% at 1000, host2's by
# 4..6% at 2000.  Each host's table is its own; pooled, the six pairs
# give a median of 3.5% with n=6, each pair still one host's A and B (a
# pair across hosts would change by about +-50%); a host without results
# is named with its reason; no host with results fails the report.
def host_lines(host, changes, base):
    return "\n".join(l.replace(" patched ", f" {host} ")
                     for l in results_text(changes, [0, 0, 0], base).splitlines())


fleet = {"host1": {"results": host_lines("host1", [1, 2, 3], 1000.0), "left_out": ""},
         "host2": {"results": host_lines("host2", [4, 5, 6], 2000.0), "left_out": ""},
         "host3": {"results": "", "left_out": "its kernel has no hooks"}}
fleet_report = os.path.join(HERE, "..", "fleet", "report.py")
d = tempfile.mkdtemp(prefix="test-fleet-report.")
p = subprocess.run([sys.executable, fleet_report, d], input=json.dumps(fleet),
                   capture_output=True, text=True)
check(p.returncode == 0 and "verdict skip_wb_tags@host1: swap-w-seq.throughput +2.0% [+1.0%, +3.0%] (n=3;" in p.stdout
      and "verdict skip_wb_tags@host2: swap-w-seq.throughput +5.0% [+4.0%, +6.0%] (n=3;" in p.stdout,
      "fleet report: each host's pairs in its own table")
check("verdict skip_wb_tags@pooled: swap-w-seq.throughput +3.5% [" in p.stdout
      and "(n=6;" in p.stdout.split("verdict skip_wb_tags@pooled")[1].splitlines()[0],
      "fleet report: pooled over hosts, pairs kept within each host (median 3.5%, n=6)")
check("left out: host3: its kernel has no hooks" in p.stdout and "hosts taking part: 2 (host1 host2)" in p.stdout,
      "fleet report: a host left out is named with its reason")
fleet = {"host3": {"results": "", "left_out": "its kernel has no hooks"}}
p = subprocess.run([sys.executable, fleet_report, d], input=json.dumps(fleet),
                   capture_output=True, text=True)
check(p.returncode == 1 and "no host ran the A/B" in p.stdout, "fleet report: no host with results fails it")

# 11. The fidelity pass's statistics.  The order-statistic interval of the
# median: n=5 gives [min, max] with coverage 1 - 2/32 = 93.75%; n=10 gives
# [x_(2), x_(9)], 1 - 2 * 11/1024 = 97.85% (k=3 would be 89.06% < 95%)
med, lo, hi, cov = report.median_os_interval([5, 1, 4, 2, 3])
check(near(med, 3) and near(lo, 1) and near(hi, 5) and near(cov, 0.9375),
      f"order-statistic interval of 5 values is [min, max] at 93.75% (got {lo}, {hi}, {cov})")
med, lo, hi, cov = report.median_os_interval(list(range(1, 11)))
check(near(lo, 2) and near(hi, 9) and abs(cov - (1 - 22 / 1024)) < 1e-12,
      f"order-statistic interval of 10 values is [x_(2), x_(9)] at 97.85% (got {lo}, {hi}, {cov})")
# Constant log ratios: the difference of a +10% and a +5% effect is
# 1.10/1.05 - 1 = +4.76%, exactly
import math
d = report.welch_difference([math.log(1.10)] * 5, [math.log(1.05)] * 4)
check(all(abs(x - 100 * (1.10 / 1.05 - 1)) < 1e-9 for x in d),
      f"runtime +10% in every pair against reboot +5%: difference +4.76% exactly (got {d})")
# Welch with one side constant: df = n1 - 1 = 2, t(0.975, 2) = 4.302653;
# logs 0.01, 0.02, 0.03 against 0: 0.02 +- 4.302653 * 0.01 / sqrt(3)
d = report.welch_difference([0.01, 0.02, 0.03], [0.0, 0.0, 0.0])
h = 4.302652729911275 * 0.01 / math.sqrt(3)
check(abs(d[0] - 100 * math.expm1(0.02)) < 1e-9 and abs(d[1] - 100 * math.expm1(0.02 - h)) < 1e-6
      and abs(d[2] - 100 * math.expm1(0.02 + h)) < 1e-6,
      f"Welch interval with one constant side uses t(0.975, n1-1) (got {d})")
m, lo, hi = report.t_interval([0.01, 0.02, 0.03])
check(abs(lo - 100 * math.expm1(0.02 - h)) < 1e-6, "t interval of three log ratios")


# Whole reports: a knob pass and boot rounds with reference kernels
def fidelity_lines(runtime, reboot, aa, pswpout=(25000, 25000), ref_pswpout=(25000, 25000),
                   tagged=(25000, 0)):
    """runtime, reboot: per-pair B/A ratios of insns_per_page; aa: stock2/stock"""
    lines = []
    for i, r in enumerate(runtime, 1):
        for side, x, po, tg in (("0", 1000.0, pswpout[0], tagged[0]), ("1", 1000.0 * r, pswpout[1], tagged[1])):
            lines += [f"PLAN patched skip_wb_tags {side} {i} swap-w-seq",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq throughput 100",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq insns_per_page {x:.6f}",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq vmstat.pswpout {po}",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq swapcache_ab.wb_tagged {tg}",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq xarray.type1_height 3",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq mainline_ops 0"]
    for i, (r, q) in enumerate(zip(reboot, aa), 1):
        for kernel, x, po in (("ref-tagged-writeback", 1000.0, ref_pswpout[0]),
                              ("stock", 1000.0 * r, ref_pswpout[1]),
                              ("stock2", 1000.0 * r * q, ref_pswpout[1])):
            lines += [f"PLAN {kernel} - - {i} swap-w-seq",
                      f"RESULT {kernel} - - {i} swap-w-seq throughput 100",
                      f"RESULT {kernel} - - {i} swap-w-seq insns_per_page {x:.6f}",
                      f"RESULT {kernel} - - {i} swap-w-seq vmstat.pswpout {po}"]
    return "\n".join(lines) + "\n"


aa5 = [1.002, 0.998, 1.004, 0.996, 1.0]
rc, out, err = run_report(fidelity_lines([0.90, 0.901, 0.899, 0.9, 0.9005],
                                         [0.9, 0.9002, 0.8998, 0.9001, 0.8999], aa5))
check(rc == 0 and "fidelity skip_wb_tags: faithful (ref-tagged-writeback vs stock)" in out,
      "the same -10% on both A/Bs, within a +-0.5% boot A/A, is faithful")
check("swap-w-seq.writeback marks" in out and "agree" in out
      and "swap-w-seq.xarray.type1_height" in out and "a reference kernel has none" in out,
      "the fidelity table shows the writeback marks by construction and the geometry as unavailable")
check("-10.0% [-10.1%, -9.9%] 93.8% n=5" in out,
      "each effect is a median with its order-statistic interval and the coverage it has")
rc, out, err = run_report(fidelity_lines([0.85, 0.851, 0.849, 0.85, 0.8505],
                                         [0.984, 0.9842, 0.9838, 0.9841, 0.9839], aa5))
check(rc == 0 and "fidelity skip_wb_tags: NOT faithful" in out and "beyond the boot-level A/A" in out
      and "runtime -15.0% against reboot -1.6%" in out,
      "a -15% runtime effect against a -1.6% reboot effect is NOT faithful, with the figures")
rc, out, err = run_report(fidelity_lines([0.90, 0.901, 0.899, 0.9, 0.9005],
                                         [0.9, 0.9002, 0.8998, 0.9001, 0.8999], aa5,
                                         pswpout=(25000, 25000), ref_pswpout=(25000, 12000)))
check(rc == 0 and "NOT faithful" in out and "swap-w-seq.vmstat.pswpout: runtime 25000 -> 25000, reboot 25000 -> 12000" in out,
      "the same timing with a pswpout the other A/B does not have is NOT faithful")
# SwapCached after swap-w-seq: 1 kB at runtime against 37 kB on stock,
# whose own boots spread from 8 to 92 kB: boot noise, not a mechanism
text = fidelity_lines([0.90, 0.901, 0.899, 0.9, 0.9005], [0.9, 0.9002, 0.8998, 0.9001, 0.8999], aa5)
extra = []
for i, (stock, stock2) in enumerate(((92, 8), (8, 12), (12, 8), (36, 40), (37, 40)), 1):
    extra += [f"RESULT patched skip_wb_tags 0 {i} swap-w-seq meminfo.SwapCached_after 0",
              f"RESULT patched skip_wb_tags 1 {i} swap-w-seq meminfo.SwapCached_after 1",
              f"RESULT ref-tagged-writeback - - {i} swap-w-seq meminfo.SwapCached_after 0",
              f"RESULT stock - - {i} swap-w-seq meminfo.SwapCached_after {stock}",
              f"RESULT stock2 - - {i} swap-w-seq meminfo.SwapCached_after {stock2}"]
rc, out, err = run_report(text + "\n".join(extra) + "\n")
check(rc == 0 and "fidelity skip_wb_tags: faithful" in out,
      "a SwapCached difference within the range stock's own boots show is agreement")
rc, out, err = run_report(fidelity_lines([0.90, 0.95, 0.85], [0.9, 0.92, 0.88], [1.002, 0.998, 1.0]))
check(rc == 0 and "NOT faithful" in out and "reaches past the boot-level A/A" in out and "n=3+3" in out,
      "a difference whose interval is wider than the A/A band is not shown faithful, and says so")

# 12. The hooked A/A and the hook dispatch row are named as such
lines = []
for i in range(1, 4):
    for knob, sides, ops in (("aa", ("a1", "a2"), (1, 1)), ("hook_dispatch", ("0", "1"), (1, 0))):
        for side, o, x in zip(sides, ops, (1010.0, 1000.0)):
            lines += [f"PLAN patched {knob} {side} {i} swap-w-seq",
                      f"RESULT patched {knob} {side} {i} swap-w-seq throughput 100",
                      f"RESULT patched {knob} {side} {i} swap-w-seq insns_per_pswpout {x}",
                      f"RESULT patched {knob} {side} {i} swap-w-seq mainline_ops {o}"]
rc, out, err = run_report("\n".join(lines) + "\nNOTE patched a note\nNOTE patched a note\n")
check(rc == 0 and "hook dispatch: A = hooked at mainline (mainline_ops=1), B = unhooked (mainline_ops=0)" in out
      and "every knob at 1 on both sides, hooked at mainline (mainline_ops=1)" in out
      and "verdict hook_dispatch: swap-w-seq.insns_per_pswpout -1.0%" in out and "mainline_ops" not in
      out.split("== verdicts")[0].split("workload.metric")[-1],
      "the hook dispatch row and the hooked A/A are titled by what ran")
check(out.count("NOTE patched a note") == 1, "a NOTE line is shown once")
rc, out, err = run_report(results_text([1, 2, 3], [0, 0, 0]).replace(" throughput ", " swapout_kbps "))
check("swapout_kb_per_guest_s" in out and "swapout_kbps" not in out,
      "an earlier run's swapout_kbps is shown under its honest name")

sys.exit(1 if failures else 0)
