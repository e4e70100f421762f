// SPDX-License-Identifier: GPL-2.0
/*
 * swapcache_ab: the swap cache policies that upstream replaced, run at the
 * hook points of CONFIG_SWAPCACHE_AB_HOOKS for A/B measurements.
 *
 * /sys/kernel/mm/swapcache_ab/ holds one knob per policy, 1 for today's
 * mainline policy (the default) and 0 for the one it replaced upstream,
 * and stats/ with what each policy did.  The geometry of every swap cache
 * xarray is in debugfs, swapcache_ab/swap_spaces.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/swap.h>
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

/*
 * The policies.  Each runs at its hook site only while its knob is 0: at 1
 * the site's static key is off and the kernel runs mainline code alone.
 */

/* Before v4.9 the swap cache was keyed by the whole entry, type bits too */
static pgoff_t index_by_entry(swp_entry_t entry)
{
	count_stat(SWAPCACHE_AB_INDEX_ENTRY);
	return entry.val;
}

/* v4.9 and v4.10: by offset, in one tree per device */
static pgoff_t index_by_offset(swp_entry_t entry)
{
	count_stat(SWAPCACHE_AB_INDEX_OFFSET);
	return swp_offset(entry);
}

/* Before v4.11 a swap device had a single swap address space */
static unsigned long one_trunk(swp_entry_t entry)
{
	return 0;
}

static unsigned long trunk_of_64mb(swp_entry_t entry)
{
	return swp_offset(entry) >> TRUNK_SHIFT;
}

/* Indexed [offset_key][trunks]; both at 1 is mainline, no ops */
static const struct swapcache_ab_ops key_ops[2][2] = {
	[0][0] = {
		.owner = THIS_MODULE,
		.cache_index = index_by_entry,
		.cache_trunk = one_trunk,
	},
	[0][1] = {
		.owner = THIS_MODULE,
		.cache_index = index_by_entry,
		.cache_trunk = trunk_of_64mb,
	},
	[1][0] = {
		.owner = THIS_MODULE,
		.cache_index = index_by_offset,
		.cache_trunk = one_trunk,
	},
};

/*
 * Before v4.9 every swap cache folio took the writeback tag of file folios:
 * the xa_lock at start and again at end.  The kernel sets and clears the
 * mark; it clears it at the end whatever the knob is by then.
 */
static bool tag_writeback(struct folio *folio)
{
	count_stat(SWAPCACHE_AB_WB_TAGGED);
	return true;
}

static const struct swapcache_ab_ops wb_ops = {
	.owner = THIS_MODULE,
	.writeback_tag = tag_writeback,
};

/* Before v5.14 the swap cache folio a COW copied was left for reclaim */
static void keep_after_cow(struct folio *folio)
{
	if (folio_test_swapcache(folio))
		count_stat(SWAPCACHE_AB_COW_KEPT);
}

static const struct swapcache_ab_ops cow_ops = {
	.owner = THIS_MODULE,
	.after_cow = keep_after_cow,
};

/* Serialises knob writes, and with them what they set in the kernel */
static DEFINE_MUTEX(knob_mutex);
static bool offset_key = true;
static bool trunks = true;
static bool skip_wb_tags = true;
static bool cow_free = true;

static const struct swapcache_ab_ops *key_ops_for(bool by_offset, bool per_64mb)
{
	return by_offset && per_64mb ? NULL : &key_ops[by_offset][per_64mb];
}

/*
 * The kernel refuses a new key while any swap device is in use (-EBUSY),
 * and keeps this module loaded while its key is set.
 */
static int apply_offset_key(bool val)
{
	return swapcache_ab_set_ops(SWAPCACHE_AB_KEY, key_ops_for(val, trunks));
}

static int apply_trunks(bool val)
{
	return swapcache_ab_set_ops(SWAPCACHE_AB_KEY, key_ops_for(offset_key, val));
}

static int apply_skip_wb_tags(bool val)
{
	return swapcache_ab_set_ops(SWAPCACHE_AB_WB, val ? NULL : &wb_ops);
}

static int apply_cow_free(bool val)
{
	return swapcache_ab_set_ops(SWAPCACHE_AB_COW, val ? NULL : &cow_ops);
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
	err = ka->apply(val);
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
	struct address_space *spaces;
	struct swap_info_struct *si;
	unsigned int type, i, nr;

	seq_puts(m, "type space folios shadows nodes height wb_marks\n");
	for (type = 0; type < MAX_SWAPFILES; type++) {
		si = swap_cache_get_spaces(type, &spaces);
		if (!si)
			continue;
		nr = DIV_ROUND_UP(si->max, 1UL << TRUNK_SHIFT);
		for (i = 0; i < nr; i++)
			show_space(m, type, i, &spaces[i]);
		put_swap_device(si);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(swap_spaces);

static struct kobject *swapcache_ab_kobj;
static struct dentry *swapcache_ab_debugfs;

static int __init swapcache_ab_init(void)
{
	int err;

	swapcache_ab_kobj = kobject_create_and_add("swapcache_ab", mm_kobj);
	if (!swapcache_ab_kobj)
		return -ENOMEM;
	err = sysfs_create_groups(swapcache_ab_kobj, swapcache_ab_groups);
	if (err) {
		kobject_put(swapcache_ab_kobj);
		return err;
	}

	swapcache_ab_debugfs = debugfs_create_dir("swapcache_ab", NULL);
	debugfs_create_file("swap_spaces", 0444, swapcache_ab_debugfs, NULL,
			    &swap_spaces_fops);
	return 0;
}

/*
 * Back to mainline.  Its key, if set, holds this module until a knob
 * write unsets it, which needs swap off.  Tagged writebacks still in
 * flight end in core code, which clears their marks.
 */
static void __exit swapcache_ab_exit(void)
{
	debugfs_remove_recursive(swapcache_ab_debugfs);
	/* Removing the files waits for knob writes still running */
	sysfs_remove_groups(swapcache_ab_kobj, swapcache_ab_groups);
	kobject_put(swapcache_ab_kobj);
	swapcache_ab_set_ops(SWAPCACHE_AB_WB, NULL);
	swapcache_ab_set_ops(SWAPCACHE_AB_COW, NULL);
}

module_init(swapcache_ab_init);
module_exit(swapcache_ab_exit);

MODULE_IMPORT_NS(SWAPCACHE_AB);
MODULE_DESCRIPTION("Switch swap cache policies at runtime for A/B tests");
MODULE_AUTHOR("swapcache_ab developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(SWAPCACHE_AB_VERSION);
