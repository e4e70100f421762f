#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the knob pass of two make ab runs, as bench/README.md's checks
declared before their runs (2026-12-07, second session): per knob, each
run's in-boot effect, the difference (Welch 95%) and whether the second's
effect lies inside the first's 95% interval; then the level of the A/A
sides (every run of a1 and a2), second run over first, Welch 95% on the
logs of the runs.  Uses bench/report.py's parser and statistics.

Usage: compare.py REFERENCE_RUN OTHER_RUN WORKLOAD [METRIC...]
       compare.py --aa RUN WORKLOAD   the in-boot A/A acceptance rule's three
       criteria (bench/README.md, "The in-boot A/A"), on insns_per_page
"""
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
import report  # noqa: E402  bench/report.py


def runs_of(path):
    values = report.parse(report.read_results(path))[0]
    return values


def knob_effect(values, knob, wl, metric):
    row = report.rows_of(values, ("patched", knob, "0"), ("patched", knob, "1")).get((wl, metric))
    return report.effect(row) if row else None


def aa_level(values, wl, metric):
    return [math.log(x) for (k, knob, side, pair, w, m), x in values.items()
            if k == "patched" and knob == "aa" and w == wl and m == metric and x > 0]


def gap_statistic(logs):
    """the largest gap between neighbouring sorted values with at least
    ceil(n/4) of them on each side, over their standard deviation"""
    x = np.sort(logs)
    n = len(x)
    k = math.ceil(n / 4)
    return max(x[i + 1] - x[i] for i in range(k - 1, n - k)) / np.std(x, ddof=1)


def aa_acceptance(path, wl, metric="insns_per_page"):
    values = runs_of(path)
    row = report.rows_of(values, ("patched", "aa", "a1"), ("patched", "aa", "a2"))[(wl, metric)]
    e = report.effect(row)
    half = (e["high"] - e["low"]) / 2
    ok1 = e["low"] <= 0 <= e["high"] and half <= 0.10
    logs = report.log_ratios(row)
    rng = np.random.default_rng(1)
    p95 = float(np.percentile([gap_statistic(rng.normal(size=len(logs))) for _ in range(20000)], 95))
    g = gap_statistic(logs)
    c = row["crossover"]
    ok3 = c["period_low_pct"] <= 0 <= c["period_high_pct"]
    print(f"A/A {wl} {metric}, n={e['n']}:")
    print(f"  (1) {report.fmt_effect(e)}, half-width {half:.3f}%: {'passes' if ok1 else 'FAILS'}")
    print(f"  (2) gap statistic {g:.2f}, 95th percentile at n={len(logs)} {p95:.2f} (20000 normal draws, seed 1): "
          f"{'passes' if g <= p95 else 'FAILS'}")
    print(f"  (3) position {report.fmt_ci(c['period_pct'], c['period_low_pct'], c['period_high_pct'])}: "
          f"{'passes' if ok3 else 'FAILS'}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--aa":
        aa_acceptance(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    ref_path, other_path, wl = sys.argv[1:4]
    metrics = sys.argv[4:] or ["insns_per_page", "insns_per_pswpout"]
    ref, other = runs_of(ref_path), runs_of(other_path)
    knobs = sorted({k[1] for k in other if k[0] == "patched" and k[4] == wl} - {"aa", "hook_dispatch", "-"})
    print(f"reference {os.path.basename(os.path.normpath(ref_path))}, "
          f"other {os.path.basename(os.path.normpath(other_path))}, {wl}")
    for metric in metrics:
        for knob in knobs:
            e1, e2 = knob_effect(ref, knob, wl, metric), knob_effect(other, knob, wl, metric)
            if not e1 or not e2:
                print(f"{knob} {metric}: not in both runs")
                continue
            mid, lo, hi = report.welch_difference(e2, e1)
            inside = e1["low"] <= e2["mean"] <= e1["high"]
            print(f"{knob} {metric}: reference {report.fmt_effect(e1)}, other {report.fmt_effect(e2)}; "
                  f"other - reference {report.fmt_ci(mid, lo, hi)} (Welch 95%); "
                  f"other's effect {'inside' if inside else 'OUTSIDE'} the reference's 95% interval")
        l1, l2 = aa_level(ref, wl, metric), aa_level(other, wl, metric)
        if len(l1) > 1 and len(l2) > 1:
            print(f"A/A level {metric}: other/reference "
                  f"{report.fmt_ci(*report.welch_difference(report.t_effect(l2), report.t_effect(l1)))} "
                  f"(Welch 95%, runs {len(l2)} and {len(l1)})")


if __name__ == "__main__":
    main()
