#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""LKP-style comparison tables from the RESULT lines of an A/B run.

Usage: bench/report.py RESULTS_DIR

Reads RESULTS_DIR/results.txt, lines of
    RESULT <kernel> <knob> <value> <run> <workload> <metric> <number>
and writes, into RESULTS_DIR:
    table.txt       the comparison tables (also printed)
    results.csv     every measurement
    summary.json    one object per compared metric
    <name>.dat      gnuplot data, one per table, for bench/plot.gp

Each table compares a base (the knob at 0, the policy before the upstream
change; or the stock kernel) with the other side (the knob at 1, today's
mainline; or the patched kernel without the module), per workload:
    mean +- population %stddev   %change   mean +- %stddev   metric
%change = 100 * (other - base) / base.  A change is marked significant
when the two ranges mean +- stddev do not overlap, else "~" (noise).
"""
import csv
import json
import math
import os
import sys
from collections import defaultdict


def mean_std(xs):
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def fmt_num(x):
    return f"{x:.2f}" if abs(x) < 100 and x != int(x) else f"{x:.0f}"


def compare(base, other):
    """(row text, summary dict) for two lists of numbers."""
    bm, bs = mean_std(base)
    om, osd = mean_std(other)
    bpct = 100 * bs / bm if bm else 0.0
    opct = 100 * osd / om if om else 0.0
    if bm:
        change = 100 * (om - bm) / bm
        change_s = f"{change:+.1f}%"
    else:
        change = None
        change_s = "n/a" if om else "0"
    significant = (bm + bs < om - osd) or (om + osd < bm - bs)
    mark = "" if significant else "~"
    row = (f"{fmt_num(bm):>12} ±{bpct:4.0f}%  {change_s:>9}{mark:1} "
           f"{fmt_num(om):>12} ±{opct:4.0f}%")
    return row, {
        "base_mean": bm, "base_stddev_pct": bpct, "base_n": len(base),
        "other_mean": om, "other_stddev_pct": opct, "other_n": len(other),
        "change_pct": change, "significant": significant,
    }


def main():
    outdir = sys.argv[1]
    data = defaultdict(list)  # (kernel, knob, value, workload, metric) -> [x]
    rows = []
    with open(os.path.join(outdir, "results.txt")) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 8 or parts[0] != "RESULT":
                continue
            _, kernel, knob, value, run, workload, metric, number = parts
            try:
                x = float(number)
            except ValueError:
                continue
            rows.append([kernel, knob, value, run, workload, metric, number])
            data[(kernel, knob, value, workload, metric)].append(x)

    # Derived per run: xarray lock acquisitions by swap writeback per
    # swapped-out page (the tagged path locks at start and at end)
    for (kernel, knob, value, wl, metric), xs in list(data.items()):
        if metric != "swapcache_ab.wb_tagged_locks":
            continue
        pages = data.get((kernel, knob, value, wl, "vmstat.pswpout"), [])
        if len(pages) == len(xs) and all(pages):
            data[(kernel, knob, value, wl, "swapcache_ab.wb_locks_per_swapped_page")] = [
                x / p for x, p in zip(xs, pages)]

    with open(os.path.join(outdir, "results.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "knob", "value", "run", "workload", "metric", "number"])
        w.writerows(rows)

    tables = []  # (name, title, base label, other label, [(workload, metric, base, other)])
    knobs = sorted({k[1] for k in data if k[1] != "none"})
    for knob in knobs:
        pairs = []
        for (kernel, kn, value, wl, metric), xs in sorted(data.items()):
            if kn != knob or value != "0":
                continue
            other = data.get((kernel, kn, "1", wl, metric))
            if other:
                pairs.append((wl, metric, xs, other))
        tables.append((knob, f"{knob}: 0 (before the upstream change) vs 1 (mainline)",
                       f"{knob}=0", f"{knob}=1", pairs))
    if any(k[0] == "stock" for k in data):
        pairs = []
        for (kernel, kn, value, wl, metric), xs in sorted(data.items()):
            if kernel != "stock":
                continue
            other = data.get(("patched", kn, value, wl, metric))
            if other:
                pairs.append((wl, metric, xs, other))
        tables.append(("overhead", "hook overhead: stock 6.12 vs patched 6.12, module not loaded",
                       "stock", "patched", pairs))

    summary = []
    text = []
    for name, title, blabel, olabel, pairs in tables:
        text.append(f"== {title}")
        text.append(f"{blabel:>19}                {olabel:>19}")
        text.append(f"{'mean ± %stddev':>19}   %change     {'mean ± %stddev':>19}  workload.metric")
        dat = []
        for wl, metric, base, other in pairs:
            row, s = compare(base, other)
            text.append(f"{row}  {wl}.{metric}")
            s.update({"table": name, "workload": wl, "metric": metric})
            summary.append(s)
            if metric == "throughput":
                dat.append((wl, s))
        text.append("")
        with open(os.path.join(outdir, f"{name}.dat"), "w") as f:
            f.write(f"workload {blabel} {blabel}_stddev {olabel} {olabel}_stddev\n")
            for wl, s in dat:
                b = s["base_mean"] or 1
                f.write(f"{wl} 100 {s['base_stddev_pct']:.2f} "
                        f"{100 * s['other_mean'] / b:.2f} "
                        f"{s['other_stddev_pct'] * s['other_mean'] / b:.2f}\n")
    text.append("~ marks a change within noise: the ranges mean ± stddev overlap.")
    out = "\n".join(text) + "\n"
    with open(os.path.join(outdir, "table.txt"), "w") as f:
        f.write(out)
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    sys.stdout.write(out)


if __name__ == "__main__":
    main()
