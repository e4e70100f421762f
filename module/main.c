// SPDX-License-Identifier: GPL-2.0
/*
 * swapcache_ab: the swap cache policies that upstream replaced, run at the
 * hook points of CONFIG_SWAPCACHE_AB_HOOKS for A/B measurements.
 *
 * /sys/kernel/mm/swapcache_ab/ holds one knob per policy, 1 for today's
 * mainline policy (the default) and 0 for the one it replaced upstream,
 * stats/ with what the writeback and COW policies did, and memcg/ with
 * per memory cgroup settings of the policies of policies[], so that both
 * sides of an A/B can run at once.  The geometry of every swap cache
 * xarray, which the key decides, is in debugfs, swapcache_ab/swap_spaces.
 *
 * This file has the knobs, the counters, and init and exit; the policies
 * are in policies.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "swapcache_ab.h"

DEFINE_PER_CPU(struct swapcache_ab_stats, swapcache_ab_stats);

/*
 * Serialises knob and assignment writes, and with them what they set in
 * the kernel
 */
DEFINE_MUTEX(knob_mutex);
static bool offset_key = true;
static bool trunks = true;
/*
 * Every site hooked with the module's policies even where they give
 * mainline's answer: what the hooks themselves cost (the hooked A/A)
 */
static bool mainline_ops;
/*
 * The key site hooked, at mainline's key too, from the first write of a
 * key knob until 0 is written here: both sides of a key knob's A/B flipped
 * by hand pay the key's dispatch, as make ab's do through mainline_ops
 */
static bool key_hooked;
/* Set once init has made everything a write can change, cleared at exit */
bool knobs_ready;
bool policy_knobs[NR_POLICIES] = { [0 ... NR_POLICIES - 1] = true };
/* What each site has registered, under knob_mutex */
static const struct swapcache_ab_ops *registered[NR_SWAPCACHE_AB_SITES];

/*
 * Register @ops at @site in place of what is there (NULL: mainline);
 * @unhooked, if set, runs once the old ops are unregistered
 */
static int set_site(enum swapcache_ab_site site, const struct swapcache_ab_ops *ops,
		    void (*unhooked)(void))
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
		if (unhooked)
			unhooked();
	}
	err = ops ? swapcache_ab_register(site, ops) : 0;
	if (!err)
		registered[site] = ops;
	return err;
}

/*
 * The key of the knobs @by_offset and @per_64mb, hooked if it is not
 * mainline's or if @hook_mainline: one call of the kernel's, which refuses
 * any key while a swap device is in use (-EBUSY), the one in place too, so
 * that the key in place is not asked again, and keeps this module loaded
 * while its key is set.  Nothing changes here unless it succeeds: the
 * callers set their knobs after.
 */
static int apply_key(bool by_offset, bool per_64mb, bool hook_mainline)
{
	const struct swapcache_ab_ops *old = registered[SWAPCACHE_AB_KEY];
	const struct swapcache_ab_ops *ops = &key_ops[by_offset][per_64mb];
	int err;

	lockdep_assert_held(&knob_mutex);
	if (by_offset && per_64mb && !hook_mainline)
		ops = NULL;
	if (ops == old)
		return 0;
	err = swapcache_ab_replace_key(old, ops);
	if (!err)
		registered[SWAPCACHE_AB_KEY] = ops;
	return err;
}

/*
 * A key knob's write hooks the key site for good (key_hooked), at the
 * mainline key too.  With swap on, a write of the value the knob has
 * while the site is unhooked cannot hook it, and stays the no-op it was
 * before key_hooked: nothing changes.
 */
static int apply_key_knob(bool by_offset, bool per_64mb, bool unchanged)
{
	bool was_hooked = registered[SWAPCACHE_AB_KEY];
	int err;

	lockdep_assert_held(&knob_mutex);
	err = apply_key(by_offset, per_64mb, true);
	if (!err)
		WRITE_ONCE(key_hooked, true);
	else if (err == -EBUSY && unchanged && !was_hooked)
		err = 0;
	return err;
}

static int apply_offset_key(bool val)
{
	return apply_key_knob(val, trunks, val == offset_key);
}

static int apply_trunks(bool val)
{
	return apply_key_knob(offset_key, val, val == trunks);
}

/*
 * A policy's site is hooked while its old policy applies anywhere: the
 * global knob at @global 0, or an assignment at 0; or everywhere with @all
 * (mainline_ops).
 */
static int hook_policy(enum policy_id policy, bool global, bool all)
{
	const struct policy *p = &policies[policy];

	lockdep_assert_held(&knob_mutex);
	return set_site(p->site, !global || all || memcg_hooks(policy) ? p->ops : NULL,
			p->unhooked);
}

int apply_policy(enum policy_id policy, bool global)
{
	return hook_policy(policy, global, mainline_ops);
}

/*
 * Strictly "0" or "1", a trailing newline allowed.  kstrtobool() reads the
 * first character only and would take "0x1" for 0 and "yes please" for 1,
 * kstrtouint() "+1" and "01"; a typo in an A/B script should fail loudly.
 */
int parse_knob(const char *buf, size_t count, bool *val)
{
	if (count && buf[count - 1] == '\n')
		count--;
	if (count != 1 || (buf[0] != '0' && buf[0] != '1'))
		return -EINVAL;
	*val = buf[0] == '1';
	return 0;
}

/*
 * For the files made from policies[], at init: static attributes, which
 * lockdep takes as they are (no sysfs_attr_init())
 */
void __init kobj_attr_init(struct kobj_attribute *attr, const char *name, umode_t mode,
			   ssize_t (*show)(struct kobject *kobj, struct kobj_attribute *attr,
					   char *buf),
			   ssize_t (*store)(struct kobject *kobj, struct kobj_attribute *attr,
					    const char *buf, size_t count))
{
	attr->attr.name = name;
	attr->attr.mode = mode;
	attr->show = show;
	attr->store = store;
}

/* A knob: the key's two apply themselves, a policy's through its row */
struct knob_attribute {
	struct kobj_attribute attr;
	bool *value;
	int (*apply)(bool val);
	enum policy_id policy;
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
	err = !knobs_ready ? -ENODEV : ka->apply ? ka->apply(val) : apply_policy(ka->policy, val);
	if (!err)
		WRITE_ONCE(*ka->value, val);
	mutex_unlock(&knob_mutex);
	module_put(THIS_MODULE);
	return err ? err : count;
}

#define KEY_KNOB_ATTR(_name)						\
	static struct knob_attribute _name##_attr = {			\
		.attr = {						\
			.attr = { .name = #_name, .mode = 0644 },	\
			.show = knob_show,				\
			.store = knob_store,				\
		},							\
		.value = &(_name),					\
		.apply = apply_##_name,					\
	}

KEY_KNOB_ATTR(offset_key);
KEY_KNOB_ATTR(trunks);
static struct knob_attribute policy_knob_attrs[NR_POLICIES];

/* The key's two knobs, then each policy's */
#define NR_KEY_KNOBS	2
static struct attribute *knob_attrs[NR_KEY_KNOBS + NR_POLICIES + 1] = {
	[0] = &offset_key_attr.attr.attr,
	[1] = &trunks_attr.attr.attr,
};

static const struct attribute_group knob_group = {
	.attrs = knob_attrs,
};

struct stat_attribute {
	struct kobj_attribute attr;
	unsigned int stat;
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

static struct stat_attribute policy_stat_attrs[NR_POLICIES];
static struct attribute *stats_attrs[NR_SWAPCACHE_AB_STATS + 1];

static const struct attribute_group stats_group = {
	.name = "stats",
	.attrs = stats_attrs,
};

static const struct attribute_group *swapcache_ab_groups[] = {
	&knob_group,
	&stats_group,
	NULL,
};

/* Each policy's knob, after the key's two, and counter */
static int __init policy_attrs_init(void)
{
	unsigned int p;

	for (p = 0; p < NR_POLICIES; p++) {
		/* An enum policy_id entry without its row */
		if (WARN_ON(!policies[p].name || !policies[p].ops))
			return -EINVAL;
		kobj_attr_init(&policy_knob_attrs[p].attr, policies[p].name, 0644,
			       knob_show, knob_store);
		policy_knob_attrs[p].value = &policy_knobs[p];
		policy_knob_attrs[p].policy = p;
		knob_attrs[NR_KEY_KNOBS + p] = &policy_knob_attrs[p].attr.attr;
		kobj_attr_init(&policy_stat_attrs[p].attr, policies[p].stat, 0444, stat_show, NULL);
		policy_stat_attrs[p].stat = p;
		stats_attrs[p] = &policy_stat_attrs[p].attr.attr;
	}
	return 0;
}

static struct kobject *swapcache_ab_kobj;
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
	unsigned int p;
	bool on, old;
	int err;

	err = parse_knob(val, strlen(val), &on);
	if (err)
		return err;
	mutex_lock(&knob_mutex);
	old = mainline_ops;
	err = knobs_ready ? 0 : on ? -EINVAL : 0;
	if (knobs_ready && on != old) {
		/*
		 * The key last: it is the one that can fail (swap in use), and
		 * unhooking the others, to roll back, cannot.  mainline_ops
		 * changes once all succeeded.
		 */
		for (p = 0; !err && p < NR_POLICIES; p++)
			err = hook_policy(p, policy_knobs[p], on);
		if (!err)
			err = apply_key(offset_key, trunks, on || key_hooked);
		if (!err)
			WRITE_ONCE(mainline_ops, on);
		for (p = 0; err && p < NR_POLICIES; p++)
			WARN_ON(apply_policy(p, policy_knobs[p]) && !old);
	}
	mutex_unlock(&knob_mutex);
	return err;
}

/* A bool the knob writes change under knob_mutex, read without it */
static int param_get_bool_once(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%c\n", READ_ONCE(*(bool *)kp->arg) ? 'Y' : 'N');
}

static const struct kernel_param_ops mainline_ops_ops = {
	.set = mainline_ops_set,
	.get = param_get_bool_once,
};
module_param_cb(mainline_ops, &mainline_ops_ops, &mainline_ops, 0644);
MODULE_PARM_DESC(mainline_ops, "1: hook every site, with mainline's answer while its knob is 1");

/*
 * key_hooked: 1 from the first write of offset_key or trunks; 0 unhooks
 * the key site where both are 1 and mainline_ops is 0.  Changing whether
 * the site is hooked takes swap off, as a key knob does; a refused write
 * leaves key_hooked as it was.
 */
static int key_hooked_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int err;

	err = parse_knob(val, strlen(val), &on);
	if (err)
		return err;
	mutex_lock(&knob_mutex);
	if (!knobs_ready) {
		/* insmod's value: the key site takes no ops from a module in its init */
		if (on)
			err = -EINVAL;
	} else if (on != key_hooked) {
		err = apply_key(offset_key, trunks, on || mainline_ops);
		if (!err)
			WRITE_ONCE(key_hooked, on);
	}
	mutex_unlock(&knob_mutex);
	return err;
}

static const struct kernel_param_ops key_hooked_ops = {
	.set = key_hooked_set,
	.get = param_get_bool_once,
};
module_param_cb(key_hooked, &key_hooked_ops, &key_hooked, 0644);
MODULE_PARM_DESC(key_hooked, "1 from the first key knob write: the key site hooked at mainline too");

/*
 * Back to mainline, from init's failure or exit: no write changes anything
 * once knobs_ready is clear, and the files go before the sites are
 * unhooked.  A key, if set, holds this module until a write unsets it,
 * which needs swap off; it takes no ops from a module in its init.
 * Unhooking a policy clears what it left (the marks of tagged writebacks
 * still in flight).
 */
static void swapcache_ab_teardown(void)
{
	unsigned int p;

	mutex_lock(&knob_mutex);
	knobs_ready = false;
	mutex_unlock(&knob_mutex);
	debugfs_remove_recursive(swapcache_ab_debugfs);
	memcg_exit();
	/* Removing the files waits for the writes still running */
	if (groups_made)
		sysfs_remove_groups(swapcache_ab_kobj, swapcache_ab_groups);
	dir_remove(swapcache_ab_kobj);
	mutex_lock(&knob_mutex);
	WARN_ON(registered[SWAPCACHE_AB_KEY]);
	for (p = 0; p < NR_POLICIES; p++)
		set_site(policies[p].site, NULL, policies[p].unhooked);
	mutex_unlock(&knob_mutex);
	/* Assignments are freed after a grace period, by this module's code */
	rcu_barrier();
}

static int __init swapcache_ab_init(void)
{
	int err;

	err = policy_attrs_init();
	if (err)
		return err;
	swapcache_ab_kobj = kobject_create_and_add("swapcache_ab", mm_kobj);
	if (!swapcache_ab_kobj)
		return -ENOMEM;
	err = sysfs_create_groups(swapcache_ab_kobj, swapcache_ab_groups);
	groups_made = !err;
	if (!err)
		err = memcg_init(swapcache_ab_kobj);
	if (err) {
		swapcache_ab_teardown();
		return err;
	}
	swapcache_ab_debugfs = debugfs_create_dir("swapcache_ab", NULL);
	geometry_init(swapcache_ab_debugfs);
	mutex_lock(&knob_mutex);
	knobs_ready = true;
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
