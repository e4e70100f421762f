// SPDX-License-Identifier: GPL-2.0
/*
 * swapcache_ab: switch swap cache policies on a running kernel, for A/B
 * measurements, through the hooks of CONFIG_SWAPCACHE_AB_HOOKS.
 *
 * /sys/kernel/mm/swapcache_ab/ holds one knob per policy, 1 for today's
 * mainline policy (the default) and 0 for the one it replaced upstream,
 * and stats/ with what each hook did.  The geometry of every swap cache
 * xarray is in debugfs, swapcache_ab/swap_spaces.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pagemap.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <linux/swapcache_ab.h>
#include <linux/sysfs.h>
#include <linux/xarray.h>

/* Serialises knob writes, and with them the module reference they hold */
static DEFINE_MUTEX(knob_mutex);
static bool offset_key = true;
static bool skip_wb_tags = true;
static bool cow_free = true;

static struct kobject *swapcache_ab_kobj;
static struct dentry *swapcache_ab_debugfs;

/*
 * Strictly "0" or "1", a trailing newline allowed.  kstrtobool() reads the
 * first character only and would take "0x1" for 0 and "yes please" for 1;
 * a typo in an A/B script should fail loudly instead.
 */
static int parse_knob(const char *buf, size_t count, bool *val)
{
	unsigned int v;

	if (strnlen(buf, count) != count)
		return -EINVAL;
	if (kstrtouint(buf, 10, &v) || v > 1)
		return -EINVAL;
	*val = v;
	return 0;
}

/*
 * Parse the value, then hold the module and the knob mutex.  A write
 * racing rmmod must not change anything once the module is going: its
 * exit is about to restore mainline.
 */
static int knob_write_begin(const char *buf, size_t count, bool *val)
{
	int err;

	err = parse_knob(buf, count, val);
	if (err)
		return err;
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	mutex_lock(&knob_mutex);
	return 0;
}

static void knob_write_end(void)
{
	mutex_unlock(&knob_mutex);
	module_put(THIS_MODULE);
}

static ssize_t offset_key_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(offset_key));
}

static ssize_t offset_key_store(struct kobject *kobj,
				struct kobj_attribute *attr,
				const char *buf, size_t count)
{
	bool val;
	int err;

	err = knob_write_begin(buf, count, &val);
	if (err)
		return err;

	err = swapcache_ab_set_offset_key(val);
	/*
	 * Unhooking would switch a device swapped on under the entry key
	 * back to the offset key under its live swap cache: stay loaded
	 * until the offset key is back, which needs swap off.
	 */
	if (!err && val != offset_key) {
		if (val)
			module_put(THIS_MODULE);
		else
			__module_get(THIS_MODULE);
		WRITE_ONCE(offset_key, val);
	}
	knob_write_end();
	return err ? err : count;
}

/*
 * skip_wb_tags and cow_free may change at any time: the core applies the
 * new policy and the module only remembers what it was told, for show.
 */
struct policy_attribute {
	struct kobj_attribute attr;
	bool *value;
	void (*apply)(bool val);
};

static ssize_t policy_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct policy_attribute *pa = container_of(attr, struct policy_attribute,
						   attr);

	return sysfs_emit(buf, "%d\n", READ_ONCE(*pa->value));
}

static ssize_t policy_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	struct policy_attribute *pa = container_of(attr, struct policy_attribute,
						   attr);
	bool val;
	int err;

	err = knob_write_begin(buf, count, &val);
	if (err)
		return err;

	pa->apply(val);
	WRITE_ONCE(*pa->value, val);
	knob_write_end();
	return count;
}

static struct policy_attribute skip_wb_tags_attr = {
	.attr = __ATTR(skip_wb_tags, 0644, policy_show, policy_store),
	.value = &skip_wb_tags,
	.apply = swapcache_ab_set_skip_wb_tags,
};

static struct policy_attribute cow_free_attr = {
	.attr = __ATTR(cow_free, 0644, policy_show, policy_store),
	.value = &cow_free,
	.apply = swapcache_ab_set_cow_free,
};

static struct kobj_attribute offset_key_attr = __ATTR_RW(offset_key);

static struct attribute *knob_attrs[] = {
	&offset_key_attr.attr,
	&skip_wb_tags_attr.attr.attr,
	&cow_free_attr.attr.attr,
	NULL,
};

static const struct attribute_group knob_group = {
	.attrs = knob_attrs,
};

struct event_attribute {
	struct kobj_attribute attr;
	enum swapcache_ab_event event;
};

static ssize_t event_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	struct event_attribute *ea = container_of(attr, struct event_attribute,
						  attr);

	return sysfs_emit(buf, "%lu\n", swapcache_ab_event_sum(ea->event));
}

#define EVENT_ATTR(_name, _event)					\
	static struct event_attribute _name##_attr = {			\
		.attr = __ATTR(_name, 0444, event_show, NULL),		\
		.event = _event,					\
	}

EVENT_ATTR(index_offset, SWAPCACHE_AB_INDEX_OFFSET);
EVENT_ATTR(index_entry, SWAPCACHE_AB_INDEX_ENTRY);
EVENT_ATTR(wb_tagged, SWAPCACHE_AB_WB_TAGGED);
EVENT_ATTR(wb_untagged, SWAPCACHE_AB_WB_UNTAGGED);
EVENT_ATTR(wb_end_tagged, SWAPCACHE_AB_WB_END_TAGGED);
EVENT_ATTR(wb_end_after_flip, SWAPCACHE_AB_WB_END_AFTER_FLIP);
EVENT_ATTR(cow_free_tried, SWAPCACHE_AB_COW_FREE_TRIED);
EVENT_ATTR(cow_freed, SWAPCACHE_AB_COW_FREED);
EVENT_ATTR(cow_kept, SWAPCACHE_AB_COW_KEPT);

static struct attribute *stats_attrs[] = {
	&index_offset_attr.attr.attr,
	&index_entry_attr.attr.attr,
	&wb_tagged_attr.attr.attr,
	&wb_untagged_attr.attr.attr,
	&wb_end_tagged_attr.attr.attr,
	&wb_end_after_flip_attr.attr.attr,
	&cow_free_tried_attr.attr.attr,
	&cow_freed_attr.attr.attr,
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

/*
 * How tall and how wide the swap cache xarray of one swap address space
 * is: the mechanism behind the offset key, independent of timing.
 */
static void show_space(struct seq_file *m, unsigned int type,
		       unsigned int index, struct address_space *space)
{
	struct xa_node *seen[BITS_PER_LONG / XA_CHUNK_SHIFT + 1] = { };
	unsigned long folios = 0, shadows = 0, nodes = 0, wb_marks = 0;
	struct xarray *xa = &space->i_pages;
	XA_STATE(xas, xa, 0);
	unsigned int height = 0;
	void *entry;

	xa_lock_irq(xa);
	entry = xa_head_locked(xa);
	if (xa_is_node(entry))
		height = xa_to_node(entry)->shift / XA_CHUNK_SHIFT + 1;

	xas_for_each(&xas, entry, ULONG_MAX) {
		struct xa_node *node;

		if (xa_is_value(entry))
			shadows++;
		else
			folios++;
		/* Entries come in index order: a node's first entry counts it */
		for (node = xas.xa_node; !xas_top(node);
		     node = xa_parent_locked(xa, node)) {
			unsigned int level = node->shift / XA_CHUNK_SHIFT;

			if (seen[level] == node)
				break;
			seen[level] = node;
			nodes++;
		}
	}

	xas_set(&xas, 0);
	xas_for_each_marked(&xas, entry, ULONG_MAX, PAGECACHE_TAG_WRITEBACK)
		wb_marks++;
	xa_unlock_irq(xa);

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
		si = swap_cache_get_spaces(type, &spaces, &nr);
		if (!si)
			continue;
		for (i = 0; i < nr; i++)
			show_space(m, type, i, &spaces[i]);
		put_swap_device(si);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(swap_spaces);

static int __init swapcache_ab_init(void)
{
	int err;

	err = swapcache_ab_hook();
	if (err) {
		pr_err("swap cache hooks already taken: %d\n", err);
		return err;
	}
	/*
	 * The knobs show this module's values: make them the kernel's too,
	 * whatever an earlier owner of the hooks left there.
	 */
	swapcache_ab_set_skip_wb_tags(skip_wb_tags);
	swapcache_ab_set_cow_free(cow_free);

	swapcache_ab_kobj = kobject_create_and_add("swapcache_ab", mm_kobj);
	if (!swapcache_ab_kobj) {
		err = -ENOMEM;
		goto unhook;
	}
	err = sysfs_create_groups(swapcache_ab_kobj, swapcache_ab_groups);
	if (err)
		goto put_kobj;

	swapcache_ab_debugfs = debugfs_create_dir("swapcache_ab", NULL);
	debugfs_create_file("swap_spaces", 0444, swapcache_ab_debugfs, NULL,
			    &swap_spaces_fops);
	return 0;

put_kobj:
	kobject_put(swapcache_ab_kobj);
unhook:
	swapcache_ab_unhook();
	return err;
}

static void __exit swapcache_ab_exit(void)
{
	debugfs_remove_recursive(swapcache_ab_debugfs);
	/* Removing the files waits for knob writes still running */
	sysfs_remove_groups(swapcache_ab_kobj, swapcache_ab_groups);
	kobject_put(swapcache_ab_kobj);
	swapcache_ab_unhook();
}

module_init(swapcache_ab_init);
module_exit(swapcache_ab_exit);

MODULE_IMPORT_NS(SWAPCACHE_AB);
MODULE_DESCRIPTION("Switch swap cache policies at runtime for A/B tests");
MODULE_AUTHOR("swapcache_ab developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(SWAPCACHE_AB_VERSION);
