// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

/* Below the 31 folios of a per-CPU LRU batch */
#define CHUNK_PAGES	16

const char *const thp_modes[2] = { "always", "never" };

const char *const knob_names[4] = { "offset_key", "trunks", "skip_wb_tags", "cow_free" };

const char *const stat_names[2] = { "wb_tagged", "cow_kept" };

size_t test_size(size_t bytes)
{
	const char *env = getenv("SIZE_DIVISOR");
	long div = env ? atol(env) : 1;

	if (div < 1)
		div = 1;
	bytes = bytes / div / THP_SZ * THP_SZ;
	return bytes < 2 * THP_SZ ? 2 * THP_SZ : bytes;
}

int module_file_load(const char *path, const char *params)
{
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

const char *module_path(void)
{
	const char *ko = getenv("SWAPCACHE_AB_KO");

	return ko ? ko : "/swapcache_ab.ko";
}

int module_load_params(const char *params)
{
	return module_file_load(module_path(), params);
}

int module_load(void)
{
	return module_load_params("");
}

int module_delete(void)
{
	return syscall(SYS_delete_module, "swapcache_ab", O_NONBLOCK) ? -errno : 0;
}

int module_unload(void)
{
	/* As a user does before rmmod once a key knob was written */
	if (access(KEY_HOOKED, F_OK) == 0)
		write_file(KEY_HOOKED, "0");
	return module_delete();
}

bool module_loaded(void)
{
	return access(KNOB_DIR, F_OK) == 0;
}

void module_require(void)
{
	int ret;

	if (module_loaded())
		return;
	ret = module_load();
	if (ret)
		ksft_exit_fail_msg("loading swapcache_ab: %s\n", strerror(-ret));
}

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

unsigned int assignments_count(void)
{
	unsigned int n = 0;
	struct dirent *de;
	DIR *dir;

	dir = opendir(MEMCG_DIR);
	if (!dir)
		ksft_exit_fail_msg("opening %s: %s\n", MEMCG_DIR, strerror(errno));
	while ((de = readdir(dir)))
		n += de->d_name[0] >= '0' && de->d_name[0] <= '9';
	closedir(dir);
	return n;
}

char assignment_setting(unsigned long long id, const char *policy)
{
	char path[192], buf[8] = "?";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), MEMCG_DIR "/%llu/%s", id, policy);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? buf[0] : '?';
}

void memcg_root_set_up(void)
{
	mkdir("/sys/fs/cgroup", 0755);
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) &&
	    mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		ksft_exit_fail_msg("mounting cgroup2: %s\n", strerror(errno));
	if (write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory"))
		ksft_exit_fail_msg("enabling the memory controller: %s\n", strerror(errno));
}

unsigned long long memcg_make(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0755) && errno != EEXIST)
		ksft_exit_fail_msg("mkdir %s: %s\n", dir, strerror(errno));
	/* A cgroup's id is its inode number on cgroup2 */
	if (stat(dir, &st))
		ksft_exit_fail_msg("stat %s: %s\n", dir, strerror(errno));
	return st.st_ino;
}

int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

int knob_write(const char *knob, const char *buf, size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), KNOB_DIR "/%s", knob);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	close(fd);
	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EIO;
}

int knob_set(const char *knob, int val)
{
	return knob_write(knob, val ? "1\n" : "0\n", 2);
}

int knob_get(const char *knob)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), KNOB_DIR "/%s", knob);
	if (read_file(path, buf, sizeof(buf)))
		ksft_exit_fail_msg("reading %s: %s\n", path, strerror(errno));
	return atoi(buf);
}

unsigned long stat_get(const char *name)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), KNOB_DIR "/stats/%s", name);
	if (read_file(path, buf, sizeof(buf)))
		ksft_exit_fail_msg("reading %s: %s\n", path, strerror(errno));
	return strtoul(buf, NULL, 10);
}

unsigned long stats_sum(void)
{
	unsigned long sum = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(stat_names); i++)
		sum += stat_get(stat_names[i]);
	return sum;
}

static long field_get(const char *path, const char *field, int sep)
{
	size_t flen = strlen(field);
	char line[256];
	long val = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		ksft_exit_fail_msg("opening %s: %s\n", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, flen) && line[flen] == sep) {
			val = strtol(line + flen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	if (val < 0)
		ksft_exit_fail_msg("no %s in %s\n", field, path);
	return val;
}

long memory_stat_get(const char *cgroup, const char *field)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/memory.stat", cgroup);
	return field_get(path, field, ' ');
}

long memory_events_get(const char *cgroup, const char *field)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/memory.events", cgroup);
	return field_get(path, field, ' ');
}

long meminfo_kb(const char *field)
{
	return field_get("/proc/meminfo", field, ':');
}

unsigned long vmstat_get(const char *field)
{
	return field_get("/proc/vmstat", field, ' ');
}

void set_thp(const char *mode)
{
	if (write_file(THP_ENABLED, mode))
		ksft_exit_fail_msg("setting THP %s: %s\n", mode, strerror(errno));
}

/* mkswap: a version 1 header in the first page, no bad pages */
int make_swap(const char *dev)
{
	return make_swap_size(dev, 0);
}

int make_swap_size(const char *dev, off_t bytes)
{
	struct {
		char bootbits[1024];
		uint32_t version, last_page, nr_badpages;
	} hdr = { .version = 1 };
	static char page[PAGE_SZ];
	off_t size;
	int fd;

	fd = open(dev, O_RDWR);
	if (fd < 0)
		return -errno;
	size = lseek(fd, 0, SEEK_END);
	if (bytes && bytes < size)
		size = bytes;
	hdr.last_page = size / PAGE_SZ - 1;
	memset(page, 0, sizeof(page));
	memcpy(page, &hdr, sizeof(hdr));
	memcpy(page + PAGE_SZ - 10, "SWAPSPACE2", 10);
	if (pwrite(fd, page, PAGE_SZ, 0) != PAGE_SZ || fsync(fd)) {
		close(fd);
		return -errno;
	}
	close(fd);
	return 0;
}

#define LOOP_BACKING	"/tmp/swapcache_ab-loop"

/*
 * Every swap device, whoever turned it on: a test that failed half-way
 * must not leave the next one a device it does not expect
 */
int swap_all_off(void)
{
	char line[256], dev[200];
	FILE *f;

	f = fopen("/proc/swaps", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%199s", dev) != 1 || dev[0] != '/')
			continue;
		if (swapoff(dev) && errno != EINVAL) {
			fclose(f);
			return -errno;
		}
	}
	fclose(f);
	return swap_loop_off();
}

int swap_test_on(void)
{
	return swap_test_on_size(0);
}

int swap_test_on_size(off_t bytes)
{
	int ret;

	ret = swap_all_off();
	if (!ret)
		ret = make_swap(SMALL_SWAP_DEV);
	if (!ret)
		ret = make_swap_size(TEST_SWAP_DEV, bytes);
	if (ret)
		return ret;
	/* Type 0, lowest priority: kept for the type, barely used */
	if (swapon(SMALL_SWAP_DEV, SWAP_FLAG_PREFER | 1))
		return -errno;
	if (swapon(TEST_SWAP_DEV, SWAP_FLAG_PREFER | 10))
		return -errno;
	return 0;
}

int swap_key_set(int offset_key, int trunks)
{
	int ret = swap_all_off();

	if (!ret)
		ret = knob_set("offset_key", offset_key);
	if (!ret)
		ret = knob_set("trunks", trunks);
	return ret;
}

int swap_slow_on(void)
{
	int ret;

	ret = swap_all_off();
	/*
	 * null_blk times a request out after 5 s, and the debug kernel's
	 * completes each 8 s late: a minute, so that only the delay counts
	 */
	if (!ret)
		ret = write_file("/sys/block/nullb0/queue/io_timeout", "60000");
	if (!ret)
		ret = make_swap(SLOW_SWAP_DEV);
	if (!ret && swapon(SLOW_SWAP_DEV, SWAP_FLAG_PREFER | 10))
		ret = -errno;
	return ret;
}

int swap_loop_on(size_t bytes)
{
	int ctl, nr, loop = -1, backing = -1, ret = 0;
	char dev[32];

	ret = swap_all_off();
	if (ret)
		return ret;
	backing = open(LOOP_BACKING, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ctl = open("/dev/loop-control", O_RDWR);
	nr = ctl < 0 ? -1 : ioctl(ctl, LOOP_CTL_GET_FREE);
	if (backing < 0 || nr < 0 || ftruncate(backing, bytes)) {
		ret = -errno;
		goto out;
	}
	snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
	loop = open(dev, O_RDWR);
	if (loop < 0 || ioctl(loop, LOOP_SET_FD, backing)) {
		ret = -errno;
		goto out;
	}
	ret = make_swap(dev);
	if (!ret && swapon(dev, SWAP_FLAG_PREFER | 10))
		ret = -errno;
out:
	if (loop >= 0)
		close(loop);
	if (ctl >= 0)
		close(ctl);
	if (backing >= 0)
		close(backing);
	if (ret)
		swap_loop_off();
	return ret;
}

/* The loop devices over LOOP_BACKING, found through sysfs from any process */
int swap_loop_off(void)
{
	char path[64], backing[256], dev[32];
	int nr, fd, ret = 0;

	for (nr = 0; nr < 64; nr++) {
		snprintf(path, sizeof(path), "/sys/block/loop%d/loop/backing_file", nr);
		if (read_file(path, backing, sizeof(backing)) ||
		    strncmp(backing, LOOP_BACKING "\n", strlen(LOOP_BACKING) + 1))
			continue;
		snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
		if (swapoff(dev) && errno != EINVAL)
			return -errno;
		fd = open(dev, O_RDWR);
		if (fd < 0 || ioctl(fd, LOOP_CLR_FD))
			ret = -errno;
		if (fd >= 0)
			close(fd);
	}
	unlink(LOOP_BACKING);
	return ret;
}

long writeback_kb(void)
{
	/* Fold the per-CPU deltas, or a few pages in flight read as 0 */
	write_file("/proc/sys/vm/stat_refresh", "1");
	return meminfo_kb("Writeback");
}

long writeback_wait_idle(unsigned int seconds)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	unsigned int i;
	long kb = 0;

	for (i = 0; i < seconds * 100; i++) {
		kb = writeback_kb();
		if (!kb)
			break;
		nanosleep(&tick, NULL);
	}
	return kb;
}

void writeback_idle_or_fail(unsigned int seconds)
{
	long busy_kb = writeback_wait_idle(seconds);

	if (busy_kb)
		ksft_exit_fail_msg("%ld kB still under writeback after %u s\n",
				   busy_kb, seconds);
}

/* The rows of @type, or of its space @space alone where @space >= 0 */
static int swap_rows_get(unsigned int type, long space_wanted, struct swap_shape *shape)
{
	unsigned long space, folios, shadows, nodes, height, marks;
	unsigned int row_type;
	char line[256];
	FILE *f;

	memset(shape, 0, sizeof(*shape));
	f = fopen(SPACES_FILE, "r");
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f) ||
	    strcmp(line, "type space folios shadows nodes height wb_marks\n")) {
		fclose(f);
		return -EPROTO;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %lu %lu %lu %lu %lu %lu", &row_type, &space,
			   &folios, &shadows, &nodes, &height, &marks) != 7)
			continue;
		if (row_type != type)
			continue;
		if (space_wanted >= 0 && space != (unsigned long)space_wanted)
			continue;
		shape->spaces++;
		if (folios || shadows)
			shape->used_spaces++;
		shape->folios += folios;
		shape->shadows += shadows;
		shape->nodes += nodes;
		shape->wb_marks += marks;
		if (height > shape->max_height)
			shape->max_height = height;
	}
	fclose(f);
	return 0;
}

int swap_shape_get(unsigned int type, struct swap_shape *shape)
{
	return swap_rows_get(type, -1, shape);
}

int swap_space_get(unsigned int type, unsigned int space, struct swap_shape *shape)
{
	return swap_rows_get(type, space, shape);
}

int wb_marks_total(unsigned long *marks, unsigned long *spaces)
{
	struct swap_shape shape;
	unsigned int type;
	int ret;

	*marks = 0;
	*spaces = 0;
	/* The VM's devices: pmem, brd, and a loop device on the first free type */
	for (type = 0; type < 3; type++) {
		ret = swap_shape_get(type, &shape);
		if (ret)
			return ret;
		*marks += shape.wb_marks;
		*spaces += shape.spaces;
	}
	return 0;
}

void *map_anon(size_t len)
{
	char *p = mmap(NULL, len + THP_SZ, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		ksft_exit_fail_msg("mmap %zu: %s\n", len, strerror(errno));
	return (void *)(((uintptr_t)p + THP_SZ - 1) & ~(THP_SZ - 1));
}

/* Each word names its address and the seed: a misplaced page shows */
static inline uint64_t pattern(const void *word, uint64_t seed)
{
	return ((uintptr_t)word * 0x9e3779b97f4a7c15ULL) ^ seed;
}

void fill_pattern(void *buf, size_t len, uint64_t seed)
{
	uint64_t *w = buf, *end = (uint64_t *)((char *)buf + len);

	for (; w < end; w++)
		*w = pattern(w, seed);
}

size_t count_bad_words(const void *buf, size_t len, uint64_t seed)
{
	const uint64_t *w = buf, *end = (const uint64_t *)((const char *)buf + len);
	size_t bad = 0;

	for (; w < end; w++)
		bad += *w != pattern(w, seed);
	return bad;
}

int page_out(void *buf, size_t len)
{
	return madvise(buf, len, MADV_PAGEOUT) ? -errno : 0;
}

char *map_paged_out(size_t len, uint64_t seed)
{
	char *buf = map_anon(len);

	if (madvise(buf, len, MADV_NOHUGEPAGE))
		ksft_exit_fail_msg("MADV_NOHUGEPAGE: %s\n", strerror(errno));
	fill_pattern(buf, len, seed);
	if (page_out(buf, len))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	return buf;
}

void run_on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		ksft_exit_fail_msg("sched_setaffinity %d: %s\n", cpu, strerror(errno));
}

void cow_chunks(char *buf, size_t len)
{
	volatile char *p;
	size_t off, end;
	pid_t child;

	for (off = 0; off < len; off = end) {
		end = off + CHUNK_PAGES * PAGE_SZ;
		child = fork();
		if (child < 0)
			ksft_exit_fail_msg("fork: %s\n", strerror(errno));
		if (child == 0) {
			/* Its exit drains the LRU batch of its CPU: not CPU 0 */
			run_on_cpu(1);
			pause();
			_exit(0);
		}
		run_on_cpu(0);
		for (p = buf + off; p < buf + end; p += PAGE_SZ)
			(void)*p;
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		run_on_cpu(1);
		/* Rewrite the first word with its own value: data must not move */
		for (p = buf + off; p < buf + end; p += PAGE_SZ)
			*(volatile uint64_t *)p = *(volatile uint64_t *)p;
	}
}

static const char *const quiet_sysctls[] = {
	"/proc/sys/vm/page-cluster",
	"/proc/sys/vm/compaction_proactiveness",
};
static char quiet_saved[ARRAY_SIZE(quiet_sysctls)][32];

/* Back to the values cow_chunks_quiet(true) found; at exit too */
static int quiet_restore(void)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < ARRAY_SIZE(quiet_sysctls); i++) {
		if (quiet_saved[i][0] && write_file(quiet_sysctls[i], quiet_saved[i]))
			ret = -errno;
		quiet_saved[i][0] = '\0';
	}
	return ret;
}

static void quiet_restore_at_exit(void)
{
	quiet_restore();
}

void cow_chunks_quiet(bool on)
{
	static bool registered;
	unsigned int i;

	if (!on) {
		if (quiet_restore())
			ksft_exit_fail_msg("restoring page-cluster, compaction_proactiveness: %s\n",
					   strerror(errno));
		return;
	}
	for (i = 0; i < ARRAY_SIZE(quiet_sysctls); i++) {
		if (read_file(quiet_sysctls[i], quiet_saved[i], sizeof(quiet_saved[i])) ||
		    write_file(quiet_sysctls[i], "0"))
			ksft_exit_fail_msg("setting %s: %s\n", quiet_sysctls[i], strerror(errno));
	}
	if (!registered && !atexit(quiet_restore_at_exit))
		registered = true;
}

void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static const pid_t *workers;
static unsigned int nr_workers;

static void stop_workers(void)
{
	unsigned int i;

	for (i = 0; i < nr_workers; i++)
		if (workers[i] > 0)
			kill(workers[i], SIGKILL);
}

void stop_workers_at_exit(const pid_t *pids, unsigned int nr)
{
	workers = pids;
	nr_workers = nr;
	atexit(stop_workers);
}

/* The test VM's three block devices, in the order that gives each its type */
static const char *const type_devs[] = { SMALL_SWAP_DEV, TEST_SWAP_DEV, SLOW_SWAP_DEV };

int swap_on_as_type(unsigned int type, bool alone)
{
	unsigned int t;
	int ret;

	if (type >= ARRAY_SIZE(type_devs))
		return -EINVAL;
	ret = swap_all_off();
	/* As swap_slow_on(): a minute before null_blk times a request out */
	if (!ret && type == ARRAY_SIZE(type_devs) - 1)
		ret = write_file("/sys/block/nullb0/queue/io_timeout", "60000");
	for (t = 0; !ret && t <= type; t++) {
		ret = make_swap(type_devs[t]);
		if (!ret && swapon(type_devs[t], SWAP_FLAG_PREFER | (t == type ? 10 : 1)))
			ret = -errno;
	}
	for (t = 0; !ret && alone && t < type; t++)
		if (swapoff(type_devs[t]))
			ret = -errno;
	return ret;
}
