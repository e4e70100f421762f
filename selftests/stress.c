// SPDX-License-Identifier: GPL-2.0
/*
 * Integrity under knob flips: workers keep rewriting and verifying
 * checksummed pages of anonymous memory larger than the memory their cgroup
 * may use (memory.high: reclaim and throttling, not the OOM killer that
 * memory.max brings to a workload that keeps every page active), page
 * ranges out with MADV_PAGEOUT, and fork children that
 * COW-write part of it, while the main process flips skip_wb_tags and
 * cow_free every few milliseconds and cycles swapoff, a change of key
 * (offset_key, trunks), swapon.  Not one word may change.
 *
 * Usage: stress [seconds]   (default $STRESS_SECONDS, else 120)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define NR_WORKERS	2
/* Each worker's memory, and the cgroup's memory.high: as much again */
#define WORKER_BYTES	test_size(96UL << 20)
#define CGROUP		"/sys/fs/cgroup/swapcache_ab_stress"
#define WORDS		(PAGE_SZ / 8)
#define MAGIC		0x5ab5ab5ab5ab0000ULL

struct worker_stats {
	unsigned long written, verified, corrupted, cow_children, cow_bad;
};

static struct worker_stats *stats;	/* shared with the workers */
static volatile sig_atomic_t stop;
static pid_t pids[NR_WORKERS];
static char cgroup_limit[16];	/* memory.high: one worker's memory */

static void on_term(int sig)
{
	stop = 1;
}

static inline uint64_t page_word(unsigned long page, uint64_t gen,
				 unsigned int worker, unsigned int i)
{
	uint64_t x = (page << 20) ^ (gen << 8) ^ worker ^ ((uint64_t)i << 44);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static void write_page(uint64_t *p, unsigned long page, uint64_t gen,
		       unsigned int worker)
{
	unsigned int i;

	p[0] = MAGIC | worker;
	p[1] = page;
	p[2] = gen;
	for (i = 3; i < WORDS; i++)
		p[i] = page_word(page, gen, worker, i);
}

/* Whole page as written for (page, gen, worker)? */
static bool page_ok(const uint64_t *p, unsigned long page, uint64_t gen,
		    unsigned int worker)
{
	unsigned int i;

	if (p[0] != (MAGIC | worker) || p[1] != page || p[2] != gen)
		return false;
	for (i = 3; i < WORDS; i++)
		if (p[i] != page_word(page, gen, worker, i))
			return false;
	return true;
}

static unsigned long verify(uint64_t *buf, unsigned long first,
			    unsigned long last, const uint64_t *gens,
			    unsigned int worker, struct worker_stats *st)
{
	unsigned long page, bad = 0;

	for (page = first; page < last; page++) {
		if (page_ok(buf + page * WORDS, page, gens[page], worker))
			st->verified++;
		else
			bad++;
	}
	st->corrupted += bad;
	return bad;
}

/*
 * A child COW-writes pages [first, last) of its copy with another
 * generation and checks its whole view; the parent then checks that
 * nothing of the child's leaked into its own.
 */
static void cow_round(uint64_t *buf, unsigned long pages, uint64_t *gens,
		      unsigned int worker, struct worker_stats *st)
{
	unsigned long first = random() % pages, last, page;
	pid_t child;
	int status;

	last = first + 1 + random() % (pages - first);
	child = fork();
	if (child < 0)
		return;
	if (child == 0) {
		struct worker_stats mine = { 0 };

		for (page = first; page < last; page++) {
			gens[page] |= 1ULL << 40;
			write_page(buf + page * WORDS, page, gens[page], worker);
		}
		_exit(verify(buf, 0, pages, gens, worker, &mine) ? 1 : 0);
	}
	waitpid(child, &status, 0);
	st->cow_children++;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		st->cow_bad++;
	verify(buf, first, last, gens, worker, st);
}

static void worker(unsigned int id)
{
	unsigned long pages = WORKER_BYTES / PAGE_SZ, page, first, n;
	struct worker_stats *st = &stats[id];
	uint64_t *buf, *gens, gen = 0;

	srandom(id + 1);
	buf = map_anon(WORKER_BYTES);
	gens = calloc(pages, sizeof(*gens));
	if (!gens)
		_exit(2);
	for (page = 0; page < pages; page++) {
		write_page(buf + page * WORDS, page, gen, id);
		st->written++;
	}
	while (!stop) {
		gen++;
		/* Rewrite a random half, in place */
		first = random() % (pages / 2);
		for (page = first; page < first + pages / 2; page++) {
			gens[page] = gen;
			write_page(buf + page * WORDS, page, gen, id);
			st->written++;
		}
		first = random() % pages;
		n = 1 + random() % (pages - first);
		madvise(buf + first * WORDS, n * PAGE_SZ, 21 /* MADV_PAGEOUT */);
		verify(buf, 0, pages, gens, id, st);
		if (gen % 4 == 0)
			cow_round(buf, pages, gens, id, st);
	}
	_exit(0);
}

/* offset_key and trunks: mainline, entry key, one tree by offset, by entry */
static const int keys[4][2] = { { 1, 1 }, { 0, 1 }, { 1, 0 }, { 0, 0 } };

/* Swap off and on again under the next key, with the memory to do so */
static int key_cycle(int *key)
{
	int next = (*key + 1) % 4, ret;

	if (write_file(CGROUP "/memory.high", "max"))
		return -errno;
	ret = swap_key_set(keys[next][0], keys[next][1]);
	if (!ret)
		*key = next;
	if (!ret)
		ret = swap_test_on();
	if (write_file(CGROUP "/memory.high", cgroup_limit) && !ret)
		ret = -errno;
	return ret;
}

/*
 * What the flipper is asked for: a flip a second on average, and a key
 * cycle.  How many it gets depends on the kernel (a debug kernel in TCG
 * does ~2 a second while workers swap) and on the host.
 */
static bool flipped_enough(unsigned long flips, unsigned long cycles, int seconds)
{
	return flips >= (unsigned long)seconds && cycles > 0;
}

int main(int argc, char **argv)
{
	unsigned long flips = 0, cycles = 0, marks, spaces;
	struct worker_stats sum = { 0 };
	const char *env = getenv("STRESS_SECONDS");
	int seconds = argc > 1 ? atoi(argv[1]) : env ? atoi(env) : 120;
	time_t end, deadline, next_cycle;
	unsigned int i;
	int key = 0, ret;
	bool workers_ok = true;
	char pid[16];

	ksft_print_header();
	if (getuid())
		ksft_exit_skip("needs root\n");
	ksft_set_plan(6);
	module_require();
	set_thp("always");
	ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("swap set-up: %s\n", strerror(-ret));

	memcg_root_set_up();
	if (mkdir(CGROUP, 0755) && errno != EEXIST)
		ksft_exit_fail_msg("mkdir " CGROUP ": %s\n", strerror(errno));
	snprintf(cgroup_limit, sizeof(cgroup_limit), "%luM", WORKER_BYTES >> 20);
	if (write_file(CGROUP "/memory.high", cgroup_limit))
		ksft_exit_fail_msg("memory.high: %s\n", strerror(errno));

	stats = mmap(NULL, sizeof(*stats) * NR_WORKERS, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stats == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	signal(SIGTERM, on_term);
	stop_workers_at_exit(pids, NR_WORKERS);
	for (i = 0; i < NR_WORKERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			snprintf(pid, sizeof(pid), "%d", getpid());
			if (write_file(CGROUP "/cgroup.procs", pid))
				_exit(2);
			worker(i);
		}
	}

	ksft_print_msg("%d s: %d workers x %lu MB in a %s cgroup, THP always\n",
		       seconds, NR_WORKERS, WORKER_BYTES >> 20, cgroup_limit);
	srandom(time(NULL));
	end = time(NULL) + seconds;
	/* flipped_enough() given up to twice the time on a slow host */
	deadline = end + seconds;
	next_cycle = time(NULL) + 10;
	while (time(NULL) < end ||
	       (!flipped_enough(flips, cycles, seconds) && time(NULL) < deadline)) {
		const char *knob = random() % 2 ? "skip_wb_tags" : "cow_free";

		if (knob_set(knob, random() % 2))
			ksft_exit_fail_msg("flipping %s: %s\n", knob, strerror(errno));
		flips++;
		msleep(1 + random() % 5);
		if (time(NULL) >= next_cycle) {
			ret = key_cycle(&key);
			if (ret)
				ksft_exit_fail_msg("swapoff/key/swapon: %s\n",
						   strerror(-ret));
			cycles++;
			next_cycle = time(NULL) + 10;
		}
	}

	for (i = 0; i < NR_WORKERS; i++)
		kill(pids[i], SIGTERM);
	for (i = 0; i < NR_WORKERS; i++) {
		int status = 0;

		if (waitpid(pids[i], &status, 0) != pids[i])
			status = -1;
		pids[i] = 0;
		/* A SIGBUS from a failed swap-in ends a worker too */
		if (status || !stats[i].verified) {
			ksft_print_msg("worker %u ended with status %#x after verifying %lu pages\n",
				       i, status, stats[i].verified);
			workers_ok = false;
		}
		sum.written += stats[i].written;
		sum.verified += stats[i].verified;
		sum.corrupted += stats[i].corrupted;
		sum.cow_children += stats[i].cow_children;
		sum.cow_bad += stats[i].cow_bad;
	}
	if (knob_set("skip_wb_tags", 1) || knob_set("cow_free", 1))
		ksft_exit_fail_msg("restoring the knobs: %s\n", strerror(errno));

	ksft_print_msg("flips %lu, swapoff/key/swapon cycles %lu, pages written %lu, verified %lu, corrupted %lu, COW children %lu (bad %lu), pswpout %lu\n",
		       flips, cycles, sum.written, sum.verified, sum.corrupted,
		       sum.cow_children, sum.cow_bad, vmstat_get("pswpout"));
	ksft_test_result(flipped_enough(flips, cycles, seconds),
			 "%lu knob flips and %lu key cycles under load\n", flips, cycles);
	ksft_test_result(workers_ok, "each of %d workers exited 0 and verified pages\n",
			 NR_WORKERS);
	ksft_test_result(sum.verified > sum.written / 2,
			 "%lu pages verified after %lu written\n", sum.verified, sum.written);
	ksft_test_result(sum.corrupted == 0, "corrupted pages: %lu\n", sum.corrupted);
	ksft_test_result(sum.cow_children > 0 && sum.cow_bad == 0,
			 "%lu COW children saw their own writes and the parent's data, %lu did not\n",
			 sum.cow_children, sum.cow_bad);

	if (writeback_wait_idle(60) || wb_marks_total(&marks, &spaces))
		ksft_exit_fail_msg("writeback idle, reading " SPACES_FILE ": %s\n",
				   strerror(errno));
	ksft_test_result(spaces > 0 && marks == 0,
			 "WRITEBACK marks left once idle: %lu in %lu spaces\n", marks, spaces);
	ret = swap_key_set(1, 1);
	if (ret)
		ksft_exit_fail_msg("restoring swap and the key: %s\n", strerror(-ret));
	rmdir(CGROUP);
	ksft_finished();
}
