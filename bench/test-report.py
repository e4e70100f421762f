#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench/report.py's statistics on inputs whose answers are known.

Prints TAP lines ("ok N - ...", "not ok N - ...") and the plan line
"1..N" last, as vm/check.sh's host checks take them, and exits 1 if any
is not ok.  The expected figures are textbook or scipy values, stated
beside each check.
"""
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("report", os.path.join(HERE, "report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

failures = 0
checks = 0


def check(ok, what):
    global failures, checks
    checks += 1
    print(f"{'ok' if ok else 'not ok'} {checks} - bench statistics: {what}")
    failures += not ok


def near(x, y):
    return x is not None and abs(x - y) < 1e-9


def pairs_from_changes(changes, base=1000.0):
    a = {str(i + 1): base for i in range(len(changes))}
    b = {str(i + 1): base * (1 + c / 100) for i, c in enumerate(changes)}
    return a, b


def results_text(knob_changes, aa_changes, throughput=1000.0, extra="", metric="throughput",
                 knob="skip_wb_tags", workload="swap-w-seq"):
    lines = []
    for k, sides, changes in ((knob, ("0", "1"), knob_changes),
                              ("aa", ("a1", "a2"), aa_changes)):
        for i, c in enumerate(changes, 1):
            for side, x in zip(sides, (throughput, throughput * (1 + c / 100))):
                lines.append(f"PLAN patched {k} {side} {i} {workload}")
                lines.append(f"RESULT patched {k} {side} {i} {workload} throughput "
                             f"{x if metric == 'throughput' else 100:.6f}")
                if metric != "throughput":
                    lines.append(f"RESULT patched {k} {side} {i} {workload} {metric} {x:.6f}")
                lines.append(f"RESULT patched {k} {side} {i} {workload} position 1")
    return "\n".join(lines) + "\n" + extra


def verdict_line(out, knob):
    return next((l for l in out.splitlines() if l.startswith(f"verdict {knob}:")), "")


def run_report(text):
    d = tempfile.mkdtemp(prefix="test-report.")
    with open(os.path.join(d, "results.txt"), "w") as f:
        f.write(text)
    p = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), d],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def pairs_from_logs(logs, base=1000.0):
    return ({str(i + 1): base for i in range(len(logs))},
            {str(i + 1): base * math.exp(d) for i, d in enumerate(logs)})


def close(x, y, tol=1e-6):
    return x is not None and abs(x - y) < tol


# 1. The primary figure: d = ln(B/A) = 0.01 .. 0.05 per pair: mean 0.03,
# sd 0.0158114 (sqrt(2.5) / 100), t(0.975, 4) = 2.776445 (the textbook
# table's 2.776; scipy.stats.t.ppf), so exp(0.03 +- 2.776445 * 0.0158114 /
# sqrt(5)) - 1 = [+1.055%, +5.075%] around +3.045%
r = report.paired(*pairs_from_logs([0.01, 0.02, 0.03, 0.04, 0.05]))
h = 2.7764451051977987 * math.sqrt(2.5) / 100 / math.sqrt(5)
check(r["n"] == 5 and close(r["change_pct"], 100 * math.expm1(0.03))
      and close(r["ci_low_pct"], 100 * math.expm1(0.03 - h)) and close(r["ci_high_pct"], 100 * math.expm1(0.03 + h)),
      f"d = 0.01..0.05: exp(mean d) - 1 = +3.05% with the t interval [+1.06%, +5.07%] "
      f"(got {r.get('change_pct')}, {r.get('ci_low_pct')}, {r.get('ci_high_pct')})")
check(r["within_noise"] is False, "an interval above 0 is a change")
check(r["hl_low_pct"] is None and "[n<6]" in report.fmt_hl(r),
      "n = 5 has no exact 95% Wilcoxon interval (1 - 2/32 = 93.75% at best), and says so")

# 2. The companion figure: d = (1, 2, 3, 4, 5, 6, 20, 30) / 100, n = 8.  Of
# the 36 Walsh averages (d_i + d_j) / 2 (in %), the 21 of 1..6 are the
# smallest, the 18th and 19th both 5.0: Hodges-Lehmann 5.0 (the median of
# d is 4.5).  The exact signed-rank null gives P(W+ <= 3) = 5/256 <= 0.025
# < P(W+ <= 4) = 7/256 (scipy.stats.wilcoxon's exact two-sided p for W- = 3
# and 4: 10/256 and 14/256), so k = 4 (the textbook critical value 3 for
# n = 8): [W_(4), W_(33)] = [2.0, 18.0], coverage 1 - 10/256 = 96.09%
r = report.paired(*pairs_from_logs([d / 100 for d in (1, 2, 3, 4, 5, 6, 20, 30)]))
check(close(r["hl_pct"], 100 * math.expm1(0.05)) and close(r["hl_low_pct"], 100 * math.expm1(0.02))
      and close(r["hl_high_pct"], 100 * math.expm1(0.18)) and close(r["hl_coverage"], 1 - 10 / 256),
      f"d = 1..6, 20, 30 (%): HL +5.13% with the exact Wilcoxon interval [+2.02%, +19.7%] at 96.09% "
      f"(got {r.get('hl_pct')}, {r.get('hl_low_pct')}, {r.get('hl_high_pct')}, {r.get('hl_coverage')})")
check(report.wilcoxon_k(6) == (1, 1 - 2 / 64) and report.wilcoxon_k(5) == (None, None)
      and report.wilcoxon_k(10) == (9, 1 - 2 * 25 / 1024),
      "Wilcoxon's k: n = 6 gives [min, max] at 96.88%, n = 5 none, n = 10 k = 9 (textbook 8 + 1)")
from scipy import stats as _stats
check(abs(2 * report.signed_rank_cdf(8, 3) - _stats.wilcoxon([-1, -2, 3, 4, 5, 6, 7, 8], method="exact").pvalue) < 1e-12
      and abs(2 * report.signed_rank_cdf(8, 4) - _stats.wilcoxon([-1, -3, 2, 4, 5, 6, 7, 8], method="exact").pvalue) < 1e-12,
      "the enumerated signed-rank null matches scipy.stats.wilcoxon's exact p-values")

# 3. The MDE at 80% power (two-sided 0.05, paired t, noncentral t): the
# power of n = 10 pairs at an effect of one sd (dz = 1) is 0.8031, and of
# n = 34 at dz = 0.5 0.8078 (G*Power's figures); the MDE of a row is the
# noncentrality reaching 80%, times sd / sqrt(n): for n = 10, 0.996 sd
check(abs(report.power_paired_t(math.sqrt(10), 10) - 0.8031) < 1e-4
      and abs(report.power_paired_t(0.5 * math.sqrt(34), 34) - 0.8078) < 1e-4,
      "paired t power: dz = 1 at n = 10 is 0.8031, dz = 0.5 at n = 34 is 0.8078 (G*Power)")
logs = [0.01 * x for x in (-1.2, 0.3, 0.9, -0.5, 1.1, -0.6, 0.2, -0.2, 0.4, -0.4)]
r = report.paired(*pairs_from_logs(logs))
sd = _stats.tstd(logs)
check(abs(report.power_paired_t(report.log_of_pct(r["mde_pct"]) / (sd / math.sqrt(10)), 10) - 0.80) < 1e-6
      and abs(report.log_of_pct(r["mde_pct"]) / sd - 0.996) < 1e-3,
      f"a row's MDE is where its paired t test reaches 80% power: 0.996 sd at n = 10 (got {r['mde_pct']})")
check(report.pairs_needed(0.0022) == 3 and report.pairs_needed(0.085) > 100,
      "pairs needed for 2%: 3 at a 0.22% spread, over 100 at 8.5% (the A/A spreads of DESIGN.md)")

# 4. Pairs, not pooled means: B is A + 2% in every pair although the runs
# spread 20% from pair to pair, so the paired interval is exactly [2%, 2%]
a = {"1": 100.0, "2": 120.0, "3": 90.0, "4": 110.0, "5": 100.0}
b = {k: v * 1.02 for k, v in a.items()}
r = report.paired(a, b)
check(close(r["ci_low_pct"], 2.0, 1e-9) and close(r["ci_high_pct"], 2.0, 1e-9),
      "a constant +2% per pair under 10% run-to-run spread gives [+2.0%, +2.0%]")

# 5. Mixed signs: the interval contains 0; one pair gives no interval
r = report.paired(*pairs_from_changes([-2, -1, 1, 2, 3]))
check(r["within_noise"] is True and r["ci_low_pct"] < 0 < r["ci_high_pct"],
      "changes of both signs give an interval containing 0 (~)")
r = report.paired(*pairs_from_changes([5]))
check(r["ci_low_pct"] is None and r["within_noise"] is True and r["mde_pct"] is None,
      "n = 1 gives no interval, no MDE and no claim")

# 6. A base of 0 gives no ratio; 0 against 0 is no change
r = report.paired({"1": 0.0, "2": 0.0, "3": 0.0}, {"1": 5.0, "2": 6.0, "3": 7.0})
check(r["paired_changes_pct"] is None and near(r["b_mean"], 6.0), "a base of 0 gives no ratio")
r = report.paired({"1": 0.0, "2": 0.0, "3": 0.0}, {"1": 0.0, "2": 0.0, "3": 0.0})
check(near(r["change_pct"], 0.0), "0 against 0 is no change")

# 7. Verdicts, whole reports.  Instructions per page written 1% lower
# on B at n = 8 with 0.2% spread: t interval about [-1.17%, -0.83%], B better
spread = [-0.2, 0.1, -0.1, 0.2, 0.0, -0.3, 0.3, 0.0]   # sd 0.19%
aa8 = [0.1, -0.1, 0.05, -0.05, 0.0, 0.1, -0.1, 0.0]
rc, out, err = run_report(results_text([-1 + x for x in spread], aa8, metric="insns_per_page"))
v = verdict_line(out, "skip_wb_tags")
check(rc == 0 and "swap-w-seq.insns_per_page -1.00% [" in v and "n=8" in v and v.endswith("=> B better"),
      f"a 1% effect at n = 8 with 0.2% spread is B better ({v[v.find('=>'):]})")
rc, out, err = run_report(results_text([0.1 + x for x in spread], aa8, metric="insns_per_page"))
v = verdict_line(out, "skip_wb_tags")
check(rc == 0 and v.endswith("=> equivalent within ±1%"),
      f"a 0.1% effect at n = 8 with 0.2% spread is equivalent within ±1% ({v[v.find('=>'):]})")
rc, out, err = run_report(results_text([10, -8, 3], [1, -1, 0], metric="insns_per_page"))
v = verdict_line(out, "skip_wb_tags")
check(rc == 0 and "=> undecided at this n (MDE " in v and "%)" in v,
      f"n = 3 with 10% spread is undecided at this n, with its MDE ({v[v.find('=>'):]})")
check("not measurable" not in out, "no verdict says 'not measurable'")
check("below the" in v and "pairs its spread needs to detect 2%" in v and "WARNING:" in out,
      "a row whose n is below what its spread needs for 2% is warned about")
rc, out, err = run_report(results_text([9, 10, 10, 11, 12], [-1, 0, 1, 0.5, -0.5]))
v = verdict_line(out, "skip_wb_tags")
check(rc == 0 and "swap-w-seq.throughput" in v and v.endswith("=> B better"),
      "without a precise row the verdict falls back to throughput, higher better")
rc, out, err = run_report(results_text([5, -20, 30, 2, -10], [1, -1, 0, 1, -1], metric="insns_per_page"))
v = verdict_line(out, "skip_wb_tags")
check("a context row" in v and "~!c" in out,
      "a headline whose MDE exceeds 10% is a context row, marked c, not a verdict")

# 8. The overhead verdict's row is declared, not the first alphabetically:
# anon-cow-swap.insns_per_page sorts first, swap-w-seq.insns_per_page (the
# decisive figure, per page written, pre-registered 2026-12-07) is the headline
lines = []
for i in range(1, 6):
    for kernel, x in (("stock", 1000.0), ("patched", 1000.0 * (1.001 + i / 10000)), ("stock2", 1000.0)):
        for wl, m in (("anon-cow-swap", "insns_per_page"), ("swap-w-seq", "insns_per_page")):
            lines += [f"PLAN {kernel} - - {i} {wl}", f"RESULT {kernel} - - {i} {wl} throughput 100",
                      f"RESULT {kernel} - - {i} {wl} {m} {x * (1.2 if wl == 'anon-cow-swap' else 1):.6f}"]
rc, out, err = run_report("\n".join(lines) + "\n")
v = verdict_line(out, "overhead")
check(rc == 0 and "verdict overhead: swap-w-seq.insns_per_page" in v,
      "the overhead verdict is on swap-w-seq.insns_per_page, whichever row sorts first")

# 9. A knob's workload where its mechanism never fires is named so
lines = []
for i in range(1, 6):
    for side, x in (("0", 1000.0), ("1", 1000.0 * (1 + (-1) ** i / 50))):
        for wl, m in (("anon-cow-swap", "insns_per_page"), ("pmbench-async", "insns_per_access")):
            lines += [f"PLAN patched cow_free {side} {i} {wl}", f"RESULT patched cow_free {side} {i} {wl} throughput 100",
                      f"RESULT patched cow_free {side} {i} {wl} {m} {x:.6f}"]
        lines.append(f"RESULT patched cow_free {side} {i} pmbench-async swapcache_ab.cow_kept_per_s 0")
rc, out, err = run_report("\n".join(lines) + "\n")
check(rc == 0 and "verdict cow_free: anon-cow-swap.insns_per_page" in out
      and "pmbench-async.insns_per_access" in out and "the mechanism never fires here" in out,
      "cow_free's verdict is per unit of work; pmbench-async, where cow_kept is 0, is named an A/A")

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
# the passes gives each one's t interval width (same n, so the ratio of
# the spreads: sd(2, 3, 3, 3, 4) / sd(1..5) = 0.707 / 1.581 = 0.45)
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
check("skip_wb_tags: simultaneous/sequential interval width 0.45" in out
      and "pass wall time sequential None s" in out,
      "the mode comparison gives each pass's interval width and their ratio")
check("cgroup_y" not in out, "which cgroup a side ran in is not compared as a measurement")
check("verdict skip_wb_tags@simultaneous: swap-w-seq.throughput +3.00% [+2.12%, +3.88%]" in out,
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
check(rc == 0 and "+2.00% [+2.00%, +2.00%]  a position effect" in out.split("position y/x")[1],
      "cgroup y 2% faster in every A/A pair is a +2.0% position effect, whatever side it ran")

# 10. fleet/report.py: host1's pairs change by 1..3% at 1000, host2's by
# 4..6% at 2000.  Each host's table is its own; pooled, the six pairs
# give +3.49% with n=6, each pair still one host's A and B (a
# pair across hosts would change by about +-50%); a host without results
# is named with its reason; no host with results fails the report.
# exp(mean ln(1.01, 1.02, 1.03)) - 1 = +2.00%, t(0.975, 2) = 4.303.
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
check(p.returncode == 0 and "verdict skip_wb_tags@host1: swap-w-seq.throughput +2.00% [-0.46%, +4.51%] (t 95%, n=3;" in p.stdout
      and "verdict skip_wb_tags@host2: swap-w-seq.throughput +5.00% [+2.54%, +7.51%] (t 95%, n=3;" in p.stdout,
      "fleet report: each host's pairs in its own table")
check("verdict skip_wb_tags@pooled: swap-w-seq.throughput +3.49% [" in p.stdout
      and "(t 95%, n=6;" in p.stdout.split("verdict skip_wb_tags@pooled")[1].splitlines()[0],
      "fleet report: pooled over hosts, pairs kept within each host (exp(mean ln) +3.49%, n=6)")
check("left out: host3: its kernel has no hooks" in p.stdout and "hosts taking part: 2 (host1 host2)" in p.stdout,
      "fleet report: a host left out is named with its reason")
fleet = {"host3": {"results": "", "left_out": "its kernel has no hooks"}}
p = subprocess.run([sys.executable, fleet_report, d], input=json.dumps(fleet),
                   capture_output=True, text=True)
check(p.returncode == 1 and "no host ran the A/B" in p.stdout, "fleet report: no host with results fails it")

# 11. The fidelity pass's statistics (the Welch difference of two A/Bs).
# Constant log ratios: the difference of a +10% and a +5% effect is
# 1.10/1.05 - 1 = +4.76%, exactly
d = report.welch_difference(report.t_effect([math.log(1.10)] * 5), report.t_effect([math.log(1.05)] * 4))
check(all(abs(x - 100 * (1.10 / 1.05 - 1)) < 1e-9 for x in d),
      f"runtime +10% in every pair against reboot +5%: difference +4.76% exactly (got {d})")
# Welch with one side constant: df = n1 - 1 = 2, t(0.975, 2) = 4.302653;
# logs 0.01, 0.02, 0.03 against 0: 0.02 +- 4.302653 * 0.01 / sqrt(3)
d = report.welch_difference(report.t_effect([0.01, 0.02, 0.03]), report.t_effect([0.0, 0.0, 0.0]))
h = 4.302652729911275 * 0.01 / math.sqrt(3)
check(abs(d[0] - 100 * math.expm1(0.02)) < 1e-9 and abs(d[1] - 100 * math.expm1(0.02 - h)) < 1e-6
      and abs(d[2] - 100 * math.expm1(0.02 + h)) < 1e-6,
      f"Welch interval with one constant side uses t(0.975, n1-1) (got {d})")
# Welch-Satterthwaite with each side's own df: v1 = 4e-6 on n-2 = 6 df (a
# crossover's), v2 = 1e-6 on 9: df = 25e-12 / (16e-12 / 6 + 1e-12 / 9) =
# 9.0, t(0.975, 9.0) = 2.262157; difference 0.01 - 0.02 +- 2.262157 *
# sqrt(5e-6)
d = report.welch_difference({"mlog": 0.01, "se2": 4e-6, "df": 6}, {"mlog": 0.02, "se2": 1e-6, "df": 9})
df = 25e-12 / (16e-12 / 6 + 1e-12 / 9)
hw = float(report.stats.t.ppf(0.975, df)) * math.sqrt(5e-6)
check(abs(df - 9.0) < 1e-9 and abs(d[1] - 100 * math.expm1(-0.01 - hw)) < 1e-9
      and abs(hw - 2.262157 * math.sqrt(5e-6)) < 1e-6,
      f"Welch interval from each side's variance and its own df (got {d})")
m, lo, hi = report.t_interval([0.01, 0.02, 0.03])
check(abs(lo - 100 * math.expm1(0.02 - h)) < 1e-6, "t interval of three log ratios")


# Whole reports: a knob pass and boot rounds with reference kernels
def fidelity_lines(runtime, reboot, aa, pswpout=(25000, 25000), ref_pswpout=(25000, 25000),
                   tagged=(25000, 0), hooked=1):
    """runtime, reboot: per-pair B/A ratios of insns_per_page; aa: stock2/stock;
    hooked: the knob pairs' mainline_ops"""
    lines = []
    for i, r in enumerate(runtime, 1):
        for side, x, po, tg in (("0", 1000.0, pswpout[0], tagged[0]), ("1", 1000.0 * r, pswpout[1], tagged[1])):
            lines += [f"PLAN patched skip_wb_tags {side} {i} swap-w-seq",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq throughput 100",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq insns_per_page {x:.6f}",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq vmstat.pswpout {po}",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq swapcache_ab.wb_tagged {tg}",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq xarray.type1_height 3",
                      f"RESULT patched skip_wb_tags {side} {i} swap-w-seq mainline_ops {hooked}"]
    for i, (r, q) in enumerate(zip(reboot, aa), 1):
        for kernel, x, po in (("ref-tagged-writeback", 1000.0, ref_pswpout[0]),
                              ("stock", 1000.0 * r, ref_pswpout[1]),
                              ("stock2", 1000.0 * r * q, ref_pswpout[1])):
            lines += [f"PLAN {kernel} - - {i} swap-w-seq",
                      f"RESULT {kernel} - - {i} swap-w-seq throughput 100",
                      f"RESULT {kernel} - - {i} swap-w-seq insns_per_page {x:.6f}",
                      f"RESULT {kernel} - - {i} swap-w-seq vmstat.pswpout {po}"]
    return "\n".join(lines) + "\n"


def cow_lines(runtime, reboot, aa):
    """fidelity_lines' figures as cow_free's on anon-cow-swap, without marks"""
    text = "\n".join(line for line in fidelity_lines(runtime, reboot, aa).splitlines() if "wb_tagged" not in line)
    for old, new in (("skip_wb_tags", "cow_free"), ("ref-tagged-writeback", "ref-cow-kept"),
                     ("swap-w-seq", "anon-cow-swap")):
        text = text.replace(old, new)
    return text + "\n"


def trunks_lines(runtime, reboot, aa):
    """fidelity_lines' figures as trunks' (margin 0.1 points), without marks"""
    text = "\n".join(line for line in fidelity_lines(runtime, reboot, aa).splitlines() if "wb_tagged" not in line)
    for old, new in (("skip_wb_tags", "trunks"), ("ref-tagged-writeback", "ref-one-space-offset")):
        text = text.replace(old, new)
    return text + "\n"


aa5 = [1.0002, 0.9998, 1.0004, 0.9996, 1.0]
rc, out, err = run_report(fidelity_lines([0.90, 0.9003, 0.8997, 0.9, 0.9001],
                                         [0.9, 0.9002, 0.8998, 0.9001, 0.8999], aa5))
check(rc == 0 and "fidelity skip_wb_tags (knob pass, hooked): faithful (ref-tagged-writeback vs stock)" in out,
      "the same -10% on both A/Bs, the boot A/A within +-0.05%, is faithful at the 0.1% margin")
check("skip_wb_tags: A = 0 (before the upstream change), B = 1 (mainline); kernel patched; every site "
      "hooked on both sides (mainline_ops=1)" in out,
      "a knob pass whose runs recorded mainline_ops 1 on both sides is named hooked")
rc2, out2, err2 = run_report(fidelity_lines([0.90, 0.9003, 0.8997, 0.9, 0.9001],
                                            [0.9, 0.9002, 0.8998, 0.9001, 0.8999], aa5, hooked=0))
check(rc2 == 0 and "fidelity skip_wb_tags (knob pass, B unhooked): faithful" in out2
      and "kernel patched; side 1 unhooked (mainline_ops=0)" in out2 and "kernel patched; every site hooked" not in out2,
      "a knob pass whose side 1 ran unhooked says so, in its title and its fidelity line")
check("swap-w-seq.writeback marks" in out and "agree" in out
      and "swap-w-seq.xarray.type1_height" in out and "a reference kernel has none" in out,
      "the fidelity table shows the writeback marks by construction and the geometry as unavailable")
check("-10.0% [-10.0%, -9.97%] n=5" in out,
      "each effect is exp(mean ln(B/A)) - 1 with its t interval and n")
rc, out, err = run_report(fidelity_lines([0.85, 0.851, 0.849, 0.85, 0.8505],
                                         [0.984, 0.9842, 0.9838, 0.9841, 0.9839], aa5))
check(rc == 0 and "fidelity skip_wb_tags (knob pass, hooked): NOT faithful" in out and "beyond +-0.1959%" in out
      and "runtime -15.0% against reboot -1.60%" in out,
      "a -15% runtime effect against a -1.6% reboot effect is NOT faithful, with the figures")
rc, out, err = run_report(fidelity_lines([0.90, 0.9003, 0.8997, 0.9, 0.9001],
                                         [0.9, 0.9002, 0.8998, 0.9001, 0.8999], aa5,
                                         pswpout=(25000, 25000), ref_pswpout=(25000, 12000)))
check(rc == 0 and "NOT faithful" in out and "swap-w-seq.vmstat.pswpout: runtime 25000 -> 25000, reboot 25000 -> 12000" in out,
      "the same timing with a pswpout the other A/B does not have is NOT faithful")
# SwapCached after swap-w-seq: 1 kB at runtime against 37 kB on stock,
# whose own boots spread from 8 to 92 kB: boot noise, not a mechanism
text = fidelity_lines([0.90, 0.9003, 0.8997, 0.9, 0.9001], [0.9, 0.9002, 0.8998, 0.9001, 0.8999], aa5)
extra = []
for i, (stock, stock2) in enumerate(((92, 8), (8, 12), (12, 8), (36, 40), (37, 40)), 1):
    extra += [f"RESULT patched skip_wb_tags 0 {i} swap-w-seq meminfo.SwapCached_after 0",
              f"RESULT patched skip_wb_tags 1 {i} swap-w-seq meminfo.SwapCached_after 1",
              f"RESULT ref-tagged-writeback - - {i} swap-w-seq meminfo.SwapCached_after 0",
              f"RESULT stock - - {i} swap-w-seq meminfo.SwapCached_after {stock}",
              f"RESULT stock2 - - {i} swap-w-seq meminfo.SwapCached_after {stock2}"]
rc, out, err = run_report(text + "\n".join(extra) + "\n")
check(rc == 0 and "fidelity skip_wb_tags (knob pass, hooked): faithful" in out,
      "a SwapCached difference within the range stock's own boots show is agreement")
rc, out, err = run_report(fidelity_lines([0.90, 0.95, 0.85], [0.9, 0.92, 0.88], [1.0002, 0.9998, 1.0]))
check(rc == 0 and "fidelity skip_wb_tags (knob pass, hooked): not shown at this n" in out
      and "not +-0.1959%: not shown faithful at n=3+3" in out,
      "a difference whose interval reaches past the margin is not shown faithful, and says so")
# Resolved within 0.15% but not 0.1%: trunks (margin 0.1 points: 10% of
# its +0.151% is less) not shown, with the margin it did show
rc, out, err = run_report(trunks_lines([0.90, 0.9012, 0.8988, 0.9, 0.9004],
                                       [0.9, 0.9002, 0.8998, 0.9001, 0.8999], aa5))
check(rc == 0 and "fidelity trunks (knob pass, hooked): not shown at this n" in out
      and "shown within +-0.1" in out and "not +-0.1%" in out,
      "a difference shown within 0.1-0.2% is not shown faithful at trunks' 0.1-point margin")
# The margin is the knob's: the same figures for cow_free, whose margin
# is 10% of its published +1.856%, 0.1856 points, show it faithful
rc, out, err = run_report(cow_lines([0.90, 0.9012, 0.8988, 0.9, 0.9004], [0.9, 0.9002, 0.8998, 0.9001, 0.8999], aa5))
check(rc == 0 and "fidelity cow_free (knob pass, hooked): faithful (ref-cow-kept vs stock)" in out
      and "(margin +-0.1856%)" in out,
      "the same difference for cow_free is faithful at its margin, 10% of its published reboot effect")
# ... and figures shown only within +-0.35% are not shown there
rc, out, err = run_report(cow_lines([0.90, 0.904, 0.896, 0.9, 0.9012], [0.9, 0.9002, 0.8998, 0.9001, 0.8999], aa5))
check(rc == 0 and "fidelity cow_free (knob pass, hooked): not shown at this n" in out and "not +-0.1856%" in out,
      "a difference shown only beyond cow_free's margin is not shown faithful")
# The control: a boot-level A/A that is itself not within the margin
rc, out, err = run_report(fidelity_lines([0.90, 0.9003, 0.8997, 0.9, 0.9001],
                                         [0.9, 0.9002, 0.8998, 0.9001, 0.8999], [1.002, 0.998, 1.004, 0.996, 1.0]))
check(rc == 0 and "fidelity skip_wb_tags (knob pass, hooked): not shown at this n" in out
      and "the boot-level A/A is not shown within +-0.1959%" in out,
      "where the boot-level A/A is not within the margin the pass cannot show fidelity, and says so")

# 11a. The pre-registration (bench/README.md, 2026-12-07).  The margin
# rule: max(0.1 points, 10% of the knob's published reboot effect)
check(near(report.knob_margin("trunks"), 0.1) and near(report.knob_margin("offset_key"), 0.1817)
      and near(report.knob_margin("offset_key.trunks0"), 0.1733)
      and near(report.knob_margin("skip_wb_tags"), 0.1959) and near(report.knob_margin("cow_free"), 0.1856),
      "margin rule: 0.1 points for trunks (+0.151%), 10% of the effect for the others")
check(near(report.fidelity_margin("swap-w-seq", "insns_per_page", "trunks"), 0.1)
      and near(report.fidelity_margin("anon-cow-swap", "insns_per_page", "cow_free"), 0.1856)
      and near(report.fidelity_margin("swap-w-seq", "guest_ns_per_page", "skip_wb_tags"), 1.0),
      "a knob's margin applies to its decisive figure only; other figures keep FIDELITY_MARGINS'")
# The n rule's power, against the textbook form with a known reboot
# effect (sd 0): TOST at +-m with n pairs of sd s has power
# 2 F(n-1)(ln(1+m)/(s/sqrt n) - t(0.95, n-1)) - 1 at a true 0 (scipy)
from scipy import stats as _st
for n in (5, 12, 30):
    se = 0.001 / math.sqrt(n)
    want = 2 * _st.t.cdf(math.log1p(0.001) / se - _st.t.ppf(0.95, n - 1), n - 1) - 1
    check(abs(report.tost_power(0.1, n, 0.0, None, 0.1) - want) < 1e-12,
          f"TOST power at n={n}, sd 0.1%, margin 0.1: {want:.4f}")
# pairs_needed_tost: the smallest n reaching the power, n - 1 short of it
for sd_rt, sd_rb, n_rb, m in ((0.104, 0.0522, 10, 0.1), (0.104, 0.0664, 10, 0.1817), (0.3, 0.05, 10, 0.2)):
    n = report.pairs_needed_tost(sd_rt, sd_rb, n_rb, m)
    check(n is not None and report.tost_power(sd_rt, n, sd_rb, n_rb, m) >= 0.9
          and report.tost_power(sd_rt, n - 1, sd_rb, n_rb, m) < 0.9,
          f"n rule: {n} pairs reach power 0.9 (sd {sd_rt}%, reboot {sd_rb}% x {n_rb}, margin {m}), {n - 1} do not")
check(report.pairs_needed_tost(0.492, 0.4455, 50, 0.1856) is None,
      "n rule: none when the reboot side alone (0.4455%/sqrt 50) is too wide for the margin")
# The registered n follow the rule (capped at PAIRS_CAP), bench/ab.sh runs
# them, and P(all faithful) is the product of the powers
plan, p_all = report.registered_plan()
check(all(report.REGISTERED_PAIRS[k] == v["n"] for k, v in plan.items())
      and [v["n"] for v in plan.values()] == [6, 7, 19, 6, 40],
      f"registered n per knob are the rule's: {[(k, v['n']) for k, v in plan.items()]}")
check(abs(p_all - math.prod(v["power"] for v in plan.values())) < 1e-12 and round(p_all, 3) == 0.107,
      f"P(every knob faithful | truth perfect) = product of the powers = {p_all:.3f}")
with open(os.path.join(HERE, "ab.sh")) as f:
    ab_line = next(line for line in f if line.startswith("REGISTERED_PAIRS="))
ab_pairs = dict((c, int(n)) for c, n in (x.split(":") for x in ab_line.strip().split("=", 1)[1].split("+")))
check(ab_pairs == report.REGISTERED_PAIRS, f"bench/ab.sh's REGISTERED_PAIRS are report.py's ({ab_pairs})")


# make ab's knob pass alone: each knob against its reboot effect as
# published; n need printed per row
def knob_pass_lines(knob, workload, ratios):
    lines = []
    for i, r in enumerate(ratios, 1):
        for side, x in (("0", 1000.0), ("1", 1000.0 * r)):
            lines += [f"PLAN patched {knob} {side} {i} {workload}",
                      f"RESULT patched {knob} {side} {i} {workload} throughput 100",
                      f"RESULT patched {knob} {side} {i} {workload} insns_per_page {x:.6f}",
                      f"RESULT patched {knob} {side} {i} {workload} insns_per_pswpout {x * 1.01:.6f}",
                      f"RESULT patched {knob} {side} {i} {workload} mainline_ops 0",
                      f"RESULT patched {knob} {side} {i} {workload} key_hooked "
                      f"{int(knob in ('offset_key', 'offset_key.trunks0', 'trunks'))}"]
    return "\n".join(lines) + "\n"


near_pub = [0.98041 * (1 + d / 10000) for d in (1, -1, 0.5, -0.5, 0, 1, -1, 0)]
rc, out, err = run_report(knob_pass_lines("skip_wb_tags", "swap-w-seq", near_pub))
check(rc == 0 and "fidelity skip_wb_tags (knob pass, B unhooked): faithful (ref-tagged-writeback vs stock, as published "
      "in 20261205-6.12-sequential)" in out and "(margin +-0.1959%)" in out and " pub " in out,
      "without a reboot A/B in the run, the knob pass is judged against the published effect")
row = next(line for line in out.splitlines() if line.startswith("skip_wb_tags ") and "insns_per_page" in line)
sd = 100 * float(report.np.std([math.log(r) for r in near_pub], ddof=1))
want = report.pairs_needed_tost(sd, 0.0648, 10, 0.1959)
check(f" {want} " in row and want == 2, f"its row prints the n its spreads need ({want}): {row.split('%')[-2:]}")
# The published effects are 6.12's under icount: a run of another kernel,
# or without icount, is not judged against them
for prov, what in (({"kernel_version": "6.1", "profile": {"ICOUNT": 1}}, "Linux 6.1, ICOUNT=1"),
                   ({"kernel_version": "6.12", "profile": {"ICOUNT": 0}}, "Linux 6.12, ICOUNT=0")):
    d = tempfile.mkdtemp(prefix="test-report.")
    with open(os.path.join(d, "results.txt"), "w") as f:
        f.write(knob_pass_lines("skip_wb_tags", "swap-w-seq", near_pub))
    with open(os.path.join(d, "provenance.json"), "w") as f:
        json.dump(prov, f)
    p = subprocess.run([sys.executable, os.path.join(HERE, "report.py"), d], capture_output=True, text=True)
    check(p.returncode == 0 and "fidelity skip_wb_tags" not in p.stdout
          and f"fidelity: not judged: the published reboot effects are Linux 6.12's under icount, this run is {what}"
          in p.stdout, f"a knob pass of {what} is not judged against 6.12's published reboot effects")
rc, out, err = run_report(knob_pass_lines("skip_wb_tags", "swap-w-seq", [0.985 * (1 + d / 10000) for d in (1, -1, 0, 0.5, -0.5, 0)]))
check(rc == 0 and "fidelity skip_wb_tags (knob pass, B unhooked): NOT faithful" in out and "beyond +-0.1959%" in out,
      "a knob pass -1.5% against the published -1.96% is NOT faithful at 0.196 points")
check("verdict skip_wb_tags: swap-w-seq.insns_per_page" in out and "per swapped-out page" in out
      and "(printed, not deciding)" in out,
      "the verdict is on instructions per page written, per swapped-out page beside it")
rc, out, err = run_report(knob_pass_lines("trunks", "swap-w-seq", [1.0015] * 4))
check(rc == 0 and "the key site hooked on both sides (key_hooked=1), the other sites unhooked at 1" in out
      and "fidelity trunks (knob pass, key site hooked)" in out,
      "key-site-only hooking (mainline_ops 0, key_hooked 1) is named so")

# 11b. The AB/BA crossover: d = tau + pi where A ran first, tau - pi where
# B did.  Constant d per order: tau = 0.01, pi = 0.003 exactly, whatever
# the counts in each order
c = report.crossover([0.013, 0.013, 0.013, 0.007, 0.007], [True, True, True, False, False])
check(c is not None and near(c["change_pct"], 100 * math.expm1(0.01)) and near(c["period_pct"], 100 * math.expm1(0.003))
      and (c["n_ab"], c["n_ba"], c["df"]) == (3, 2, 3),
      f"crossover: tau and pi from the two orders' means, 3 A-first and 2 B-first pairs (got {c})")
# Two pairs each order, d 0.012, 0.014 (AB) and 0.006, 0.008 (BA): pooled
# s^2 = 4e-6 / 2 = 2e-6, se^2 = s^2 / 4 * (1/2 + 1/2) = 5e-7, t(0.975, 2)
# = 4.302653: tau 0.01 +- 4.302653 * sqrt(5e-7)
c = report.crossover([0.012, 0.006, 0.014, 0.008], [True, False, True, False])
h = 4.302652729911275 * math.sqrt(5e-7)
check(abs(c["ci_low_pct"] - 100 * math.expm1(0.01 - h)) < 1e-6
      and abs(c["ci_high_pct"] - 100 * math.expm1(0.01 + h)) < 1e-6
      and abs(c["period_low_pct"] - 100 * math.expm1(0.003 - h)) < 1e-6,
      f"crossover interval: pooled within-order variance, n-2 df (got {c})")
check(report.crossover([0.01, 0.02, 0.03], [True, True, True]) is None
      and report.crossover([0.01, 0.02], [True, False]) is None,
      "no crossover figures without a pair in each order, or below 3 pairs")


# 11c. Whole reports: the knob pass's position effect, and fresh boots
def positioned_lines(kernel, knob, ratios, a_first, extra_second=0.0):
    """knob pairs whose B/A is ratios[i]; the run in the second position of
    a pair costs extra_second (a fraction) more"""
    lines = []
    for i, (r, first) in enumerate(zip(ratios, a_first), 1):
        sides = (("0", 1000.0, 1 if first else 2), ("1", 1000.0 * r, 2 if first else 1))
        for side, x, pos in sides:
            x *= 1 + (extra_second if pos == 2 else 0)
            lines += [f"PLAN {kernel} {knob} {side} {i} swap-w-seq",
                      f"RESULT {kernel} {knob} {side} {i} swap-w-seq throughput 100",
                      f"RESULT {kernel} {knob} {side} {i} swap-w-seq insns_per_page {x:.6f}",
                      f"RESULT {kernel} {knob} {side} {i} swap-w-seq vmstat.pswpout 25000",
                      f"RESULT {kernel} {knob} {side} {i} swap-w-seq position {pos}"]
    return lines


def boot_lines(ratios, aa):
    lines = []
    for i, (r, q) in enumerate(zip(ratios, aa), 1):
        for kernel, x in (("ref-tagged-writeback", 1000.0), ("stock", 1000.0 * r), ("stock2", 1000.0 * r * q)):
            lines += [f"PLAN {kernel} - - {i} swap-w-seq",
                      f"RESULT {kernel} - - {i} swap-w-seq throughput 100",
                      f"RESULT {kernel} - - {i} swap-w-seq insns_per_page {x:.6f}",
                      f"RESULT {kernel} - - {i} swap-w-seq vmstat.pswpout 25000"]
    return lines


# -2% in every pair, +0.3% on whichever run came second, 6 of 8 pairs run
# A first: the plain mean reads -2% + 0.3% * (6 - 2) / 8 = -1.85%, the
# adjusted effect -2.00% exactly, and a reboot A/B of -2% is faithful
ten = [0.98, 0.9801, 0.9799, 0.98, 0.98005, 0.97995, 0.98, 0.98, 0.98001, 0.97999]
aa10 = [1.0004, 0.9996, 1.0003, 0.9997, 1.0, 1.0002, 0.9998, 1.0001, 0.9999, 1.0]
order = [True, True, False, True, True, False, True, True]
text = "\n".join(positioned_lines("patched", "skip_wb_tags", [0.98] * 8, order, 0.003)
                 + boot_lines(ten, aa10)) + "\n"
rc, out, err = run_report(text)
check(rc == 0 and "+0.30% [+0.30%, +0.30%]" in out and "-2.00% [-2.00%, -2.00%] n=8 adj" in out
      and "fidelity skip_wb_tags (knob pass): faithful" in out,
      "a position effect is estimated and taken out of the knob pass's effect before the fidelity test")
# The same runtime effect from fresh boots (one run each, no position):
# a fidelity line of its own
fresh = []
for i, r in enumerate(ten, 1):
    for side, x in (("0", 1000.0), ("1", 1000.0 * r)):
        fresh += [f"PLAN fresh skip_wb_tags {side} {i} swap-w-seq",
                  f"RESULT fresh skip_wb_tags {side} {i} swap-w-seq throughput 100",
                  f"RESULT fresh skip_wb_tags {side} {i} swap-w-seq insns_per_page {x:.6f}",
                  f"RESULT fresh skip_wb_tags {side} {i} swap-w-seq vmstat.pswpout 25000"]
rc, out, err = run_report("\n".join(fresh + boot_lines(ten, aa10)) + "\n")
check(rc == 0 and "fidelity skip_wb_tags (fresh boot): faithful" in out
      and "each set after a fresh boot of the patched kernel" in out and "(knob pass)" not in out,
      "fresh boots make a runtime A/B of their own, judged against the reboot A/B")
# A fresh-boot effect 0.5% off the reboot one is not faithful
rc, out, err = run_report("\n".join(fresh + boot_lines([r * 1.005 for r in ten], aa10)) + "\n")
check(rc == 0 and "fidelity skip_wb_tags (fresh boot): NOT faithful" in out and "beyond +-0.1959%" in out,
      "a fresh-boot effect 0.5% away from the reboot effect is NOT faithful")

# A fresh boot's runs record mainline_ops: labelled by it, and runs
# that differ (side 0 hooked, side 1 not) are named MIXED, not unhooked
def with_ops(lines, ops):
    return lines + [f"RESULT fresh skip_wb_tags {side} {i} swap-w-seq mainline_ops {ops[side]}"
                    for i in range(1, len(ten) + 1) for side in ("0", "1")]
rc, out, err = run_report("\n".join(with_ops(fresh, {"0": 1, "1": 1}) + boot_lines(ten, aa10)) + "\n")
check(rc == 0 and "fidelity skip_wb_tags (fresh boot, hooked): faithful" in out
      and "one run per boot (boot rounds); every site hooked on both sides (mainline_ops=1)" in out,
      "fresh boots that ran with mainline_ops on are named hooked, in their title and fidelity line")
rc, out, err = run_report("\n".join(with_ops(fresh, {"0": 1, "1": 0}) + boot_lines(ten, aa10)) + "\n")
check(rc == 0 and "fidelity skip_wb_tags (fresh boot, MIXED hooks)" in out
      and "MIXED: some runs with mainline_ops=1, some without" in out and "side 1 unhooked" not in out,
      "fresh boots whose sides ran with different mainline_ops are named MIXED, not side 1 unhooked")
check("fidelity skip_wb_tags (fresh boot, MIXED hooks): not judged, at any n" in out
      and "hooked differently (MIXED)" in out,
      "fresh boots with MIXED hooks are not judged, though their figures match the reboot's")

# 12. The hooked A/A and the hook dispatch row are named as such
lines = []
for i in range(1, 4):
    for knob, sides, ops in (("aa", ("a1", "a2"), (1, 1)), ("hook_dispatch", ("0", "1"), (1, 0))):
        for side, o, x in zip(sides, ops, (1010.0, 1000.0)):
            lines += [f"PLAN patched {knob} {side} {i} swap-w-seq",
                      f"RESULT patched {knob} {side} {i} swap-w-seq throughput 100",
                      f"RESULT patched {knob} {side} {i} swap-w-seq insns_per_page {x}",
                      f"RESULT patched {knob} {side} {i} swap-w-seq mainline_ops {o}"]
rc, out, err = run_report("\n".join(lines) + "\nNOTE patched a note\nNOTE patched a note\n")
check(rc == 0 and "hook dispatch: A = hooked at mainline (mainline_ops=1), B = unhooked (mainline_ops=0)" in out
      and "every knob at 1 on both sides, hooked at mainline (mainline_ops=1)" in out
      and "verdict hook_dispatch: swap-w-seq.insns_per_page -0.99%" in out and "mainline_ops" not in
      out.split("== verdicts")[0].split("workload.metric")[-1],
      "the hook dispatch row and the hooked A/A are titled by what ran")
check(out.count("NOTE patched a note") == 1, "a NOTE line is shown once")
rc, out, err = run_report(results_text([1, 2, 3], [0, 0, 0]).replace(" throughput ", " swapout_kbps "))
check("swapout_kb_per_guest_s" in out and "swapout_kbps" not in out,
      "an earlier run's swapout_kbps is shown under its honest name")

# 13. The lock pass: its control, and each knob's contentions per page
# against its seed's direction
def lock_lines(knob, a_b, control=(5000, 81234.5)):
    lines = [f"RESULT locks locktorture control 1 spin_lock lock.contentions {control[0]}",
             f"RESULT locks locktorture control 1 spin_lock lock.wait_us {control[1]}",
             "RESULT locks locktorture control 1 spin_lock lock.acquisitions 900000",
             "RESULT locks locktorture control 1 spin_lock lock.seconds 10",
             "RESULT locks locktorture control 1 spin_lock lock.cpus 2"]
    for i, (a, b) in enumerate(a_b, 1):
        for side, x in (("0", a), ("1", b)):
            lines += [f"PLAN locks {knob} {side} {i} swap-w-seq",
                      f"RESULT locks {knob} {side} {i} swap-w-seq throughput 100",
                      f"RESULT locks {knob} {side} {i} swap-w-seq lock.swapcache_contentions_per_kpage {x}",
                      f"RESULT locks {knob} {side} {i} swap-w-seq lock.swapcache_wait_share_pct {x / 100}",
                      f"RESULT locks {knob} {side} {i} swap-w-seq vmstat.pswpout 60000"]
    return "\n".join(lines) + "\n"


fewer = [(10.0 + i % 3, 7.0 + (i % 2) * 0.5) for i in range(8)]
rc, out, err = run_report(lock_lines("skip_wb_tags", fewer))
locks_line = next((l for l in out.splitlines() if l.startswith("locks skip_wb_tags:")), "")
check(rc == 0 and "fewer contentions under mainline: the direction of seeds 000/001" in locks_line
      and "control locktorture: spin_lock, 2 writers, 10 s on 2 CPUs: contentions 5000" in out
      and "the counters see contention" in out,
      "fewer swap cache lock contentions under mainline read as the seeds' direction, after the control")
rc, out, err = run_report(lock_lines("offset_key.trunks0", [(b, a) for a, b in fewer]))
check(rc == 0 and "more contentions under mainline: opposite to seed 002" in out,
      "more contentions under mainline read as opposite to seed 002")
rc, out, err = run_report(lock_lines("trunks", fewer))
locks_line = next((l for l in out.splitlines() if l.startswith("locks trunks:")), "")
check(rc == 0 and locks_line.endswith("=> fewer contentions under mainline"),
      "trunks, which no seed measured, is read against no seed")
rc, out, err = run_report(lock_lines("skip_wb_tags", [(0, 0)] * 8))
check(rc == 0 and "no swap cache lock contention on either side" in out,
      "no contention on either side is said so, not read as a direction")
rc, out, err = run_report(lock_lines("skip_wb_tags", fewer, control=(0, 0)))
check(rc == 1 and "NO CONTENTION: the pass cannot see any" in out
      and "the locktorture control shows no contention" in out,
      "a lock pass whose control reads 0 fails the report")
rc, out, err = run_report(lock_lines("skip_wb_tags", fewer, control=(12, 0)))
check(rc == 1, "a control with contentions but no wait time fails the report too")

print(f"1..{checks}")
sys.exit(1 if failures else 0)
