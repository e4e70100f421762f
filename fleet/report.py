#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""One report over a fleet's A/B runs, with bench/report.py's statistics.

Usage: fleet/report.py RESULTS_DIR < summary.json

summary.json (fleet/site.yml makes it from the output each host left in
RESULTS_DIR/<host>/bench.out): {host: {"results": bench/bench's output on
that host, "left_out": why the host took no part, or ""}}.  It is kept as
RESULTS_DIR/summary.json, so that the report can be made again offline:
fleet/report.py RESULTS_DIR < RESULTS_DIR/summary.json.

Writes RESULTS_DIR/results.txt: each host's lines under its own kernel
label (the host name, as site.yml runs bench/bench), then the same lines
again under the label "pooled" with each pair renamed <host>.<pair>, so
that every pooled pair is still one host's A and B; then bench/report.py
makes the tables, one set per host and one pooled (RESULTS_DIR/table.txt).
Prints them, then each host left out and why.  Exit 1 if no host has
results, or if bench/report.py finds a failed or malformed measurement.
"""
import importlib.util
import json
import os
import re
import sys

POOLED = "pooled"
TERMINAL_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def load_ab_report():
    """bench/report.py: ../bench/ in the repository, beside this file where
    swapcache-ab-bench installs both (/usr/libexec/swapcache-ab/)."""
    here = os.path.dirname(os.path.realpath(__file__))
    path = next((p for p in (os.path.join(here, "..", "bench", "report.py"), os.path.join(here, "report.py"))
                 if os.path.isfile(p)), None)
    if path is None:
        sys.exit(f"fleet/report.py: no bench/report.py beside {here}")
    # No __pycache__ in the repository or under /usr
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location("ab_report", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pooled_line(host, line):
    """bench/bench's line relabelled into the pooled set, or None."""
    parts = line.split()
    if len(parts) < 6 or parts[0] not in ("PLAN", "RESULT", "FAILED"):
        return None
    parts[1] = POOLED
    parts[4] = f"{host}.{parts[4]}"
    return " ".join(parts)


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} RESULTS_DIR < summary.json")
    outdir = sys.argv[1]
    summary = json.load(sys.stdin)
    taking_part = {h: s["results"] for h, s in sorted(summary.items()) if s.get("results")}
    # A reason may quote a host's coloured output
    left_out = {h: TERMINAL_COLOUR.sub("", s.get("left_out") or "")
                or "unreachable, or failed outside the checks (see the play)"
                for h, s in sorted(summary.items()) if not s.get("results")}

    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    lines = []
    for host, text in taking_part.items():
        lines += text.splitlines()
    for host, text in taking_part.items():
        lines += [p for p in (pooled_line(host, line) for line in text.splitlines()) if p]
    with open(os.path.join(outdir, "results.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(outdir, "provenance.json"), "w") as f:
        json.dump({"hosts": sorted(taking_part), "left_out": left_out,
                   "kernel_version": os.environ.get("KVER", "6.12")}, f, indent=1)

    rc = 0
    if taking_part:
        ab_report = load_ab_report()
        try:
            out, failures = ab_report.report(outdir)
        except (ab_report.ReportError, OSError) as e:
            out, failures = f"report: {e}\n", ["report"]
        sys.stdout.write(out)
        rc = 1 if failures else 0
    else:
        print("no host ran the A/B")
        rc = 1
    print(f"hosts taking part: {len(taking_part)} ({' '.join(taking_part) or 'none'})")
    for host, why in left_out.items():
        print(f"left out: {host}: {why}")
    sys.exit(rc)


if __name__ == "__main__":
    main()
