// SPDX-License-Identifier: GPL-2.0
/*
 * oom: a memory cgroup's workload is OOM-killed in its swap-out, with
 * skip_wb_tags and cow_free at 0 globally and in an assignment of its
 * cgroup, on the slow swap device, where some of its tagged writebacks
 * may still be in flight when it dies (reported, not required: 0 to
 * ~300 kB seen).  Afterwards: no writeback
 * mark left once idle, swap of a process outside the cgroup read back
 * right, the knobs back at 1, the module unloaded (no file left) and
 * loaded again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define CG_DIR		"/sys/fs/cgroup/scab_oom"
#define NR_TESTS	6
/* Memory the cgroup may use, and swap: the workload wants far more */
#define CG_MEMORY	"8M"
#define CG_SWAP		"4M"
#define WORKLOAD_BYTES	(64UL << 20)
#define KEEP_BYTES	(1UL << 20)

static void cg_write(const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), CG_DIR "/%s", file);
	if (write_file(path, val))
		ksft_exit_fail_msg("writing %s to %s: %s\n", val, path, strerror(errno));
}

/* Touches more than the cgroup may hold or swap: the OOM killer ends it */
static void workload(void)
{
	char *buf;
	size_t off;

	cg_write("cgroup.procs", "0");
	buf = map_anon(WORKLOAD_BYTES);
	if (madvise(buf, WORKLOAD_BYTES, MADV_NOHUGEPAGE))
		_exit(2);
	for (off = 0; off < WORKLOAD_BYTES; off += PAGE_SZ)
		buf[off] = 1;
	_exit(0);
}

int main(void)
{
	unsigned long long id;
	unsigned long marks, spaces;
	int status, ret;
	char assign[32], setting[96];
	unsigned long tagged;
	long in_flight;
	char *keep;
	pid_t pid;

	ksft_print_header();
	ksft_set_plan(NR_TESTS);
	module_require();
	set_thp("never");
	memcg_root_set_up();
	id = memcg_make(CG_DIR);
	cg_write("memory.max", CG_MEMORY);
	cg_write("memory.swap.max", CG_SWAP);
	snprintf(assign, sizeof(assign), "%llu", id);
	snprintf(setting, sizeof(setting), MEMCG_DIR "/%llu/skip_wb_tags", id);
	if (swap_slow_on() || knob_set("skip_wb_tags", 0) || knob_set("cow_free", 0) ||
	    write_file(MEMCG_DIR "/assign", assign) || write_file(setting, "0"))
		ksft_exit_fail_msg("slow swap, knobs at 0, %s assigned at 0: %s\n", CG_DIR,
				   strerror(errno));

	/* Outside the cgroup: swapped out beside it, read back after */
	keep = map_paged_out(KEEP_BYTES, 1);
	/* In flight at the workload's death is then the workload's alone */
	if (writeback_wait_idle(60))
		ksft_exit_fail_msg("writeback still in flight after 60 s\n");

	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid)
		workload();
	tagged = stat_get("wb_tagged");
	ret = waitpid(pid, &status, 0);
	in_flight = writeback_kb();
	ksft_test_result(ret == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
			 memory_events_get(CG_DIR, "oom_kill") > 0 && stat_get("wb_tagged") > tagged,
			 "the workload was OOM-killed (%ld oom_kill), %lu swap writebacks tagged, %ld kB in flight at its death\n",
			 memory_events_get(CG_DIR, "oom_kill"), stat_get("wb_tagged") - tagged, in_flight);
	ksft_test_result(writeback_wait_idle(120) == 0, "its writebacks ended within 120 s\n");
	ret = wb_marks_total(&marks, &spaces);
	ksft_test_result(!ret && spaces && !marks,
			 "%lu writeback marks left in %lu swap spaces once idle\n", marks, spaces);
	ksft_test_result(!count_bad_words(keep, KEEP_BYTES, 1),
			 "the swap outside the cgroup read back right\n");

	if (write_file(MEMCG_DIR "/unassign", assign) || knob_set("skip_wb_tags", 1) ||
	    knob_set("cow_free", 1) || swap_all_off())
		ksft_exit_fail_msg("unassign, knobs back at 1, swap off: %s\n", strerror(errno));
	ret = module_unload();
	ksft_test_result(!ret && access(KNOB_DIR, F_OK) && errno == ENOENT,
			 "the module unloaded, leaving no %s\n", KNOB_DIR);
	ret = module_load();
	if (!ret)
		ret = knob_set("skip_wb_tags", 0);
	if (!ret)
		ret = knob_set("skip_wb_tags", 1);
	ksft_test_result(!ret && assignments_count() == 0,
			 "loaded again: skip_wb_tags to 0 and back (%s), no assignment\n",
			 strerror(-ret));
	rmdir(CG_DIR);
	set_thp("always");
	ksft_finished();
}
