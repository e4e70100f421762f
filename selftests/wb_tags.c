// SPDX-License-Identifier: GPL-2.0
/*
 * skip_wb_tags: at 1 swap-out runs mainline code alone (no module counter
 * moves); at 0 every swap writeback sets its mark, and every mark is gone
 * once writeback is idle.  With writeback completing asynchronously (a
 * loop device), writebacks that started tagged are still in flight when
 * the knob goes back to 1: the kernel must clear their marks without the
 * module's policy.  Marks are counted as soon as writeback is idle, while
 * the swapped-out folios and their slots still exist: freeing a slot
 * stores NULL, and that alone would erase a stale mark.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define TEST_BYTES	test_size(32UL << 20)
/*
 * At least this many rounds, and more until a tagged writeback was still in
 * flight at a flip: with THPs, a round may write back only two folios
 */
#define FLIP_ROUNDS	4
#define FLIP_ROUNDS_MAX	64
/* Writeback still in flight this long after page-out is a hang */
#define IDLE_SECONDS	60

struct wb_counts {
	unsigned long tagged, stats, pswpout;
};

static void wb_counts_get(struct wb_counts *c)
{
	c->tagged = stat_get("wb_tagged");
	c->stats = stats_sum();
	c->pswpout = vmstat_get("pswpout");
}

static void wb_counts_delta(struct wb_counts *d, const struct wb_counts *a,
			    const struct wb_counts *b)
{
	d->tagged = b->tagged - a->tagged;
	d->stats = b->stats - a->stats;
	d->pswpout = b->pswpout - a->pswpout;
}

struct round_result {
	unsigned long marks, spaces;
	size_t bad;
};

/*
 * One swap-out of TEST_BYTES: the marks once writeback is idle, counted
 * before anything is read back or unmapped, then the bad words read back.
 */
static void swap_round(uint64_t seed, struct round_result *r)
{
	char *buf = map_anon(TEST_BYTES);
	long busy_kb;

	fill_pattern(buf, TEST_BYTES, seed);
	if (page_out(buf, TEST_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	busy_kb = writeback_wait_idle(IDLE_SECONDS);
	if (busy_kb)
		ksft_exit_fail_msg("%ld kB still under writeback after %d s\n",
				   busy_kb, IDLE_SECONDS);
	if (wb_marks_total(&r->marks, &r->spaces))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	r->bad = count_bad_words(buf, TEST_BYTES, seed);
	munmap(buf, TEST_BYTES);
}

static void test_mode(const char *thp, int skip)
{
	struct round_result r;
	struct wb_counts a, b, d;

	if (knob_set("skip_wb_tags", skip))
		ksft_exit_fail_msg("setting skip_wb_tags: %s\n", strerror(errno));
	wb_counts_get(&a);
	swap_round(skip, &r);
	wb_counts_get(&b);
	wb_counts_delta(&d, &a, &b);
	ksft_print_msg("thp=%s skip_wb_tags=%d: pswpout +%lu, wb_tagged +%lu, all stats +%lu\n",
		       thp, skip, d.pswpout, d.tagged, d.stats);

	if (skip)
		ksft_test_result(d.pswpout > 0 && d.stats == 0,
				 "thp=%s skip_wb_tags=1: swap-out ran no module code\n",
				 thp);
	else
		ksft_test_result(d.pswpout > 0 && d.tagged > 0 && d.tagged <= d.pswpout,
				 "thp=%s skip_wb_tags=0: swap writebacks set their marks\n",
				 thp);
	ksft_test_result(r.spaces > 0 && r.marks == 0 && r.bad == 0,
			 "thp=%s skip_wb_tags=%d: %lu WRITEBACK marks in %lu spaces once idle, %zu bad words\n",
			 thp, skip, r.marks, r.spaces, r.bad);
}

/*
 * Writebacks start tagged and end, in the loop worker, after the knob went
 * back to 1: the marks seen right after the flip are theirs.
 */
static void test_flips(const char *thp)
{
	unsigned long in_flight = 0, left = 0, spaces = 0, marks;
	struct wb_counts a, b, d;
	size_t bad = 0;
	long busy_kb;
	int i, ret;

	ret = swap_loop_on(2 * TEST_BYTES);
	if (ret)
		ksft_exit_fail_msg("swap on a loop device: %s\n", strerror(-ret));
	wb_counts_get(&a);
	for (i = 0; i < FLIP_ROUNDS_MAX && (i < FLIP_ROUNDS || !in_flight); i++) {
		char *buf = map_anon(TEST_BYTES);

		fill_pattern(buf, TEST_BYTES, 100 + i);
		if (knob_set("skip_wb_tags", 0))
			ksft_exit_fail_msg("setting skip_wb_tags: %s\n", strerror(errno));
		if (page_out(buf, TEST_BYTES))
			ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
		if (knob_set("skip_wb_tags", 1))
			ksft_exit_fail_msg("setting skip_wb_tags: %s\n", strerror(errno));
		if (wb_marks_total(&marks, &spaces))
			ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
		in_flight += marks;
		busy_kb = writeback_wait_idle(IDLE_SECONDS);
		if (busy_kb)
			ksft_exit_fail_msg("%ld kB still under writeback after %d s\n",
					   busy_kb, IDLE_SECONDS);
		if (wb_marks_total(&marks, &spaces))
			ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
		left += marks;
		bad += count_bad_words(buf, TEST_BYTES, 100 + i);
		munmap(buf, TEST_BYTES);
	}
	wb_counts_get(&b);
	wb_counts_delta(&d, &a, &b);
	ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("swap set-up: %s\n", strerror(-ret));

	ksft_print_msg("thp=%s flips, loop device: %d rounds, pswpout +%lu, wb_tagged +%lu, marks in flight after the flips %lu\n",
		       thp, i, d.pswpout, d.tagged, in_flight);
	ksft_test_result(in_flight > 0 && d.tagged >= in_flight,
			 "thp=%s flips: %lu tagged writebacks still in flight at a flip to 1\n",
			 thp, in_flight);
	ksft_test_result(spaces > 0 && left == 0 && bad == 0,
			 "thp=%s flips: %lu WRITEBACK marks once idle, %zu bad words\n",
			 thp, left, bad);
}

int main(void)
{
	unsigned int i;
	int ret;

	ksft_print_header();
	if (getuid())
		ksft_exit_skip("needs root\n");
	ksft_set_plan(6 * ARRAY_SIZE(thp_modes));
	module_require();

	ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("swap set-up: %s\n", strerror(-ret));

	for (i = 0; i < ARRAY_SIZE(thp_modes); i++) {
		set_thp(thp_modes[i]);
		test_mode(thp_modes[i], 1);
		test_mode(thp_modes[i], 0);
		test_flips(thp_modes[i]);
	}

	if (knob_set("skip_wb_tags", 1))
		ksft_exit_fail_msg("setting skip_wb_tags: %s\n", strerror(errno));
	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
	ksft_finished();
}
