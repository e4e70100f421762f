// SPDX-License-Identifier: GPL-2.0
/*
 * callsites: every path of the kernel that computes a swap cache index or
 * address space runs under each legacy key, the whole entry (offset_key=0)
 * and one tree per device (trunks=0), with its data checked.  The key is
 * data the kernel applies inline, so a path that computed the index or
 * the space by hand would look in mainline's slot instead of the key's:
 * mincore would miss folios that are in the swap cache (checked here, from
 * a process whose entries another one swapped in), a lookup would miss and
 * swap-in wait for the folio it cannot find, and data would read back
 * wrong.  offset_key checks the swap cache hits and shadows.
 *
 * Reaching a site is not guarding it: each path puts folios in the swap
 * cache before its site runs (swapped out and read back with MADV_WILLNEED,
 * shared with a child, or under writeback on the slow device) and checks
 * what a wrong index changes, each shown red by a vm/mutants/ patch that
 * computes that site's index by hand.  The swap devices are of type >= 1:
 * on type 0 the entry key is the offset, mainline's index below 64MB.  An
 * address space computed by hand is the key's under both keys below 64MB
 * of a device, where these paths swap: no check here sees it alone.
 *
 * Not reached from user space: shmem_replace_folio() (a swapped-in shmem
 * folio in a zone its mapping's gfp cannot use) and memcg v1's
 * mc_handle_swap_pte() (the VM has no memcg v1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define SPLIT_THP	"/sys/kernel/debug/split_huge_pages"
#define TEST_PAGES	256
/* What a call that retries a missed lookup until a signal is given */
#define STUCK_SECONDS	60

/* UFFDIO_MOVE (6.8) is newer than the build host's headers */
#ifndef UFFDIO_MOVE
#define UFFD_FEATURE_MOVE	(1 << 16)
#define _UFFDIO_MOVE		(0x05)
struct uffdio_move {
	__u64 dst, src, len, mode;
	__s64 move;
};
#define UFFDIO_MOVE		_IOWR(UFFDIO, _UFFDIO_MOVE, struct uffdio_move)
#endif

struct path {
	const char *name;
	/* The data check: NULL when right, else what was wrong */
	const char *(*run)(void);
	/* Or the reason it cannot run on this kernel */
	const char *(*unsupported)(void);
};

static char why[256];
static const char *bad_words(const char *what, const void *buf, size_t len, uint64_t seed)
{
	size_t bad = count_bad_words(buf, len, seed);

	if (!bad)
		return NULL;
	snprintf(why, sizeof(why), "%s: %zu bad words", what, bad);
	return why;
}

static const char *errno_says(const char *what)
{
	snprintf(why, sizeof(why), "%s: %s", what, strerror(errno));
	return why;
}

/* SwapCached, the per-CPU counts folded first */
static long swapcached_kb(void)
{
	int ret = write_file("/proc/sys/vm/stat_refresh", "1");

	if (ret)
		ksft_exit_fail_msg("stat_refresh: %s\n", strerror(-ret));
	return meminfo_kb("SwapCached");
}

/* Add, delete and look up; shadows stored, read and cleared; vmscan */
static const char *swap_out_in(void)
{
	size_t len = TEST_PAGES * PAGE_SZ;
	char *buf = map_paged_out(len, 1);
	const char *ret = bad_words("read back", buf, len, 1);

	munmap(buf, len);
	return ret;
}

/*
 * A second mapping keeps the entries shared: swap-in goes through the swap
 * cache and leaves the folios there, and the last unmap reclaims them
 */
static const char *fork_unmap(void)
{
	size_t len = TEST_PAGES * PAGE_SZ;
	char *buf = map_paged_out(len, 2);
	const char *ret = NULL;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid)
		_exit(count_bad_words(buf, len, 2) ? 1 : 0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		ret = "the child read bad words";
	munmap(buf, len);
	return ret;
}

/*
 * Read back into the swap cache (MADV_WILLNEED), not mapped: the unmap
 * frees each entry and, finding its folio in the swap cache
 * (__try_to_reclaim_swap()), the folio with it; one it missed would stay
 * until reclaim
 */
static const char *willneed_unmap(void)
{
	size_t len = TEST_PAGES * PAGE_SZ;
	char *buf = map_paged_out(len, 9);
	long before, cached, left;

	before = swapcached_kb();
	if (madvise(buf, len, MADV_WILLNEED))
		return errno_says("MADV_WILLNEED");
	cached = swapcached_kb() - before;
	munmap(buf, len);
	left = swapcached_kb() - before;
	if (cached < (long)(len / 1024 / 2)) {
		snprintf(why, sizeof(why), "MADV_WILLNEED put %ld kB of %zu in the swap cache",
			 cached, len / 1024);
		return why;
	}
	if (left > cached / 4) {
		snprintf(why, sizeof(why),
			 "the unmap left %ld of the %ld kB read ahead in the swap cache", left, cached);
		return why;
	}
	return NULL;
}

/*
 * The parent swaps in entries a child shares: they stay in the swap cache,
 * where the child's mincore() of its swap ptes must find every one
 */
static const char *mincore_out(void)
{
	size_t len = TEST_PAGES * PAGE_SZ;
	char *buf = map_paged_out(len, 3);
	unsigned char vec[TEST_PAGES];
	const char *ret = NULL;
	int status, ready[2];
	unsigned int i, in;
	pid_t pid;
	char c;

	if (pipe(ready))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		if (read(ready[0], &c, 1) != 1 || mincore(buf, len, vec))
			_exit(255);
		for (i = in = 0; i < TEST_PAGES; i++)
			in += vec[i] & 1;
		_exit(in == TEST_PAGES ? 0 : 1);
	}
	ret = bad_words("read back", buf, len, 3);
	if (write(ready[1], "g", 1) != 1)
		ksft_exit_fail_msg("pipe write: %s\n", strerror(errno));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		ret = "the child did not exit";
	else if (!ret && WEXITSTATUS(status) == 1)
		ret = "the child's mincore() missed folios in the swap cache";
	else if (!ret && WEXITSTATUS(status))
		ret = "the child's pipe read or mincore() failed";
	close(ready[0]);
	close(ready[1]);
	munmap(buf, len);
	return ret;
}

/*
 * tmpfs: swap-in by shmem, and mincore of a file's swapped-out folios,
 * read back into the swap cache first (MADV_WILLNEED): mincore finds each
 * through the swap entry in the file's mapping (filemap_get_incore_folio())
 */
static const char *shmem_out_in(void)
{
	size_t len = TEST_PAGES * PAGE_SZ;
	unsigned char vec[TEST_PAGES];
	const char *ret = NULL;
	unsigned int i, in;
	char *buf;
	int fd;

	fd = memfd_create("callsites", 0);
	if (fd < 0 || ftruncate(fd, len))
		ksft_exit_fail_msg("memfd: %s\n", strerror(errno));
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (buf == MAP_FAILED)
		ksft_exit_fail_msg("mmap memfd: %s\n", strerror(errno));
	fill_pattern(buf, len, 4);
	if (page_out(buf, len))
		ret = errno_says("MADV_PAGEOUT of shmem");
	if (!ret && madvise(buf, len, MADV_WILLNEED))
		ret = errno_says("MADV_WILLNEED of shmem");
	if (!ret && mincore(buf, len, vec))
		ret = errno_says("mincore");
	for (i = in = 0; !ret && i < TEST_PAGES; i++)
		in += vec[i] & 1;
	if (!ret && in < TEST_PAGES) {
		snprintf(why, sizeof(why),
			 "mincore() found %u of %u pages read back into the swap cache", in,
			 (unsigned int)TEST_PAGES);
		ret = why;
	}
	if (!ret)
		ret = bad_words("read back", buf, len, 4);
	munmap(buf, len);
	close(fd);
	return ret;
}

/*
 * Compaction migrates swap cache folios that a child keeps mapped, if its
 * migration scanner passes them: up to four rounds, until one migrated
 */
static const char *migrate(void)
{
	size_t len = 4 * TEST_PAGES * PAGE_SZ;
	char *buf = map_paged_out(len, 5);
	unsigned long migrated = vmstat_get("pgmigrate_success");
	const char *ret = NULL;
	int round, status, ready[2];
	char c;
	pid_t pid;

	/* Swapped in through the swap cache, which keeps them: shared entries */
	if (pipe(ready))
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		c = count_bad_words(buf, len, 5) ? 'b' : 'g';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	if (read(ready[0], &c, 1) != 1 || c != 'g')
		ret = "the child read bad words";
	for (round = 0; !ret && round < 4; round++) {
		if (write_file("/proc/sys/vm/compact_memory", "1")) {
			ret = errno_says("compact_memory");
			break;
		}
		if (vmstat_get("pgmigrate_success") > migrated)
			break;
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(ready[0]);
	close(ready[1]);
	if (!ret && vmstat_get("pgmigrate_success") == migrated)
		ret = "compaction migrated nothing in four rounds";
	if (!ret)
		ret = bad_words("read back", buf, len, 5);
	munmap(buf, len);
	return ret;
}

/* Pages swapped out when the device goes: swapoff brings them back */
static const char *swapoff_in(void)
{
	size_t len = TEST_PAGES * PAGE_SZ;
	char *buf = map_paged_out(len, 6);
	const char *ret = NULL;

	if (swapoff(TEST_SWAP_DEV))
		ret = errno_says("swapoff");
	if (!ret)
		ret = bad_words("after swapoff", buf, len, 6);
	munmap(buf, len);
	if (swap_test_on())
		ksft_exit_fail_msg("swap back on: %s\n", strerror(errno));
	return ret;
}

/*
 * Swapped out to the slow device and unmapped while the writes are in
 * flight: the entries are free but for their folios, which stay in the
 * swap cache until their writeback ends.  swapoff finds no pte to unuse,
 * looks each entry's folio up in the swap cache and frees it; a lookup
 * that missed would retry until a signal, so swapoff runs under an alarm.
 */
static void alarm_handler(int sig)
{
}

static const char *swapoff_cached(void)
{
	struct sigaction sa = { .sa_handler = alarm_handler }, old_sa;
	size_t len = TEST_PAGES * PAGE_SZ;
	const char *ret = NULL;
	long cached;
	char *buf;
	int err;

	err = swap_on_as_type(2, false);
	if (err)
		ksft_exit_fail_msg("slow swap on as type 2: %s\n", strerror(-err));
	buf = map_paged_out(len, 10);
	munmap(buf, len);
	cached = swapcached_kb();
	if (writeback_kb() <= 0)
		ret = "no writeback in flight after the page-out";
	if (sigaction(SIGALRM, &sa, &old_sa))
		ksft_exit_fail_msg("sigaction: %s\n", strerror(errno));
	alarm(STUCK_SECONDS * 2);
	if (swapoff(SLOW_SWAP_DEV)) {
		snprintf(why, sizeof(why),
			 "swapoff with %ld kB in the swap cache: %s (alarm after %d s: it did not find them)",
			 cached, strerror(errno), STUCK_SECONDS * 2);
		ret = why;
	}
	alarm(0);
	sigaction(SIGALRM, &old_sa, NULL);
	/* Which would retry as long: the device stays on, the test cannot go on */
	if (ret == why)
		ksft_exit_fail_msg("%s\n", why);
	if (swap_test_on())
		ksft_exit_fail_msg("swap back on: %s\n", strerror(errno));
	return ret;
}

/*
 * A THP swapped out to the slow device stays in the swap cache; one read
 * maps it again, and once its writeback has ended it is split there.  The
 * slow device is type 2, behind the other two: on type 0 the entry key is
 * the offset, and a split that stored the tails at mainline's index would
 * store them where the key does.  Mapped, the split folios read right
 * wherever their slots are: unmapped again, each tail is deleted from the
 * swap cache at the key's index, which must hold it (DEBUG_VM checks)
 */
static const char *thp_split(void)
{
	unsigned long splits = vmstat_get("thp_split_page"), thp_swpout = vmstat_get("thp_swpout");
	const char *ret = NULL;
	char cmd[96];
	char *buf;
	int ret_on;

	ret_on = swap_on_as_type(2, false);
	if (ret_on)
		ksft_exit_fail_msg("slow swap on as type 2: %s\n", strerror(-ret_on));
	set_thp("always");
	buf = map_anon(THP_SZ);
	fill_pattern(buf, THP_SZ, 7);
	if (page_out(buf, THP_SZ))
		ret = errno_says("MADV_PAGEOUT");
	if (!ret && vmstat_get("thp_swpout") == thp_swpout)
		ret = "no THP was swapped out whole";
	(void)*(volatile char *)buf;
	if (!ret && writeback_wait_idle(60))
		ret = "writeback still in flight after 60 s";
	snprintf(cmd, sizeof(cmd), "%d,0x%lx,0x%lx", getpid(), (unsigned long)buf,
		 (unsigned long)buf + THP_SZ);
	if (!ret && write_file(SPLIT_THP, cmd))
		ret = errno_says("split_huge_pages");
	if (!ret && vmstat_get("thp_split_page") == splits)
		ret = "the THP was not split";
	if (!ret)
		ret = bad_words("read back", buf, THP_SZ, 7);
	munmap(buf, THP_SZ);
	set_thp("never");
	if (swap_test_on())
		ksft_exit_fail_msg("swap back on: %s\n", strerror(errno));
	return ret;
}

static int uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_MOVE };
	int fd = syscall(__NR_userfaultfd, O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_API, &api) || !(api.features & UFFD_FEATURE_MOVE)) {
		close(fd);
		errno = EOPNOTSUPP;
		return -1;
	}
	return fd;
}

/* Before 6.8 only: a later kernel without it fails the check */
static const char *uffd_unsupported(void)
{
	unsigned int major = 0, minor = 0;
	struct utsname u;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		ksft_exit_fail_msg("uname: %s\n", strerror(errno));
	if (major > 6 || (major == 6 && minor >= 8))
		return NULL;
	return "no UFFDIO_MOVE before 6.8";
}

/*
 * UFFDIO_MOVE of swapped-out pages read back into the swap cache first
 * (MADV_WILLNEED, not mapped): move_pages_pte() must find each folio there
 * and move it with its entry, so that the moved pages read from the swap
 * cache, nothing from the device.  A lookup that misses leaves an entry
 * whose folio it cannot see (SWAP_HAS_CACHE): the move retries until a
 * fatal signal, so the child that moves runs under an alarm.
 */
static void uffd_move_child(char *res, size_t res_len)
{
	size_t len = TEST_PAGES * PAGE_SZ;
	char *src = map_anon(len), *dst = map_anon(len), *copy = malloc(len);
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)dst, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	struct uffdio_move move = {
		.dst = (unsigned long)dst, .src = (unsigned long)src, .len = len,
	};
	const char *ret = NULL;
	long cached_kb = 0;
	unsigned long pswpin = 0;
	int fd;

	if (!copy || madvise(src, len, MADV_NOHUGEPAGE) || madvise(dst, len, MADV_NOHUGEPAGE))
		_exit(3);
	fill_pattern(src, len, 8);
	memcpy(copy, src, len);
	if (page_out(src, len))
		ret = errno_says("MADV_PAGEOUT");
	if (!ret) {
		cached_kb = swapcached_kb();
		if (madvise(src, len, MADV_WILLNEED))
			ret = errno_says("MADV_WILLNEED");
		cached_kb = swapcached_kb() - cached_kb;
	}
	if (!ret && cached_kb < (long)(len / 1024 / 2)) {
		snprintf(why, sizeof(why), "MADV_WILLNEED put %ld kB of %zu in the swap cache",
			 cached_kb, len / 1024);
		ret = why;
	}
	fd = ret ? -1 : uffd_open();
	if (!ret && fd < 0)
		ret = errno_says("userfaultfd");
	if (!ret && ioctl(fd, UFFDIO_REGISTER, &reg))
		ret = errno_says("UFFDIO_REGISTER");
	if (!ret && !(reg.ioctls & (1ULL << _UFFDIO_MOVE)))
		ret = "UFFDIO_MOVE not among the range's ioctls";
	if (!ret && (ioctl(fd, UFFDIO_MOVE, &move) || move.move != (__s64)len))
		ret = errno_says("UFFDIO_MOVE");
	if (!ret) {
		pswpin = vmstat_get("pswpin");
		if (memcmp(dst, copy, len))
			ret = "the moved pages read back wrong";
		pswpin = vmstat_get("pswpin") - pswpin;
	}
	if (!ret && pswpin) {
		snprintf(why, sizeof(why),
			 "the moved pages were read from the device again (pswpin +%lu): their folios were not moved with them",
			 pswpin);
		ret = why;
	}
	if (ret)
		snprintf(res, res_len, "%s", ret);
	_exit(0);
}

static const char *uffd_move(void)
{
	char *res = mmap(NULL, sizeof(why), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const char *ret = NULL;
	int status;
	pid_t pid;

	if (res == MAP_FAILED)
		ksft_exit_fail_msg("mmap: %s\n", strerror(errno));
	res[0] = 0;
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		alarm(STUCK_SECONDS);
		uffd_move_child(res, sizeof(why));
	}
	if (waitpid(pid, &status, 0) != pid)
		ksft_exit_fail_msg("waitpid: %s\n", strerror(errno));
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
		snprintf(why, sizeof(why),
			 "the moving child still ran after %d s: UFFDIO_MOVE or a fault did not find the swap cache folios",
			 STUCK_SECONDS);
		ret = why;
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		snprintf(why, sizeof(why), "the moving child ended with status %#x", status);
		ret = why;
	} else if (res[0]) {
		snprintf(why, sizeof(why), "%s", res);
		ret = why;
	}
	munmap(res, sizeof(why));
	return ret;
}

static const struct path paths[] = {
	{ .name = "swap-out and swap-in", .run = swap_out_in },
	{ .name = "swap-in through the swap cache, last unmap", .run = fork_unmap },
	{ .name = "mincore of swapped-out anon", .run = mincore_out },
	{ .name = "shmem swap-out, mincore and swap-in", .run = shmem_out_in },
	{ .name = "compaction of swap cache folios", .run = migrate },
	{ .name = "swapoff with pages out", .run = swapoff_in },
	{ .name = "swapoff with freed entries' folios in the swap cache", .run = swapoff_cached },
	{ .name = "swap-in readahead, then unmap", .run = willneed_unmap },
	{ .name = "THP split in the swap cache", .run = thp_split },
	{ .name = "UFFDIO_MOVE of swapped-out pages", .run = uffd_move, .unsupported = uffd_unsupported },
};

static void run_path(const struct path *p, const char *key)
{
	const char *data, *skip = p->unsupported ? p->unsupported() : NULL;

	if (skip) {
		ksft_test_result_skip("%s, %s: %s\n", key, p->name, skip);
		return;
	}
	data = p->run();
	ksft_test_result(!data, "%s, %s: %s\n", key, p->name, data ? data : "data intact");
}

int main(void)
{
	static const struct { const char *name; int offset_key, trunks; } keys[] = {
		{ "whole-entry key (offset_key=0)", 0, 1 },
		{ "one tree per device (trunks=0)", 1, 0 },
	};
	unsigned int k, i;

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(keys) * ARRAY_SIZE(paths));
	module_require();
	set_thp("never");
	for (k = 0; k < ARRAY_SIZE(keys); k++) {
		if (swap_key_set(keys[k].offset_key, keys[k].trunks) || swap_test_on())
			ksft_exit_fail_msg("%s: %s\n", keys[k].name, strerror(errno));
		for (i = 0; i < ARRAY_SIZE(paths); i++)
			run_path(&paths[i], keys[k].name);
	}
	if (swap_key_set(1, 1))
		ksft_exit_fail_msg("mainline key back: %s\n", strerror(errno));
	set_thp("always");
	ksft_finished();
}
