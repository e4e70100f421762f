#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""TAP totals of a make check run, gated by vm/expected-results.

Reads the host checks (TAP lines of their own) and the kselftest output the
VM brought back, and holds the latter to the manifest: every program the
profile lists must have run, with the plan the manifest gives, reported
every subtest of that plan, and passed; a skip of a program or a subtest
fails unless the manifest allows it; a program the manifest does not list
fails too.  Prints a line per program, the totals and a final
"N passed, N failed, N skipped", and exits non-zero unless nothing failed.

The one reader of the manifest: the scripts ask it what a profile runs.

Usage: vm/tap-summary.py HOST_TAP VM_OUTPUT PROFILE [PROGRAM,...]
  PROGRAM,...: only these were asked for (VM_TESTS); default all
       vm/tap-summary.py --programs PROFILE [PROGRAM,...]
  the profile's programs (those of them asked for), in the manifest's
  order, a line each: "PROGRAM TIMEOUT"
       vm/tap-summary.py --listed PROFILE
  every program the manifest names for the profile, those it does not run
  there included, a line each
       vm/tap-summary.py --timeout PROFILE [PROGRAM,...]
  the sum of their timeouts, in seconds
       vm/tap-summary.py --totals LOG
  the last "N passed, N failed, N skipped" line of a run's output (exit 1
  where there is none)
       vm/tap-summary.py --sum
  the sum of the totals lines on standard input, as one such line
"""
import os
import re
import sys

MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'expected-results')

HEADER = re.compile(r'^# selftests: swapcache_ab: (\S+)$')
VERDICT = re.compile(r'^(not )?ok \d+ selftests: swapcache_ab: (\S+)(.*)$')
PLAN = re.compile(r'^# 1\.\.(\d+)(.*)$')
SUBTEST = re.compile(r'^# (not )?ok (\d+)(?:\s+(.*))?$')
# PROFILE PROGRAM PLAN TIMEOUT [skip=N REASON...], spaces only
MANIFEST_LINE = re.compile(r'^(\S+) +(\S+) +(\d+) +(\d+)(?: +skip=(\d+) +(\S.*))? *$')
# PROFILE PROGRAM not-run REASON...: built, but not for this profile
NOT_RUN_LINE = re.compile(r'^(\S+) +(\S+) +not-run +(\S.*)$')
# The totals a run ends with (and make check's over every kernel)
TOTALS = re.compile(r'^(\d+) passed, (\d+) failed, (\d+) skipped$')


def totals_line(passed, failed, skipped):
    return f'{passed} passed, {failed} failed, {skipped} skipped'


def last_totals(path):
    found = None
    with open(path, errors='replace') as f:
        for line in f:
            if TOTALS.match(line.rstrip('\n')):
                found = line.rstrip('\n')
    return found


def sum_totals(lines):
    sums = [0, 0, 0]
    for n, line in enumerate(lines, 1):
        m = TOTALS.match(line.rstrip('\n'))
        if not m:
            sys.exit(f'--sum: line {n} is not "N passed, N failed, N skipped": {line!r}')
        sums = [s + int(x) for s, x in zip(sums, m.groups())]
    return totals_line(*sums)


class Expected:
    def __init__(self, plan, timeout, skips=0, reason=''):
        self.plan, self.timeout, self.skips, self.reason = plan, timeout, skips, reason


def read_manifest(profile, not_run=None):
    """The programs @profile runs; those it names as not run there go into
    the dict @not_run, with their reasons"""
    expected = {}
    with open(MANIFEST) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line.strip() or line.startswith('#'):
                continue
            m = NOT_RUN_LINE.match(line)
            if m:
                if m.group(1) == profile and not_run is not None:
                    not_run[m.group(2)] = m.group(3)
                continue
            m = MANIFEST_LINE.match(line)
            if not m:
                sys.exit(f'{MANIFEST}:{n}: want "PROFILE PROGRAM PLAN TIMEOUT '
                         f'[skip=N REASON]" or "PROFILE PROGRAM not-run REASON", '
                         f'separated by spaces')
            if m.group(1) != profile:
                continue
            exp = Expected(int(m.group(3)), int(m.group(4)))
            if m.group(5):
                exp.skips, exp.reason = int(m.group(5)), m.group(6)
            expected[m.group(2)] = exp
    if not expected:
        sys.exit(f'{MANIFEST}: no program listed for profile {profile}')
    return expected


class Program:
    def __init__(self):
        self.plan = None          # the program's own "1..N"
        self.numbers = []         # the subtest numbers it reported
        self.passed = self.failed = self.skipped = 0
        self.verdict = None       # 'ok', 'not ok'
        self.note = ''            # what followed the runner's verdict
        self.program_skip = False
        self.warnings = []        # the runner's, e.g. a missing file


def parse_vm(path):
    programs, current = {}, None
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = HEADER.match(line)
            if m:
                current = programs.setdefault(m.group(1), Program())
                continue
            m = VERDICT.match(line)
            if m:
                prog = programs.setdefault(m.group(2), Program())
                prog.verdict = 'not ok' if m.group(1) else 'ok'
                prog.note = m.group(3).strip()
                if '# SKIP' in prog.note:
                    prog.program_skip = True
                current = None
                continue
            if current is None:
                continue
            if line.startswith('# Warning: '):
                current.warnings.append(line[len('# Warning: '):])
                continue
            m = PLAN.match(line)
            if m and current.plan is None:
                current.plan = int(m.group(1))
                if '# SKIP' in m.group(2):
                    current.program_skip = True
                continue
            m = SUBTEST.match(line)
            if m:
                current.numbers.append(int(m.group(2)))
                if m.group(1):
                    current.failed += 1
                elif re.search(r'#\s*SKIP', m.group(3) or '', re.I):
                    current.skipped += 1
                else:
                    current.passed += 1
    return programs


def compress(numbers):
    """'1-3,5,5' for [1, 2, 3, 5, 5], in the order reported"""
    out, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 < len(numbers) and numbers[i + 1] == n + 1:
            continue
        out.append(f'{start}-{n}' if n != start else f'{n}')
        start = None
    return ','.join(out)


def asked_programs(profile, asked):
    """The manifest's programs for @profile, of those in @asked ('a,b';
    empty: all), in its order"""
    expected = read_manifest(profile)
    names = [p for p in asked.split(',') if p]
    return {p: e for p, e in expected.items() if not names or p in names}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--totals':
        line = last_totals(sys.argv[2])
        if line is None:
            return 1
        print(line)
        return 0
    if len(sys.argv) == 2 and sys.argv[1] == '--sum':
        print(sum_totals(sys.stdin))
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == '--listed':
        not_run = {}
        for name in list(read_manifest(sys.argv[2], not_run)) + list(not_run):
            print(name)
        return 0
    if len(sys.argv) in (3, 4) and sys.argv[1] in ('--programs', '--timeout'):
        programs = asked_programs(sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else '')
        if sys.argv[1] == '--programs':
            for name, exp in programs.items():
                print(name, exp.timeout)
        else:
            print(sum(exp.timeout for exp in programs.values()))
        return 0
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    host_path, vm_path, profile = sys.argv[1:4]
    not_run = {}
    expected = read_manifest(profile, not_run)
    if len(sys.argv) == 5 and sys.argv[4]:
        asked = [p for p in sys.argv[4].split(',') if p]
        unknown = [p for p in asked if p not in expected]
        if unknown:
            sys.exit(f'not in {MANIFEST} for {profile}: {", ".join(unknown)}')
        expected = {p: e for p, e in expected.items() if p in asked}

    host_ok = host_fail = 0
    with open(host_path) as f:
        for line in f:
            if line.startswith('ok '):
                host_ok += 1
            elif line.startswith('not ok '):
                host_fail += 1

    programs = parse_vm(vm_path) if os.path.exists(vm_path) else {}
    passed, failed, skipped = host_ok, host_fail, 0
    allowed_skips = []
    vm_ok = 0
    for name in list(expected) + [p for p in programs if p not in expected]:
        exp, prog = expected.get(name), programs.get(name)
        problems = []
        if exp is None and name in not_run:
            problems.append(f'ran, but {os.path.basename(MANIFEST)} says it does not run '
                            f'for {profile} ({not_run[name]})')
        elif exp is None:
            problems.append(f'ran, but {os.path.basename(MANIFEST)} does not list it for {profile}')
        elif prog is None or prog.verdict is None:
            problems.append('did not run to a verdict' if prog else 'did not run')
        if prog is not None:
            if prog.verdict == 'not ok':
                why = '; '.join(prog.warnings) or prog.note or 'no reason given'
                problems.append(f'failed as a whole ({why})')
            if prog.program_skip:
                problems.append('skipped as a whole')
            reported = prog.passed + prog.failed + prog.skipped
            if exp and prog.plan is None and not prog.program_skip:
                problems.append(f'printed no plan, the manifest says {exp.plan}')
            elif exp and prog.plan != exp.plan and not prog.program_skip:
                problems.append(f'planned {prog.plan}, the manifest says {exp.plan}')
            if exp and prog.plan is not None and reported < prog.plan:
                problems.append(f'reported {reported} of its {prog.plan} subtests')
            elif prog.plan is not None and sorted(prog.numbers) != list(range(1, prog.plan + 1)):
                problems.append(f'reported subtests {compress(prog.numbers)}, '
                                f'not each of 1..{prog.plan} once')
            if prog.skipped:
                allowed = exp.skips if exp else 0
                if prog.skipped > allowed:
                    problems.append(f'{prog.skipped} subtests skipped, {allowed} allowed')
                else:
                    allowed_skips.append(f'{name}: {prog.skipped} skipped ({exp.reason})')
            passed += prog.passed
            failed += prog.failed
            skipped += prog.skipped
        # Each failed subtest is counted above; any problem of the
        # program as a whole is one more failure
        if problems:
            failed += 1
        if prog is not None and prog.failed:
            problems.append(f'{prog.failed} subtests failed')
        if problems:
            print(f'not ok - {name}: ' + '; '.join(problems))
        else:
            vm_ok += 1
            print(f'ok - {name}: {prog.passed} of {exp.plan} subtests passed')

    nprog = len(expected)
    print(f'TAP totals: host checks {host_ok} ok, {host_fail} not ok; '
          f'VM selftests ({profile} profile): {vm_ok} of {nprog} programs ok, '
          f'subtests {passed - host_ok} ok, {skipped} skipped; '
          f'{failed - host_fail} VM failures (subtests not ok; programs '
          f'missing, killed, skipped or short of their plan)')
    for line in allowed_skips:
        print(f'allowed skip: {line}')
    print(totals_line(passed, failed, skipped))
    return 1 if failed or passed == host_ok else 0


if __name__ == '__main__':
    sys.exit(main())
