// SPDX-License-Identifier: GPL-2.0
/*
 * hotplug: CPU 1 goes offline and online again, round after round, while
 * one process swaps out and reads back, word by word, with skip_wb_tags
 * at 0, and another flips cow_free, whose static key is patched under
 * cpus_read_lock(), as hotplug takes it.  The module's counters are per
 * CPU: with every swap-out tagged (order-0 folios), wb_tagged must still
 * add up to pswpout, read while CPU 1 is offline.  Once idle, no
 * writeback mark may be left.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"
#define ROUNDS		12
#define SWAP_BYTES	test_size(8UL << 20)
#define NR_TESTS	5

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	stop = 1;
}

/* Whatever ends the test: the next one finds both CPUs */
static void cpu1_online(void)
{
	write_file(CPU1_ONLINE, "1");
}

static pid_t spawn(void (*fn)(void))
{
	pid_t pid = fork();

	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		/* Gone with the test, whatever ends it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGTERM, on_term);
		fn();
		_exit(0);
	}
	return pid;
}

/* Exits 1 on a bad word, else with the rounds done (at most 254) */
static void swapper(void)
{
	size_t len = SWAP_BYTES;
	char *buf = map_anon(len);
	unsigned int rounds = 0;

	if (madvise(buf, len, MADV_NOHUGEPAGE))
		_exit(1);
	while (!stop) {
		fill_pattern(buf, len, rounds);
		if (page_out(buf, len) || count_bad_words(buf, len, rounds))
			_exit(1);
		rounds++;
	}
	_exit(rounds > 254 ? 255 : rounds + 1);
}

static void flipper(void)
{
	unsigned int i;

	for (i = 0; !stop; i++)
		if (knob_set("cow_free", i & 1))
			_exit(1);
	_exit(knob_set("cow_free", 1) ? 1 : 0);
}

static int reap(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int main(void)
{
	unsigned long tagged, pswpout, marks, spaces;
	unsigned int round, offline = 0;
	int swapped, flipped, ret;
	pid_t swap_pid, flip_pid;
	char *buf;

	ksft_print_header();
	ksft_set_plan(NR_TESTS);
	if (access(CPU1_ONLINE, W_OK))
		ksft_exit_skip("no %s: the VM has one CPU, or no CPU hotplug\n", CPU1_ONLINE);
	module_require();
	atexit(cpu1_online);
	set_thp("never");
	if (swap_test_on() || knob_set("skip_wb_tags", 0))
		ksft_exit_fail_msg("swap on, skip_wb_tags=0: %s\n", strerror(errno));

	tagged = stat_get("wb_tagged");
	pswpout = vmstat_get("pswpout");
	swap_pid = spawn(swapper);
	flip_pid = spawn(flipper);
	for (round = 0; round < ROUNDS; round++) {
		ret = write_file(CPU1_ONLINE, "0");
		if (!ret)
			offline++;
		usleep(100 * 1000);
		if (write_file(CPU1_ONLINE, "1"))
			ksft_exit_fail_msg("CPU 1 back online: %s\n", strerror(errno));
		usleep(100 * 1000);
	}
	swapped = reap(swap_pid);
	flipped = reap(flip_pid);
	ksft_test_result(offline == ROUNDS, "CPU 1 went offline and online %u times of %u\n",
			 offline, ROUNDS);
	ksft_test_result(swapped > 1, "the swapper read every word back right, %d rounds\n",
			 swapped - 1);
	ksft_test_result(flipped == 0, "cow_free flipped through every round, back at 1\n");

	/*
	 * A last swap-out, not read back: its slots keep their entries, on
	 * which a mark left behind would show.  CPU 1 is offline for it and
	 * for the reads: what it counted must still be in the sums.
	 */
	if (write_file(CPU1_ONLINE, "0"))
		ksft_exit_fail_msg("CPU 1 offline: %s\n", strerror(errno));
	buf = map_paged_out(SWAP_BYTES, 1);
	if (writeback_wait_idle(60))
		ksft_exit_fail_msg("the last swap-out still in flight after 60 s\n");
	tagged = stat_get("wb_tagged") - tagged;
	pswpout = vmstat_get("pswpout") - pswpout;
	ksft_test_result(pswpout && tagged == pswpout,
			 "wb_tagged +%lu against pswpout +%lu: no count lost with the CPU\n",
			 tagged, pswpout);
	ret = wb_marks_total(&marks, &spaces);
	ksft_test_result(!ret && spaces && !marks && !count_bad_words(buf, SWAP_BYTES, 1),
			 "%lu writeback marks left in %lu swap spaces once idle, the last swap-out read back\n",
			 marks, spaces);
	if (write_file(CPU1_ONLINE, "1") || knob_set("skip_wb_tags", 1))
		ksft_exit_fail_msg("CPU 1 online, skip_wb_tags back to 1: %s\n", strerror(errno));
	set_thp("always");
	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
	ksft_finished();
}
