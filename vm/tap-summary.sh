#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# TAP totals over the host checks and the kselftest output of the VM: each
# subtest line counts once; a test program that failed as a whole ("not ok"
# at the top level) counts as one more failure.  Prints the totals and a
# final "N passed, N failed"; exits non-zero unless all passed.
#
# Usage: vm/tap-summary.sh HOST.tap KSELFTEST_OUTPUT
host=$1 vm=$2
awk '
FILENAME == ARGV[1] && /^ok /      { host_ok++ }
FILENAME == ARGV[1] && /^not ok /  { host_fail++ }
FILENAME == ARGV[2] && /^# ok [0-9]/ {
	if (/# SKIP/) skip++; else sub_ok++
}
FILENAME == ARGV[2] && /^# not ok [0-9]/ { sub_fail++ }
FILENAME == ARGV[2] && /^not ok [0-9]/   { prog_fail++ }
FILENAME == ARGV[2] && /^ok [0-9]/       { prog_ok++ }
END {
	passed = host_ok + sub_ok
	failed = host_fail + sub_fail + prog_fail
	printf "TAP totals: host checks %d ok, %d not ok; VM selftests %d programs ok, %d not ok; subtests %d ok, %d not ok, %d skipped\n",
		host_ok, host_fail, prog_ok, prog_fail, sub_ok, sub_fail, skip
	printf "%d passed, %d failed, %d skipped\n", passed, failed, skip
	exit (failed > 0 || sub_ok == 0) ? 1 : 0
}' "$host" "$vm"
