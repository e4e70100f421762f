#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The perf-profile readings declared before this run (bench/README.md,
"The runs to publish, declared before they ran", 2026-12-07, fourth
session), from its raw lines with bench/report.py's parser and
statistics: per knob the profile rows that move (95% interval, ratio or
pp where a side has none, excludes 0, and the same row's A/A interval
contains 0); the declared rows; the A/A screen (over rows whose mean
is non-zero on both A/A sides, the share whose interval excludes 0).  A row is one the
report prints (bench/perfprofile.py's MIN_SHARE).

Usage: profile_rows.py [RUN]   (default: this folder)
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
import report  # noqa: E402  bench/report.py

WL = "swap-w-seq"
DECLARED = {
    "offset_key.trunks0": ("_raw_spin_unlock_irq.add_to_swap.", "_raw_spin_unlock_irq.shrink_folio_list.",
                           "_raw_spin_unlock_irq.shrink_inactive_list."),
    "skip_wb_tags": ("_raw_spin_unlock_irqrestore.__folio_start_writeback.",
                     "_raw_spin_unlock_irqrestore.__folio_end_writeback."),
}
PREFIX = "perf-profile.calltrace.cpu-clock-pp."


def interval(row):
    """(estimate, low, high, unit) of a row: the ratio's, or B - A in pp"""
    if row.get("change_pct") is not None and row.get("ci_low_pct") is not None:
        return row["change_pct"], row["ci_low_pct"], row["ci_high_pct"], "%"
    d = row.get("pp_difference") or {}
    return d.get("pp"), d.get("pp_low"), d.get("pp_high"), "pp"


def excludes_zero(row):
    _, lo, hi, _ = interval(row)
    return lo is not None and (lo > 0 or hi < 0)


def main():
    run = sys.argv[1] if len(sys.argv) > 1 else HERE
    values = report.parse_with_profile(report.read_results(run))[0]
    aa = report.rows_of(values, ("patched", "aa", "a1"), ("patched", "aa", "a2"))
    aa = {m: r for (wl, m), r in aa.items() if wl == WL and report.PROFILE_SHARE.match(m)}
    both = [m for m, r in aa.items() if r["n"] and r["a_mean"] > 0 and r["b_mean"] > 0]
    moved = [m for m in both if excludes_zero(aa[m])]
    print(f"A/A screen: {len(moved)} of {len(both)} rows non-zero on both sides exclude 0 "
          f"({100 * len(moved) / max(len(both), 1):.1f}%; about 5% expected)")
    for m in moved:
        print(f"  A/A {report.fmt_interval(aa[m])} {m}")
    for knob, declared in DECLARED.items():
        rows = report.rows_of(values, ("patched", knob, "0"), ("patched", knob, "1"))
        rows = {m: r for (wl, m), r in rows.items() if wl == WL and report.PROFILE_SHARE.match(m)}
        print(f"{knob}: {len(rows)} rows")
        for m, r in sorted(rows.items()):
            a_a = aa.get(m)
            if excludes_zero(r) and not (a_a and excludes_zero(a_a)):
                print(f"  moves {r['a_mean']:.2f} -> {r['b_mean']:.2f} {report.fmt_interval(r)} (A/A {report.fmt_interval(a_a) if a_a else 'none'}) {m}")
        for p in declared:
            hits = [m for m in rows if m.startswith(PREFIX + p)]
            if not hits:
                print(f"  declared {p}...: no row")
            for m in hits:
                r = rows[m]
                print(f"  declared {r['a_mean']:.2f} -> {r['b_mean']:.2f} {report.fmt_interval(r)} "
                      f"(A/A {report.fmt_interval(aa[m]) if m in aa else 'none'}) {m}")


if __name__ == "__main__":
    main()
