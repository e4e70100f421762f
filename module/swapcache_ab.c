// SPDX-License-Identifier: GPL-2.0
/*
 * swapcache_ab: the swap cache policies that upstream replaced, run at the
 * hook points of CONFIG_SWAPCACHE_AB_HOOKS for A/B measurements.
 *
 * /sys/kernel/mm/swapcache_ab/ holds one knob per policy, 1 for today's
 * mainline policy (the default) and 0 for the one it replaced upstream,
 * stats/ with what each policy did, and memcg/ with per memory cgroup
 * settings of the writeback and COW policies, so that both sides of an
 * A/B can run at once.  The geometry of every swap cache xarray is in
 * debugfs, swapcache_ab/swap_spaces.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/ftrace.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <linux/swapcache_ab.h>
#include <linux/swapops.h>
#include <linux/sysfs.h>
#include <linux/xarray.h>

/*
 * Where the swap cache pages of an entry go: SWAP_ADDRESS_SPACE_SHIFT of
 * mm/swap.h, one swap address space ("trunk") per 64MB of 4K pages.
 */
#define TRUNK_SHIFT	14

enum swapcache_ab_stat {
	SWAPCACHE_AB_INDEX_OFFSET,
	SWAPCACHE_AB_INDEX_ENTRY,
	SWAPCACHE_AB_WB_TAGGED,
	SWAPCACHE_AB_COW_KEPT,
	NR_SWAPCACHE_AB_STATS
};

struct swapcache_ab_stats {
	unsigned long count[NR_SWAPCACHE_AB_STATS];
};

static DEFINE_PER_CPU(struct swapcache_ab_stats, swapcache_ab_stats);

static void count_stat(enum swapcache_ab_stat stat)
{
	this_cpu_inc(swapcache_ab_stats.count[stat]);
}

#ifdef CONFIG_FAULT_INJECTION
/*
 * Debug kernels only, for selftests/callsites: where the key's policies
 * are called from, while recording is on.  The kernel makes a direct
 * (static) call from the function that computes the index or the space:
 * its return address is depth 0; where frame pointers tell, its caller's
 * is depth 1 (folio_mapping()'s callers, say) and theirs depth 2 (6.1's
 * page_mapping() callers).  In debugfs,
 * swapcache_ab/key_callers: "1" empties it and records, "0" stops.  Any
 * context may record: the table is filled with cmpxchg() only.
 */
#define NR_KEY_CALLERS	512
static struct {
	unsigned long ip;
	unsigned int depth;
	atomic_long_t calls;
} key_callers[NR_KEY_CALLERS];
static atomic_long_t key_callers_lost;
static bool key_callers_on;

static void record_key_ip(unsigned long ip, unsigned int depth)
{
	unsigned int i, slot = hash_long(ip, ilog2(NR_KEY_CALLERS));
	unsigned long seen;

	for (i = 0; i < NR_KEY_CALLERS; i++, slot = (slot + 1) % NR_KEY_CALLERS) {
		seen = READ_ONCE(key_callers[slot].ip);
		if (!seen) {
			seen = cmpxchg(&key_callers[slot].ip, 0, ip) ?: ip;
			if (seen == ip)
				WRITE_ONCE(key_callers[slot].depth, depth);
		}
		if (seen == ip) {
			atomic_long_inc(&key_callers[slot].calls);
			return;
		}
	}
	atomic_long_inc(&key_callers_lost);
}

static __always_inline void record_key_caller(void)
{
	unsigned long caller, theirs;

	if (!READ_ONCE(key_callers_on))
		return;
	record_key_ip(_RET_IP_, 0);
	/* The frame walk only where there is a frame to walk to */
	caller = CALLER_ADDR1;
	if (!caller)
		return;
	record_key_ip(caller, 1);
	theirs = CALLER_ADDR2;
	if (theirs)
		record_key_ip(theirs, 2);
}

static int key_callers_show(struct seq_file *m, void *unused)
{
	unsigned long ip;
	unsigned int i;

	for (i = 0; i < NR_KEY_CALLERS; i++) {
		ip = READ_ONCE(key_callers[i].ip);
		if (ip)
			seq_printf(m, "%ld %u %pB\n", atomic_long_read(&key_callers[i].calls),
				   READ_ONCE(key_callers[i].depth), (void *)ip);
	}
	seq_printf(m, "%ld lost\n", atomic_long_read(&key_callers_lost));
	return 0;
}

static int key_callers_open(struct inode *inode, struct file *file)
{
	return single_open(file, key_callers_show, NULL);
}

static ssize_t key_callers_write(struct file *file, const char __user *buf,
				 size_t count, loff_t *ppos)
{
	unsigned int i;
	bool on;
	int err;

	err = kstrtobool_from_user(buf, count, &on);
	if (err)
		return err;
	WRITE_ONCE(key_callers_on, false);
	if (!on)
		return count;
	/* A call still recording from before may land in the new table */
	for (i = 0; i < NR_KEY_CALLERS; i++) {
		WRITE_ONCE(key_callers[i].ip, 0);
		atomic_long_set(&key_callers[i].calls, 0);
	}
	atomic_long_set(&key_callers_lost, 0);
	WRITE_ONCE(key_callers_on, true);
	return count;
}

static const struct file_operations key_callers_fops = {
	.owner = THIS_MODULE,
	.open = key_callers_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = key_callers_write,
};

static void key_callers_create(struct dentry *dir)
{
	debugfs_create_file("key_callers", 0644, dir, NULL, &key_callers_fops);
}
#else
static void record_key_caller(void)
{
}

static void key_callers_create(struct dentry *dir)
{
}
#endif

/*
 * The policies.  Each runs at its hook site only while its knob, or a
 * memory cgroup's setting of it, is 0: otherwise the site's static key is
 * off and the kernel runs mainline code alone.
 */

/* Before v4.9 the swap cache was keyed by the whole entry, type bits too */
static pgoff_t index_by_entry(swp_entry_t entry)
{
	record_key_caller();
	count_stat(SWAPCACHE_AB_INDEX_ENTRY);
	return entry.val;
}

/* v4.9 and v4.10: by offset, in one tree per device */
static pgoff_t index_by_offset(swp_entry_t entry)
{
	record_key_caller();
	count_stat(SWAPCACHE_AB_INDEX_OFFSET);
	return swp_offset(entry);
}

/*
 * Mainline's, for mainline_ops: since v6.10 by offset within the 64MB
 * trunk, by the whole offset before
 */
static pgoff_t index_mainline(swp_entry_t entry)
{
	if (SWAPCACHE_AB_INDEX_IN_SPACE)
		return swp_offset(entry) & ((1UL << TRUNK_SHIFT) - 1);
	return swp_offset(entry);
}

/* Before v4.11 a swap device had a single swap address space */
static struct address_space *one_space(swp_entry_t entry, struct address_space *spaces)
{
	record_key_caller();
	return spaces;
}

static struct address_space *space_of_64mb(swp_entry_t entry, struct address_space *spaces)
{
	record_key_caller();
	return &spaces[swp_offset(entry) >> TRUNK_SHIFT];
}

/*
 * Indexed [offset_key][trunks]; both at 1 is mainline: no ops, but for
 * mainline_ops
 */
static const struct swapcache_ab_ops key_ops[2][2] = {
	[0][0] = {
		.cache_index = index_by_entry,
		.cache_space = one_space,
	},
	[0][1] = {
		.cache_index = index_by_entry,
		.cache_space = space_of_64mb,
	},
	[1][0] = {
		.cache_index = index_by_offset,
		.cache_space = one_space,
	},
	[1][1] = {
		.cache_index = index_mainline,
		.cache_space = space_of_64mb,
	},
};

/*
 * Serialises knob and assignment writes, and with them what they set in
 * the kernel
 */
static DEFINE_MUTEX(knob_mutex);
static bool offset_key = true;
static bool trunks = true;
static bool skip_wb_tags = true;
static bool cow_free = true;
/*
 * Every site hooked with the module's policies even where they give
 * mainline's answer: what the hooks themselves cost (the hooked A/A)
 */
static bool mainline_ops;
/* Set once init has made everything a write can change, cleared at exit */
static bool ready;
/* What each site has registered, under knob_mutex */
static const struct swapcache_ab_ops *registered[NR_SWAPCACHE_AB_SITES];

/* Call @fn for every swap address space of every swap device in use */
static void walk_swap_spaces(void (*fn)(struct seq_file *m, unsigned int type,
					unsigned int index, struct address_space *space),
			     struct seq_file *m)
{
	struct address_space *spaces;
	struct swap_info_struct *si;
	unsigned int type, i;

	for (type = 0; type < MAX_SWAPFILES; type++) {
		si = swap_cache_get_spaces(type, &spaces);
		if (!si)
			continue;
		for (i = 0; i < DIV_ROUND_UP(si->max, 1UL << TRUNK_SHIFT); i++)
			fn(m, type, i, &spaces[i]);
		put_swap_device(si);
	}
}

/*
 * Once the writeback site is unhooked, the ends of writebacks still in
 * flight run mainline code, which leaves their marks: clear every mark
 * left in every swap cache xarray.  No mark can be set meanwhile, and
 * there are at most as many as writebacks in flight, so each space is
 * swept in one hold of its lock.  A device whose swap_cache_get_spaces()
 * fails has no swap cache yet, or swapoff has freed every slot, and
 * freeing a slot erases its mark.
 */
static void clear_space_marks(struct seq_file *unused, unsigned int type,
			      unsigned int index, struct address_space *space)
{
	XA_STATE(xas, &space->i_pages, 0);
	void *entry;

	/* Set before the grace period that unhooking waited for */
	if (!mapping_tagged(space, PAGECACHE_TAG_WRITEBACK))
		return;
	xas_lock_irq(&xas);
	xas_for_each_marked(&xas, entry, ULONG_MAX, PAGECACHE_TAG_WRITEBACK)
		xas_clear_mark(&xas, PAGECACHE_TAG_WRITEBACK);
	xas_unlock_irq(&xas);
	cond_resched();
}

static void clear_wb_marks(void)
{
	walk_swap_spaces(clear_space_marks, NULL);
}

/* Register @ops at @site in place of what is there (NULL: mainline) */
static int set_site(enum swapcache_ab_site site, const struct swapcache_ab_ops *ops)
{
	int err;

	lockdep_assert_held(&knob_mutex);
	if (ops == registered[site])
		return 0;
	if (registered[site]) {
		err = swapcache_ab_unregister(site, registered[site]);
		if (err)
			return err;
		registered[site] = NULL;
		if (site == SWAPCACHE_AB_WB)
			clear_wb_marks();
	}
	err = ops ? swapcache_ab_register(site, ops) : 0;
	if (!err)
		registered[site] = ops;
	return err;
}

/*
 * skip_wb_tags and cow_free can also be set per memory cgroup, so that
 * both sides of an A/B run at the same time on one kernel.  A folio takes
 * the setting of the nearest assignment that sets the policy, from the
 * cgroup it is charged to up to the root; without one, the global knob's.
 * Assignments name cgroups by id, which the kernel does not reuse: nothing
 * here pins a cgroup, and after rmdir the folios still charged to it keep
 * its setting.
 */
#define MAX_ASSIGNMENTS		16
#define SETTING_GLOBAL		(-1)	/* follow the global knob */

enum memcg_policy {
	POLICY_SKIP_WB_TAGS,
	POLICY_COW_FREE,
	NR_POLICIES
};

/* What each assignment's setting decided */
enum memcg_stat {
	MEMCG_WB_TAGGED,
	MEMCG_WB_UNTAGGED,
	MEMCG_COW_KEPT,
	MEMCG_COW_RELEASED,
	NR_MEMCG_STATS
};

struct memcg_stats {
	unsigned long count[NR_MEMCG_STATS];
};

struct assignment {
	u64 cgroup_id;
	int setting[NR_POLICIES];	/* 0, 1 or SETTING_GLOBAL */
	struct memcg_stats __percpu *stats;
	struct kobject *dir;		/* memcg/<cgroup id>/ */
	struct rcu_head rcu;
	char path[];			/* the cgroup's when assigned */
};

/* Set under knob_mutex, read by the policies under rcu_read_lock() */
static struct assignment __rcu *assignments[MAX_ASSIGNMENTS];
static unsigned int nr_assignments;

static struct assignment *find_assignment(u64 cgroup_id, unsigned int *slot)
{
	struct assignment *a;
	unsigned int i;

	for (i = 0; i < MAX_ASSIGNMENTS; i++) {
		a = rcu_dereference_check(assignments[i], lockdep_is_held(&knob_mutex));
		if (a && a->cgroup_id == cgroup_id) {
			if (slot)
				*slot = i;
			return a;
		}
	}
	return NULL;
}

#ifdef CONFIG_MEMCG
/*
 * The assignment that decides @policy for @folio, its setting in
 * *@setting; NULL, *@setting untouched, for the global knob.  The hooks'
 * RCU section keeps the memcg and the assignment alive.
 */
static struct assignment *folio_assignment(struct folio *folio,
					   enum memcg_policy policy, int *setting)
	__must_hold(RCU)
{
	struct mem_cgroup *memcg;
	struct assignment *a;
	struct cgroup *cgrp;
	int level, value;

	memcg = folio_memcg_rcu(folio);
	if (!memcg)
		return NULL;
	cgrp = memcg->css.cgroup;
	for (level = cgrp->level; level >= 0; level--) {
		a = find_assignment(cgroup_id(cgrp->ancestors[level]), NULL);
		value = a ? READ_ONCE(a->setting[policy]) : SETTING_GLOBAL;
		if (value != SETTING_GLOBAL) {
			*setting = value;
			return a;
		}
	}
	return NULL;
}

/*
 * @name: a cgroup v2 path from the root of the hierarchy, as in
 * /proc/<pid>/cgroup, or a cgroup id.  With @path, the cgroup must have a
 * memory controller of its own (folios are charged to no other kind) and
 * *@path gets its path, to kfree().
 */
static int memcg_lookup(const char *name, u64 *id, char **path)
{
	struct cgroup *cgrp;
	u64 by_id;
	int err = 0;

	if (name[0] == '/')
		cgrp = cgroup_get_from_path(name);
	else if (!kstrtou64(name, 10, &by_id))
		cgrp = cgroup_get_from_id(by_id);
	else
		return -EINVAL;
	if (IS_ERR(cgrp))
		return PTR_ERR(cgrp);
	*id = cgroup_id(cgrp);
	if (path && !rcu_access_pointer(cgrp->subsys[memory_cgrp_id]))
		err = -EOPNOTSUPP;
	if (path && !err) {
		*path = kmalloc(PATH_MAX, GFP_KERNEL);
		if (!*path)
			err = -ENOMEM;
		else if (cgroup_path(cgrp, *path, PATH_MAX) >= PATH_MAX)
			err = -ENAMETOOLONG;	/* it returns the untruncated length */
		if (err)
			kfree(*path);
	}
	cgroup_put(cgrp);
	return err;
}
#else
static struct assignment *folio_assignment(struct folio *folio,
					   enum memcg_policy policy, int *setting)
{
	return NULL;
}

static int memcg_lookup(const char *name, u64 *id, char **path)
{
	return -EOPNOTSUPP;
}
#endif

/*
 * The setting of @policy for @folio, @global's unless an assignment
 * decides, which counts the folio in @if_0 or @if_1.  The kernel calls the
 * policies without a read-side section: RCU keeps the memcg and the
 * assignment, and is only needed once there are assignments.
 */
static bool folio_setting(struct folio *folio, enum memcg_policy policy, bool global,
			  enum memcg_stat if_0, enum memcg_stat if_1)
{
	struct assignment *a;
	int value = global;

	if (!READ_ONCE(nr_assignments))
		return global;
	rcu_read_lock();
	a = folio_assignment(folio, policy, &value);
	if (a)
		this_cpu_inc(a->stats->count[value ? if_1 : if_0]);
	rcu_read_unlock();
	return value;
}

#ifdef CONFIG_FAULT_INJECTION
/*
 * Debug kernels only, for selftests/reload: the next tagging decision
 * spins hold_policy_ms in this module's text, preemptible as the site
 * calls it, policy_held 1 meanwhile, so that a test can unhook the site
 * and unload the module under it: unregistering must wait.
 */
static unsigned int hold_policy_ms;
module_param(hold_policy_ms, uint, 0644);
/* Far below the RCU stall (21 s) and soft lockup (20 s) detectors */
#define HOLD_POLICY_MAX_MS	5000U
MODULE_PARM_DESC(hold_policy_ms, "debug: the next tagging decision spins this long (ms, 5000 at most)");
static int policy_held;
module_param(policy_held, int, 0444);
MODULE_PARM_DESC(policy_held, "debug: 1 while a CPU spins in the tagging decision");

static void hold_policy(void)
{
	unsigned int ms = READ_ONCE(hold_policy_ms);

	if (ms && cmpxchg(&hold_policy_ms, ms, 0) == ms) {
		WRITE_ONCE(policy_held, 1);
		mdelay(min(ms, HOLD_POLICY_MAX_MS));
		WRITE_ONCE(policy_held, 0);
	}
}
#else
static void hold_policy(void)
{
}
#endif

/* skip_wb_tags=0 for @folio, globally or by its memory cgroup */
static bool tag_decision(struct folio *folio)
{
	hold_policy();
	if (folio_setting(folio, POLICY_SKIP_WB_TAGS, READ_ONCE(skip_wb_tags),
			  MEMCG_WB_TAGGED, MEMCG_WB_UNTAGGED))
		return false;
	count_stat(SWAPCACHE_AB_WB_TAGGED);
	return true;
}

/*
 * Before v4.9 every swap cache folio under writeback took the writeback
 * mark of file folios, set at the start and cleared at the end, each under
 * the xa_lock.  The end clears a mark whatever the knob is by then, a
 * failed write's included; the marks of writebacks still in flight when
 * the site is unhooked are cleared by clear_wb_marks().  A mark left would
 * stay even in the folio's shadow entry.
 */
static void tag_writeback(struct folio *folio, struct address_space *mapping, bool end)
{
	XA_STATE(xas, &mapping->i_pages, folio_index(folio));
	unsigned long flags;

	/* A start marks before its I/O is submitted: its end sees the mark */
	if (end ? !mapping_tagged(mapping, PAGECACHE_TAG_WRITEBACK) : !tag_decision(folio))
		return;
	xas_lock_irqsave(&xas, flags);
	xas_load(&xas);
	if (end)
		xas_clear_mark(&xas, PAGECACHE_TAG_WRITEBACK);
	else
		xas_set_mark(&xas, PAGECACHE_TAG_WRITEBACK);
	xas_unlock_irqrestore(&xas, flags);
}

static const struct swapcache_ab_ops wb_ops = {
	.writeback = tag_writeback,
};

/*
 * Before v5.14 the swap cache folio a COW copied was left for reclaim;
 * false lets the kernel free it, as mainline does.
 */
static bool keep_after_cow(struct folio *folio)
{
	if (!folio_test_swapcache(folio) ||
	    folio_setting(folio, POLICY_COW_FREE, READ_ONCE(cow_free),
			  MEMCG_COW_KEPT, MEMCG_COW_RELEASED))
		return false;
	count_stat(SWAPCACHE_AB_COW_KEPT);
	return true;
}

static const struct swapcache_ab_ops cow_ops = {
	.keep_after_cow = keep_after_cow,
};

/*
 * The kernel refuses a new key while any swap device is in use (-EBUSY),
 * and keeps this module loaded while its key is set.  Between the old
 * key's unregistering and the new one's registering a swapon may start:
 * the device then has mainline's key, and so do the knobs.
 */
static int apply_key(bool by_offset, bool per_64mb)
{
	const struct swapcache_ab_ops *ops = &key_ops[by_offset][per_64mb];
	int err;

	err = set_site(SWAPCACHE_AB_KEY, by_offset && per_64mb && !mainline_ops ? NULL : ops);
	if (err && !registered[SWAPCACHE_AB_KEY]) {
		WRITE_ONCE(offset_key, true);
		WRITE_ONCE(trunks, true);
	}
	return err;
}

static int apply_offset_key(bool val)
{
	return apply_key(val, trunks);
}

static int apply_trunks(bool val)
{
	return apply_key(offset_key, val);
}

/*
 * A policy's site is hooked while its old policy applies anywhere: the
 * global knob at 0, or an assignment at 0.
 */
static int apply_policy(enum memcg_policy policy, bool global)
{
	static const enum swapcache_ab_site site[NR_POLICIES] = {
		[POLICY_SKIP_WB_TAGS] = SWAPCACHE_AB_WB,
		[POLICY_COW_FREE] = SWAPCACHE_AB_COW,
	};
	static const struct swapcache_ab_ops *const ops[NR_POLICIES] = {
		[POLICY_SKIP_WB_TAGS] = &wb_ops,
		[POLICY_COW_FREE] = &cow_ops,
	};
	bool hooked = !global || mainline_ops;
	struct assignment *a;
	unsigned int i;

	lockdep_assert_held(&knob_mutex);
	for (i = 0; i < MAX_ASSIGNMENTS; i++) {
		a = rcu_dereference_protected(assignments[i], lockdep_is_held(&knob_mutex));
		if (a && !a->setting[policy])
			hooked = true;
	}
	return set_site(site[policy], hooked ? ops[policy] : NULL);
}

static int apply_skip_wb_tags(bool val)
{
	return apply_policy(POLICY_SKIP_WB_TAGS, val);
}

static int apply_cow_free(bool val)
{
	return apply_policy(POLICY_COW_FREE, val);
}

/*
 * Strictly "0" or "1", a trailing newline allowed.  kstrtobool() reads the
 * first character only and would take "0x1" for 0 and "yes please" for 1,
 * kstrtouint() "+1" and "01"; a typo in an A/B script should fail loudly.
 */
static int parse_knob(const char *buf, size_t count, bool *val)
{
	if (count && buf[count - 1] == '\n')
		count--;
	if (count != 1 || (buf[0] != '0' && buf[0] != '1'))
		return -EINVAL;
	*val = buf[0] == '1';
	return 0;
}

struct knob_attribute {
	struct kobj_attribute attr;
	bool *value;
	int (*apply)(bool val);
};

static ssize_t knob_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct knob_attribute *ka = container_of(attr, struct knob_attribute, attr);

	return sysfs_emit(buf, "%d\n", READ_ONCE(*ka->value));
}

/*
 * A write racing rmmod must not change anything once the module is going:
 * its exit is about to restore mainline.
 */
static ssize_t knob_store(struct kobject *kobj, struct kobj_attribute *attr,
			  const char *buf, size_t count)
{
	struct knob_attribute *ka = container_of(attr, struct knob_attribute, attr);
	bool val;
	int err;

	err = parse_knob(buf, count, &val);
	if (err)
		return err;
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	mutex_lock(&knob_mutex);
	err = ready ? ka->apply(val) : -ENODEV;
	if (!err)
		WRITE_ONCE(*ka->value, val);
	mutex_unlock(&knob_mutex);
	module_put(THIS_MODULE);
	return err ? err : count;
}

#define KNOB_ATTR(_name)						\
	static struct knob_attribute _name##_attr = {			\
		.attr = {						\
			.attr = { .name = #_name, .mode = 0644 },	\
			.show = knob_show,				\
			.store = knob_store,				\
		},							\
		.value = &(_name),					\
		.apply = apply_##_name,					\
	}

KNOB_ATTR(offset_key);
KNOB_ATTR(trunks);
KNOB_ATTR(skip_wb_tags);
KNOB_ATTR(cow_free);

static struct attribute *knob_attrs[] = {
	&offset_key_attr.attr.attr,
	&trunks_attr.attr.attr,
	&skip_wb_tags_attr.attr.attr,
	&cow_free_attr.attr.attr,
	NULL,
};

static const struct attribute_group knob_group = {
	.attrs = knob_attrs,
};

struct stat_attribute {
	struct kobj_attribute attr;
	enum swapcache_ab_stat stat;
};

static ssize_t stat_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct stat_attribute *sa = container_of(attr, struct stat_attribute, attr);
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(swapcache_ab_stats, cpu).count[sa->stat];
	return sysfs_emit(buf, "%lu\n", sum);
}

#define STAT_ATTR(_name, _stat)						\
	static struct stat_attribute _name##_attr = {			\
		.attr = __ATTR(_name, 0444, stat_show, NULL),		\
		.stat = _stat,						\
	}

STAT_ATTR(index_offset, SWAPCACHE_AB_INDEX_OFFSET);
STAT_ATTR(index_entry, SWAPCACHE_AB_INDEX_ENTRY);
STAT_ATTR(wb_tagged, SWAPCACHE_AB_WB_TAGGED);
STAT_ATTR(cow_kept, SWAPCACHE_AB_COW_KEPT);

static struct attribute *stats_attrs[] = {
	&index_offset_attr.attr.attr,
	&index_entry_attr.attr.attr,
	&wb_tagged_attr.attr.attr,
	&cow_kept_attr.attr.attr,
	NULL,
};

static const struct attribute_group stats_group = {
	.name = "stats",
	.attrs = stats_attrs,
};

static const struct attribute_group *swapcache_ab_groups[] = {
	&knob_group,
	&stats_group,
	NULL,
};

static struct kobject *swapcache_ab_kobj;

/* memcg/<cgroup id>/: one assignment's settings and counters */
struct assignment_attribute {
	struct kobj_attribute attr;
	unsigned int index;	/* enum memcg_policy or enum memcg_stat */
};

/*
 * The directory's assignment, found by the id it is named by, under
 * knob_mutex or RCU; NULL once unassigned.  The directory is the core's
 * kobject (kobject_create_and_add()): its release, however late it runs
 * (CONFIG_DEBUG_KOBJECT_RELEASE delays it by seconds), is no code of
 * this module's, and its files are gone once kobject_del() returns.
 */
static struct assignment *dir_assignment(struct kobject *dir)
{
	u64 id;

	if (kstrtou64(kobject_name(dir), 10, &id))
		return NULL;
	return find_assignment(id, NULL);
}

static unsigned int to_index(struct kobj_attribute *attr)
{
	return container_of(attr, struct assignment_attribute, attr)->index;
}

static ssize_t setting_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct assignment *a;
	int value = 0;

	rcu_read_lock();
	a = dir_assignment(kobj);
	if (a)
		value = READ_ONCE(a->setting[to_index(attr)]);
	rcu_read_unlock();
	if (!a)
		return -ENODEV;
	return value == SETTING_GLOBAL ? sysfs_emit(buf, "-\n") : sysfs_emit(buf, "%d\n", value);
}

/* "0", "1", or "-" to follow the global knob again */
static ssize_t setting_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	enum memcg_policy policy = to_index(attr);
	int old, value = SETTING_GLOBAL;
	struct assignment *a;
	bool val;
	int err;

	if (!((count == 1 || (count == 2 && buf[1] == '\n')) && buf[0] == '-')) {
		err = parse_knob(buf, count, &val);
		if (err)
			return err;
		value = val;
	}
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	mutex_lock(&knob_mutex);
	err = -ENODEV;
	a = ready ? dir_assignment(kobj) : NULL;
	if (a) {
		old = a->setting[policy];
		WRITE_ONCE(a->setting[policy], value);
		err = apply_policy(policy, policy == POLICY_SKIP_WB_TAGS ? skip_wb_tags : cow_free);
		if (err)
			WRITE_ONCE(a->setting[policy], old);
	}
	mutex_unlock(&knob_mutex);
	module_put(THIS_MODULE);
	return err ? err : count;
}

static ssize_t memcg_stat_show(struct kobject *kobj, struct kobj_attribute *attr,
			       char *buf)
{
	unsigned long sum = 0;
	struct assignment *a;
	int cpu;

	rcu_read_lock();
	a = dir_assignment(kobj);
	if (a) {
		for_each_possible_cpu(cpu)
			sum += per_cpu_ptr(a->stats, cpu)->count[to_index(attr)];
	}
	rcu_read_unlock();
	return a ? sysfs_emit(buf, "%lu\n", sum) : -ENODEV;
}

static ssize_t path_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	ssize_t ret = -ENODEV;
	struct assignment *a;

	rcu_read_lock();
	a = dir_assignment(kobj);
	if (a)
		ret = sysfs_emit(buf, "%s\n", a->path);
	rcu_read_unlock();
	return ret;
}

#define ASSIGNMENT_ATTR(_name, _mode, _show, _store, _index)		\
	static struct assignment_attribute assignment_##_name##_attr = {	\
		.attr = __ATTR(_name, _mode, _show, _store),		\
		.index = _index,					\
	}

ASSIGNMENT_ATTR(skip_wb_tags, 0644, setting_show, setting_store, POLICY_SKIP_WB_TAGS);
ASSIGNMENT_ATTR(cow_free, 0644, setting_show, setting_store, POLICY_COW_FREE);
ASSIGNMENT_ATTR(path, 0444, path_show, NULL, 0);
ASSIGNMENT_ATTR(wb_tagged, 0444, memcg_stat_show, NULL, MEMCG_WB_TAGGED);
ASSIGNMENT_ATTR(wb_untagged, 0444, memcg_stat_show, NULL, MEMCG_WB_UNTAGGED);
ASSIGNMENT_ATTR(cow_kept, 0444, memcg_stat_show, NULL, MEMCG_COW_KEPT);
ASSIGNMENT_ATTR(cow_released, 0444, memcg_stat_show, NULL, MEMCG_COW_RELEASED);

static struct attribute *assignment_attrs[] = {
	&assignment_skip_wb_tags_attr.attr.attr,
	&assignment_cow_free_attr.attr.attr,
	&assignment_path_attr.attr.attr,
	NULL,
};

static const struct attribute_group assignment_group = {
	.attrs = assignment_attrs,
};

static struct attribute *assignment_stats_attrs[] = {
	&assignment_wb_tagged_attr.attr.attr,
	&assignment_wb_untagged_attr.attr.attr,
	&assignment_cow_kept_attr.attr.attr,
	&assignment_cow_released_attr.attr.attr,
	NULL,
};

static const struct attribute_group assignment_stats_group = {
	.name = "stats",
	.attrs = assignment_stats_attrs,
};

static const struct attribute_group *assignment_groups[] = {
	&assignment_group,
	&assignment_stats_group,
	NULL,
};

static void assignment_free_rcu(struct rcu_head *rcu)
{
	struct assignment *a = container_of(rcu, struct assignment, rcu);

	free_percpu(a->stats);
	kfree(a);
}

/*
 * Out of sysfs now, not at the last put: CONFIG_DEBUG_KOBJECT_RELEASE
 * delays that by seconds, and a directory left until then would clash
 * with the next one of its name
 */
static void dir_remove(struct kobject *dir)
{
	kobject_del(dir);
	kobject_put(dir);
}

static struct kobject *memcg_kobj;
/*
 * Held by assign, unassign and module exit until an unassigned id's
 * directory is gone, so that assigning the id again cannot find it there.
 * Taken before knob_mutex; the settings' writers take knob_mutex alone, so
 * removing a directory may wait for them.
 */
static DEFINE_MUTEX(assign_mutex);

static int assign(u64 cgroup_id, const char *path)
{
	size_t len = strlen(path);
	struct assignment *a;
	unsigned int slot;
	char name[24];
	int err;

	a = kzalloc(struct_size(a, path, len + 1), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	a->stats = alloc_percpu(struct memcg_stats);
	if (!a->stats) {
		kfree(a);
		return -ENOMEM;
	}
	a->cgroup_id = cgroup_id;
	a->setting[POLICY_SKIP_WB_TAGS] = SETTING_GLOBAL;
	a->setting[POLICY_COW_FREE] = SETTING_GLOBAL;
	memcpy(a->path, path, len + 1);
	snprintf(name, sizeof(name), "%llu", cgroup_id);

	mutex_lock(&knob_mutex);
	err = !ready ? -ENODEV : find_assignment(cgroup_id, NULL) ? -EEXIST : -ENOSPC;
	for (slot = 0; err == -ENOSPC && slot < MAX_ASSIGNMENTS; slot++)
		if (!rcu_access_pointer(assignments[slot]))
			break;
	if (err == -ENOSPC && slot < MAX_ASSIGNMENTS) {
		a->dir = kobject_create_and_add(name, memcg_kobj);
		err = a->dir ? sysfs_create_groups(a->dir, assignment_groups) : -ENOMEM;
	}
	if (!err) {
		rcu_assign_pointer(assignments[slot], a);
		WRITE_ONCE(nr_assignments, nr_assignments + 1);
	}
	mutex_unlock(&knob_mutex);
	if (err) {	/* never published: no policy or file can have found it */
		dir_remove(a->dir);
		free_percpu(a->stats);
		kfree(a);
	}
	return err;
}

/*
 * Detach under knob_mutex; the caller removes the directory after
 * dropping it, as removal waits for writers, which take it.
 */
static struct assignment *detach(u64 cgroup_id)
{
	unsigned int slot;
	struct assignment *a;

	lockdep_assert_held(&knob_mutex);
	a = find_assignment(cgroup_id, &slot);
	if (!a)
		return NULL;
	RCU_INIT_POINTER(assignments[slot], NULL);
	WRITE_ONCE(nr_assignments, nr_assignments - 1);
	/* Only a setting at 0 can have hooked a site; unhooking cannot fail */
	if (!a->setting[POLICY_SKIP_WB_TAGS])
		WARN_ON(apply_policy(POLICY_SKIP_WB_TAGS, skip_wb_tags));
	if (!a->setting[POLICY_COW_FREE])
		WARN_ON(apply_policy(POLICY_COW_FREE, cow_free));
	return a;
}

/* Policies and files may still be reading it: freed after a grace period */
static void assignment_remove(struct assignment *a)
{
	dir_remove(a->dir);
	call_rcu(&a->rcu, assignment_free_rcu);
}

/* The cgroup named in a write to assign or unassign, newline stripped */
static char *assignment_name(const char *buf, size_t count)
{
	if (count && buf[count - 1] == '\n')
		count--;
	return count ? kmemdup_nul(buf, count, GFP_KERNEL) : ERR_PTR(-EINVAL);
}

static ssize_t assign_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	char *name, *path;
	u64 cgroup_id;
	int err;

	name = assignment_name(buf, count);
	if (IS_ERR_OR_NULL(name))
		return name ? PTR_ERR(name) : -ENOMEM;
	err = memcg_lookup(name, &cgroup_id, &path);
	kfree(name);
	if (err)
		return err;
	if (!try_module_get(THIS_MODULE)) {
		kfree(path);
		return -ENODEV;
	}
	mutex_lock(&assign_mutex);
	err = assign(cgroup_id, path);
	mutex_unlock(&assign_mutex);
	module_put(THIS_MODULE);
	kfree(path);
	return err ? err : count;
}

/* By id, or by path while the cgroup exists */
static ssize_t unassign_store(struct kobject *kobj, struct kobj_attribute *attr,
			      const char *buf, size_t count)
{
	struct assignment *a;
	char *name;
	u64 cgroup_id;
	int err = 0;

	name = assignment_name(buf, count);
	if (IS_ERR_OR_NULL(name))
		return name ? PTR_ERR(name) : -ENOMEM;
	if (name[0] == '/')
		err = memcg_lookup(name, &cgroup_id, NULL);
	else if (kstrtou64(name, 10, &cgroup_id))
		err = -EINVAL;
	kfree(name);
	if (err)
		return err;
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	mutex_lock(&assign_mutex);
	mutex_lock(&knob_mutex);
	a = detach(cgroup_id);
	mutex_unlock(&knob_mutex);
	if (a)
		assignment_remove(a);
	mutex_unlock(&assign_mutex);
	module_put(THIS_MODULE);
	return a ? count : -ENOENT;
}

static struct kobj_attribute assign_attr = __ATTR_WO(assign);
static struct kobj_attribute unassign_attr = __ATTR_WO(unassign);

static struct attribute *memcg_attrs[] = {
	&assign_attr.attr,
	&unassign_attr.attr,
	NULL,
};

static const struct attribute_group memcg_group = {
	.attrs = memcg_attrs,
};

static int memcg_init(void)
{
	int err;

	memcg_kobj = kobject_create_and_add("memcg", swapcache_ab_kobj);
	if (!memcg_kobj)
		return -ENOMEM;
	err = sysfs_create_group(memcg_kobj, &memcg_group);
	if (err) {
		dir_remove(memcg_kobj);
		memcg_kobj = NULL;
	}
	return err;
}

/* No new assignments once assign's writers are gone; then drop them all */
static void memcg_exit(void)
{
	struct assignment *a;
	unsigned int i;

	sysfs_remove_group(memcg_kobj, &memcg_group);
	mutex_lock(&assign_mutex);
	for (i = 0; i < MAX_ASSIGNMENTS; i++) {
		mutex_lock(&knob_mutex);
		a = rcu_dereference_protected(assignments[i], lockdep_is_held(&knob_mutex));
		if (a)
			a = detach(a->cgroup_id);
		mutex_unlock(&knob_mutex);
		if (a)
			assignment_remove(a);
	}
	mutex_unlock(&assign_mutex);
	dir_remove(memcg_kobj);
}

/* Every XA_CHUNK_SIZE entries, let RCU and the scheduler move on */
static void walk_pause(struct xa_state *xas, unsigned int *walked)
	__must_hold(RCU)
{
	if (++*walked % XA_CHUNK_SIZE)
		return;
	xas_pause(xas);
	rcu_read_unlock();
	cond_resched();
	rcu_read_lock();
}

/*
 * How tall and how wide the swap cache xarray of one swap address space
 * is: the mechanism behind the offset key and the trunks, independent of
 * timing.  Read under RCU, not the xa_lock the A/B measures, a chunk of
 * entries at a time: a snapshot of a busy space is approximate.
 */
static void show_space(struct seq_file *m, unsigned int type,
		       unsigned int index, struct address_space *space)
{
	struct xa_node *seen[BITS_PER_LONG / XA_CHUNK_SHIFT + 1] = { };
	unsigned long folios = 0, shadows = 0, nodes = 0, wb_marks = 0;
	struct xarray *xa = &space->i_pages;
	XA_STATE(xas, xa, 0);
	unsigned int height = 0, walked = 0;
	void *entry;

	rcu_read_lock();
	entry = xa_head(xa);
	if (xa_is_node(entry))
		height = xa_to_node(entry)->shift / XA_CHUNK_SHIFT + 1;

	xas_for_each(&xas, entry, ULONG_MAX) {
		struct xa_node *node;

		if (xas_retry(&xas, entry))
			continue;
		if (xa_is_value(entry))
			shadows++;
		else
			folios++;
		/* Entries come in index order: a node's first entry counts it */
		for (node = xas.xa_node; !xas_top(node); node = xa_parent(xa, node)) {
			unsigned int level = node->shift / XA_CHUNK_SHIFT;

			if (seen[level] == node)
				break;
			seen[level] = node;
			nodes++;
		}
		walk_pause(&xas, &walked);
	}

	xas_set(&xas, 0);
	xas_for_each_marked(&xas, entry, ULONG_MAX, PAGECACHE_TAG_WRITEBACK) {
		if (xas_retry(&xas, entry))
			continue;
		wb_marks++;
		walk_pause(&xas, &walked);
	}
	rcu_read_unlock();

	seq_printf(m, "%u %u %lu %lu %lu %u %lu\n", type, index, folios,
		   shadows, nodes, height, wb_marks);
}

static int swap_spaces_show(struct seq_file *m, void *unused)
{
	seq_puts(m, "type space folios shadows nodes height wb_marks\n");
	walk_swap_spaces(show_space, m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(swap_spaces);

static struct dentry *swapcache_ab_debugfs;
static bool groups_made;

/*
 * mainline_ops: 1 hooks every site with the module's policies, which give
 * mainline's answer while their knob is 1; written once the module is
 * loaded, as the key site takes no ops from a module in its init.  While
 * it is 1 the key site holds the module, as a knob at 0 does.
 */
static int mainline_ops_set(const char *val, const struct kernel_param *kp)
{
	bool on, old = mainline_ops;
	int err;

	err = parse_knob(val, strlen(val), &on);
	if (err)
		return err;
	mutex_lock(&knob_mutex);
	err = ready ? 0 : on ? -EINVAL : 0;
	if (ready && on != old) {
		/*
		 * The key last: it is the one that can fail (swap in use), and
		 * unhooking the others, to roll back, cannot
		 */
		WRITE_ONCE(mainline_ops, on);
		err = apply_policy(POLICY_SKIP_WB_TAGS, skip_wb_tags);
		if (!err)
			err = apply_policy(POLICY_COW_FREE, cow_free);
		if (!err)
			err = apply_key(offset_key, trunks);
		if (err) {
			WRITE_ONCE(mainline_ops, old);
			WARN_ON(apply_policy(POLICY_SKIP_WB_TAGS, skip_wb_tags) && !old);
			WARN_ON(apply_policy(POLICY_COW_FREE, cow_free) && !old);
		}
	}
	mutex_unlock(&knob_mutex);
	return err;
}

static const struct kernel_param_ops mainline_ops_ops = {
	.set = mainline_ops_set,
	.get = param_get_bool,
};
module_param_cb(mainline_ops, &mainline_ops_ops, &mainline_ops, 0644);
MODULE_PARM_DESC(mainline_ops, "1: hook every site, with mainline's answer while its knob is 1");

/*
 * Back to mainline, from init's failure or exit: no write changes anything
 * once ready is clear, and the files go before the sites are unhooked.  A
 * key, if set, holds this module until a write unsets it, which needs swap
 * off; it takes no ops from a module in its init.  Unhooking writeback
 * clears the marks of tagged writebacks still in flight.
 */
static void swapcache_ab_teardown(void)
{
	mutex_lock(&knob_mutex);
	ready = false;
	mutex_unlock(&knob_mutex);
	debugfs_remove_recursive(swapcache_ab_debugfs);
	if (memcg_kobj)
		memcg_exit();
	/* Removing the files waits for the writes still running */
	if (groups_made)
		sysfs_remove_groups(swapcache_ab_kobj, swapcache_ab_groups);
	dir_remove(swapcache_ab_kobj);
	mutex_lock(&knob_mutex);
	WARN_ON(registered[SWAPCACHE_AB_KEY]);
	set_site(SWAPCACHE_AB_WB, NULL);
	set_site(SWAPCACHE_AB_COW, NULL);
	mutex_unlock(&knob_mutex);
	/* Assignments are freed after a grace period, by this module's code */
	rcu_barrier();
}

static int __init swapcache_ab_init(void)
{
	int err;

	swapcache_ab_kobj = kobject_create_and_add("swapcache_ab", mm_kobj);
	if (!swapcache_ab_kobj)
		return -ENOMEM;
	err = sysfs_create_groups(swapcache_ab_kobj, swapcache_ab_groups);
	groups_made = !err;
	if (!err)
		err = memcg_init();
	if (err) {
		swapcache_ab_teardown();
		return err;
	}
	swapcache_ab_debugfs = debugfs_create_dir("swapcache_ab", NULL);
	debugfs_create_file("swap_spaces", 0444, swapcache_ab_debugfs, NULL,
			    &swap_spaces_fops);
	key_callers_create(swapcache_ab_debugfs);
	mutex_lock(&knob_mutex);
	ready = true;
	mutex_unlock(&knob_mutex);
	return 0;
}

static void __exit swapcache_ab_exit(void)
{
	swapcache_ab_teardown();
}

module_init(swapcache_ab_init);
module_exit(swapcache_ab_exit);

MODULE_IMPORT_NS(SWAPCACHE_AB);
MODULE_DESCRIPTION("Switch swap cache policies at runtime for A/B tests");
MODULE_AUTHOR("swapcache_ab developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(SWAPCACHE_AB_VERSION);
