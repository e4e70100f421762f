#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make report [RESULTS=dir]: the tables, CSV, JSON and plots of results
# folders, from their raw lines (results.txt, or results.txt.gz in a
# committed run folder) and provenance.json, with bench/report.py; plots
# with gnuplot where it is installed.  Without RESULTS: bench/results and
# every folder under it with raw lines.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dirs=("$@")
if [ ${#dirs[@]} = 0 ]; then
	for d in "$top/bench/results" "$top"/bench/results/*/; do
		d=${d%/}
		[ -e "$d/results.txt" ] || [ -e "$d/results.txt.gz" ] && dirs+=("$d")
	done
fi
rc=0
for d in "${dirs[@]}"; do
	[ -e "$d/results.txt" ] || [ -e "$d/results.txt.gz" ] || {
		echo "make report: $d has no results.txt or results.txt.gz" >&2
		rc=1
		continue
	}
	echo "== $d"
	"$top/bench/report.py" "$d" >/dev/null || rc=1
	grep -E '^(verdict|fidelity) ' "$d/table.txt" || true
	runs=$(python3 -c 'import json, sys
try: print(json.load(open(sys.argv[1]))["profile"]["RUNS"])
except Exception: print("?")' "$d/provenance.json" 2>/dev/null || echo '?')
	for dat in "$d"/*.dat; do
		[ -e "$dat" ] || continue
		name=$(basename "$dat" .dat)
		if command -v gnuplot >/dev/null; then
			gnuplot -e "dat='$dat'; png='$d/$name.png'; title='$name: paired change per pair (RUNS=$runs)'" \
				"$top/bench/plot.gp"
		fi
		rm -f "$dat"
	done
done
exit $rc
