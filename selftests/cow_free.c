// SPDX-License-Identifier: GPL-2.0
/*
 * cow_free: when a COW fault copies a folio that sits in the swap cache and
 * nothing else maps it or its swap entry, cow_free=1 frees that swap cache
 * folio and cow_free=0 leaves it there, as SwapCached and the counters show.
 * At 1 the kernel runs mainline code alone: no module counter moves.
 *
 * Since 6.x, do_wp_page() reuses a folio it can make exclusive, so the copy
 * only happens while something else holds a reference: here, the per-CPU
 * LRU batch of the CPU that swapped the folio in.  Each chunk of pages is
 * swapped in on CPU 0 while a child still maps their swap entries (so the
 * swap-in goes through the swap cache), the child exits, and the pages are
 * written on CPU 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define TEST_BYTES	test_size(16UL << 20)

struct cow_result {
	unsigned long stats, kept;
	long swapcached_kb;
	size_t bad;
};

static void run_cow(int cow_free, struct cow_result *r)
{
	unsigned long stats, kept;
	long swapcached;
	char *buf;

	if (knob_set("cow_free", cow_free))
		ksft_exit_fail_msg("setting cow_free: %s\n", strerror(errno));
	buf = map_anon(TEST_BYTES);
	fill_pattern(buf, TEST_BYTES, cow_free);
	if (page_out(buf, TEST_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));

	stats = stats_sum();
	kept = stat_get("cow_kept");
	swapcached = meminfo_kb("SwapCached");
	cow_chunks(buf, TEST_BYTES);
	r->swapcached_kb = meminfo_kb("SwapCached") - swapcached;
	r->stats = stats_sum() - stats;
	r->kept = stat_get("cow_kept") - kept;
	r->bad = count_bad_words(buf, TEST_BYTES, cow_free);
	munmap(buf, TEST_BYTES);
	run_on_cpu(0);
}

static void test_thp_mode(const char *thp)
{
	struct cow_result on, off;
	unsigned long pages = TEST_BYTES / PAGE_SZ;

	set_thp(thp);
	run_cow(1, &on);
	run_cow(0, &off);
	ksft_print_msg("thp=%s cow_free=1: %lu pages, all stats +%lu, SwapCached %+ld kB\n",
		       thp, pages, on.stats, on.swapcached_kb);
	ksft_print_msg("thp=%s cow_free=0: %lu pages, cow_kept +%lu, all stats +%lu, SwapCached %+ld kB\n",
		       thp, pages, off.kept, off.stats, off.swapcached_kb);

	ksft_test_result(on.stats == 0,
			 "thp=%s cow_free=1: COW ran no module code\n", thp);
	ksft_test_result(off.kept >= pages / 4 && off.stats == off.kept,
			 "thp=%s cow_free=0: %lu idle swap cache folios kept after COW\n",
			 thp, off.kept);
	/* What cow_free=0 kept stays in SwapCached; cow_free=1 left a tenth */
	ksft_test_result(off.swapcached_kb >= (long)(off.kept * 4 * 9 / 10) &&
			 on.swapcached_kb * 10 <= off.swapcached_kb,
			 "thp=%s SwapCached %+ld kB with cow_free=1 vs %+ld kB with 0\n",
			 thp, on.swapcached_kb, off.swapcached_kb);
	ksft_test_result(on.bad == 0 && off.bad == 0,
			 "thp=%s data intact after COW: %zu + %zu bad words\n",
			 thp, on.bad, off.bad);
}

int main(void)
{
	unsigned int i;
	int ret;

	ksft_print_header();
	if (getuid())
		ksft_exit_skip("needs root\n");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		ksft_exit_skip("needs two CPUs\n");
	ksft_set_plan(4 * ARRAY_SIZE(thp_modes));
	module_require();

	ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("swap set-up: %s\n", strerror(-ret));
	cow_chunks_quiet(true);

	for (i = 0; i < ARRAY_SIZE(thp_modes); i++)
		test_thp_mode(thp_modes[i]);

	if (knob_set("cow_free", 1))
		ksft_exit_fail_msg("restoring cow_free: %s\n", strerror(errno));
	cow_chunks_quiet(false);
	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
	ksft_finished();
}
