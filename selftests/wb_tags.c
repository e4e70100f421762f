// SPDX-License-Identifier: GPL-2.0
/*
 * skip_wb_tags: swap-out takes the untagged path at 1 and the tagged one
 * at 0, as the counters show, and the tagged path clears every mark it set.
 * With writeback completing asynchronously (a loop device), writebacks
 * that start tagged and end after a flip to 1 happen, are counted as such,
 * and still clear their marks.  Marks are counted as soon as writeback is
 * idle, while the swapped-out folios and their slots still exist: freeing
 * a slot stores NULL, and that alone would erase a stale mark.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define TEST_BYTES	test_size(32UL << 20)
/*
 * At least this many rounds, and more until a tagged writeback ended after
 * a flip: with THPs, a round may write back only two folios
 */
#define FLIP_ROUNDS	4
#define FLIP_ROUNDS_MAX	64
/* Writeback still in flight this long after page-out is a hang */
#define IDLE_SECONDS	60

struct wb_counts {
	unsigned long tagged, untagged, end_tagged, end_after_flip, pswpout;
};

static void wb_counts_get(struct wb_counts *c)
{
	c->tagged = stat_get("wb_tagged");
	c->untagged = stat_get("wb_untagged");
	c->end_tagged = stat_get("wb_end_tagged");
	c->end_after_flip = stat_get("wb_end_after_flip");
	c->pswpout = vmstat_get("pswpout");
}

static void wb_counts_delta(struct wb_counts *d, const struct wb_counts *a,
			    const struct wb_counts *b)
{
	d->tagged = b->tagged - a->tagged;
	d->untagged = b->untagged - a->untagged;
	d->end_tagged = b->end_tagged - a->end_tagged;
	d->end_after_flip = b->end_after_flip - a->end_after_flip;
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
	ksft_print_msg("thp=%s skip_wb_tags=%d: pswpout +%lu, wb_tagged +%lu, wb_untagged +%lu, wb_end_tagged +%lu, wb_end_after_flip +%lu\n",
		       thp, skip, d.pswpout, d.tagged, d.untagged, d.end_tagged,
		       d.end_after_flip);

	if (skip)
		ksft_test_result(d.pswpout > 0 && d.untagged > 0 && d.tagged == 0 &&
				 d.end_tagged == 0 && d.end_after_flip == 0,
				 "thp=%s skip_wb_tags=1: every swap writeback skipped the tags\n",
				 thp);
	else
		ksft_test_result(d.pswpout > 0 && d.tagged > 0 && d.untagged == 0 &&
				 d.end_tagged == d.tagged && d.end_after_flip == 0,
				 "thp=%s skip_wb_tags=0: every swap writeback set and cleared its mark\n",
				 thp);
	ksft_test_result(r.spaces > 0 && r.marks == 0 && r.bad == 0,
			 "thp=%s skip_wb_tags=%d: %lu WRITEBACK marks in %lu spaces once idle, %zu bad words\n",
			 thp, skip, r.marks, r.spaces, r.bad);
}

static atomic_bool flipping;
static unsigned long flips;

static void *flipper(void *arg)
{
	int val = 0;

	while (atomic_load(&flipping)) {
		if (knob_set("skip_wb_tags", val))
			ksft_exit_fail_msg("flipping skip_wb_tags: %s\n", strerror(errno));
		val = !val;
		flips++;
	}
	return NULL;
}

/* Writebacks start under one mode and end, in the loop worker, under the other */
static void test_flips(const char *thp)
{
	struct round_result r, sum = { 0 };
	struct wb_counts a, b, d;
	pthread_t thread;
	int i, ret;

	ret = swap_loop_on(2 * TEST_BYTES);
	if (ret)
		ksft_exit_fail_msg("swap on a loop device: %s\n", strerror(-ret));
	flips = 0;
	wb_counts_get(&a);
	atomic_store(&flipping, true);
	if (pthread_create(&thread, NULL, flipper, NULL))
		ksft_exit_fail_msg("pthread_create\n");
	for (i = 0; i < FLIP_ROUNDS_MAX; i++) {
		swap_round(100 + i, &r);
		sum.marks += r.marks;
		sum.bad += r.bad;
		sum.spaces = r.spaces;
		if (r.spaces == 0 ||
		    (i + 1 >= FLIP_ROUNDS && stat_get("wb_end_after_flip") > a.end_after_flip))
			break;
	}
	atomic_store(&flipping, false);
	pthread_join(thread, NULL);
	if (knob_set("skip_wb_tags", 1))
		ksft_exit_fail_msg("setting skip_wb_tags: %s\n", strerror(errno));
	wb_counts_get(&b);
	wb_counts_delta(&d, &a, &b);
	ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("swap set-up: %s\n", strerror(-ret));

	ksft_print_msg("thp=%s flipping, loop device: %lu flips over %d rounds, pswpout +%lu, wb_tagged +%lu, wb_untagged +%lu, wb_end_tagged +%lu, wb_end_after_flip +%lu\n",
		       thp, flips, i + (i < FLIP_ROUNDS_MAX), d.pswpout, d.tagged, d.untagged,
		       d.end_tagged, d.end_after_flip);
	ksft_test_result(d.tagged > 0 && d.untagged > 0,
			 "thp=%s flipping: writebacks went both ways\n", thp);
	ksft_test_result(d.end_tagged == d.tagged,
			 "thp=%s flipping: each of %lu tagged starts cleared its mark at the end (%lu)\n",
			 thp, d.tagged, d.end_tagged);
	ksft_test_result(d.end_after_flip > 0,
			 "thp=%s flipping: %lu tagged writebacks ended after a flip to 1\n",
			 thp, d.end_after_flip);
	ksft_test_result(sum.spaces > 0 && sum.marks == 0 && sum.bad == 0,
			 "thp=%s flipping: %lu WRITEBACK marks once idle, %zu bad words\n",
			 thp, sum.marks, sum.bad);
}

int main(void)
{
	unsigned int i;
	int ret;

	ksft_print_header();
	if (getuid())
		ksft_exit_skip("needs root\n");
	ksft_set_plan(8 * ARRAY_SIZE(thp_modes));
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
