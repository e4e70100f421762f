// SPDX-License-Identifier: GPL-2.0
/*
 * Reload under load: insmod and rmmod swapcache_ab in a loop while workers
 * swap, with the knobs at non-default values when unloading and a thread
 * writing a knob all the while; unload must be refused while the entry key
 * is live on an active swap device; writebacks the module tagged before it
 * went leave no mark; reloaded, the module starts at mainline whatever it
 * was unloaded at, and runs no code of its own; no worker dies, no word
 * changes.  Then rmmod with tagged writebacks held in flight by a slow
 * device: it returns at once, and no mark is left once they end.
 * Last, on the debug kernel, the knob unhooks the tagging policy while a
 * CPU is held inside it, and rmmod follows: the write waits for that CPU.
 *
 * Usage: reload [cycles]   (default $RELOAD_CYCLES, else 50)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define NR_WORKERS	2
#define WORKER_BYTES	test_size(32UL << 20)

static pid_t pids[NR_WORKERS];

/* Shared with the workers */
struct worker_stats {
	unsigned long rounds, bad_words;
};

static struct worker_stats *stats;

/* A worker stops on its way back to user space: after its MADV_PAGEOUT */
static bool stopped(pid_t pid)
{
	char path[64], buf[256], *state;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	state = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* A dead worker will not stop: the end of the test reports it */
	return state && (state[2] == 'T' || state[2] == 'Z');
}

static void signal_workers(int sig)
{
	unsigned int i;

	for (i = 0; i < NR_WORKERS; i++)
		kill(pids[i], sig);
	for (i = 0; sig == SIGSTOP && i < NR_WORKERS; i++)
		while (!stopped(pids[i]))
			msleep(10);
}

static void worker(unsigned int id)
{
	uint64_t seed = id << 16;
	char *buf = map_anon(WORKER_BYTES);

	for (;;) {
		seed++;
		fill_pattern(buf, WORKER_BYTES, seed);
		if (page_out(buf, WORKER_BYTES))
			_exit(2);
		stats[id].bad_words += count_bad_words(buf, WORKER_BYTES, seed);
		stats[id].rounds++;
	}
}

static atomic_bool writing;
static unsigned long knob_writes, knob_writes_failed;

/* Writes race every load and unload: they may fail, never take effect late */
static void *knob_writer(void *arg)
{
	while (atomic_load(&writing)) {
		if (knob_write("cow_free", "0", 1))
			knob_writes_failed++;
		knob_writes++;
	}
	return NULL;
}

/*
 * Let the stopped workers run until a worker's worth of pages went out
 * (a worker may be reading back, swapping in, for seconds first, more so
 * on a debug kernel), then stop them again: the pages swapped out.
 */
static unsigned long swap_out_a_while(void)
{
	unsigned long pswpout = vmstat_get("pswpout");
	int waited;

	signal_workers(SIGCONT);
	for (waited = 0; waited < 120000; waited += 100) {
		msleep(100);
		if (vmstat_get("pswpout") - pswpout >= WORKER_BYTES / PAGE_SZ)
			break;
	}
	signal_workers(SIGSTOP);
	return vmstat_get("pswpout") - pswpout;
}

/* Load the module again, wait for writeback to end, count the marks left */
static void reload_count_marks(unsigned int idle_seconds, unsigned long *marks,
			       unsigned long *spaces)
{
	int ret = module_load();

	if (ret)
		ksft_exit_fail_msg("reload: %s\n", strerror(-ret));
	if (writeback_wait_idle(idle_seconds))
		ksft_exit_fail_msg("writeback still in flight after %u s\n", idle_seconds);
	if (wb_marks_total(marks, spaces))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
}

#define SLOW_BYTES	(64 * PAGE_SZ)

static long elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/*
 * Up to this many tries: a try whose rmmod outlasted the slow device's
 * delay (TCG beside a build) shows nothing, either way
 */
#define UNLOAD_TRIES	3

static void test_unload_under_writeback(void)
{
	unsigned long marks, spaces;
	char *bufs[UNLOAD_TRIES];
	struct timespec start;
	long ms = 0, busy_kb = 0;
	unsigned int try, tries;
	size_t bad = 0;
	int ret = 0;

	ret = swap_slow_on();
	if (ret)
		ksft_exit_fail_msg("set-up on " SLOW_SWAP_DEV ": %s\n", strerror(-ret));
	for (tries = 0; tries < UNLOAD_TRIES && !ret && !busy_kb; tries++) {
		if (!module_loaded())
			ret = module_load();
		if (!ret)
			ret = knob_set("skip_wb_tags", 0);
		if (ret)
			ksft_exit_fail_msg("set-up on " SLOW_SWAP_DEV ": %s\n", strerror(-ret));
		bufs[tries] = map_anon(SLOW_BYTES);
		fill_pattern(bufs[tries], SLOW_BYTES, 7);
		if (page_out(bufs[tries], SLOW_BYTES))
			ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
		clock_gettime(CLOCK_MONOTONIC, &start);
		ret = module_unload();
		ms = elapsed_ms(&start);
		busy_kb = writeback_kb();
	}
	/* Returned before the slow device completed them: it did not wait */
	ksft_test_result(ret == 0 && busy_kb > 0,
			 "rmmod with tagged writeback held: %s in %ld ms, %ld kB still under writeback (try %u)\n",
			 strerror(-ret), ms, busy_kb, tries);

	reload_count_marks(120, &marks, &spaces);
	for (try = 0; try < tries; try++) {
		bad += count_bad_words(bufs[try], SLOW_BYTES, 7);
		munmap(bufs[try], SLOW_BYTES);
	}
	ksft_test_result(spaces > 0 && marks == 0 && bad == 0,
			 "their writebacks ended without the module: %lu WRITEBACK marks left, %zu bad words\n",
			 marks, bad);
	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
}

#define HOLD_PARAM	"/sys/module/swapcache_ab/parameters/hold_policy_ms"
#define HELD_PARAM	"/sys/module/swapcache_ab/parameters/policy_held"
#define HOLD_MS		"3000"
#define HOLD_BYTES	(16 * PAGE_SZ)

static int param_get(const char *path)
{
	char buf[16] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return buf[0] ? atoi(buf) : -1;
}

static int held(void)
{
	return param_get(HELD_PARAM);
}

/*
 * A child pages out HOLD_BYTES on CPU 1: its first tagging decision spins
 * there.  The caller polls from CPU 0, so that it never waits behind the
 * spin.
 */
static pid_t hold_start(void)
{
	pid_t child;
	int ret;

	ret = write_file(HOLD_PARAM, HOLD_MS);
	if (ret)
		ksft_exit_fail_msg("writing %s: %s\n", HOLD_PARAM, strerror(-ret));
	child = fork();
	if (child < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!child) {
		char *buf = map_anon(HOLD_BYTES);

		run_on_cpu(1);
		fill_pattern(buf, HOLD_BYTES, 11);
		_exit(page_out(buf, HOLD_BYTES) || count_bad_words(buf, HOLD_BYTES, 11));
	}
	return child;
}

/* Up to 10 s: 1 once a CPU is seen inside the held policy */
static int hold_seen(void)
{
	int seen = 0;
	unsigned int i;

	for (i = 0; i < 200 && seen != 1; i++) {
		seen = held();
		if (seen != 1)
			msleep(50);
	}
	return seen;
}

/*
 * The grace period, widened: a CPU spins inside the tagging policy (the
 * debug module's hold_policy_ms) while the knob unhooks the site and rmmod
 * follows.  The knob write must return only once no CPU is inside.  A try
 * in which this task, polling, never saw the CPU inside tests nothing: up
 * to HOLD_TRIES, each said with whether the hold was spent unseen.  Where
 * the last was, the check is a skip; a hold no decision took is a failure.
 */
#define HOLD_TRIES	3

static void test_unload_while_held(void)
{
	int ret, seen = 0, after = -1, status = 0;
	bool unseen = false;
	unsigned int try;
	pid_t child;

	if (!module_loaded() && module_load())
		ksft_exit_fail_msg("loading swapcache_ab: %s\n", strerror(errno));
	if (access(HOLD_PARAM, F_OK)) {
		ksft_test_result_skip("rmmod while a CPU is inside a policy: hold_policy_ms is the debug kernel's\n");
		return;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		ksft_test_result_skip("rmmod while a CPU is inside a policy: needs two CPUs\n");
		return;
	}
	ret = swap_test_on();
	if (!ret)
		ret = knob_set("skip_wb_tags", 0);
	if (ret)
		ksft_exit_fail_msg("set-up: %s\n", strerror(-ret));
	run_on_cpu(0);
	for (try = 1; try <= HOLD_TRIES; try++) {
		child = hold_start();
		seen = hold_seen();
		if (seen == 1)
			break;
		waitpid(child, &status, 0);
		unseen = !param_get(HOLD_PARAM);
		ksft_print_msg("try %u: no CPU seen inside the policy in 10 s: %s, child status %#x\n",
			       try, unseen ? "the hold was spent unseen" :
			       "no tagging decision took the hold", status);
	}
	if (try > HOLD_TRIES)
		try = HOLD_TRIES;
	ret = knob_set("skip_wb_tags", 1);
	after = held();
	if (!ret)
		ret = module_unload();
	if (seen == 1)
		waitpid(child, &status, 0);
	if (seen != 1 && unseen && !ret && WIFEXITED(status) && !WEXITSTATUS(status))
		ksft_test_result_skip("unhooking waits for a CPU inside the policy: in %u tries, polling from CPU 0 never saw CPU 1 inside, though each hold was spent\n",
				      try);
	else
		ksft_test_result(seen == 1 && after == 0 && !ret && WIFEXITED(status) &&
				 !WEXITSTATUS(status),
				 "unhooking waits for a CPU inside the policy: held %d, after the knob write %d, rmmod %s, child status %#x (try %u)\n",
				 seen, after, strerror(-ret), status, try);
	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
}

int main(int argc, char **argv)
{
	const char *env = getenv("RELOAD_CYCLES");
	int cycles = argc > 1 ? atoi(argv[1]) : env ? atoi(env) : 50;
	unsigned long bad = 0, rounds = 0, marks, spaces, pswpout, counted;
	int i, ret, loads = 0, unloads = 0, defaults_ok = 0, busy_retries = 0;
	bool workers_ok = true;
	pthread_t thread;

	ksft_print_header();
	if (getuid())
		ksft_exit_skip("needs root\n");
	ksft_set_plan(9);

	if (module_loaded()) {
		if (swap_all_off() || knob_set("offset_key", 1) || module_unload())
			ksft_exit_fail_msg("unloading the module first: %s\n", strerror(errno));
	}

	/* Unload refused while the entry key is live on a swap device */
	ret = module_load();
	if (!ret)
		ret = knob_set("offset_key", 0);
	if (!ret)
		ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("set-up under the entry key: %s\n", strerror(-ret));
	ret = module_unload();
	ksft_test_result(ret && module_loaded(),
			 "unload refused with offset_key=0 and swap on (%s)\n", strerror(-ret));
	/* Mainline unhooked, so that only a racing write holds the module */
	if (swap_all_off() || knob_set("offset_key", 1) || write_file(KEY_HOOKED, "0") ||
	    swap_test_on())
		ksft_exit_fail_msg("back to the offset key: %s\n", strerror(errno));

	stats = mmap(NULL, sizeof(*stats) * NR_WORKERS, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (stats == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	stop_workers_at_exit(pids, NR_WORKERS);
	for (i = 0; i < NR_WORKERS; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			worker(i);
	}

	atomic_store(&writing, true);
	if (pthread_create(&thread, NULL, knob_writer, NULL))
		ksft_exit_fail_msg("pthread_create\n");
	for (i = 0; i < cycles; i++) {
		if (!module_loaded()) {
			ret = module_load();
			if (ret)
				ksft_exit_fail_msg("load %d: %s\n", i, strerror(-ret));
		}
		loads++;
		/*
		 * The last unload was at skip_wb_tags=0; the writer may already
		 * have set cow_free=0 again
		 */
		defaults_ok += knob_get("skip_wb_tags") == 1 && knob_get("offset_key") == 1;
		if (knob_set("skip_wb_tags", 0) || knob_set("cow_free", 0))
			ksft_exit_fail_msg("setting knobs: %s\n", strerror(errno));
		msleep(5 + i % 20);
		/* A racing write pins the module while it runs: try again */
		while ((ret = module_unload()) == -EAGAIN && busy_retries < 1000 * cycles) {
			busy_retries++;
			msleep(1);
		}
		if (ret)
			ksft_exit_fail_msg("unload %d: %s\n", i, strerror(-ret));
		unloads++;
	}
	atomic_store(&writing, false);
	pthread_join(thread, NULL);
	ksft_print_msg("%d load/unload cycles under swap load, %lu racing knob writes (%lu refused), unload retried %d times while a write held the module\n",
		       unloads, knob_writes, knob_writes_failed, busy_retries);
	ksft_test_result(loads == cycles && unloads == cycles && defaults_ok == cycles,
			 "%d cycles, skip_wb_tags=1 after every load though unloaded at 0\n",
			 unloads);

	/*
	 * Unloaded at skip_wb_tags=0, the workers swap for a while; then, with
	 * them stopped and writeback idle, no WRITEBACK mark may be left.
	 */
	signal_workers(SIGSTOP);
	pswpout = swap_out_a_while();
	reload_count_marks(60, &marks, &spaces);
	ksft_test_result(pswpout > 0 && spaces > 0 && marks == 0,
			 "unloaded: %lu pages swapped out, then %lu WRITEBACK marks in %lu spaces once idle\n",
			 pswpout, marks, spaces);
	ksft_test_result(knob_get("skip_wb_tags") == 1 && knob_get("cow_free") == 1,
			 "reloaded at mainline after unloading at skip_wb_tags=0 cow_free=0\n");

	/* Whatever the last unload was at, the reloaded module runs nothing */
	counted = stats_sum();
	pswpout = swap_out_a_while();
	counted = stats_sum() - counted;
	ksft_test_result(pswpout > 0 && counted == 0,
			 "reloaded: %lu pages swapped out, module counters +%lu\n",
			 pswpout, counted);

	/* Killed now, by us, and by nothing before: a SIGBUS would show */
	for (i = 0; i < NR_WORKERS; i++) {
		int status = 0;

		kill(pids[i], SIGKILL);
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFSIGNALED(status) ||
		    WTERMSIG(status) != SIGKILL || !stats[i].rounds) {
			ksft_print_msg("worker %d: status %#x after %lu rounds\n", i, status,
				       stats[i].rounds);
			workers_ok = false;
		}
		pids[i] = 0;
		bad += stats[i].bad_words;
		rounds += stats[i].rounds;
	}
	ksft_test_result(workers_ok && bad == 0,
			 "each worker swapped until killed: %lu rounds, %lu bad words\n",
			 rounds, bad);
	test_unload_under_writeback();
	test_unload_while_held();
	ksft_finished();
}
