/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the swapcache_ab selftests: the module and its knobs,
 * the two swap devices of the test VM, and memory that is checked word by
 * word after it comes back from swap.
 */
#ifndef SWAPCACHE_AB_UTIL_H
#define SWAPCACHE_AB_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KNOB_DIR	"/sys/kernel/mm/swapcache_ab"
#define MEMCG_DIR	KNOB_DIR "/memcg"
#define SPACES_FILE	"/sys/kernel/debug/swapcache_ab/swap_spaces"
#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"
/* The module's parameters that hook sites at mainline's behaviour */
#define MAINLINE_OPS	"/sys/module/swapcache_ab/parameters/mainline_ops"
#define KEY_HOOKED	"/sys/module/swapcache_ab/parameters/key_hooked"

/* A small type-0 device first, so that the device under test gets type 1 */
#define SMALL_SWAP_DEV	"/dev/ram0"
#define TEST_SWAP_DEV	"/dev/pmem0"
/*
 * null_blk, memory backed, completing each I/O seconds late (the VM's
 * kernel command line sets it up): writeback held in flight
 */
#define SLOW_SWAP_DEV	"/dev/nullb0"

#define PAGE_SZ		4096UL
#define THP_SZ		(2UL << 20)

extern const char *const thp_modes[2];
/* Every global knob */
extern const char *const knob_names[4];
/* Every counter under stats/ */
extern const char *const stat_names[2];

/* The module, loaded from $SWAPCACHE_AB_KO (default /swapcache_ab.ko) */
const char *module_path(void);
int module_load(void);
/* With module parameters; any .ko file by its path */
int module_load_params(const char *params);
int module_file_load(const char *path, const char *params);
/* delete_module(2) as it is */
int module_delete(void);
/* The same after key_hooked is written 0 (with swap off, as rmmod needs) */
int module_unload(void);
bool module_loaded(void);
void module_require(void);

/* Knobs: 0 or a negative errno from the write */
int knob_write(const char *knob, const char *buf, size_t len);
int knob_set(const char *knob, int val);
int knob_get(const char *knob);
unsigned long stat_get(const char *name);
/* All of them: what the module's code did, nothing at all while knobs are 1 */
unsigned long stats_sum(void);

/* cgroup2 at /sys/fs/cgroup, the memory controller on for its children */
void memcg_root_set_up(void);
/* A cgroup at @dir (an absolute path), made if missing: its id */
unsigned long long memcg_make(const char *dir);

/* The assignments under memcg/, by their directories */
unsigned int assignments_count(void);
/* Cgroup @id's setting of @policy: '0', '1' or '-'; '?' once unassigned */
char assignment_setting(unsigned long long id, const char *policy);

/* /proc and sysfs numbers */
long meminfo_kb(const char *field);
/* A field of @cgroup's memory.stat (a directory under the cgroup2 mount) */
long memory_stat_get(const char *cgroup, const char *field);
/* And of its memory.events */
long memory_events_get(const char *cgroup, const char *field);
unsigned long vmstat_get(const char *field);
int write_file(const char *path, const char *val);
void set_thp(const char *mode);

/* mkswap: a version 1 header in the first page */
int make_swap(const char *dev);
/* Over the first @bytes of @dev only (0: all of it) */
int make_swap_size(const char *dev, off_t bytes);
/* Swap: both devices off, then on with the test device preferred */
int swap_all_off(void);
int swap_test_on(void);
/* The same with the test device's swap area @bytes long (0: the device) */
int swap_test_on_size(off_t bytes);
/*
 * Or, with both off, a loop device over a tmpfs file of @bytes: writeback
 * completes later, in the loop worker, not inside submission as on pmem
 */
int swap_loop_on(size_t bytes);
/* The swap cache key (knobs offset_key, trunks), which needs all swap off */
int swap_key_set(int offset_key, int trunks);
/* Or, with both off, SLOW_SWAP_DEV alone */
int swap_slow_on(void);
/*
 * Swap type @type (0 to 2) on SMALL_SWAP_DEV, TEST_SWAP_DEV or SLOW_SWAP_DEV,
 * the devices of the types below it turned on first (their lowest
 * priority, @type's preferred), and off again where @alone: the only
 * device in use is then of type @type
 */
int swap_on_as_type(unsigned int type, bool alone);
int swap_loop_off(void);
/* Wait, at most @seconds, for no writeback in flight; the kB left */
long writeback_wait_idle(unsigned int seconds);
/* Or fail the test (ksft_exit_fail_msg) if some is still in flight then */
void writeback_idle_or_fail(unsigned int seconds);
/* The kB under writeback now, the per-CPU counts folded first */
long writeback_kb(void);

struct swap_shape {
	/* Rows, and rows with entries */
	unsigned long spaces, used_spaces;
	unsigned long folios, shadows, nodes, wb_marks;
	unsigned int max_height;
};
/*
 * Sum of the debugfs table's rows for one swap type.  A table without its
 * header line is an error; no row for @type leaves shape->spaces at 0.
 */
int swap_shape_get(unsigned int type, struct swap_shape *shape);
/* Or of one of its spaces, @space (its row alone) */
int swap_space_get(unsigned int type, unsigned int space, struct swap_shape *shape);
/* WRITEBACK marks over every swap device, and how many spaces were read */
int wb_marks_total(unsigned long *marks, unsigned long *spaces);

/*
 * How much memory a test swaps: @bytes divided by $SIZE_DIVISOR (default
 * 1), in whole THPs.  The debug kernel's profile divides: under KASAN and
 * lockdep in TCG, every swapped page costs many times more.
 */
size_t test_size(size_t bytes);

/* Memory: THP-aligned anonymous map, patterns that name their word */
void *map_anon(size_t len);
void fill_pattern(void *buf, size_t len, uint64_t seed);
size_t count_bad_words(const void *buf, size_t len, uint64_t seed);
int page_out(void *buf, size_t len);
/* An anonymous map of @len without THPs, filled with @seed's pattern, paged out */
char *map_paged_out(size_t len, uint64_t seed);

void run_on_cpu(int cpu);
void msleep(unsigned int ms);
/*
 * At exit, also after a failed assertion, SIGKILL each worker of @pids
 * (@nr of them) whose entry is above 0 then: no worker may outlive the
 * test.  The caller keeps the array, and zeroes an entry once it reaped it.
 */
void stop_workers_at_exit(const pid_t *pids, unsigned int nr);
/*
 * COW every page of @buf (swapped out) over a swap cache folio, CHUNK_PAGES
 * at a time: each chunk swapped in on CPU 0 while a child maps it, then
 * written on CPU 1 once the child is gone.  Needs two CPUs; ends on CPU 1.
 */
void cow_chunks(char *buf, size_t len);
/*
 * What cow_chunks() needs to count exactly, @on; off puts back the values
 * it found, as does any exit: one folio per swap-in fault (page-cluster 0,
 * no readahead into the LRU batch) and no proactive compaction (a folio
 * it holds when its COW fault ends stays in the swap cache, whatever
 * cow_free says).
 */
void cow_chunks_quiet(bool on);

#endif
