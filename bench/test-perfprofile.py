#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench/perfprofile.py's checks, on inputs with known answers,
bench/bench's perf_fold (awk, in the guest) against its fold(), the
report's perf-profile rows (bench/report.py), and bench/bench's fold of
perf's lock contention events (lock_perf_fold, lock_perf_summary)"""

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import perfprofile as pp  # noqa: E402

_spec = importlib.util.spec_from_file_location("report", os.path.join(HERE, "report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

# perf script -F comm,ip,sym of a perf record -a -g, as perf 6.1 prints it
# (frames of a real 6.12 run; the last sample has no blank line after it)
SCRIPT = """\
usemem 
	ffffffff8223f0a1 _raw_spin_lock_irq
	ffffffff81651234 add_to_swap_cache
	ffffffff81650f00 add_to_swap
	ffffffff8160a3cc shrink_folio_list
	ffffffff8160b000 shrink_inactive_list
	ffffffff8160c000 shrink_lruvec

usemem 
	ffffffff8223f0a1 _raw_spin_lock_irq
	ffffffff81651234 add_to_swap_cache
	ffffffff81650f00 add_to_swap
	ffffffff8160a3cc shrink_folio_list
	ffffffff8160b000 shrink_inactive_list
	ffffffff8160c000 shrink_lruvec

kswapd0 
	ffffffff8223f200 _raw_spin_unlock_irqrestore
	ffffffff81612345 __remove_mapping
	ffffffff8160a3cc shrink_folio_list
	ffffffff8160b000 shrink_inactive_list

usemem 
	ffffffff81700000 xas_descend+0x2c
	ffffffff81700100 xas_load
	ffffffff81651300 swap_cache_get_folio
	ffffffff81607000 do_swap_page

usemem 
	ffffffff8223f0a1 _raw_spin_lock_irq
	ffffffff81640000 folio_lruvec_lock_irq
	ffffffff81641000 folio_batch_move_lru

swapper 
	ffffffff82200000 default_idle
	ffffffff82200100 default_idle_call
	ffffffff82200200 do_idle
	ffffffff82200300 cpu_startup_entry
	ffffffff82200400 start_secondary
	ffffffff82200500 common_startup_64

usemem 
	            2925 main
usemem 
	ffffffff81700000 xas_descend
	ffffffff81700200 xas_store
	ffffffff81651234 add_to_swap_cache
	ffffffff81650f00 add_to_swap"""


def bench_function(name):
    """The text of a bench/bench function between its "# NAME begin" and
    "# NAME end" markers"""
    with open(os.path.join(HERE, "bench")) as f:
        text = f.read()
    m = re.search(rf"# {name} begin\n(.*)# {name} end\n", text, re.S)
    if not m:
        raise AssertionError(f"bench/bench has no {name} between its markers")
    return m.group(1)


def bench_perf_fold():
    """bench/bench's perf_fold function's text"""
    return bench_function("perf_fold")


def bench_variable(name):
    """A NAME='...' or NAME="..." line's value in bench/bench, the
    $OTHER variables in it expanded"""
    with open(os.path.join(HERE, "bench")) as f:
        m = re.search(rf"^{name}=(['\"])(.*?)\1$", f.read(), re.M)
    if not m:
        raise AssertionError(f"bench/bench has no {name}=")
    if m.group(1) == "'":
        return m.group(2)
    return re.sub(r"\$([A-Z_]+)", lambda v: bench_variable(v.group(1)), m.group(2))


class Parse(unittest.TestCase):
    def test_every_sample_and_frame(self):
        samples = pp.parse_perf_script(SCRIPT)
        # one per header line, the last one too (no blank line after it)
        self.assertEqual(len(samples), 8)
        self.assertEqual(samples[0].comm, "usemem")
        self.assertEqual(samples[0].frames[:2], ("_raw_spin_lock_irq", "add_to_swap_cache"))
        self.assertEqual(len(samples[0].frames), 6)
        # the offset is not part of the symbol
        self.assertEqual(samples[3].frames[0], "xas_descend")
        # a sample straight after another, no blank line between
        self.assertEqual(samples[6].frames, ("main",))
        self.assertEqual(samples[7].frames,
                         ("xas_descend", "xas_store", "add_to_swap_cache", "add_to_swap"))

    def test_frame_outside_a_sample(self):
        with self.assertRaises(pp.ProfileError):
            pp.parse_perf_script("\tffffffff81000000 foo\n")

    def test_fold(self):
        prof = pp.fold(pp.parse_perf_script(SCRIPT))
        self.assertEqual(prof.samples, 8)
        self.assertEqual(sum(prof.chains.values()), 8)
        self.assertEqual(prof.chains[("_raw_spin_lock_irq", "add_to_swap_cache", "add_to_swap",
                                      "shrink_folio_list", "shrink_inactive_list")], 2)
        self.assertEqual(prof.chains[("xas_descend", "xas_store", "add_to_swap_cache",
                                      "add_to_swap")], 1)


class BenchFold(unittest.TestCase):
    def test_awk_agrees_with_fold(self):
        """bench/bench's perf_fold, in the guest, gives fold()'s chains"""
        out = subprocess.run(["sh", "-c", bench_perf_fold() + "perf_fold"], input=SCRIPT,
                             capture_output=True, text=True, check=True).stdout
        got = {tuple(c.split(";")): int(n) for n, c in (ln.split(" ", 1) for ln in out.splitlines())}
        self.assertEqual(got, dict(pp.fold(pp.parse_perf_script(SCRIPT)).chains))


def lines_of(prof, key=pp.RunKey("patched", "k", "0", "1", "swap-w-seq")):
    return pp.profile_lines(key, prof)


class Shares(unittest.TestCase):
    def setUp(self):
        self.prof = pp.fold(pp.parse_perf_script(SCRIPT))

    def test_lkp_rows(self):
        sh = pp.shares(self.prof)
        ct = "perf-profile.calltrace.cpu-clock-pp."
        self.assertAlmostEqual(sh[ct + "_raw_spin_lock_irq.add_to_swap_cache.add_to_swap."
                                  "shrink_folio_list.shrink_inactive_list"], 25.0)
        self.assertAlmostEqual(sh[ct + "_raw_spin_unlock_irqrestore.__remove_mapping."
                                  "shrink_folio_list.shrink_inactive_list"], 12.5)
        self.assertAlmostEqual(sh[ct + "xas_descend.xas_load.swap_cache_get_folio.do_swap_page"],
                               12.5)
        # every spin lock's chain (the frame-pointer unwinder can lose
        # a locker: perfprofile's docstring), nothing else's
        self.assertAlmostEqual(sh[ct + "_raw_spin_lock_irq.folio_lruvec_lock_irq."
                                  "folio_batch_move_lru"], 12.5)
        self.assertFalse(any("default_idle" in m for m in sh))
        self.assertFalse(any(m.startswith(ct + "main") for m in sh))
        # self: every sample whose leaf it is, whatever its callers
        self.assertAlmostEqual(sh["perf-profile.self.cpu-clock-pp._raw_spin_lock_irq"], 37.5)
        self.assertAlmostEqual(sh["perf-profile.self.cpu-clock-pp.xas_descend"], 25.0)
        self.assertNotIn("perf-profile.self.cpu-clock-pp.main", sh)

    def test_no_samples(self):
        self.assertEqual(pp.shares(pp.Profile()), {})


class Lines(unittest.TestCase):
    def test_round_trip(self):
        prof = pp.fold(pp.parse_perf_script(SCRIPT))
        profs = pp.parse_profile_lines(["noise", *lines_of(prof)])
        self.assertEqual(list(profs.values())[0], prof)

    def test_chains_must_add_up(self):
        lines = lines_of(pp.fold(pp.parse_perf_script(SCRIPT)))
        with self.assertRaisesRegex(pp.ProfileError, "add up to 7, not its 8"):
            pp.parse_profile_lines(lines[:-1])

    def test_malformed(self):
        with self.assertRaisesRegex(pp.ProfileError, "malformed"):
            pp.parse_profile_lines(["PROFILE patched k 0 1 swap-w-seq chain x"])
        with self.assertRaisesRegex(pp.ProfileError, "line 1"):
            pp.parse_profile_lines(["PROFILE patched k 0 1 swap-w-seq samples many"])


class Values(unittest.TestCase):
    def test_zero_where_a_run_lacks_a_row(self):
        a = pp.Profile(4, pp.Counter({("xas_descend", "xas_load"): 1, ("main",): 3}))
        b = pp.Profile(4, pp.Counter({("main",): 4}))
        c = pp.Profile(1000, pp.Counter({("xas_store",): 1, ("main",): 999}))
        profs = {pp.RunKey("patched", "k", "0", "1", "wl"): a,
                 pp.RunKey("patched", "k", "1", "1", "wl"): b,
                 pp.RunKey("patched", "k", "0", "2", "wl"): c}
        v = pp.result_values(profs, min_share=0.5)
        m = "perf-profile.self.cpu-clock-pp.xas_descend"
        self.assertEqual(v[("patched", "k", "0", "1", "wl", m)], 25.0)
        self.assertEqual(v[("patched", "k", "1", "1", "wl", m)], 0.0)
        self.assertEqual(v[("patched", "k", "0", "2", "wl", m)], 0.0)
        # 0.1% at most in any run: under min_share, no row
        self.assertFalse(any("xas_store" in k[5] for k in v))


class ReportPoints(unittest.TestCase):
    """A chain absent on one side has no ratio: the report prints B - A in
    percentage points with its t interval instead of n/a"""
    CHAIN = ("xas_descend", "xas_load", "swap_cache_get_folio", "do_swap_page")
    ROW = "perf-profile.calltrace.cpu-clock-pp." + ".".join(CHAIN)

    def run_report(self, b_hits):
        lines = []
        for pair, hits in enumerate(b_hits, 1):
            for side, chain_hits in (("0", 0), ("1", hits)):
                key = pp.RunKey("patched", "offset_key", side, str(pair), "swap-w-seq")
                chains = pp.Counter({("main",): 100 - chain_hits})
                if chain_hits:
                    chains[self.CHAIN] = chain_hits
                lines += pp.profile_lines(key, pp.Profile(100, chains))
                lines.append(f"RESULT patched offset_key {side} {pair} swap-w-seq throughput 1000")
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "results.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
            report.report(d)
            with open(os.path.join(d, "table.txt")) as f:
                return f.read()

    def test_absent_chain_in_points(self):
        # B - A per pair 2, 3, 4 points: mean 3, sd 1, t(0.975, 2) =
        # 4.302653 -> 3 -+ 4.302653 / sqrt(3) = [0.5159, 5.4841]
        table = self.run_report([2, 3, 4])
        row = [ln for ln in table.splitlines() if ln.endswith("swap-w-seq." + self.ROW)]
        self.assertEqual(len(row), 1, table)
        # in the interval column, where the ratio's interval would be
        self.assertRegex(row[0], r"%\s+\+3\.00pp \[\+0\.52, \+5\.48\]~ +3 ")

    def test_points_figures(self):
        d = report.pp_difference([0, 0, 0], [2, 3, 4])
        self.assertAlmostEqual(d["pp"], 3.0)
        self.assertAlmostEqual(d["pp_low"], 3 - 4.302653 / 3 ** 0.5, places=5)
        self.assertAlmostEqual(d["pp_high"], 3 + 4.302653 / 3 ** 0.5, places=5)
        # one pair: no interval
        self.assertEqual(report.fmt_pp(report.pp_difference([1.0], [0.5])), "-0.50pp [n<2]")


# perf script -F tid,time,event,trace,ip,sym --ns of perf record -e
# lock:contention_begin -e lock:contention_end -g, as perf 6.1 prints it:
# task 101 contends on the swap cache lock A from add_to_swap_cache for
# 2000 ns, then on B (another address) from __remove_mapping for 500 ns
# and begins on B again while waiting (one contention); task 102 on A
# from __remove_mapping for 1000 ns (A is the swap cache's: seen from
# add_to_swap_cache), and on C (a lru lock) for 300 ns; an end without
# its begin (before the window) counts nothing
LOCK_SCRIPT = """\
     102 100.000000500: lock:contention_end: 0xffff888000000aaa (ret=0)
     101 100.000001000: lock:contention_begin: 0xffff888000000aaa (flags=SPIN)
	ffffffff81100000 queued_spin_lock_slowpath+0x40
	ffffffff82200000 _raw_spin_lock_irq+0x2e
	ffffffff81651234 add_to_swap_cache+0x1a4
	ffffffff81650f00 add_to_swap+0x50

     101 100.000003000: lock:contention_end: 0xffff888000000aaa (ret=0)
     102 100.000004000: lock:contention_begin: 0xffff888000000aaa (flags=SPIN)
	ffffffff81100000 queued_spin_lock_slowpath+0x40
	ffffffff82200000 _raw_spin_lock_irq+0x2e
	ffffffff81612345 __remove_mapping+0x90

     102 100.000005000: lock:contention_end: 0xffff888000000aaa (ret=0)
     101 100.000006000: lock:contention_begin: 0xffff888000000bbb (flags=SPIN)
	ffffffff81100000 queued_spin_lock_slowpath+0x40
	ffffffff81100100 do_raw_spin_lock+0x80
	ffffffff82200100 _raw_spin_lock_irqsave+0x3e
	ffffffff81612345 __remove_mapping+0x90

     101 100.000006200: lock:contention_begin: 0xffff888000000bbb (flags=SPIN)
	ffffffff81100000 queued_spin_lock_slowpath+0x40
	ffffffff81612345 __remove_mapping+0x90

     101 100.000006500: lock:contention_end: 0xffff888000000bbb (ret=0)
     102 100.000007000: lock:contention_begin: 0xffff888000000ccc (flags=SPIN)
	ffffffff81100000 queued_spin_lock_slowpath+0x40
	ffffffff82200000 _raw_spin_lock_irq+0x2e
	ffffffff81640000 folio_lruvec_lock_irq+0x20
	ffffffff81641000 folio_batch_move_lru+0x80

     102 100.000007300: lock:contention_end: 0xffff888000000ccc (ret=0)
"""


class LockFold(unittest.TestCase):
    def run_bench(self, function, text):
        env = dict(os.environ)
        for v in ("LOCK_FUNCS", "SWAPCACHE_ONLY", "SWAPCACHE_LOCKERS"):
            env[v] = bench_variable(v)
        return subprocess.run(["sh", "-c", bench_function(function) + function], input=text, env=env,
                              capture_output=True, text=True, check=True).stdout

    def test_fold(self):
        got = sorted(self.run_bench("lock_perf_fold", LOCK_SCRIPT).splitlines())
        self.assertEqual(got, sorted([
            "caller add_to_swap_cache 1 2000 0xffff888000000aaa",
            "caller __remove_mapping 1 1000 0xffff888000000aaa",
            "caller __remove_mapping 1 500 0xffff888000000bbb",
            "caller folio_lruvec_lock_irq 1 300 0xffff888000000ccc"]))

    def test_summary(self):
        fold = self.run_bench("lock_perf_fold", LOCK_SCRIPT)
        got = self.run_bench("lock_perf_summary", fold).splitlines()
        # all: 4 contentions, 3800 ns; the swap cache lock (A): 2, 3000 ns
        self.assertEqual(got[:2], ["all 4 3.80", "swapcache 2 3.00"])
        self.assertEqual(sorted(got[2:]), ["point __remove_mapping 1", "point add_to_swap_cache 1"])

    def test_no_events(self):
        self.assertEqual(self.run_bench("lock_perf_fold", ""), "")
        self.assertEqual(self.run_bench("lock_perf_summary", "").splitlines(),
                         ["all 0 0.00", "swapcache 0 0.00"])


def lock_pass_lines(perf_control=(4000, 900.0), short_pair=None):
    """A lock pass with both counters: skip_wb_tags pairs 1-4 and A/A pairs,
    lock_stat's swap cache contentions 100 (A) and 60 (B) per run, perf's
    a fifth of them; short_pair: that pair's B run swapped out 40% less"""
    lines = ["RESULT locks locktorture control 1 spin_lock lock.seconds 10",
             "RESULT locks locktorture control 1 spin_lock lock.cpus 3",
             "RESULT locks locktorture control 1 spin_lock lock.writers 3",
             "RESULT locks locktorture control 1 spin_lock lock.contentions 500000",
             "RESULT locks locktorture control 1 spin_lock lock.wait_us 800000",
             "RESULT locks locktorture control 1 spin_lock lock.acquisitions 900000",
             "RESULT locks locktorture control 1 spin_lock lockperf.seconds 2",
             f"RESULT locks locktorture control 1 spin_lock lockperf.contentions {perf_control[0]}",
             f"RESULT locks locktorture control 1 spin_lock lockperf.wait_us {perf_control[1]}"]
    for knob, sides in (("skip_wb_tags", ("0", "1")), ("aa", ("a1", "a2"))):
        for pair in range(1, 5):
            for side in sides:
                lk = 100 + pair if side in ("0", "a1", "a2") else 60 + pair
                if knob == "aa":
                    lk = 80 + pair + (side == "a2")
                pages = 36000 if (knob, side, pair) == short_pair else 60000
                pf = lk / 5
                r = f"RESULT locks {knob} {side} {pair} swap-w-seq"
                lines += [f"PLAN locks {knob} {side} {pair} swap-w-seq",
                          f"{r} vmstat.pswpout {pages}", f"{r} lock.window_cpus 3",
                          f"{r} lock.swapcache_contentions {lk}",
                          f"{r} lock.swapcache_contentions_per_kpage {lk * 1000 / pages:.3f}",
                          f"{r} lock.swapcache_wait_share_pct {lk / 1000:.4f}",
                          f"{r} lockperf.swapcache_contentions {pf}",
                          f"{r} lockperf.swapcache_contentions_per_kpage {pf * 1000 / pages:.3f}",
                          f"{r} lockperf.swapcache_wait_share_pct {pf / 1000:.4f}"]
    return lines


class LockReport(unittest.TestCase):
    """The lock pass in the report: both counters, their agreement on the
    same runs, the control in each, the runs whose swap-out deviates"""

    def run_report(self, lines):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "results.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
            _, failures = report.report(d)
            rc = 1 if failures else 0
            with open(os.path.join(d, "table.txt")) as f:
                return rc, f.read()

    def test_both_counters_and_agreement(self):
        rc, table = self.run_report(lock_pass_lines())
        lines = table.splitlines()
        self.assertIn("control locktorture (perf lock): spin_lock, 3 writers, 2 s on 3 CPUs: "
                      "contentions 4000, wait 900 us => the counters see contention", lines)
        self.assertTrue(any(ln.startswith("locks skip_wb_tags: swap-w-seq contentions/1000 pages 1.71 -> 1.04")
                            for ln in lines), table)
        self.assertTrue(any(ln.startswith("locks skip_wb_tags (perf lock): swap-w-seq contentions/1000 pages "
                                          "0.34 -> 0.21") for ln in lines), table)
        # 16 runs with both, perf's a fifth of lock_stat's in each: the
        # counts rank alike (rho 1), every ratio 0.2
        agree = [ln for ln in lines if ln.startswith("agreement: ")]
        self.assertEqual(len(agree), 1, table)
        self.assertIn("on the same 16 runs", agree[0])
        self.assertIn("Spearman rho 1.00", agree[0])
        self.assertIn("per run median 0.200 [0.200, 0.200]", agree[0])
        self.assertFalse(any(ln.startswith("flagged") for ln in lines), table)

    def test_control_reading_zero_in_perf_fails(self):
        """perf's counter reading 0 on the control fails the report, even
        where lock_stat saw contention (a spin lock at 2 CPUs)"""
        rc, table = self.run_report(lock_pass_lines(perf_control=(0, 0)))
        self.assertIn("control locktorture (perf lock): spin_lock, 3 writers, 2 s on 3 CPUs: contentions 0, "
                      "wait 0 us => NO CONTENTION: the pass cannot see any", table.splitlines())
        self.assertNotEqual(rc, 0)
        self.assertFalse(report.control_contends(
            {"lock.contentions": 5, "lock.wait_us": 1.0, "lockperf.contentions": 0, "lockperf.wait_us": 0}))
        self.assertTrue(report.control_contends(
            {"lock.contentions": 5, "lock.wait_us": 1.0, "lockperf.contentions": 3, "lockperf.wait_us": 2.0}))

    def test_deviating_swapout_flagged(self):
        rc, table = self.run_report(lock_pass_lines(short_pair=("skip_wb_tags", "1", 2)))
        lines = table.splitlines()
        self.assertIn("flagged skip_wb_tags=1 pair 2 swap-w-seq: pswpout 36000 (median 60000, -40.0%)", lines)
        # the knob again without pair 2, in each counter
        again = [ln for ln in lines if ln.startswith("without flagged pairs: locks skip_wb_tags")]
        self.assertEqual(len(again), 2, table)
        self.assertIn("n=3", again[0])


if __name__ == "__main__":
    unittest.main()
