// SPDX-License-Identifier: GPL-2.0
/*
 * skip_wb_tags: swap-out takes the untagged path at 1 and the tagged one
 * at 0, as the counters show; flipping the knob while swap-out is under
 * way leaves no WRITEBACK mark once the swap cache is idle, and no data
 * is lost either way.
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
#define FLIP_ROUNDS	4

struct wb_counts {
	unsigned long tagged, untagged, end_tagged, pswpout;
};

static void wb_counts_get(struct wb_counts *c)
{
	c->tagged = stat_get("wb_tagged");
	c->untagged = stat_get("wb_untagged");
	c->end_tagged = stat_get("wb_end_tagged");
	c->pswpout = vmstat_get("pswpout");
}

static void wb_counts_delta(struct wb_counts *d, const struct wb_counts *a,
			    const struct wb_counts *b)
{
	d->tagged = b->tagged - a->tagged;
	d->untagged = b->untagged - a->untagged;
	d->end_tagged = b->end_tagged - a->end_tagged;
	d->pswpout = b->pswpout - a->pswpout;
}

/* One swap-out and read-back of TEST_BYTES; returns the bad words */
static size_t swap_round(uint64_t seed)
{
	char *buf = map_anon(TEST_BYTES);
	size_t bad;

	fill_pattern(buf, TEST_BYTES, seed);
	if (page_out(buf, TEST_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	bad = count_bad_words(buf, TEST_BYTES, seed);
	munmap(buf, TEST_BYTES);
	return bad;
}

static void test_mode(const char *thp, int skip)
{
	struct wb_counts a, b, d;
	unsigned long marks;
	size_t bad;

	if (knob_set("skip_wb_tags", skip))
		ksft_exit_fail_msg("setting skip_wb_tags: %s\n", strerror(errno));
	wb_counts_get(&a);
	bad = swap_round(skip);
	wb_counts_get(&b);
	wb_counts_delta(&d, &a, &b);
	ksft_print_msg("thp=%s skip_wb_tags=%d: pswpout +%lu, wb_tagged +%lu, wb_untagged +%lu, wb_end_tagged +%lu\n",
		       thp, skip, d.pswpout, d.tagged, d.untagged, d.end_tagged);

	if (skip)
		ksft_test_result(d.untagged > 0 && d.tagged == 0 && d.end_tagged == 0,
				 "thp=%s skip_wb_tags=1: every swap writeback skipped the tags\n",
				 thp);
	else
		ksft_test_result(d.tagged > 0 && d.untagged == 0 &&
				 d.end_tagged == d.tagged,
				 "thp=%s skip_wb_tags=0: every swap writeback set and cleared its mark\n",
				 thp);

	if (wb_marks_total(&marks))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	ksft_test_result(marks == 0 && bad == 0,
			 "thp=%s skip_wb_tags=%d: %lu WRITEBACK marks left, %zu bad words\n",
			 thp, skip, marks, bad);
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

/* Writebacks start under one mode and end under the other */
static void test_flips(const char *thp)
{
	struct wb_counts a, b, d;
	unsigned long marks;
	pthread_t thread;
	size_t bad = 0;
	int i;

	flips = 0;
	wb_counts_get(&a);
	atomic_store(&flipping, true);
	if (pthread_create(&thread, NULL, flipper, NULL))
		ksft_exit_fail_msg("pthread_create\n");
	for (i = 0; i < FLIP_ROUNDS; i++)
		bad += swap_round(100 + i);
	atomic_store(&flipping, false);
	pthread_join(thread, NULL);
	knob_set("skip_wb_tags", 1);
	wb_counts_get(&b);
	wb_counts_delta(&d, &a, &b);

	if (wb_marks_total(&marks))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	ksft_print_msg("thp=%s flipping: %lu flips over %d rounds, pswpout +%lu, wb_tagged +%lu, wb_untagged +%lu, wb_end_tagged +%lu\n",
		       thp, flips, FLIP_ROUNDS, d.pswpout, d.tagged, d.untagged,
		       d.end_tagged);
	ksft_test_result(d.tagged > 0 && d.untagged > 0,
			 "thp=%s flipping: writebacks went both ways\n", thp);
	ksft_test_result(d.end_tagged >= d.tagged,
			 "thp=%s flipping: every tagged start ended through the tagged path\n",
			 thp);
	ksft_test_result(marks == 0 && bad == 0,
			 "thp=%s flipping: %lu WRITEBACK marks left once idle, %zu bad words\n",
			 thp, marks, bad);
}

int main(void)
{
	unsigned int i;
	int ret;

	ksft_print_header();
	if (getuid())
		ksft_exit_skip("needs root\n");
	ksft_set_plan(7 * ARRAY_SIZE(thp_modes));
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

	knob_set("skip_wb_tags", 1);
	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
	ksft_finished();
}
