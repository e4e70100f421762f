// SPDX-License-Identifier: GPL-2.0
/*
 * skip_wb_tags: at 1 swap-out runs mainline code alone (no module counter
 * moves); at 0 every swap writeback sets its mark, and every mark is gone
 * once writeback is idle.  With writeback completing asynchronously (a
 * loop device), writebacks that started tagged are still in flight when
 * the knob goes back to 1: the write that unhooks the site clears their
 * marks, as their ends no longer do.  Marks are counted as soon as
 * writeback is idle, while
 * the swapped-out folios and their slots still exist: freeing a slot
 * stores NULL, and that alone would erase a stale mark.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
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

/* The WRITEBACK marks left in the swap spaces once writeback is idle */
static void marks_once_idle(unsigned long *marks, unsigned long *spaces)
{
	writeback_idle_or_fail(IDLE_SECONDS);
	if (wb_marks_total(marks, spaces))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
}

/*
 * One swap-out of TEST_BYTES: the marks once writeback is idle, counted
 * before anything is read back or unmapped, then the bad words read back.
 */
static void swap_round(uint64_t seed, struct round_result *r)
{
	char *buf = map_anon(TEST_BYTES);

	fill_pattern(buf, TEST_BYTES, seed);
	if (page_out(buf, TEST_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	marks_once_idle(&r->marks, &r->spaces);
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
 * One flip round: a child pages out TEST_BYTES with skip_wb_tags at 0 and
 * the parent flips it to 1 halfway through, while the child still submits
 * writeback and the loop worker still has some to finish: those that began
 * tagged and had not ended are in flight at the flip: the marks seen right
 * before it are theirs.  Once the flip has returned, none may be left: no
 * writeback sets one, and the flip cleared the others.  Flipping after
 * MADV_PAGEOUT returned found none on 6.1, whose
 * loop worker keeps up with small folios.  The child keeps its folios and
 * their slots until the parent has counted the marks once writeback is
 * idle, then reads its data back.
 */
struct flip_round {
	unsigned long in_flight, after, left, spaces;
	size_t bad;
};

static void flip_round(uint64_t seed, struct flip_round *r)
{
	unsigned long start, marks, half = TEST_BYTES / PAGE_SZ / 2;
	int to_child[2], to_parent[2], status;
	struct pollfd done;
	size_t bad;
	pid_t child;
	char c = 0;

	if (pipe(to_child) || pipe(to_parent))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	if (knob_set("skip_wb_tags", 0))
		ksft_exit_fail_msg("setting skip_wb_tags: %s\n", strerror(errno));
	fflush(stdout);		/* or the child's exit prints the parent's TAP again */
	child = fork();
	if (child < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	/* Each side holds only its own ends: a side that dies is an EOF */
	if (!child) {
		char *buf;

		close(to_child[1]);
		close(to_parent[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL))
			_exit(1);
		buf = map_anon(TEST_BYTES);
		fill_pattern(buf, TEST_BYTES, seed);
		if (write(to_parent[1], &c, 1) != 1 || page_out(buf, TEST_BYTES) ||
		    write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(1);
		bad = count_bad_words(buf, TEST_BYTES, seed);
		_exit(write(to_parent[1], &bad, sizeof(bad)) == sizeof(bad) ? 0 : 1);
	}
	close(to_child[0]);
	close(to_parent[1]);

	if (read(to_parent[0], &c, 1) != 1)
		ksft_exit_fail_msg("the paging-out child died before paging out\n");
	/* Flip at half the child's pages written out, or when it is done */
	start = vmstat_get("pswpout");
	done = (struct pollfd){ .fd = to_parent[0], .events = POLLIN };
	while (vmstat_get("pswpout") - start < half && poll(&done, 1, 1) == 0)
		;
	if (wb_marks_total(&marks, &r->spaces))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	r->in_flight += marks;
	if (knob_set("skip_wb_tags", 1))
		ksft_exit_fail_msg("setting skip_wb_tags: %s\n", strerror(errno));
	if (wb_marks_total(&marks, &r->spaces))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	r->after += marks;

	if (read(to_parent[0], &c, 1) != 1)
		ksft_exit_fail_msg("the child's MADV_PAGEOUT failed\n");
	marks_once_idle(&marks, &r->spaces);
	r->left += marks;
	if (write(to_child[1], &c, 1) != 1 ||
	    read(to_parent[0], &bad, sizeof(bad)) != sizeof(bad) ||
	    waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		ksft_exit_fail_msg("the child could not read its data back\n");
	r->bad += bad;
	close(to_child[1]);
	close(to_parent[0]);
}

static void test_flips(const char *thp)
{
	struct flip_round r = { 0 };
	struct wb_counts a, b, d;
	int i, ret;

	/* A dead child is a failed write, not a SIGPIPE that kills the test */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		ksft_exit_fail_msg("ignoring SIGPIPE: %s\n", strerror(errno));
	ret = swap_loop_on(2 * TEST_BYTES);
	if (ret)
		ksft_exit_fail_msg("swap on a loop device: %s\n", strerror(-ret));
	wb_counts_get(&a);
	for (i = 0; i < FLIP_ROUNDS_MAX && (i < FLIP_ROUNDS || !r.in_flight); i++)
		flip_round(100 + i, &r);
	wb_counts_get(&b);
	wb_counts_delta(&d, &a, &b);
	ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("swap set-up: %s\n", strerror(-ret));

	ksft_print_msg("thp=%s flips, loop device: %d rounds, pswpout +%lu, wb_tagged +%lu, marks in flight before the flips %lu, right after %lu\n",
		       thp, i, d.pswpout, d.tagged, r.in_flight, r.after);
	ksft_test_result(r.in_flight > 0 && d.tagged >= r.in_flight,
			 "thp=%s flips: %lu tagged writebacks in flight at a flip to 1\n",
			 thp, r.in_flight);
	ksft_test_result(r.spaces > 0 && r.after == 0 && r.left == 0 && r.bad == 0,
			 "thp=%s flips: %lu WRITEBACK marks right after, %lu once idle, %zu bad words\n",
			 thp, r.after, r.left, r.bad);
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
