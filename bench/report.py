#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Paired A/B tables from the lines bench/bench prints.

Usage: bench/report.py RESULTS_DIR

Reads RESULTS_DIR/results.txt (bench/bench's PLAN, RESULT and FAILED
lines; other lines are ignored) and RESULTS_DIR/provenance.json if there,
and writes into RESULTS_DIR:
    table.txt       the tables and one verdict per knob (also printed)
    results.csv     every measurement
    summary.json    provenance, one object per compared row, verdicts
    <table>.dat     gnuplot data for bench/plot.gp: every pair's change

Each comparison pairs a measurement of side A with the measurement of
side B that has the same pair number (same knob or boot round, same
workload).  Per row, LKP's columns: mean +- %stddev (sample stddev) of
each side and %change of the means; then the paired figure: the median
of the per-pair changes 100 * (B/A - 1) with a 95% percentile-bootstrap
interval of that median (scipy.stats.bootstrap, 10000 resamples, fixed
seed), and n.  "~" marks an interval that contains 0 (or that n < 3
cannot give).  Beside each A/B row: the interval of the A/A comparison
with the same workload and metric, where both sides ran the same code.

Any FAILED line, any planned measurement without a throughput, and any
malformed line fails the report (exit 1), naming the run.
"""
import csv
import json
import math
import os
import re
import sys
from collections import defaultdict

import numpy as np
from scipy import stats

PERFORMANCE = re.compile(r"^(throughput|swapout_kbps|latency_.*)$")
# Metrics where smaller is better, for the verdict's wording
LOWER_IS_BETTER = re.compile(r"^latency_")
# Where a run sat (sequence position, which of the two cgroups): balanced
# across pairs by bench/bench, not a measurement
NOT_COMPARED = {"position", "cgroup_y"}
# bench/bench mode=locks runs under the label "locks": only its counts count
LOCK_PASS = "locks"
LOCK_PASS_METRICS = re.compile(r"^(lock|vmstat)\.")
BOOTSTRAP_RESAMPLES = 10000
BOOTSTRAP_SEED = 20261130
BASE_LABEL = "before the upstream change"
OTHER_LABEL = "mainline"

# Per knob: the performance rows and the mechanism rows of its verdict, the
# first one measured of each.  A simultaneous pass has no system-wide
# counters per side (vmstat, the global stats): its rows come last.
HEADLINES = {
    "offset_key": ([("swap-w-seq", "throughput")], [("swap-w-seq", "xarray.type1_height")]),
    "offset_key.trunks0": ([("swap-w-seq", "throughput")], [("swap-w-seq", "xarray.type1_height")]),
    "skip_wb_tags": ([("swap-w-seq", "swapout_kbps"), ("swap-w-seq", "throughput")],
                     [("swap-w-seq", "swapcache_ab.wb_tagged"), ("swap-w-seq", "memcg.wb_tagged")]),
    "cow_free": ([("pmbench-async", "throughput"), ("anon-cow-swap", "throughput")],
                 [("pmbench-async", "swapcache_ab.cow_kept_per_s"),
                  ("anon-cow-swap", "swapcache_ab.cow_kept"), ("anon-cow-swap", "memcg.cow_kept")]),
}
# A kernel label whose runs say which cgroup they ran in is a simultaneous pass
SIMULTANEOUS_MARK = "cgroup_y"
# The two passes of MODE=simultaneous, as bench/ab.sh labels them
MODES = ("sequential", "simultaneous")


class ReportError(Exception):
    pass


def parse(lines):
    """(values, plans, failures) from bench/bench's lines.

    values: {(kernel, knob, side, pair, workload, metric): float}
    plans: set of (kernel, knob, side, pair, workload)
    failures: list of strings naming the run and why
    """
    values, plans, failures, errors = {}, set(), [], []
    for lineno, line in enumerate(lines, 1):
        parts = line.split()
        if not parts or parts[0] not in ("PLAN", "RESULT", "FAILED"):
            continue
        kind = parts[0]
        if kind == "PLAN" and len(parts) == 6:
            plans.add(tuple(parts[1:6]))
        elif kind == "FAILED" and len(parts) >= 7:
            failures.append(f"{' '.join(parts[1:6])}: {' '.join(parts[6:])}")
        elif kind == "RESULT" and len(parts) == 8:
            key = tuple(parts[1:7])
            try:
                x = float(parts[7])
            except ValueError:
                x = math.nan
            if not math.isfinite(x):
                errors.append(f"line {lineno}: not a number: {line.strip()}")
            elif key in values:
                errors.append(f"line {lineno}: measured twice: {line.strip()}")
            else:
                values[key] = x
        else:
            errors.append(f"line {lineno}: malformed: {line.strip()}")
    if errors:
        raise ReportError("\n".join(errors))
    for plan in sorted(plans):
        if plan + ("throughput",) not in values and not any(
                f.startswith(" ".join(plan) + ":") for f in failures):
            failures.append(f"{' '.join(plan)}: printed no throughput (crashed or cut off?)")
    return values, plans, failures


def mean_pct_stddev(xs):
    m = float(np.mean(xs))
    sd = float(np.std(xs, ddof=1)) if len(xs) > 1 else 0.0
    return m, (100 * sd / m if m else 0.0)


def median_interval(changes):
    """Median of the paired changes and its 95% bootstrap interval."""
    changes = np.asarray(changes, dtype=float)
    med = float(np.median(changes))
    if len(changes) < 3:
        return med, None, None
    if np.all(changes == changes[0]):
        return med, med, med
    res = stats.bootstrap((changes,), np.median, confidence_level=0.95,
                          n_resamples=BOOTSTRAP_RESAMPLES, method="percentile",
                          random_state=np.random.default_rng(BOOTSTRAP_SEED))
    return med, float(res.confidence_interval.low), float(res.confidence_interval.high)


def paired(base, other):
    """Statistics of one row: base, other are {pair: value}."""
    pairs = sorted(set(base) & set(other), key=lambda p: int(p) if p.isdigit() else p)
    a = [base[p] for p in pairs]
    b = [other[p] for p in pairs]
    row = {"n": len(pairs), "pairs": pairs, "a": a, "b": b}
    if not pairs:
        return row
    am, apct = mean_pct_stddev(a)
    bm, bpct = mean_pct_stddev(b)
    row.update(a_mean=am, a_stddev_pct=apct, b_mean=bm, b_stddev_pct=bpct,
               change_of_means_pct=(100 * (bm - am) / am if am else None))
    if all(x == 0 and y == 0 for x, y in zip(a, b)):
        changes = [0.0] * len(a)
    elif any(x == 0 for x in a):
        changes = None      # a ratio to 0: the difference is the figure
    else:
        changes = [100 * (y / x - 1) for x, y in zip(a, b)]
    row["paired_changes_pct"] = changes
    if changes is not None:
        med, lo, hi = median_interval(changes)
        row.update(median_change_pct=med, ci_low_pct=lo, ci_high_pct=hi,
                   within_noise=(lo is None or lo <= 0 <= hi))
    return row


def fmt_num(x):
    if x is None:
        return "n/a"
    return f"{x:.2f}" if abs(x) < 100 and x != int(x) else f"{x:.0f}"


def fmt_pct(x):
    return "n/a" if x is None else f"{x:+.1f}%"


def fmt_interval(row):
    if row is None or row.get("median_change_pct") is None:
        return "n/a"
    if row["ci_low_pct"] is None:
        return f"{fmt_pct(row['median_change_pct'])} [n<3]"
    return (f"{fmt_pct(row['median_change_pct'])} "
            f"[{fmt_pct(row['ci_low_pct'])}, {fmt_pct(row['ci_high_pct'])}]")


def comparisons(values, kver="6.12"):
    """(name, title, base selector, other selector, calibration name)."""
    groups = {(k[0], k[1], k[2]) for k in values}
    out = []
    for kernel, knob in sorted({(g[0], g[1]) for g in groups}):
        if knob in ("-", "aa"):
            continue
        if (kernel, knob, "0") in groups and (kernel, knob, "1") in groups:
            aa = f"aa@{kernel}" if (kernel, "aa", "a1") in groups else None
            title = f"{knob}: A = 0 ({BASE_LABEL}), B = 1 ({OTHER_LABEL}); kernel {kernel}"
            if kernel == LOCK_PASS:
                title = (f"{knob}: A = 0, B = 1; lock pass (plain TCG, several vCPUs, "
                         "lock:contention_begin traced): counts only, its timings are not compared")
            out.append((f"{knob}@{kernel}", title, (kernel, knob, "0"), (kernel, knob, "1"), aa))
    for kernel in sorted({g[0] for g in groups if g[1] == "aa"}):
        out.append((f"aa@{kernel}",
                    f"A/A calibration: every knob at 1 on both sides; kernel {kernel}",
                    (kernel, "aa", "a1"), (kernel, "aa", "a2"), None))
    boots = {g[0] for g in groups if g[1] == "-"}
    cal = "stock2-vs-stock" if {"stock", "stock2"} <= boots else None
    if {"stock", "patched"} <= boots:
        out.append(("overhead", f"hook overhead: A = stock {kver}, B = patched {kver}, module not loaded",
                    ("stock", "-", "-"), ("patched", "-", "-"), cal))
    if {"patched", "module"} <= boots:
        out.append(("module-all-1", "module loaded, every knob at 1: A = not loaded, B = loaded (patched kernel)",
                    ("patched", "-", "-"), ("module", "-", "-"), cal))
    if cal:
        out.append((cal, f"A/A calibration: A = stock {kver}, B = the same source built a second time",
                    ("stock", "-", "-"), ("stock2", "-", "-"), None))
    return out


def rows_of(values, base_sel, other_sel):
    series = defaultdict(lambda: ({}, {}))
    for (kernel, knob, side, pair, wl, metric), x in values.items():
        if metric in NOT_COMPARED:
            continue
        if kernel == LOCK_PASS and not LOCK_PASS_METRICS.match(metric):
            continue
        if (kernel, knob, side) == base_sel:
            series[(wl, metric)][0][pair] = x
        elif (kernel, knob, side) == other_sel:
            series[(wl, metric)][1][pair] = x
    return {k: paired(*v) for k, v in sorted(series.items()) if v[0] and v[1]}


def interval_width(row):
    if row is None or row.get("ci_low_pct") is None:
        return None
    return row["ci_high_pct"] - row["ci_low_pct"]


def aa_halfwidth(row):
    if row is None or row.get("ci_low_pct") is None:
        return None
    return max(abs(row["ci_low_pct"]), abs(row["ci_high_pct"]))


def first_measured(rows, candidates):
    return next(((k, rows[k]) for k in candidates if k in rows), ((None, None), None))


def verdict(knob, rows, aa_rows, label=None):
    """label: how the verdict names the knob (default: the knob)"""
    perf_rows, mech_rows = HEADLINES.get(knob, ([], []))
    (pwl, pmetric), perf = first_measured(rows, perf_rows)
    (mwl, mmetric), mech = first_measured(rows, mech_rows)
    if perf is None:    # not a knob with a headline: its first performance row
        perf_key = next((k for k in rows if PERFORMANCE.match(k[1])), None)
        perf = rows.get(perf_key)
        pwl, pmetric = perf_key or (None, None)
    if perf is None:
        return f"{label or knob}: no performance row measured"
    aa = aa_rows.get((pwl, pmetric)) if aa_rows else None
    text = f"{label or knob}: {pwl}.{pmetric} {fmt_interval(perf)} (n={perf['n']}"
    text += f"; A/A {fmt_interval(aa)})" if aa else "; no A/A)"
    if perf.get("median_change_pct") is None or perf["within_noise"]:
        judgement = "not measurable here: the interval contains 0"
    elif aa is None:
        judgement = "a change, but no A/A to size the noise"
    elif aa_halfwidth(aa) is not None and abs(perf["median_change_pct"]) <= aa_halfwidth(aa):
        judgement = "not measurable here: within the A/A spread"
    else:
        better = (perf["median_change_pct"] < 0) == bool(LOWER_IS_BETTER.match(pmetric))
        judgement = "B (mainline) " + ("better" if better else "worse")
    if mech:
        text += (f"; mechanism {mwl}.{mmetric} {fmt_num(mech['a_mean'])} -> "
                 f"{fmt_num(mech['b_mean'])}")
    return f"{text} => {judgement}"


def interference(values):
    """Per simultaneous pass, knob, workload and performance metric: the
    mainline side (1) of pair i, next to an old-policy partner, against
    A/A pair i of the same pass, next to a mainline partner, paired by
    pair number: pair i of every knob and of A/A ran in the same round of
    the plan.  An A/A pair counts as one figure, the mean of its two sides,
    which ran together.  Also the position effect: the second cgroup (y)
    against the first (x) in the A/A pairs, where both ran the same code."""
    out = []
    for kernel in sorted({k[0] for k in values if k[5] == SIMULTANEOUS_MARK}):
        mixed, aa, in_y = defaultdict(dict), defaultdict(lambda: defaultdict(dict)), {}
        for (kern, knob, side, pair, wl, metric), x in values.items():
            if kern != kernel:
                continue
            if metric == SIMULTANEOUS_MARK:
                in_y[(knob, side, pair, wl)] = x == 1
            elif not PERFORMANCE.match(metric):
                continue
            elif knob == "aa":
                aa[(wl, metric)][pair][side] = x
            elif side == "1":
                mixed[(knob, wl, metric)][pair] = x
        for (knob, wl, metric), next_to_old in sorted(mixed.items()):
            calib = {p: float(np.mean(list(v.values())))
                     for p, v in aa.get((wl, metric), {}).items()}
            if calib:
                out.append(dict(paired(calib, next_to_old), kernel=kernel, what=knob,
                                workload=wl, metric=metric))
        for (wl, metric), by_pair in sorted(aa.items()):
            x_side, y_side = {}, {}
            for p, sides in by_pair.items():
                for side, v in sides.items():
                    (y_side if in_y.get(("aa", side, p, wl)) else x_side)[p] = v
            out.append(dict(paired(x_side, y_side), kernel=kernel, what="position y/x",
                            workload=wl, metric=metric))
    return out


def render_interference(found):
    text = ["== interference: the mainline side of simultaneous pair i, next to an old-policy",
            "   partner, against A/A pair i (both sides mainline, their mean), paired; and the",
            "   position effect: cgroup y against cgroup x in the A/A pairs",
            f"{'kernel':<14} {'compared':<14} {'workload.metric':<28} {'n':>3}  "
            f"{'paired median [95% CI]':>28}  reading"]
    for r in found:
        if r.get("ci_low_pct") is None:
            reading = "n < 3: no interval"
        elif r["within_noise"]:
            reading = "none measurable at this n"
        elif r["what"].startswith("position"):
            reading = "a position effect: the alternation cancels it"
        else:
            reading = "the partner's policy moves this side"
        text.append(f"{r['kernel']:<14} {r['what']:<14} {r['workload'] + '.' + r['metric']:<28} "
                    f"{r['n']:>3}  {fmt_interval(r):>28}  {reading}")
    text.append("   The old-policy side has no old-policy A/A partner to compare with: its")
    text.append("   interference is not measured.  A simultaneous A/B change is each side's own")
    text.append("   effect plus what its partner does to it.")
    text.append("")
    return text


def mode_comparison(rows_by, provenance):
    """The same knob rows from the sequential and the simultaneous pass:
    n, interval and its width, the spread of the per-pair changes, the A/A
    interval, and each pass's wall time."""
    seconds = provenance.get("pass_seconds", {})
    out = []
    knobs = sorted({n.split("@")[0] for n in rows_by if n.endswith("@" + MODES[1])} - {"aa"})
    for knob in knobs:
        by_mode = [rows_by.get(f"{knob}@{mode}", {}) for mode in MODES]
        for key in sorted(set(by_mode[0]) & set(by_mode[1])):
            if key[1] != "throughput":      # the one metric both passes measure per side
                continue
            for mode, rows in zip(MODES, by_mode):
                r, aa = rows[key], rows_by.get(f"aa@{mode}", {}).get(key)
                changes = r.get("paired_changes_pct") or []
                out.append({"knob": knob, "workload": key[0], "metric": key[1], "mode": mode,
                            "n": r["n"], "row": r, "aa": aa,
                            "width_pct": interval_width(r), "aa_width_pct": interval_width(aa),
                            "pair_mad_pct": (float(stats.median_abs_deviation(changes, scale="normal"))
                                             if len(changes) > 1 else None),
                            "pass_seconds": seconds.get(mode)})
    return out


def render_modes(found):
    passes = {r["mode"]: r["pass_seconds"] for r in found}
    text = ["== sequential vs simultaneous: the same knobs and workloads, one pass each;",
            "   pass wall time " + ", ".join(f"{m} {passes.get(m)} s" for m in MODES),
            f"{'knob':<14} {'workload.metric':<26} {'mode':<13} {'n':>3}  {'paired median [95% CI]':>28} "
            f"{'width':>6} {'MAD':>6}  {'A/A [95% CI]':>28} {'width':>6}"]
    for r in found:
        text.append(f"{r['knob']:<14} {r['workload'] + '.' + r['metric']:<26} {r['mode']:<13} "
                    f"{r['n']:>3}  {fmt_interval(r['row']):>28} {fmt_num(r['width_pct']):>6} "
                    f"{fmt_num(r['pair_mad_pct']):>6}  {fmt_interval(r['aa']):>28} "
                    f"{fmt_num(r['aa_width_pct']):>6}")
    for i in range(0, len(found) - 1, 2):
        seq, sim = found[i], found[i + 1]
        if seq["width_pct"] and sim["width_pct"] is not None:
            text.append(f"{seq['knob']}: simultaneous/sequential interval width "
                        f"{sim['width_pct'] / seq['width_pct']:.2f}, MAD "
                        + (f"{sim['pair_mad_pct'] / seq['pair_mad_pct']:.2f}"
                           if seq["pair_mad_pct"] and sim["pair_mad_pct"] is not None else "n/a"))
    text.append("   width: high - low of the interval, in percentage points, which shrinks with n")
    text.append("   too; MAD: median absolute deviation of the per-pair changes, scaled to a")
    text.append("   normal sd, which does not depend on n and resists a single outlier.")
    text.append("")
    return text


def render(name, title, rows, aa_rows, aa_title):
    text = [f"== {title}"]
    if aa_title:
        text.append(f"   A/A column: {aa_title}")
    for section, pred in (("performance", True), ("mechanism (counters, geometry)", False)):
        keys = [k for k in rows if bool(PERFORMANCE.match(k[1])) == pred]
        if not keys:
            continue
        text.append(f"-- {section}")
        text.append(f"{'A mean ± %stddev':>20} {'%change':>9} {'B mean ± %stddev':>20}"
                    f"  {'paired median [95% CI]':>28} {'n':>3}  {'A/A [95% CI]':>28}  workload.metric")
        for key in keys:
            r = rows[key]
            mark = "~" if r.get("within_noise", True) else " "
            aa = aa_rows.get(key) if aa_rows else None
            text.append(f"{fmt_num(r['a_mean']):>13} ±{r['a_stddev_pct']:4.0f}% "
                        f"{fmt_pct(r['change_of_means_pct']):>9} "
                        f"{fmt_num(r['b_mean']):>13} ±{r['b_stddev_pct']:4.0f}%"
                        f"  {fmt_interval(r):>27}{mark} {r['n']:>3}  "
                        f"{fmt_interval(aa) if aa else '-':>28}  {key[0]}.{key[1]}")
    text.append("")
    return text


def write_dat(path, rows, aa_rows):
    """Blocks for plot.gp: every pair's change; median and interval; A/A."""
    perf = [(k, r) for k, r in rows.items()
            if PERFORMANCE.match(k[1]) and r.get("paired_changes_pct") is not None]
    with open(path, "w") as f:
        f.write("# x label change_pct (every pair)\n")
        for i, (k, r) in enumerate(perf):
            for c in r["paired_changes_pct"]:
                f.write(f"{i} {k[0]}.{k[1]} {c:.3f}\n")
        f.write("\n\n# x label median low high\n")
        for i, (k, r) in enumerate(perf):
            lo = r["ci_low_pct"] if r["ci_low_pct"] is not None else r["median_change_pct"]
            hi = r["ci_high_pct"] if r["ci_high_pct"] is not None else r["median_change_pct"]
            f.write(f"{i} {k[0]}.{k[1]} {r['median_change_pct']:.3f} {lo:.3f} {hi:.3f}\n")
        f.write("\n\n# x label A/A median low high\n")
        aa_lines = 0
        for i, (k, r) in enumerate(perf):
            aa = aa_rows.get(k) if aa_rows else None
            if aa and aa.get("ci_low_pct") is not None:
                f.write(f"{i + 0.25} {k[0]}.{k[1]} {aa['median_change_pct']:.3f} "
                        f"{aa['ci_low_pct']:.3f} {aa['ci_high_pct']:.3f}\n")
                aa_lines += 1
        if not aa_lines:    # gnuplot refuses an empty block: a point off the axis
            f.write("-1 none 0 0 0\n")
    return len(perf)


def report(outdir):
    with open(os.path.join(outdir, "results.txt"), errors="replace") as f:
        lines = f.readlines()
    values, plans, failures = parse(lines)
    if not values:
        raise ReportError("no RESULT lines")
    provenance = {}
    ppath = os.path.join(outdir, "provenance.json")
    if os.path.exists(ppath):
        with open(ppath) as f:
            provenance = json.load(f)

    with open(os.path.join(outdir, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "knob", "side", "pair", "workload", "metric", "number"])
        for key, x in sorted(values.items()):
            w.writerow(list(key) + [fmt_num(x) if x != int(x) else int(x)])

    comps = comparisons(values, provenance.get("kernel_version", "6.12"))
    rows_by = {name: rows_of(values, b, o) for name, _, b, o, _ in comps}
    titles = {name: title for name, title, _, _, _ in comps}
    text, summary, verdicts, plotted = [], [], [], []
    for name, title, _, _, cal in comps:
        rows = rows_by[name]
        aa_rows = rows_by.get(cal) if cal else None
        text += render(name, title, rows, aa_rows, titles.get(cal))
        for (wl, metric), r in rows.items():
            aa = aa_rows.get((wl, metric)) if aa_rows else None
            s = {k: v for k, v in r.items() if k not in ("a", "b", "pairs")}
            s.update(table=name, workload=wl, metric=metric, a=r["a"], b=r["b"],
                     pairs=r["pairs"], aa_table=cal,
                     aa_ci_pct=([aa.get("ci_low_pct"), aa.get("ci_high_pct")] if aa else None))
            summary.append(s)
        if not name.startswith(("aa@", "stock2")) and not name.endswith("@" + LOCK_PASS):
            knob, _, kernel = name.partition("@")
            # With several passes (MODE=simultaneous), say which
            v = verdict(knob, rows, aa_rows, label=name if kernel not in ("", "patched") else None)
            locks = rows_by.get(f"{knob}@{LOCK_PASS}", {})
            for (wl, metric), r in locks.items():
                if metric == "lock.swapcache_contended":
                    v += (f"; contended swap cache lock acquisitions ({wl}, lock pass) "
                          f"{fmt_num(r['a_mean'])} -> {fmt_num(r['b_mean'])}")
            verdicts.append(v)
        dat = os.path.join(outdir, f"{name}.dat")
        if write_dat(dat, rows, aa_rows):
            plotted.append(name)
        else:
            os.remove(dat)      # no performance rows: nothing to plot
    found_interference = interference(values)
    if found_interference:
        text += render_interference(found_interference)
    found_modes = mode_comparison(rows_by, provenance)
    if found_modes:
        text += render_modes(found_modes)
    text.append("== verdicts (headline performance row, paired median [95% CI]; mechanism A -> B)")
    text += [f"verdict {v}" for v in verdicts]
    text.append("")
    text.append("~: the paired interval contains 0.  Intervals: percentile bootstrap of the median")
    text.append("of per-pair changes 100*(B/A-1), 95%, 10000 resamples; with n=5 it spans the")
    text.append("smallest to the largest pair's change.")
    if failures:
        text.append("")
        text += [f"FAILED RUN: {f}" for f in failures]
        text.append(f"{len(failures)} failed measurements: this report is incomplete")
    out = "\n".join(text) + "\n"
    with open(os.path.join(outdir, "table.txt"), "w") as f:
        f.write(out)
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump({"provenance": provenance, "verdicts": verdicts, "failed": failures,
                   "plots": plotted, "rows": summary,
                   "interference": [{k: v for k, v in r.items() if k not in ("a", "b", "pairs")}
                                    for r in found_interference],
                   "modes": [{k: v for k, v in r.items() if k not in ("row", "aa")}
                             for r in found_modes]}, f, indent=1)
    return out, failures


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench/report.py RESULTS_DIR")
    try:
        out, failures = report(sys.argv[1])
    except (ReportError, OSError) as e:
        sys.stderr.write(f"report: {e}\n")
        sys.exit(1)
    sys.stdout.write(out)
    if failures:
        sys.stderr.write(f"report: {len(failures)} failed measurements, first: {failures[0]}\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
