#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Which recorded quantity alternates with the in-boot A/A's per-run metric.

Usage: bench/results/aa51-in-boot/alternation.py [--plant K] [--show S] [LOG ...]
(default: the five *.log.gz beside this script, the knob pass's output
logs of build/ab-results/aa51-*: PLAN, RESULT and STATE lines of one boot)
--plant K: a control that the method finds what it looks for: adds to
every run a quantity pre.PLANTED = y + K * sd(y) * N(0, 1) (seed 1)
--show S: also every quantity whose name holds S (pre.zone.DMA32.cpu)

Per boot, in the order the runs ran (PLAN lines):
  y      = 100 * (ln insns_per_page - its setting's mean ln in that boot),
           settings skip_wb_tags=0, skip_wb_tags=1 and aa (a1 and a2
           pooled: the same setting)
  alt(x) = x_i - (x_{i-1} + x_{i+1}) / 2 (ends: x_0 - x_1, x_n - x_{n-1}):
           the run-to-run alternating part of a series, without its drift
  H / L  = runs whose alt(y) > 0 / <= 0: the costly and the cheap state
  lag1|p = y's lag-1 autocorrelation once what pswpout explains (least
           squares, within the boot) is taken out
For every quantity a run records (STATE pre.* gauges before the run,
STATE d.* changes over it, absent = 0; RESULT side figures other than
the per-page metrics), centred per setting within its boot:
  r_alt  = correlation of alt(quantity) with alt(y), pooled over the boots
           that record it, with Fisher's 95% interval; per boot beside it
  lag1   = the quantity's own lag-1 autocorrelation (mean over boots); a
           state that alternates from run to run reads near y's (-0.8)
  mean H, mean L = the quantity's mean (raw units) over the H and the L runs;
  pos 1, pos 2   = over the first and the second run of each pair (RESULT
           position: adjacent sides in aa51-before..after2, X Y X Y after)
  p_own  = the share of 2000 draws, each boot's alt(y) rotated by its own
           random offset (each series keeps its autocorrelation, their
           alignment is broken), in which the quantity's |r_alt| reached
           the observed one; p_fam = familywise over every quantity
           (how often the smallest p_own of a draw was as small); the
           smallest p is 1/2001
"""
import gzip
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BOOTS = ("aa51-before", "aa51-after", "aa51-after2", "aa51-after3", "aa51-after3-seed5102")
METRIC = "insns_per_page"
# RESULT lines that are the metric again, or a label, not a state
NOT_STATE = {METRIC, "insns_per_pswpout", "throughput", "swapout_kb_per_guest_s",
             "position", "mainline_ops", "cgroup_y"}
DRAWS = 2000


def load(path):
    """[run] in the order run: key, setting, RESULT and STATE values"""
    runs, by_key = [], {}
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        for line in f:
            w = line.split()
            if len(w) >= 6 and w[0] == "PLAN":
                key = tuple(w[2:6])
                if key in by_key:
                    sys.exit(f"{path}: {' '.join(key)} planned twice")
                by_key[key] = {"key": key, "setting": "aa" if key[0] == "aa" else f"{key[0]}={key[1]}",
                               "result": {}, "state": {}}
                runs.append(by_key[key])
            elif len(w) == 8 and w[0] in ("RESULT", "STATE"):
                run = by_key.get(tuple(w[2:6]))
                if run is None:
                    sys.exit(f"{path}: {w[0]} before its PLAN: {line.strip()}")
                run["result" if w[0] == "RESULT" else "state"][w[6]] = float(w[7])
    missing = [r["key"] for r in runs if METRIC not in r["result"]]
    if not runs or missing:
        sys.exit(f"{path}: no runs, or runs without {METRIC}: {missing[:3]}")
    return runs


def alt(x):
    x = np.asarray(x, float)
    o = np.empty_like(x)
    o[1:-1] = x[1:-1] - (x[:-2] + x[2:]) / 2
    o[0], o[-1] = x[0] - x[1], x[-1] - x[-2]
    return o


def centred(values, settings):
    v = np.asarray(values, float).copy()
    for s in set(settings):
        idx = [i for i, t in enumerate(settings) if t == s]
        v[idx] -= v[idx].mean()
    return v


def corr(a, b):
    a, b = a - a.mean(), b - b.mean()
    d = math.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / d) if d > 0 else float("nan")


def fisher(r, n):
    if not -1 < r < 1 or n < 4:
        return float("nan"), float("nan")
    z, h = math.atanh(r), 1.96 / math.sqrt(n - 3)
    return math.tanh(z - h), math.tanh(z + h)


def main():
    args, plant, shown = sys.argv[1:], None, None
    if args[:1] == ["--plant"]:
        if len(args) < 2:
            sys.exit("alternation.py: --plant needs a number")
        try:
            plant, args = float(args[1]), args[2:]
        except ValueError:
            sys.exit(f"alternation.py: --plant needs a number, not {args[1]!r}")
    if args[:1] == ["--show"]:
        if len(args) < 2:
            sys.exit("alternation.py: --show needs a part of a quantity's name")
        shown, args = args[1], args[2:]
    paths = args or [os.path.join(HERE, b + ".log.gz") for b in BOOTS]
    noise = np.random.default_rng(1)
    boots = []
    print("The metric: y = per-run ln(insns_per_page) against its setting's mean, %")
    phases = []
    print(f"{'boot':24} {'n':>3} {'lag1':>6} {'lag2':>6} {'H':>7} {'L':>7} "
          f"{'even':>7} {'odd':>7} {'pos1':>7} {'pos2':>7} {'lag1|p':>6}  sign of y in run order")
    for path in paths:
        try:
            runs = load(path)
        except (OSError, EOFError, UnicodeDecodeError, ValueError) as e:
            sys.exit(f"alternation.py: {path}: {e}")
        settings = [r["setting"] for r in runs]
        y = 100 * centred([math.log(r["result"][METRIC]) for r in runs], settings)
        ay = alt(y)
        hi = ay > 0
        even = np.arange(len(y)) % 2 == 0
        pos = np.array([r["result"].get("position", 0) for r in runs])
        name = os.path.basename(path).split(".")[0]
        # y less what its pswpout explains (least squares within the boot)
        sw = centred([r["result"]["vmstat.pswpout"] for r in runs], settings)
        e = y - np.polyfit(sw, y, 1)[0] * sw
        print(f"{name:24} {len(y):3d} {corr(y[:-1], y[1:]):+6.2f} {corr(y[:-2], y[2:]):+6.2f} "
              f"{y[hi].mean():+7.3f} {y[~hi].mean():+7.3f} {y[even].mean():+7.3f} {y[~even].mean():+7.3f} "
              f"{y[pos == 1].mean():+7.3f} {y[pos == 2].mean():+7.3f} {corr(e[:-1], e[1:]):+6.2f}  "
              + "".join("+" if v > 0 else "-" for v in y))
        # Which parity is costly: sign(alt(y)) * (-1)^i, by majority over
        # 5 runs; "o" where the odd-numbered runs (2nd, 4th, ...) are
        phase = np.sign(ay) * np.where(np.arange(len(y)) % 2 == 0, 1, -1)
        phase = [np.sign(phase[max(0, i - 2):i + 3].sum()) for i in range(len(y))]
        phases.append((name, "".join("e" if p > 0 else "o" for p in phase),
                       [i for i in range(1, len(phase)) if phase[i] != phase[i - 1]]))
        if plant is not None:
            for r, v in zip(runs, y + plant * y.std(ddof=1) * noise.standard_normal(len(y))):
                r["state"]["pre.PLANTED"] = float(v)
        boots.append((name, runs, settings, ay, hi, pos))

    print("\nThe costly parity per run (e: runs 1, 3, ...; o: runs 2, 4, ...; "
          "majority over 5 runs), and where it changes")
    for name, ph, flips in phases:
        print(f"{name:24} {ph}  {flips or 'none'}")

    # Every quantity: per boot, its series (None where that boot lacks it)
    names = set()
    for _, runs, _, _, _, _ in boots:
        for r in runs:
            names |= {"STATE " + k for k in r["state"]}
            names |= {"RESULT " + k for k in r["result"] if k not in NOT_STATE}
    rows = []
    for q in sorted(names):
        kind, field = q.split(" ", 1)
        per_boot = []
        for name, runs, settings, ay, hi, _ in boots:
            src = "state" if kind == "STATE" else "result"
            if not any(field in r[src] for r in runs):
                per_boot.append(None)
                continue
            if kind == "STATE" and field.startswith("pre.") or kind == "STATE" and field.startswith("settle."):
                vals = [r[src].get(field) for r in runs]
                if any(v is None for v in vals):
                    per_boot.append(None)
                    continue
            else:
                vals = [r[src].get(field, 0.0) for r in runs]  # a change not printed is 0
            v = np.array(vals, float)
            c = centred(v, settings)
            if np.ptp(c) == 0:
                per_boot.append(None)
                continue
            per_boot.append((v, c, alt(c)))
        if sum(b is not None for b in per_boot) == 0:
            continue
        rows.append((q.split(" ", 1)[1] if kind == "STATE" else "RESULT " + field, per_boot))

    def pooled(per_boot, ays):
        xs = [b[2] for b in per_boot if b is not None]
        ys = [a for a, b in zip(ays, per_boot) if b is not None]
        return corr(np.concatenate(xs), np.concatenate(ys))

    ays = [b[3] for b in boots]
    observed = np.array([abs(pooled(pb, ays)) for _, pb in rows])
    rng = np.random.default_rng(51)
    null = np.empty((DRAWS, len(rows)))
    for d in range(DRAWS):
        rolled = [np.roll(a, rng.integers(1, len(a))) for a in ays]
        null[d] = [abs(pooled(pb, rolled)) for _, pb in rows]
    # Each quantity against its own rotations (its n and autocorrelation),
    # then familywise: how often the smallest such p of a draw is as small
    p_own = (1 + (null >= observed).sum(axis=0)) / (DRAWS + 1)
    p_null = (null[None, :, :] >= null[:, None, :]).sum(axis=1) / DRAWS  # [draw, q]
    min_null = p_null.min(axis=1)
    p_family = (1 + (min_null[:, None] <= p_own[None, :]).sum(axis=0)) / (DRAWS + 1)

    table = []
    for i, (q, pb) in enumerate(rows):
        r = pooled(pb, ays)
        n = sum(len(b[2]) for b in pb if b is not None)
        lo, up = fisher(r, n)

        def mean_where(sel):
            return np.concatenate([b[0][sel(bt)] for b, bt in zip(pb, boots) if b is not None]).mean()
        hm, lm = mean_where(lambda bt: bt[4]), mean_where(lambda bt: ~bt[4])
        p1, p2 = mean_where(lambda bt: bt[5] == 1), mean_where(lambda bt: bt[5] == 2)
        lag = np.mean([corr(b[1][:-1], b[1][1:]) for b in pb if b is not None])
        per = " ".join("    ." if b is None else f"{corr(b[2], a):+5.2f}" for b, a in zip(pb, ays))
        table.append((observed[i], q, r, lo, up, n, lag, hm, lm, p1, p2, per, p_own[i], p_family[i]))
    table.sort(key=lambda t: -t[0])

    def show(rows_):
        print(f"{'quantity':28} {'n':>3} {'mean H':>9} {'mean L':>9} {'pos 1':>9} {'pos 2':>9} "
              f"{'r_alt [95%]':>20} {'p_own':>5} {'p_fam':>5} {'lag1':>5}  r_alt per boot")
        for _, q, r, lo, up, n, lag, hm, lm, p1, p2, per, po, pf in rows_:
            print(f"{q:28} {n:3d} {hm:9.5g} {lm:9.5g} {p1:9.5g} {p2:9.5g} {r:+6.2f} [{lo:+.2f}, {up:+.2f}] "
                  f"{po:5.3f} {pf:5.3f} {lag:+5.2f}  {per}")
        print(f"(p_own, p_fam 0.000: below 1/{DRAWS})")

    print(f"\n{len(names)} quantities recorded; the {len(table)} that vary, the 15 that follow alt(y) most closely "
          "(|r_alt|)")
    show(table[:15])
    if shown is not None:
        print(f"\nEvery quantity whose name holds {shown!r}")
        show([t for t in table if shown in t[1]])
    print("\nThe 8 that alternate most themselves (lowest lag1)")
    show(sorted(table, key=lambda t: t[6])[:8])
    # At each change of the costly parity: how far each quantity's
    # run-to-run change (a gauge's difference, a change's value) around it
    # (the largest |z| of the 3 nearest, z within the boot) stands out
    changes = [(i, f) for i, (_, _, fl) in enumerate(phases) for f in fl]
    if changes:
        found = []
        for q, pb in rows:
            zs = []
            for bi, f in changes:
                if pb[bi] is None:
                    break
                v = pb[bi][0]
                dv = np.diff(v) if q.startswith("pre.") else v[1:]
                if dv.std() == 0:
                    zs.append(0.0)
                    continue
                z = (dv - dv.mean()) / dv.std()  # dv[k]: run k to run k + 1
                zs.append(max(abs(z[k]) for k in (f - 2, f - 1, f) if 0 <= k < len(z)))
            else:
                found.append((sum(z > 2 for z in zs), np.mean(zs), q, zs))
        found.sort(key=lambda t: (-t[0], -t[1]))
        print(f"\nAt the {len(changes)} changes of the costly parity: the run-to-run change "
              "of each quantity recorded in those boots, largest |z| of the 3 around each; "
              f"the 6 most often above 2 (of {len(found)})")
        for k, m, q, zs in found[:6]:
            print(f"{q:34} above 2 at {k} of {len(zs)}  " + " ".join(f"{z:.1f}" for z in zs))
    print(f"\nboots, in the per-boot columns: {', '.join(b[0] for b in boots)}; {DRAWS} rotations")


if __name__ == "__main__":
    main()
