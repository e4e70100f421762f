/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of the swapcache_ab module share: the policies and their
 * table (policies.c), the knobs, counters and init and exit (main.c), the
 * per memory cgroup settings (memcg.c), the swap cache geometry
 * (geometry.c) and the debug kernels' instrumentation (debug.c).
 */
#ifndef _SWAPCACHE_AB_MODULE_H
#define _SWAPCACHE_AB_MODULE_H

#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/swapcache_ab.h>

struct dentry;
struct seq_file;

/*
 * Where the swap cache pages of an entry go: SWAP_ADDRESS_SPACE_SHIFT of
 * mm/swap.h, one swap address space ("trunk") per 64MB of 4K pages.
 */
#define TRUNK_SHIFT	14

/**
 * enum policy_id - the policies that memory cgroups can set too, one row each
 *	in policies[]
 * @POLICY_SKIP_WB_TAGS: writeback marks on swap cache folios
 * @POLICY_COW_FREE: the swap cache folio a COW fault copied
 * @NR_POLICIES: the number of rows
 */
enum policy_id {
	POLICY_SKIP_WB_TAGS,
	POLICY_COW_FREE,
	NR_POLICIES
};

/**
 * struct policy - a knob whose old policy runs at a hook site, globally or
 *	for the folios of an assigned memory cgroup
 * @name: its knob, in swapcache_ab/ and in each memcg/<cgroup id>/
 * @site: the hook site its old policy runs at
 * @ops: the old policy, registered at @site while it applies anywhere, or
 *	everywhere with mainline_ops
 * @unhooked: clears what the old policy left once @site is unhooked, or NULL
 * @stat: its counter in stats/: the folios its old policy took
 * @memcg_stats: its counters in memcg/<cgroup id>/stats/: the folios the
 *	assignment decided at 0 and at 1
 *
 * Its global knob is policy_knobs[] at its enum policy_id.
 */
struct policy {
	const char *name;
	enum swapcache_ab_site site;
	const struct swapcache_ab_ops *ops;
	void (*unhooked)(void);
	const char *stat;
	const char *memcg_stats[2];
};

extern const struct policy policies[NR_POLICIES];
/* Indexed [offset_key][trunks] */
extern const struct swapcache_ab_ops key_ops[2][2];

/* The global counters: one per policy, at its enum policy_id */
#define NR_SWAPCACHE_AB_STATS	NR_POLICIES

struct swapcache_ab_stats {
	unsigned long count[NR_SWAPCACHE_AB_STATS];
};

DECLARE_PER_CPU(struct swapcache_ab_stats, swapcache_ab_stats);

static inline void count_stat(unsigned int stat)
{
	this_cpu_inc(swapcache_ab_stats.count[stat]);
}

/* main.c: the knobs */
extern struct mutex knob_mutex;
extern bool knobs_ready;
/* Each policy's global knob: 1 for mainline's policy, 0 for the old one */
extern bool policy_knobs[NR_POLICIES];
int apply_policy(enum policy_id policy, bool global);
int parse_knob(const char *buf, size_t count, bool *val);
void __init kobj_attr_init(struct kobj_attribute *attr, const char *name, umode_t mode,
			   ssize_t (*show)(struct kobject *kobj, struct kobj_attribute *attr,
					   char *buf),
			   ssize_t (*store)(struct kobject *kobj, struct kobj_attribute *attr,
					    const char *buf, size_t count));

/*
 * Out of sysfs now, not at the last put: CONFIG_DEBUG_KOBJECT_RELEASE
 * delays that by seconds, and a directory left until then would clash
 * with the next one of its name
 */
static inline void dir_remove(struct kobject *dir)
{
	kobject_del(dir);
	kobject_put(dir);
}

/* memcg.c: a setting of 0 or 1, or none, for the global knob */
#define SETTING_GLOBAL	(-1)

#ifdef CONFIG_MEMCG
int memcg_setting(struct folio *folio, enum policy_id policy);
bool memcg_hooks(enum policy_id policy);
int __init memcg_init(struct kobject *parent);
void memcg_exit(void);
#else
static inline int memcg_setting(struct folio *folio, enum policy_id policy)
{
	return SETTING_GLOBAL;
}

static inline bool memcg_hooks(enum policy_id policy)
{
	return false;
}

static inline int memcg_init(struct kobject *parent)
{
	return 0;
}

static inline void memcg_exit(void)
{
}
#endif

/* geometry.c */
void walk_swap_spaces(void (*fn)(struct seq_file *m, unsigned int type,
				 unsigned int index, struct address_space *space),
		      struct seq_file *m);
void __init geometry_init(struct dentry *dir);

/* debug.c, debug kernels only: selftests/reload */
#ifdef CONFIG_FAULT_INJECTION
void hold_policy(void);
#else
static inline void hold_policy(void)
{
}
#endif

#endif /* _SWAPCACHE_AB_MODULE_H */
