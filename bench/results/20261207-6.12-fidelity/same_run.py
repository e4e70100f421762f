#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""trunks in one run: the in-boot effect against the reboot effect of the
same run, and both against the reboot effect make ab is judged by.

Usage: bench/results/20261207-6.12-fidelity/same_run.py
Each effect is exp(mean ln(B/A)) - 1 of swap-w-seq insns_per_page (B the
knob at 1 or stock, A at 0 or ref-one-space-offset) over its pairs or
boot rounds; differences are report.py's welch_difference, at 95% and at
90% (the two one-sided tests' interval the fidelity line reads).
"""
import gzip
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
import report  # noqa: E402  bench/report.py


def runs(folder):
    """{(kernel, knob, side): {pair: insns_per_page}} of swap-w-seq"""
    out = {}
    with gzip.open(os.path.join(HERE, "..", folder, "results.txt.gz"), "rt") as f:
        for line in f:
            w = line.split()
            if len(w) >= 8 and w[0] == "RESULT" and w[5] == "swap-w-seq" and w[6] == "insns_per_page":
                out.setdefault(tuple(w[1:4]), {})[w[4]] = float(w[7])
    return out


def effect(r, a, b):
    return report.t_effect([math.log(r[b][p] / r[a][p]) for p in r[a] if p in r[b]])


REF, STOCK = ("ref-one-space-offset", "-", "-"), ("stock", "-", "-")
this = runs("20261207-6.12-fidelity")
published = effect(runs("20261205-6.12-sequential"), REF, STOCK)
rows = {
    "in-boot (knob pass)": effect(this, ("patched", "trunks", "0"), ("patched", "trunks", "1")),
    "fresh boots": effect(this, ("fresh", "trunks", "0"), ("fresh", "trunks", "1")),
    "reboot, this run": effect(this, REF, STOCK),
    "boot A/A, stock2 vs stock": effect(this, STOCK, ("stock2", "-", "-")),
    "reboot, published (20261205)": published,
}
for name, e in rows.items():
    print(f"{name:30} {report.fmt_effect(e)}")
inb = rows["in-boot (knob pass)"]
for ref in ("reboot, this run", "reboot, published (20261205)"):
    d95 = report.welch_difference(inb, rows[ref], 0.95)
    d90 = report.welch_difference(inb, rows[ref], 0.90)
    print(f"in-boot - {ref:28} {report.fmt_ci(*d95)} (95%), {report.fmt_ci(*d90)} (90%)")
