// SPDX-License-Identifier: GPL-2.0
/*
 * memcg: skip_wb_tags and cow_free set per memory cgroup.  Two sibling
 * cgroups, A and B, swap under different settings while the global knobs
 * stay at 1: each assignment's counters, the WRITEBACK marks in flight and
 * each cgroup's swapcached show that every folio took its own cgroup's
 * policy.  A cgroup below an assigned one takes its setting.  Every bad
 * write is refused and changes nothing.  Removing an assigned cgroup while
 * its writeback is in flight, and unloading the module with assignments
 * present, leave no mark; flipping the settings under swap and COW load
 * corrupts nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define CG_ROOT		"/sys/fs/cgroup"
/* The module's limit */
#define MAX_ASSIGNMENTS	16
#define TEST_BYTES	test_size(16UL << 20)
/* On the slow device, where each I/O takes seconds */
#define SLOW_BYTES	(64 * PAGE_SZ)
#define IDLE_SECONDS	60
#define NOBODY		65534

struct cgroup {
	const char *name;
	char dir[128];
	unsigned long long id;
};

static struct cgroup cg_a = { .name = "scab_a" };
static struct cgroup cg_b = { .name = "scab_b" };
/* A parent with no processes, and its child, which takes its setting */
static struct cgroup cg_parent = { .name = "scab_parent" };
static struct cgroup cg_child = { .name = "scab_parent/child" };
/* Its memory controller is not enabled: no folio is charged to it */
/* Assigned and unassigned by two processes at once */
static struct cgroup cg_race = { .name = "scab_race" };
static struct cgroup cg_nomem_parent = { .name = "scab_nomem" };
static struct cgroup cg_nomem = { .name = "scab_nomem/child" };

static void cg_make(struct cgroup *cg)
{
	if (snprintf(cg->dir, sizeof(cg->dir), CG_ROOT "/%s", cg->name) >= (int)sizeof(cg->dir))
		ksft_exit_fail_msg("cgroup name too long: %s\n", cg->name);
	cg->id = memcg_make(cg->dir);
}

static void cg_write(const struct cgroup *cg, const char *file, const char *val)
{
	char path[192];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", cg->dir, file);
	ret = write_file(path, val);
	if (ret)
		ksft_exit_fail_msg("writing %s to %s: %s\n", val, path, strerror(-ret));
}

/* Memory this process touches from now on is charged to @cg */
static void cg_enter(const struct cgroup *cg)
{
	cg_write(cg, "cgroup.procs", "0");
}

static void cg_leave(void)
{
	if (write_file(CG_ROOT "/cgroup.procs", "0"))
		ksft_exit_fail_msg("back to the root cgroup: %s\n", strerror(errno));
}

static int memcg_write(const char *file, const char *val)
{
	char path[192];

	snprintf(path, sizeof(path), MEMCG_DIR "/%s", file);
	return write_file(path, val);
}

static int setting_write(const struct cgroup *cg, const char *policy, const char *val)
{
	char file[64];

	snprintf(file, sizeof(file), "%llu/%s", cg->id, policy);
	return memcg_write(file, val);
}

static void setting_set(const struct cgroup *cg, const char *policy, const char *val)
{
	int ret = setting_write(cg, policy, val);

	if (ret)
		ksft_exit_fail_msg("setting %s of %s to %s: %s\n", policy, cg->name, val,
				   strerror(-ret));
}

/* "0", "1" or "-"; "?" once the assignment is gone */
static char setting_get(const struct cgroup *cg, const char *policy)
{
	return assignment_setting(cg->id, policy);
}

static unsigned long assigned_stat(const struct cgroup *cg, const char *stat)
{
	char path[192], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), MEMCG_DIR "/%llu/stats/%s", cg->id, stat);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		ksft_exit_fail_msg("opening %s: %s\n", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		ksft_exit_fail_msg("reading %s: %s\n", path, strerror(errno));
	buf[n] = '\0';
	return strtoul(buf, NULL, 10);
}

static void assign(const struct cgroup *cg)
{
	int ret = memcg_write("assign", cg->dir + strlen(CG_ROOT));

	if (ret)
		ksft_exit_fail_msg("assigning %s: %s\n", cg->name, strerror(-ret));
}

static int unassign(const struct cgroup *cg)
{
	char id[32];

	snprintf(id, sizeof(id), "%llu", cg->id);
	return memcg_write("unassign", id);
}

/* What a refused write must leave as it was */
struct visible_state {
	unsigned int assignments;
	char a_wb, a_cow, b_wb, b_cow;
	int global_wb, global_cow;
};

static void visible_state_get(struct visible_state *s)
{
	s->assignments = assignments_count();
	s->a_wb = setting_get(&cg_a, "skip_wb_tags");
	s->a_cow = setting_get(&cg_a, "cow_free");
	s->b_wb = setting_get(&cg_b, "skip_wb_tags");
	s->b_cow = setting_get(&cg_b, "cow_free");
	s->global_wb = knob_get("skip_wb_tags");
	s->global_cow = knob_get("cow_free");
}

static int write_as_nobody(const char *path, const char *val)
{
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(255);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			_exit(errno);
		_exit(write(fd, val, strlen(val)) < 0 ? errno : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) == 255)
		ksft_exit_fail_msg("writing %s as uid %d: no result\n", path, NOBODY);
	return -WEXITSTATUS(status);
}

#define NR_BAD_INPUTS	16

static void test_bad_input(void)
{
	static const char *const bad_settings[] = { "2", "01", "0x1", "-1", "\n", "+", "1 " };
	static char extra_names[MAX_ASSIGNMENTS][16];
	struct cgroup extra[MAX_ASSIGNMENTS];
	struct visible_state before, after;
	char id[32], path[192];
	unsigned int i, n, assigned;
	int ret;

	visible_state_get(&before);
#define REFUSED(_what, _call, _errno) do {					\
		ret = (_call);							\
		visible_state_get(&after);					\
		ksft_test_result(ret == -(_errno) &&				\
				 !memcmp(&before, &after, sizeof(before)),	\
				 "bad input: %s: %s (expected %s), nothing changed\n", \
				 _what, ret ? strerror(-ret) : "accepted",	\
				 strerror(_errno));				\
	} while (0)

	REFUSED("assign no such cgroup", memcg_write("assign", "/scab_no_such"), ENOENT);
	REFUSED("assign a cgroup without memory controller",
		memcg_write("assign", cg_nomem.dir + strlen(CG_ROOT)), EOPNOTSUPP);
	REFUSED("assign a file", memcg_write("assign", "/cgroup.procs"), ENOTDIR);
	REFUSED("assign a relative path", memcg_write("assign", "scab_a"), EINVAL);
	REFUSED("assign nothing", memcg_write("assign", "\n"), EINVAL);
	REFUSED("assign an unknown id", memcg_write("assign", "4000000000"), ENOENT);
	REFUSED("assign a duplicate path", memcg_write("assign", "/scab_a"), EEXIST);
	snprintf(id, sizeof(id), "%llu", cg_a.id);
	REFUSED("assign a duplicate id", memcg_write("assign", id), EEXIST);
	REFUSED("unassign no such cgroup", memcg_write("unassign", "/scab_no_such"), ENOENT);
	REFUSED("unassign an unassigned cgroup",
		memcg_write("unassign", cg_nomem_parent.dir + strlen(CG_ROOT)), ENOENT);
	REFUSED("unassign garbage", memcg_write("unassign", "a1"), EINVAL);
	snprintf(path, sizeof(path), MEMCG_DIR "/%llu/cow_free", cg_a.id);
	REFUSED("a setting written as uid 65534", write_as_nobody(path, "0"), EACCES);
	REFUSED("assign as uid 65534", write_as_nobody(MEMCG_DIR "/assign", "/scab_b"), EACCES);

	n = 0;
	for (i = 0; i < ARRAY_SIZE(bad_settings); i++) {
		ret = setting_write(&cg_a, i % 2 ? "cow_free" : "skip_wb_tags", bad_settings[i]);
		n += ret == -EINVAL;
	}
	visible_state_get(&after);
	ksft_test_result(n == ARRAY_SIZE(bad_settings) && !memcmp(&before, &after, sizeof(before)),
			 "bad input: %u of %zu bad settings refused with EINVAL, nothing changed\n",
			 n, ARRAY_SIZE(bad_settings));

	/* Fill the table: the next one is refused */
	assigned = before.assignments;
	for (i = 0; i <= MAX_ASSIGNMENTS - assigned; i++) {
		snprintf(extra_names[i], sizeof(extra_names[i]), "scab_extra%u", i);
		extra[i].name = extra_names[i];
		cg_make(&extra[i]);
		if (i < MAX_ASSIGNMENTS - assigned)
			assign(&extra[i]);
	}
	i--;
	ret = memcg_write("assign", extra[i].dir + strlen(CG_ROOT));
	ksft_test_result(ret == -ENOSPC && assignments_count() == MAX_ASSIGNMENTS,
			 "bad input: assignment %d: %s (expected %s), %u assigned\n",
			 MAX_ASSIGNMENTS + 1, ret ? strerror(-ret) : "accepted",
			 strerror(ENOSPC), assignments_count());
	rmdir(extra[i].dir);
	n = 0;
	while (i--) {
		n += !unassign(&extra[i]);
		rmdir(extra[i].dir);
	}
	visible_state_get(&after);
	ksft_test_result(!memcmp(&before, &after, sizeof(before)),
			 "%u extra assignments removed: %u assigned, as before\n",
			 n, after.assignments);
}

struct swap_result {
	unsigned long tagged, untagged, pswpout;
	size_t bad;
};

/* Fill @len bytes charged to @cg, page them out, wait for writeback */
static char *charged_fill(const struct cgroup *cg, size_t len, uint64_t seed)
{
	char *buf;

	cg_enter(cg);
	buf = map_anon(len);
	fill_pattern(buf, len, seed);
	cg_leave();
	return buf;
}

/* Swap out memory charged to @cg; @r counts what @assigned's setting decided */
static void swap_in_cgroup(const struct cgroup *cg, const struct cgroup *assigned,
			   uint64_t seed, struct swap_result *r)
{
	unsigned long tagged = assigned_stat(assigned, "wb_tagged");
	unsigned long untagged = assigned_stat(assigned, "wb_untagged");
	unsigned long pswpout = vmstat_get("pswpout");
	char *buf = charged_fill(cg, TEST_BYTES, seed);

	if (page_out(buf, TEST_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	writeback_idle_or_fail(IDLE_SECONDS);
	r->tagged = assigned_stat(assigned, "wb_tagged") - tagged;
	r->untagged = assigned_stat(assigned, "wb_untagged") - untagged;
	r->pswpout = vmstat_get("pswpout") - pswpout;
	r->bad = count_bad_words(buf, TEST_BYTES, seed);
	munmap(buf, TEST_BYTES);
}

static bool took_setting(const struct swap_result *r, int skip)
{
	return r->pswpout > 0 && (skip ? !r->tagged && r->untagged : r->tagged && !r->untagged);
}

/* A at @a_skip, B at the other, global knob at 1 */
static void test_wb(int a_skip)
{
	struct swap_result a, b;
	unsigned long global;

	setting_set(&cg_a, "skip_wb_tags", a_skip ? "1" : "0");
	setting_set(&cg_b, "skip_wb_tags", a_skip ? "0" : "1");
	global = stat_get("wb_tagged");
	swap_in_cgroup(&cg_a, &cg_a, 10 + a_skip, &a);
	swap_in_cgroup(&cg_b, &cg_b, 20 + a_skip, &b);
	global = stat_get("wb_tagged") - global;
	ksft_print_msg("skip_wb_tags A=%d B=%d: A tagged %lu untagged %lu; B tagged %lu untagged %lu; global wb_tagged +%lu\n",
		       a_skip, !a_skip, a.tagged, a.untagged, b.tagged, b.untagged, global);
	ksft_test_result(took_setting(&a, a_skip) && took_setting(&b, !a_skip) &&
			 global == a.tagged + b.tagged,
			 "skip_wb_tags A=%d B=%d: each cgroup's writebacks took its own setting\n",
			 a_skip, !a_skip);
	ksft_test_result(!a.bad && !b.bad, "skip_wb_tags A=%d B=%d: %zu + %zu bad words\n",
			 a_skip, !a_skip, a.bad, b.bad);
}

/* The parent's setting, taken by a child without its own; its own wins */
static void test_wb_nested(void)
{
	struct swap_result child, own;
	unsigned long parent_tagged;

	setting_set(&cg_parent, "skip_wb_tags", "0");
	/* Counted where the setting came from: the parent */
	swap_in_cgroup(&cg_child, &cg_parent, 30, &child);
	ksft_print_msg("child of an assigned parent at 0: parent's wb_tagged +%lu, pswpout +%lu\n",
		       child.tagged, child.pswpout);
	ksft_test_result(took_setting(&child, 0) && child.tagged <= child.pswpout && !child.bad,
			 "a child without its own assignment takes its parent's setting\n");

	/* Its own assignment, set, wins over the parent's */
	assign(&cg_child);
	setting_set(&cg_child, "skip_wb_tags", "1");
	parent_tagged = assigned_stat(&cg_parent, "wb_tagged");
	swap_in_cgroup(&cg_child, &cg_child, 31, &own);
	parent_tagged = assigned_stat(&cg_parent, "wb_tagged") - parent_tagged;
	ksft_print_msg("child at 1 below a parent at 0: child's wb_untagged +%lu, parent's wb_tagged +%lu\n",
		       own.untagged, parent_tagged);
	ksft_test_result(took_setting(&own, 1) && !parent_tagged && !own.bad,
			 "a child's own setting (1) wins over its assigned parent's (0)\n");
	if (unassign(&cg_child))
		ksft_exit_fail_msg("unassigning %s: %s\n", cg_child.name, strerror(errno));
	setting_set(&cg_parent, "skip_wb_tags", "-");
}

/* Page out on the slow device; the marks while its writeback is held */
static char *slow_page_out(const struct cgroup *cg, uint64_t seed, unsigned long *marks,
			   long *busy_kb)
{
	char *buf = charged_fill(cg, SLOW_BYTES, seed);
	unsigned long spaces;

	if (page_out(buf, SLOW_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	if (wb_marks_total(marks, &spaces))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	*busy_kb = writeback_kb();
	return buf;
}

/* WRITEBACK marks in flight: none for A's folios, B's for B's */
static void test_marks_in_flight(void)
{
	unsigned long a_marks, b_marks, b_tagged, left, spaces;
	long a_busy, b_busy;
	char *a_buf, *b_buf;
	size_t bad;
	int ret;

	ret = swap_slow_on();
	if (ret)
		ksft_exit_fail_msg("swap on " SLOW_SWAP_DEV ": %s\n", strerror(-ret));
	setting_set(&cg_a, "skip_wb_tags", "1");
	setting_set(&cg_b, "skip_wb_tags", "0");
	a_buf = slow_page_out(&cg_a, 40, &a_marks, &a_busy);
	writeback_idle_or_fail(IDLE_SECONDS);
	b_tagged = assigned_stat(&cg_b, "wb_tagged");
	b_buf = slow_page_out(&cg_b, 41, &b_marks, &b_busy);
	b_tagged = assigned_stat(&cg_b, "wb_tagged") - b_tagged;
	writeback_idle_or_fail(IDLE_SECONDS);
	if (wb_marks_total(&left, &spaces))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	bad = count_bad_words(a_buf, SLOW_BYTES, 40) + count_bad_words(b_buf, SLOW_BYTES, 41);
	munmap(a_buf, SLOW_BYTES);
	munmap(b_buf, SLOW_BYTES);
	ksft_print_msg("held writeback: A %ld kB with %lu marks, B %ld kB with %lu marks (%lu tagged)\n",
		       a_busy, a_marks, b_busy, b_marks, b_tagged);
	ksft_test_result(a_busy > 0 && !a_marks && b_busy > 0 && b_marks > 0 &&
			 b_marks <= b_tagged,
			 "WRITEBACK marks in flight: %lu for A's folios, %lu for B's\n",
			 a_marks, b_marks);
	ksft_test_result(!left && !bad, "once idle: %lu marks, %zu bad words\n", left, bad);
}

/* What could take folios from under the COWs: none of it expected */
static const char *const cow_vmstat[] = {
	"nr_swapcached", "pswpout", "pgscan_kswapd", "pgscan_direct",
	"compact_isolated", "pgmigrate_success", "pgmigrate_fail",
};

struct cow_result {
	unsigned long kept, released;
	long swapcached;
	char vmstat_msg[256];
	size_t bad;
};

static void cow_in_cgroup(const struct cgroup *cg, uint64_t seed, struct cow_result *r)
{
	char *buf = charged_fill(cg, TEST_BYTES, seed);
	unsigned long kept, released;
	long swapcached, vmstat[ARRAY_SIZE(cow_vmstat)];
	size_t i, n = 0;

	if (page_out(buf, TEST_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	writeback_idle_or_fail(IDLE_SECONDS);
	kept = assigned_stat(cg, "cow_kept");
	released = assigned_stat(cg, "cow_released");
	swapcached = memory_stat_get(cg->dir, "swapcached");
	for (i = 0; i < ARRAY_SIZE(cow_vmstat); i++)
		vmstat[i] = vmstat_get(cow_vmstat[i]);
	cow_chunks(buf, TEST_BYTES);
	run_on_cpu(0);
	r->kept = assigned_stat(cg, "cow_kept") - kept;
	r->released = assigned_stat(cg, "cow_released") - released;
	r->swapcached = memory_stat_get(cg->dir, "swapcached") - swapcached;
	for (i = 0; i < ARRAY_SIZE(cow_vmstat); i++)
		n += snprintf(r->vmstat_msg + n, sizeof(r->vmstat_msg) - n, "%s%s %+ld",
			      i ? ", " : "", cow_vmstat[i],
			      (long)vmstat_get(cow_vmstat[i]) - vmstat[i]);
	r->bad = count_bad_words(buf, TEST_BYTES, seed);
	munmap(buf, TEST_BYTES);
}

/* A keeps, B frees; the global knob at 1 */
static void test_cow(void)
{
	unsigned long pages = TEST_BYTES / PAGE_SZ, global;
	struct cow_result a, b;

	setting_set(&cg_a, "cow_free", "0");
	setting_set(&cg_b, "cow_free", "1");
	global = stat_get("cow_kept");
	cow_in_cgroup(&cg_a, 50, &a);
	cow_in_cgroup(&cg_b, 51, &b);
	global = stat_get("cow_kept") - global;
	ksft_print_msg("cow_free A=0 B=1, %lu pages each: A kept %lu released %lu swapcached %+ld B; B kept %lu released %lu swapcached %+ld B; global cow_kept +%lu\n",
		       pages, a.kept, a.released, a.swapcached, b.kept, b.released,
		       b.swapcached, global);
	ksft_print_msg("/proc/vmstat during A's COWs: %s\n", a.vmstat_msg);
	ksft_print_msg("/proc/vmstat during B's COWs: %s\n", b.vmstat_msg);
	ksft_test_result(a.kept >= pages / 4 && !a.released && !b.kept &&
			 b.released >= pages / 4 && global == a.kept,
			 "cow_free A=0 B=1: each cgroup's COWs took its own setting\n");
	/* What A kept stays charged to A; B's COWs freed theirs */
	ksft_test_result(a.swapcached >= (long)(a.kept * PAGE_SZ * 9 / 10) &&
			 b.swapcached * 10 <= a.swapcached,
			 "swapcached: A %+ld bytes, B %+ld bytes\n", a.swapcached, b.swapcached);
	ksft_test_result(!a.bad && !b.bad, "cow_free A=0 B=1: %zu + %zu bad words\n",
			 a.bad, b.bad);
	setting_set(&cg_a, "cow_free", "-");
	setting_set(&cg_b, "cow_free", "-");
}

/*
 * A cgroup assigned at 0 loses its last process and is removed while the
 * writeback of its folios is held; then its assignment goes.
 */
static void test_remove_under_writeback(void)
{
	static struct cgroup gone = { .name = "scab_gone" };
	unsigned long marks, spaces, tagged;
	int ret, status, rmdir_ret;
	char id[32];
	long busy;
	pid_t pid;

	cg_make(&gone);
	assign(&gone);
	setting_set(&gone, "skip_wb_tags", "0");
	setting_set(&gone, "cow_free", "0");
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0) {
		char *buf;

		cg_enter(&gone);
		buf = map_anon(SLOW_BYTES);
		fill_pattern(buf, SLOW_BYTES, 60);
		_exit(page_out(buf, SLOW_BYTES) ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		ksft_exit_fail_msg("the page-out in %s failed\n", gone.name);
	busy = writeback_kb();
	rmdir_ret = rmdir(gone.dir) ? -errno : 0;
	tagged = assigned_stat(&gone, "wb_tagged");
	snprintf(id, sizeof(id), "%llu", gone.id);
	ret = memcg_write("unassign", id);
	writeback_idle_or_fail(IDLE_SECONDS);
	if (wb_marks_total(&marks, &spaces))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	ksft_print_msg("removed with %ld kB under writeback, %lu tagged: rmdir %s, unassign %s\n",
		       busy, tagged, strerror(-rmdir_ret), strerror(-ret));
	ksft_test_result(!rmdir_ret && busy > 0 && tagged > 0 && !ret,
			 "an assigned cgroup removed under held writeback, then unassigned by id\n");
	ksft_test_result(!marks && setting_get(&gone, "cow_free") == '?',
			 "its writebacks ended: %lu marks, its directory gone\n", marks);
}

/* Per-cgroup flips while both cgroups swap and COW */
#define STRESS_CGROUPS	2

static size_t stress_worker(const struct cgroup *cg, time_t end, unsigned int *rounds)
{
	size_t len = test_size(4UL << 20), bad = 0;
	uint64_t seed = cg->id << 16;
	char *buf;

	cg_enter(cg);
	for (*rounds = 0; time(NULL) < end; ++*rounds, seed++) {
		buf = map_anon(len);
		fill_pattern(buf, len, seed);
		if (page_out(buf, len))
			return (size_t)-1;
		if (*rounds % 2)
			cow_chunks(buf, len);
		bad += count_bad_words(buf, len, seed);
		munmap(buf, len);
	}
	return bad;
}

static void test_stress(unsigned int seconds)
{
	static const char *const values[] = { "0", "1", "-" };
	const struct cgroup *cgs[STRESS_CGROUPS] = { &cg_a, &cg_b };
	unsigned int i, flips = 0, cycles = 0, failed = 0;
	time_t end = time(NULL) + seconds;
	pid_t pids[STRESS_CGROUPS];
	int status, pipes[2];
	size_t bad = 0, n;

	if (pipe(pipes))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	for (i = 0; i < STRESS_CGROUPS; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (pids[i] == 0) {
			unsigned int rounds;

			n = stress_worker(cgs[i], end, &rounds);
			_exit(write(pipes[1], &n, sizeof(n)) != sizeof(n) || !rounds);
		}
	}
	srand(1);
	while (time(NULL) < end) {
		const struct cgroup *cg = cgs[rand() % STRESS_CGROUPS];

		if (rand() % 16 == 0) {
			/* The assignment goes away under load, and comes back */
			failed += unassign(cg) != 0;
			assign(cg);
			cycles++;
		}
		failed += setting_write(cg, rand() % 2 ? "skip_wb_tags" : "cow_free",
					values[rand() % 3]) != 0;
		flips++;
	}
	for (i = 0; i < STRESS_CGROUPS; i++) {
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			failed++;
		if (read(pipes[0], &n, sizeof(n)) != sizeof(n))
			failed++;
		else
			bad += n;
	}
	close(pipes[0]);
	close(pipes[1]);
	ksft_test_result(!failed && !bad,
			 "stress, %u s: %u per-cgroup flips, %u unassign/assign cycles, %u failures, %zu bad words\n",
			 seconds, flips, cycles, failed, bad);
	for (i = 0; i < STRESS_CGROUPS; i++) {
		setting_set(cgs[i], "skip_wb_tags", "-");
		setting_set(cgs[i], "cow_free", "-");
	}
}

#define RACE_ROUNDS	500

/*
 * Two processes assign and unassign one cgroup at once: an unassign's
 * directory must be gone before the id can be assigned again (else the
 * assign fails and sysfs dumps a stack for the duplicate name, which fails
 * the run on the console).  Each write succeeds or is refused as already
 * assigned or not assigned, and the successes balance.
 */
static void test_assign_race(void)
{
	unsigned long counts[3], assigned = 0, unassigned = 0, odd = 0;
	int status, pipes[2], i, left;
	pid_t pids[2];

	if (pipe(pipes))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (pids[i] == 0) {
			unsigned long c[3] = { 0 };
			unsigned int r;
			int ret;

			run_on_cpu(i);
			for (r = 0; r < RACE_ROUNDS; r++) {
				ret = memcg_write("assign", "/scab_race");
				c[0] += !ret;
				c[2] += ret && ret != -EEXIST;
				ret = unassign(&cg_race);
				c[1] += !ret;
				c[2] += ret && ret != -ENOENT;
			}
			_exit(write(pipes[1], c, sizeof(c)) != sizeof(c));
		}
	}
	for (i = 0; i < 2; i++) {
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
		    WEXITSTATUS(status) || read(pipes[0], counts, sizeof(counts)) != sizeof(counts)) {
			odd++;
			continue;
		}
		assigned += counts[0];
		unassigned += counts[1];
		odd += counts[2];
	}
	close(pipes[0]);
	close(pipes[1]);
	left = !unassign(&cg_race);
	ksft_test_result(!odd && assigned && assigned == unassigned + left &&
			 setting_get(&cg_race, "cow_free") == '?',
			 "assign/unassign of one cgroup from 2 CPUs, %u rounds each: %lu assigned, %lu unassigned, %d left, %lu other errors\n",
			 RACE_ROUNDS, assigned, unassigned, left, odd);
}

/* Unload with assignments at 0 and tagged writeback held; reload */
static void test_unload(void)
{
	unsigned int assigned = assignments_count();
	unsigned long marks, spaces;
	long busy;
	char *buf;
	int ret;

	setting_set(&cg_b, "skip_wb_tags", "0");
	setting_set(&cg_a, "cow_free", "0");
	buf = slow_page_out(&cg_b, 70, &marks, &busy);
	ret = module_unload();
	ksft_test_result(!ret && assigned && marks > 0 && !module_loaded(),
			 "rmmod with %u assignments and %lu tagged writebacks held: %s\n",
			 assigned, marks, ret ? strerror(-ret) : "unloaded");
	writeback_idle_or_fail(IDLE_SECONDS);
	ret = module_load();
	if (ret)
		ksft_exit_fail_msg("reloading: %s\n", strerror(-ret));
	if (wb_marks_total(&marks, &spaces))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	ksft_test_result(!assignments_count() && !marks &&
			 !count_bad_words(buf, SLOW_BYTES, 70),
			 "reloaded: %u assignments, %lu marks, data intact\n",
			 assignments_count(), marks);
	munmap(buf, SLOW_BYTES);
}

static void cgroups_set_up(void)
{
	memcg_root_set_up();
	cg_make(&cg_a);
	cg_make(&cg_b);
	cg_make(&cg_parent);
	cg_write(&cg_parent, "cgroup.subtree_control", "+memory");
	cg_make(&cg_child);
	cg_make(&cg_race);
	cg_make(&cg_nomem_parent);
	cg_make(&cg_nomem);
	ksft_print_msg("cgroup ids: A %llu, B %llu, parent %llu, child %llu\n",
		       cg_a.id, cg_b.id, cg_parent.id, cg_child.id);
}

static void cgroups_remove(void)
{
	const struct cgroup *cgs[] = { &cg_child, &cg_parent, &cg_nomem, &cg_nomem_parent,
				       &cg_a, &cg_b, &cg_race };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cgs); i++)
		if (rmdir(cgs[i]->dir))
			ksft_exit_fail_msg("rmdir %s: %s\n", cgs[i]->dir, strerror(errno));
}

int main(void)
{
	const char *env = getenv("STRESS_SECONDS");
	unsigned int stress_seconds = env ? atoi(env) : 20;
	int ret;

	ksft_print_header();
	if (getuid())
		ksft_exit_skip("needs root\n");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		ksft_exit_skip("needs two CPUs\n");
	ksft_set_plan(NR_BAD_INPUTS + 4 + 2 + 3 + 1 + 1 + 2 + 2 + 2);
	module_require();
	if (knob_set("skip_wb_tags", 1) || knob_set("cow_free", 1))
		ksft_exit_fail_msg("global knobs to 1: %s\n", strerror(errno));
	cgroups_set_up();
	ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("swap set-up: %s\n", strerror(-ret));
	/* THP off for exact counts */
	cow_chunks_quiet(true);
	set_thp("never");

	assign(&cg_a);
	assign(&cg_b);
	assign(&cg_parent);
	test_bad_input();
	test_wb(0);
	test_wb(1);
	test_wb_nested();
	test_cow();
	test_stress(stress_seconds);
	test_assign_race();
	test_marks_in_flight();
	test_remove_under_writeback();
	test_unload();

	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
	cow_chunks_quiet(false);
	set_thp("always");
	cgroups_remove();
	ksft_finished();
}
