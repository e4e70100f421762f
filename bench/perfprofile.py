#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""perf's call chains in LKP's perf-profile form (issue 52).

bench/bench records each measured window with `perf record -a -g` and
folds `perf script -F comm,ip,sym`'s samples, in the guest, into PROFILE
lines (its perf_fold; fold() below is the same reduction, and
test-perfprofile.py checks that the two agree on one input):

  PROFILE <kernel> <knob> <side> <pair> <workload> samples <N>
  PROFILE <kernel> <knob> <side> <pair> <workload> chain <count> <f0;f1;...>

a chain being a sample's first DEPTH frames, callee first, as the seeds'
`perf-profile.calltrace.cycles-pp._raw_spin_lock_irq.__add_to_swap_cache.
add_to_swap_cache.add_to_swap.shrink_page_list` names them (the lock, then
its callers).  From them, per run, in percent of the run's samples:

  perf-profile.calltrace.<event>-pp.<f0>.<f1>...  the samples whose first
      frames are that chain, for the chains whose leaf is a swap cache,
      xarray, spin lock or swap cache locker function (every spin lock
      chain: see below);
  perf-profile.self.<event>-pp.<sym>  the samples whose leaf is <sym>, for
      the same functions.

The kernel's frame-pointer unwinder loses the caller of a function that
had not set up its frame when sampled: the spin lock and unlock fast
paths never do (the sample after unlock_irq's sti reads
`_raw_spin_unlock_irq.add_to_swap.shrink_folio_list...`, add_to_swap_cache
missing), so a lock's locker cannot be told from its chain: every spin
lock chain is kept, as it reads.  And cpu-clock's timer interrupt cannot
land while interrupts are off: a section under spin_lock_irq is counted
at the unlock that enables them (the seeds' cycles-pp came from the
PMU's NMI, which can).

<event> is what was sampled (cpu-clock in the VM: under -icount, every so
many guest instructions; no PMU under TCG).  A row is kept where some run
of that kernel and workload reaches MIN_SHARE; a run with a profile that
lacks it has 0 there, so that every pair is compared.
"""

import sys
from collections import Counter
from dataclasses import dataclass, field

DEPTH = 5
EVENT = "cpu-clock"
MIN_SHARE = 0.1     # percent of a run's samples
PREFIX = "perf-profile."

# The swap cache's functions (6.1 and 6.12 names) and the hooks' own
SWAPCACHE = frozenset({
    "add_to_swap_cache", "__add_to_swap_cache", "__delete_from_swap_cache",
    "delete_from_swap_cache", "clear_shadow_from_swap_cache",
    "swap_cache_get_folio", "lookup_swap_cache", "__read_swap_cache_async",
    "add_to_swap", "swap_cache_index", "tag_writeback", "keep_after_cow",
    "old_policy_applies",
})
XARRAY = frozenset({
    "xas_descend", "xas_load", "xas_store", "xas_start", "xas_create",
    "xas_find", "xas_find_marked", "xas_set_mark", "xas_clear_mark",
    "xas_init_marks", "xa_get_order", "xas_split", "xas_split_alloc",
})
LOCKS = frozenset({
    "_raw_spin_lock", "_raw_spin_lock_irq", "_raw_spin_lock_irqsave",
    "_raw_spin_unlock", "_raw_spin_unlock_irq", "_raw_spin_unlock_irqrestore",
    "native_queued_spin_lock_slowpath", "queued_spin_lock_slowpath",
})
# Who takes the swap cache's lock (the xarray's xa_lock)
LOCKERS = frozenset({
    "add_to_swap_cache", "__add_to_swap_cache", "__delete_from_swap_cache",
    "delete_from_swap_cache", "clear_shadow_from_swap_cache", "__remove_mapping",
    "__folio_start_writeback", "__folio_end_writeback", "__test_set_page_writeback",
    "test_clear_page_writeback", "folio_end_writeback", "tag_writeback",
    "__folio_migrate_mapping", "folio_migrate_mapping", "__split_huge_page",
    "split_huge_page_to_list_to_order",
})
SELF = SWAPCACHE | XARRAY | LOCKS | LOCKERS


class ProfileError(ValueError):
    pass


@dataclass(frozen=True)
class Sample:
    comm: str
    frames: tuple      # symbols, callee first


@dataclass(frozen=True)
class RunKey:
    kernel: str
    knob: str
    side: str
    pair: str
    workload: str


@dataclass
class Profile:
    samples: int = 0
    chains: Counter = field(default_factory=Counter)   # {(f0, f1, ...): count}


def parse_perf_script(text):
    """Samples from `perf script -F comm,ip,sym` (with -g): a header line
    (the command), then one frame a line, indented, "<ip> <sym>", a blank
    line after each sample"""
    samples, comm, frames = [], None, []
    for line in text.splitlines():
        if not line.strip():
            if comm is not None:
                samples.append(Sample(comm, tuple(frames)))
            comm, frames = None, []
        elif line[0] in " \t":
            if comm is None:
                raise ProfileError(f"a frame outside a sample: {line.strip()}")
            parts = line.split()
            sym = parts[1] if len(parts) > 1 else "[unknown]"
            frames.append(sym.split("+0x")[0])
        else:
            if comm is not None:
                samples.append(Sample(comm, tuple(frames)))
            comm, frames = line.strip(), []
    if comm is not None:
        samples.append(Sample(comm, tuple(frames)))
    return samples


def fold(samples, depth=DEPTH):
    """A Profile: every sample counted, by its first `depth` frames"""
    prof = Profile()
    for s in samples:
        prof.samples += 1
        prof.chains[s.frames[:depth] or ("[none]",)] += 1
    return prof


def profile_lines(key, prof):
    """The PROFILE lines bench/bench prints for one run"""
    head = f"PROFILE {key.kernel} {key.knob} {key.side} {key.pair} {key.workload}"
    out = [f"{head} samples {prof.samples}"]
    for chain, n in sorted(prof.chains.items(), key=lambda x: (-x[1], x[0])):
        out.append(f"{head} chain {n} {';'.join(chain)}")
    return out


def parse_profile_lines(lines):
    """{RunKey: Profile} from PROFILE lines (others ignored); a run's
    chains must add up to its samples"""
    profs, errors = {}, []
    for lineno, line in enumerate(lines, 1):
        parts = line.split()
        if not parts or parts[0] != "PROFILE":
            continue
        key = RunKey(*parts[1:6]) if len(parts) >= 6 else None
        try:
            if len(parts) == 8 and parts[6] == "samples":
                prof = profs.setdefault(key, Profile())
                if prof.samples:
                    raise ValueError("samples twice")
                prof.samples = int(parts[7])
            elif len(parts) == 9 and parts[6] == "chain":
                chain = tuple(parts[8].split(";"))
                prof = profs.setdefault(key, Profile())
                if chain in prof.chains:
                    raise ValueError("chain twice")
                prof.chains[chain] = int(parts[7])
            else:
                raise ValueError("malformed")
        except ValueError as e:
            errors.append(f"line {lineno}: {e}: {line.strip()}")
    for key, prof in profs.items():
        if sum(prof.chains.values()) != prof.samples:
            errors.append(f"PROFILE {' '.join(vars(key).values())}: chains add up to "
                          f"{sum(prof.chains.values())}, not its {prof.samples} samples")
    if errors:
        raise ProfileError("\n".join(errors))
    return profs


def of_interest(chain):
    """A calltrace row's chain: one of the functions of SELF at the leaf"""
    return chain[0] in SELF


def shares(prof, event=EVENT):
    """{metric: percent of the run's samples} for one run"""
    out = {}
    if not prof.samples:
        return out
    self_n = Counter()
    for chain, n in prof.chains.items():
        if chain[0] in SELF:
            self_n[chain[0]] += n
        if of_interest(chain):
            name = f"{PREFIX}calltrace.{event}-pp.{'.'.join(chain)}"
            out[name] = out.get(name, 0.0) + 100.0 * n / prof.samples
    for sym, n in self_n.items():
        out[f"{PREFIX}self.{event}-pp.{sym}"] = 100.0 * n / prof.samples
    return out


def result_values(profs, event=EVENT, min_share=MIN_SHARE):
    """{(kernel, knob, side, pair, workload, metric): percent}, report.py's
    values: a metric is kept where some run of its kernel and workload
    reaches min_share, and is 0 in that group's other profiled runs"""
    per_run = {key: shares(prof, event) for key, prof in profs.items() if prof.samples}
    groups = {}
    for key, sh in per_run.items():
        g = groups.setdefault((key.kernel, key.workload), {})
        for metric, x in sh.items():
            g[metric] = max(g.get(metric, 0.0), x)
    values = {}
    for key, sh in per_run.items():
        for metric, top in groups[(key.kernel, key.workload)].items():
            if top >= min_share:
                values[(key.kernel, key.knob, key.side, key.pair, key.workload, metric)] = \
                    round(sh.get(metric, 0.0), 4)
    return values


def main(argv):
    """fold KERNEL KNOB SIDE PAIR WORKLOAD < perf-script output: the PROFILE
    lines; values < results.txt: the RESULT lines the PROFILE lines give"""
    if len(argv) == 7 and argv[1] == "fold":
        print("\n".join(profile_lines(RunKey(*argv[2:7]), fold(parse_perf_script(sys.stdin.read())))))
    elif len(argv) == 2 and argv[1] == "values":
        for key, x in sorted(result_values(parse_profile_lines(sys.stdin)).items()):
            print("RESULT", *key, x)
    else:
        sys.exit("usage: perfprofile.py fold KERNEL KNOB SIDE PAIR WORKLOAD < perf-script.txt\n"
                 "       perfprofile.py values < results.txt")


if __name__ == "__main__":
    main(sys.argv)
