// SPDX-License-Identifier: GPL-2.0
/*
 * faults: the module meets every allocation failure its own calls can
 * meet, one at a time.  /proc/thread-self/fail-nth fails the N-th slab
 * allocation this thread makes, for N = 1, 2, ... until a module load,
 * an assign, an unassign, a knob write or a setting write meets no
 * failure: each failed call must return an error and leave nothing behind
 * (no module, no file, no assignment, no knob changed), and each call
 * that absorbed a failure must have worked.  kmemleak, once all ran, must
 * report nothing.  Then swap writes fail under tagged writeback (a
 * null_blk device's badblocks): no mark may outlive its writeback, no
 * word may change.
 *
 * Only allocations made with this module's code on the stack count (the
 * fault-injection stack filter from the end of the kernel's text up):
 * the loader's own, such as its vmalloc()s, warn by design when they fail,
 * and the VM fails any warning.  6.1 has no such filter for fail-nth:
 * there every allocation of a write counts (sysfs's buffer too), and the
 * load, which would meet the loader's, is not swept.  Page
 * allocations are left alone (fail_page_alloc ignores those that may
 * sleep): the module's own are per-CPU counters, which have no injection
 * point.  The debug kernel only: the plain one has no fault injection.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define FAILSLAB	"/sys/kernel/debug/failslab"
#define KMEMLEAK	"/sys/kernel/debug/kmemleak"
#define CG_ROOT		"/sys/fs/cgroup"
#define CG_NAME		"scab_faults"
/* A sweep that still meets failures after this many points fails */
#define MAX_POINTS	4000
#define NR_TESTS	13
/* Rounds in which a release in module text would outlive rmmod: 8 miss it with p < 3% */
#define QUICK_UNLOADS	8

static const char *const policies[] = { "skip_wb_tags", "cow_free" };

static int fail_nth_fd = -1;
static unsigned long long cg_id;
static char failure[512];

/* What made the check fail, for its result line */
#define FAIL(...) ({ snprintf(failure, sizeof(failure), __VA_ARGS__); false; })

static void fail_nth_set(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(fail_nth_fd, buf, len, 0) != len)
		ksft_exit_fail_msg("writing %s: %s\n", FAIL_NTH, strerror(errno));
}

/* Whether the failure set up was injected; nothing is armed afterwards */
static bool fail_nth_met(void)
{
	char buf[16] = "";

	if (pread(fail_nth_fd, buf, sizeof(buf) - 1, 0) <= 0)
		ksft_exit_fail_msg("reading %s: %s\n", FAIL_NTH, strerror(errno));
	if (atoi(buf) == 0)
		return true;
	fail_nth_set(0);
	return false;
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* @val to @fd: 0 or a negative errno */
static int fd_write(int fd, const char *val)
{
	return write(fd, val, strlen(val)) < 0 ? -errno : 0;
}

struct target {
	const char *name;
	/*
	 * The call under faults, on a file opened before the failure is
	 * armed (the open's own allocations are not the module's): 0 or a
	 * negative errno
	 */
	int (*call)(const void *arg, int fd);
	const char *(*path)(const void *arg);
	int flags;	/* of that open */
	/* After it failed: nothing changed */
	bool (*unchanged)(const void *arg);
	/* After it worked: it did, and is undone for the next try */
	bool (*undo)(const void *arg);
	const void *arg;
};

/*
 * Fail the first allocation of @t's call, then the second, ... until a
 * call meets none: the number of points is the last N it met.
 */
static void sweep(const struct target *t)
{
	unsigned int n, failed = 0, absorbed = 0;
	bool ok = true, met;
	int ret;

	failure[0] = '\0';
	for (n = 1; n <= MAX_POINTS && ok; n++) {
		const char *path = t->path(t->arg);
		int fd = open(path, t->flags | O_CLOEXEC);

		if (fd < 0)
			ksft_exit_fail_msg("opening %s: %s\n", path, strerror(errno));
		fail_nth_set(n);
		ret = t->call(t->arg, fd);
		met = fail_nth_met();
		close(fd);
		if (ret && !met)
			ok = FAIL("failed (%s) with no failure injected", strerror(-ret));
		else if (ret && !t->unchanged(t->arg))
			ok = false;
		else if (!ret && !t->undo(t->arg))
			ok = false;
		failed += ret && met;
		absorbed += !ret && met;
		if (!ret && !met)
			break;
	}
	if (ok && n > MAX_POINTS)
		ok = FAIL("still meeting failures after %u points", MAX_POINTS);
	if (ok)
		ksft_test_result_pass("%s: %u allocation points, %u failed cleanly, %u absorbed\n",
				      t->name, n - 1, failed, absorbed);
	else
		ksft_test_result_fail("%s: at allocation point %u: %s\n", t->name, n - 1, failure);
}

/* Module load */
static const char *ko_file(const void *arg)
{
	return module_path();
}

static int load_call(const void *arg, int fd)
{
	return syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
}

static bool load_unchanged(const void *arg)
{
	if (exists(KNOB_DIR))
		return FAIL("%s left behind", KNOB_DIR);
	if (exists("/sys/module/swapcache_ab"))
		return FAIL("/sys/module/swapcache_ab left behind");
	if (exists(SPACES_FILE))
		return FAIL("%s left behind", SPACES_FILE);
	return true;
}

static bool knobs_at_1(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(knob_names); i++)
		if (knob_get(knob_names[i]) != 1)
			return FAIL("%s reads %d, not 1", knob_names[i], knob_get(knob_names[i]));
	return true;
}

static bool load_undo(const void *arg)
{
	int ret;

	if (!exists(MEMCG_DIR "/assign"))
		return FAIL("loaded without %s/assign", MEMCG_DIR);
	if (!knobs_at_1())
		return false;
	ret = module_unload();
	return ret ? FAIL("unloading: %s", strerror(-ret)) : true;
}

/* Assign and unassign */
static char *assignment_file(const char *file)
{
	static char path[192];

	snprintf(path, sizeof(path), MEMCG_DIR "/%llu%s%s", cg_id, file ? "/" : "", file ?: "");
	return path;
}

static const char *assign_file(const void *arg)
{
	return MEMCG_DIR "/assign";
}

static int name_call(const void *arg, int fd)
{
	return fd_write(fd, "/" CG_NAME);
}

static bool not_assigned(const void *arg)
{
	if (exists(assignment_file(NULL)))
		return FAIL("%s left behind", assignment_file(NULL));
	if (assignments_count())
		return FAIL("%u assignments left behind", assignments_count());
	return true;
}

static char setting(const char *policy)
{
	return assignment_setting(cg_id, policy);
}

static bool assigned(const void *arg)
{
	unsigned int i;

	if (assignments_count() != 1)
		return FAIL("%u assignments, not 1", assignments_count());
	for (i = 0; i < ARRAY_SIZE(policies); i++)
		if (setting(policies[i]) != '-')
			return FAIL("%s reads '%c', not '-'", assignment_file(policies[i]),
				    setting(policies[i]));
	return true;
}

static int unassign_plain(void)
{
	char id[32];

	snprintf(id, sizeof(id), "%llu", cg_id);
	return write_file(MEMCG_DIR "/unassign", id);
}

static bool assign_undo(const void *arg)
{
	int ret;

	if (!assigned(arg))
		return false;
	ret = unassign_plain();
	return ret ? FAIL("unassigning: %s", strerror(-ret)) : true;
}

static const char *unassign_file(const void *arg)
{
	return MEMCG_DIR "/unassign";
}

static bool unassign_undo(const void *arg)
{
	int ret;

	if (!not_assigned(arg))
		return false;
	ret = write_file(MEMCG_DIR "/assign", "/" CG_NAME);
	return ret ? FAIL("assigning again: %s", strerror(-ret)) : true;
}

/* A knob to 0 */
static const char *knob_file(const void *arg)
{
	static char path[128];

	snprintf(path, sizeof(path), KNOB_DIR "/%s", (const char *)arg);
	return path;
}

static int zero_call(const void *arg, int fd)
{
	return fd_write(fd, "0");
}

static bool knob_unchanged(const void *arg)
{
	if (!knobs_at_1())
		return false;
	return stats_sum() ? FAIL("counters moved: %lu", stats_sum()) : true;
}

static bool knob_undo(const void *arg)
{
	int ret;

	if (knob_get(arg) != 0)
		return FAIL("%s reads %d after a write of 0 that worked", (const char *)arg,
			    knob_get(arg));
	ret = knob_set(arg, 1);
	return ret ? FAIL("back to 1: %s", strerror(-ret)) : true;
}

/* An assignment's setting to 0 */
static const char *setting_file(const void *arg)
{
	return assignment_file(arg);
}

static bool setting_unchanged(const void *arg)
{
	return setting(arg) == '-' ? true : FAIL("reads '%c', not '-'", setting(arg));
}

static bool setting_undo(const void *arg)
{
	if (setting(arg) != '0')
		return FAIL("reads '%c' after a write of 0 that worked", setting(arg));
	return write_file(assignment_file(arg), "-") ? FAIL("back to '-' failed") : true;
}

/*
 * Swap write errors under tagged writeback: a null_blk device whose
 * sectors past the swap header fail (its badblocks), skip_wb_tags at 0.
 * The folios whose writes fail stay in the swap cache, dirty; their
 * writebacks end, and each end must clear the mark its start set.
 */
#define NULLB_DIR	"/sys/kernel/config/nullb"
#define FAULTY		"scab_faulty"
#define FAULTY_DEV	"/dev/" FAULTY
#define FAULTY_BAD	"8-131071"	/* every 512-byte sector but the header's */
#define FAULTY_BYTES	(256 * PAGE_SZ)

static int nullb_write(const char *attr, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), NULLB_DIR "/" FAULTY "/%s", attr);
	return write_file(path, val);
}

/* Kernel log lines from @fd on that contain @what */
static unsigned int kmsg_count(int fd, const char *what)
{
	char rec[1024];
	unsigned int n = 0;
	ssize_t len;

	while ((len = read(fd, rec, sizeof(rec) - 1)) > 0 || (len < 0 && errno == EPIPE)) {
		if (len <= 0)
			continue;
		rec[len] = '\0';
		n += strstr(rec, what) != NULL;
	}
	return n;
}

/* Whether a direct write past the header fails, as the bad blocks say */
static bool faulty_fails_writes(void)
{
	static char page[4096] __attribute__((aligned(4096)));
	int fd = open(FAULTY_DEV, O_WRONLY | O_DIRECT | O_CLOEXEC);
	bool failed;

	if (fd < 0)
		ksft_exit_fail_msg("opening %s: %s\n", FAULTY_DEV, strerror(errno));
	failed = pwrite(fd, page, sizeof(page), 1UL << 20) < 0 && errno == EIO;
	close(fd);
	return failed;
}

static void test_write_errors(bool filtered)
{
	unsigned long marks, spaces, pswpout, tagged;
	unsigned int errors;
	size_t bad_before, bad;
	int ret, kmsg;
	char *buf;

	if (access(NULLB_DIR, F_OK) && mount("none", "/sys/kernel/config", "configfs", 0, NULL))
		ksft_exit_fail_msg("mounting configfs: %s\n", strerror(errno));
	if (mkdir(NULLB_DIR "/" FAULTY, 0755) && errno != EEXIST)
		ksft_exit_fail_msg("mkdir %s: %s\n", NULLB_DIR "/" FAULTY, strerror(errno));
	ret = nullb_write("size", "64");	/* MB */
	if (!ret)
		ret = nullb_write("memory_backed", "1");
	if (!ret)	/* completions in softirq, not the boot-time null_blk's delay */
		ret = nullb_write("irqmode", "1");
	if (!ret)
		ret = nullb_write("power", "1");
	if (!ret)
		ret = swap_all_off();
	if (!ret)
		ret = make_swap(FAULTY_DEV);
	if (!ret)
		ret = nullb_write("badblocks", "+" FAULTY_BAD);
	if (!ret && !faulty_fails_writes()) {
		/*
		 * 6.1's null_blk let such a write through in the VM (no I/O
		 * error logged; not understood yet): a skip there, where the
		 * kernel is told apart by its missing fail-nth stack filter,
		 * and a failure anywhere else
		 */
		if (filtered)
			ksft_exit_fail_msg("%s does not fail a write to its bad blocks\n",
					   FAULTY_DEV);
		ksft_test_result_skip("while swap writes fail: %s did not fail a direct write to its bad blocks (6.1)\n",
				      FAULTY_DEV);
		ksft_test_result_skip("once writes work: no failed writes to follow\n");
		nullb_write("badblocks", "-" FAULTY_BAD);
		if (nullb_write("power", "0") || rmdir(NULLB_DIR "/" FAULTY))
			ksft_exit_fail_msg("removing %s: %s\n", FAULTY_DEV, strerror(errno));
		return;
	}
	if (!ret && swapon(FAULTY_DEV, SWAP_FLAG_PREFER | 10))
		ret = -errno;
	if (!ret)
		ret = knob_set("skip_wb_tags", 0);
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (!ret && (kmsg < 0 || lseek(kmsg, 0, SEEK_END) < 0))
		ret = -errno;
	if (ret)
		ksft_exit_fail_msg("failing swap device set-up: %s\n", strerror(-ret));

	buf = map_anon(FAULTY_BYTES);
	fill_pattern(buf, FAULTY_BYTES, 13);
	pswpout = vmstat_get("pswpout");
	tagged = stat_get("wb_tagged");
	if (page_out(buf, FAULTY_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	writeback_wait_idle(60);
	pswpout = vmstat_get("pswpout") - pswpout;
	tagged = stat_get("wb_tagged") - tagged;
	errors = kmsg_count(kmsg, "Write-error on swap-device");
	if (wb_marks_total(&marks, &spaces))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	bad_before = count_bad_words(buf, FAULTY_BYTES, 13);
	ksft_test_result(pswpout && tagged && errors && !marks && spaces && !bad_before,
			 "while swap writes fail: %lu pages written, %lu tagged, %u write errors logged (rate-limited), %lu marks left once idle, %zu bad words\n",
			 pswpout, tagged, errors, marks, bad_before);

	ret = nullb_write("badblocks", "-" FAULTY_BAD);
	if (ret)
		ksft_exit_fail_msg("clearing badblocks: %s\n", strerror(-ret));
	pswpout = vmstat_get("pswpout");
	if (page_out(buf, FAULTY_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	writeback_wait_idle(60);
	pswpout = vmstat_get("pswpout") - pswpout;
	errors = kmsg_count(kmsg, "Write-error on swap-device");
	ret = knob_set("skip_wb_tags", 1);
	bad = count_bad_words(buf, FAULTY_BYTES, 13);
	if (wb_marks_total(&marks, &spaces))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	ksft_test_result(pswpout && !errors && !bad && !marks && !ret,
			 "once writes work: %lu pages written, %u errors, %zu bad words, %lu marks left, skip_wb_tags back to 1: %s\n",
			 pswpout, errors, bad, marks, strerror(-ret));
	munmap(buf, FAULTY_BYTES);
	close(kmsg);
	if (swap_all_off() || nullb_write("power", "0") || rmdir(NULLB_DIR "/" FAULTY))
		ksft_exit_fail_msg("removing %s: %s\n", FAULTY_DEV, strerror(errno));
}

/* The end of the module's kernel text: a return address above it is a module's */
static unsigned long long text_end(void)
{
	unsigned long long addr, found = 0;
	char type, name[128];
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		ksft_exit_fail_msg("opening /proc/kallsyms: %s\n", strerror(errno));
	while (fscanf(f, "%llx %c %127s%*[^\n]", &addr, &type, name) == 3)
		if (!strcmp(name, "_etext")) {
			found = addr;
			break;
		}
	fclose(f);
	if (!found)
		ksft_exit_fail_msg("no _etext in /proc/kallsyms (kptr_restrict?)\n");
	return found;
}

/* Whether only the module's own allocations are failed */
static bool failslab_setup(void)
{
	bool filter = exists(FAILSLAB "/require-start");
	char end[32];

	/* Sleeping allocations too; no report per failure (a stack dump) */
	if (write_file(FAILSLAB "/ignore-gfp-wait", "N") ||
	    write_file(FAILSLAB "/verbose", "0"))
		ksft_exit_fail_msg("setting up %s: %s\n", FAILSLAB, strerror(errno));
	if (!filter)
		return false;
	snprintf(end, sizeof(end), "%llu", text_end());
	if (write_file(FAILSLAB "/require-start", end) ||
	    write_file(FAILSLAB "/require-end", "18446744073709551615"))
		ksft_exit_fail_msg("setting up %s's stack filter: %s\n", FAILSLAB, strerror(errno));
	return true;
}

static void cgroup_setup(void)
{
	memcg_root_set_up();
	cg_id = memcg_make(CG_ROOT "/" CG_NAME);
}

/* What the sweeps leave: a module that works, as a fresh one does */
static void check_works(void)
{
	unsigned int i;
	bool ok = true;

	failure[0] = '\0';
	for (i = 0; ok && i < ARRAY_SIZE(knob_names); i++)
		ok = !knob_set(knob_names[i], 0) && knob_get(knob_names[i]) == 0 && !knob_set(knob_names[i], 1);
	if (!ok)
		FAIL("%s did not go to 0 and back", knob_names[i - 1]);
	if (ok)
		ok = !write_file(MEMCG_DIR "/assign", "/" CG_NAME) && assigned(NULL) &&
		     !unassign_plain() && not_assigned(NULL);
	if (ok && module_unload())
		ok = FAIL("unloading: %s", strerror(errno));
	/*
	 * Assign, unassign and unload at once, in a loop: a release that
	 * CONFIG_DEBUG_KOBJECT_RELEASE delays (1 to 4 s) runs after the
	 * module text is gone in most rounds, unless it is not the module's
	 */
	for (i = 0; ok && i < QUICK_UNLOADS; i++) {
		if (module_load() || write_file(MEMCG_DIR "/assign", "/" CG_NAME) ||
		    unassign_plain() || module_unload())
			ok = FAIL("round %u of load, assign, unassign, unload: %s", i,
				  strerror(errno));
	}
	ksft_test_result(ok, "after the sweeps: every knob to 0 and back, an assignment made and removed, the module unloaded, then %u times loaded, assigned, unassigned and unloaded at once%s%s\n",
			 QUICK_UNLOADS, ok ? "" : ": ", failure);
}

static void check_kmemleak(void)
{
	char buf[512];
	ssize_t n;
	int fd;

	/* Objects younger than 5 s are not reported */
	sleep(6);
	if (write_file(KMEMLEAK, "scan")) {
		ksft_test_result_fail("kmemleak scan: %s\n", strerror(errno));
		return;
	}
	fd = open(KMEMLEAK, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = '\0';
		ksft_print_msg("kmemleak:\n%s\n", buf);
	}
	ksft_test_result(n == 0, "kmemleak reports no leak after the sweeps%s\n",
			 n < 0 ? " (cannot read it)" : "");
}

int main(void)
{
	struct target load = { .name = "module load", .call = load_call, .path = ko_file,
			       .flags = O_RDONLY, .unchanged = load_unchanged, .undo = load_undo };
	struct target assign = { .name = "assign", .call = name_call, .path = assign_file,
				 .flags = O_WRONLY, .unchanged = not_assigned,
				 .undo = assign_undo };
	struct target unassign = { .name = "unassign", .call = name_call, .path = unassign_file,
				   .flags = O_WRONLY, .unchanged = assigned,
				   .undo = unassign_undo };
	char name[64];
	bool filtered;
	unsigned int i;
	int ret;

	ksft_print_header();
	ksft_set_plan(NR_TESTS);
	if (!exists(FAIL_NTH) || !exists(FAILSLAB) || !exists(KMEMLEAK)) {
		for (i = 0; i < NR_TESTS; i++)
			ksft_test_result_skip("this kernel has no fail-nth, failslab or kmemleak (the debug kernel has)\n");
		ksft_finished();
	}
	fail_nth_fd = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	if (fail_nth_fd < 0)
		ksft_exit_fail_msg("opening %s: %s\n", FAIL_NTH, strerror(errno));
	if (module_loaded() && module_unload())
		ksft_exit_fail_msg("unloading swapcache_ab: %s\n", strerror(errno));
	ret = swap_all_off();	/* the key's knobs need swap off */
	if (ret)
		ksft_exit_fail_msg("swapoff: %s\n", strerror(-ret));
	filtered = failslab_setup();
	cgroup_setup();
	if (write_file(KMEMLEAK, "clear"))
		ksft_exit_fail_msg("clearing kmemleak: %s\n", strerror(errno));

	if (!filtered)
		ksft_test_result_skip("module load: no stack filter for fail-nth (6.1), and the loader's own failures warn\n");
	else
		sweep(&load);
	module_require();
	sweep(&assign);
	if (write_file(MEMCG_DIR "/assign", "/" CG_NAME))
		ksft_exit_fail_msg("assigning %s: %s\n", CG_NAME, strerror(errno));
	sweep(&unassign);
	for (i = 0; i < ARRAY_SIZE(policies); i++) {
		struct target t = { .name = name, .call = zero_call, .path = setting_file,
				    .flags = O_WRONLY, .unchanged = setting_unchanged,
				    .undo = setting_undo, .arg = policies[i] };

		snprintf(name, sizeof(name), "assignment's %s to 0", policies[i]);
		sweep(&t);
	}
	if (unassign_plain())
		ksft_exit_fail_msg("unassigning %s: %s\n", CG_NAME, strerror(errno));
	for (i = 0; i < ARRAY_SIZE(knob_names); i++) {
		struct target t = { .name = name, .call = zero_call, .path = knob_file,
				    .flags = O_WRONLY, .unchanged = knob_unchanged,
				    .undo = knob_undo, .arg = knob_names[i] };

		snprintf(name, sizeof(name), "knob %s to 0", knob_names[i]);
		sweep(&t);
	}
	test_write_errors(filtered);
	check_works();
	check_kmemleak();
	rmdir(CG_ROOT "/" CG_NAME);
	ksft_finished();
}
