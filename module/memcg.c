// SPDX-License-Identifier: GPL-2.0
/*
 * swapcache_ab: the policies of policies[] set per memory cgroup, so that
 * both sides of an A/B run at the same time on one kernel.  A folio takes
 * the setting of the nearest assignment that sets the policy, from the
 * cgroup it is charged to up to the root; without one, the global knob's.
 * Assignments name cgroups by id, which the kernel does not reuse: nothing
 * here pins a cgroup, and after rmdir the folios still charged to it keep
 * its setting.  Built with CONFIG_MEMCG only.
 */
#include <linux/cgroup.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include "swapcache_ab.h"

#define MAX_ASSIGNMENTS		16

/* What each assignment's settings decided, [policy][setting] */
struct memcg_stats {
	unsigned long count[NR_POLICIES][2];
};

struct assignment {
	u64 cgroup_id;
	int setting[NR_POLICIES];	/* 0, 1 or SETTING_GLOBAL */
	struct memcg_stats __percpu *stats;
	struct kobject *dir;		/* memcg/<cgroup id>/ */
	struct rcu_head rcu;
	char path[];			/* the cgroup's when assigned */
};

/*
 * Set under assign_mutex and knob_mutex, read by the policies under
 * rcu_read_lock()
 */
static struct assignment __rcu *assignments[MAX_ASSIGNMENTS];
static unsigned int nr_assignments;
/*
 * Held by assign, unassign and module exit, so that assignments[] changes
 * under it alone, and until an unassigned id's directory is gone, so that
 * assigning the id again cannot find it there.  Taken before knob_mutex;
 * the settings' writers take knob_mutex alone, so making or removing a
 * directory, which waits for them, never holds knob_mutex.
 */
static DEFINE_MUTEX(assign_mutex);

static struct assignment *find_assignment(u64 cgroup_id, unsigned int *slot)
{
	struct assignment *a;
	unsigned int i;

	for (i = 0; i < MAX_ASSIGNMENTS; i++) {
		a = rcu_dereference_check(assignments[i], lockdep_is_held(&knob_mutex) ||
					  lockdep_is_held(&assign_mutex));
		if (a && a->cgroup_id == cgroup_id) {
			if (slot)
				*slot = i;
			return a;
		}
	}
	return NULL;
}

/*
 * The assignment that decides @policy for @folio, its setting in
 * *@setting; NULL, *@setting untouched, for the global knob.  The
 * caller's rcu_read_lock() keeps the memcg and the assignment alive.
 */
static struct assignment *folio_assignment(struct folio *folio, enum policy_id policy,
					   int *setting)
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

/**
 * memcg_setting() - the setting of @policy for @folio by its memory cgroup
 * @folio: a folio at a hook site
 * @policy: the policy the site decides
 *
 * The kernel calls the policies in a read-side section that
 * rcu_read_lock_held() may not see (the COW site's is its page table
 * lock): this takes rcu_read_lock(), which keeps the memcg and the
 * assignment, and is only needed once there are assignments.  Counts the
 * folio in the deciding assignment's stats.
 *
 * Return: 0 or 1, or %SETTING_GLOBAL where no assignment decides.
 */
int memcg_setting(struct folio *folio, enum policy_id policy)
{
	int value = SETTING_GLOBAL;
	struct assignment *a;

	if (!READ_ONCE(nr_assignments))
		return SETTING_GLOBAL;
	rcu_read_lock();
	a = folio_assignment(folio, policy, &value);
	if (a)
		this_cpu_inc(a->stats->count[policy][!!value]);
	rcu_read_unlock();
	return value;
}

/* Whether an assignment sets @policy to 0, which hooks its site */
bool memcg_hooks(enum policy_id policy)
{
	struct assignment *a;
	unsigned int i;

	lockdep_assert_held(&knob_mutex);
	for (i = 0; i < MAX_ASSIGNMENTS; i++) {
		a = rcu_dereference_protected(assignments[i], lockdep_is_held(&knob_mutex));
		if (a && !a->setting[policy])
			return true;
	}
	return false;
}

/* memcg/<cgroup id>/: one assignment's settings and counters */
struct assignment_attribute {
	struct kobj_attribute attr;
	enum policy_id policy;
	unsigned int value;	/* a counter's: the setting it counts */
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

static struct assignment_attribute *to_aa(struct kobj_attribute *attr)
{
	return container_of(attr, struct assignment_attribute, attr);
}

static ssize_t setting_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct assignment *a;
	int value = 0;

	rcu_read_lock();
	a = dir_assignment(kobj);
	if (a)
		value = READ_ONCE(a->setting[to_aa(attr)->policy]);
	rcu_read_unlock();
	if (!a)
		return -ENODEV;
	return value == SETTING_GLOBAL ? sysfs_emit(buf, "-\n") : sysfs_emit(buf, "%d\n", value);
}

/* "0", "1", or "-" to follow the global knob again */
static ssize_t setting_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	enum policy_id policy = to_aa(attr)->policy;
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
	a = knobs_ready ? dir_assignment(kobj) : NULL;
	if (a) {
		old = a->setting[policy];
		WRITE_ONCE(a->setting[policy], value);
		err = apply_policy(policy, policy_knobs[policy]);
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
	struct assignment_attribute *aa = to_aa(attr);
	unsigned long sum = 0;
	struct assignment *a;
	int cpu;

	rcu_read_lock();
	a = dir_assignment(kobj);
	if (a) {
		for_each_possible_cpu(cpu)
			sum += per_cpu_ptr(a->stats, cpu)->count[aa->policy][aa->value];
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

/* Made from policies[] at init: a setting and two counters per policy */
static struct assignment_attribute setting_attrs[NR_POLICIES];
static struct assignment_attribute stat_attrs[NR_POLICIES][2];
static struct kobj_attribute path_attr = __ATTR(path, 0444, path_show, NULL);

static struct attribute *assignment_attrs[NR_POLICIES + 2] = {
	[NR_POLICIES] = &path_attr.attr,
};

static const struct attribute_group assignment_group = {
	.attrs = assignment_attrs,
};

static struct attribute *assignment_stats_attrs[2 * NR_POLICIES + 1];

static const struct attribute_group assignment_stats_group = {
	.name = "stats",
	.attrs = assignment_stats_attrs,
};

static const struct attribute_group *assignment_groups[] = {
	&assignment_group,
	&assignment_stats_group,
	NULL,
};

static void __init assignment_attrs_init(void)
{
	struct assignment_attribute *aa;
	unsigned int p, v;

	for (p = 0; p < NR_POLICIES; p++) {
		aa = &setting_attrs[p];
		kobj_attr_init(&aa->attr, policies[p].name, 0644, setting_show, setting_store);
		aa->policy = p;
		assignment_attrs[p] = &aa->attr.attr;
		for (v = 0; v < 2; v++) {
			aa = &stat_attrs[p][v];
			kobj_attr_init(&aa->attr, policies[p].memcg_stats[v], 0444,
				       memcg_stat_show, NULL);
			aa->policy = p;
			aa->value = v;
			assignment_stats_attrs[2 * p + v] = &aa->attr.attr;
		}
	}
}

static void assignment_free_rcu(struct rcu_head *rcu)
{
	struct assignment *a = container_of(rcu, struct assignment, rcu);

	free_percpu(a->stats);
	kfree(a);
}

static struct kobject *memcg_kobj;
/*
 * The directory and its files are made under assign_mutex alone: a
 * failure part way removes the files made, which waits for their writers,
 * and those may be waiting for knob_mutex.  The assignment is published
 * under knob_mutex once they are all there.
 */
static int assign(u64 cgroup_id, const char *path)
{
	size_t len = strlen(path);
	struct assignment *a;
	unsigned int slot, p;
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
	for (p = 0; p < NR_POLICIES; p++)
		a->setting[p] = SETTING_GLOBAL;
	memcpy(a->path, path, len + 1);
	snprintf(name, sizeof(name), "%llu", cgroup_id);

	lockdep_assert_held(&assign_mutex);
	err = !READ_ONCE(knobs_ready) ? -ENODEV :
	      find_assignment(cgroup_id, NULL) ? -EEXIST : -ENOSPC;
	for (slot = 0; err == -ENOSPC && slot < MAX_ASSIGNMENTS; slot++)
		if (!rcu_access_pointer(assignments[slot]))
			break;
	if (err == -ENOSPC && slot < MAX_ASSIGNMENTS) {
		a->dir = kobject_create_and_add(name, memcg_kobj);
		err = a->dir ? sysfs_create_groups(a->dir, assignment_groups) : -ENOMEM;
	}
	if (!err) {
		mutex_lock(&knob_mutex);
		err = knobs_ready ? 0 : -ENODEV;
		if (!err) {
			rcu_assign_pointer(assignments[slot], a);
			WRITE_ONCE(nr_assignments, nr_assignments + 1);
		}
		mutex_unlock(&knob_mutex);
	}
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
	unsigned int slot, p;
	struct assignment *a;

	lockdep_assert_held(&knob_mutex);
	a = find_assignment(cgroup_id, &slot);
	if (!a)
		return NULL;
	RCU_INIT_POINTER(assignments[slot], NULL);
	WRITE_ONCE(nr_assignments, nr_assignments - 1);
	/* Only a setting at 0 can have hooked a site; unhooking cannot fail */
	for (p = 0; p < NR_POLICIES; p++)
		if (!a->setting[p])
			WARN_ON(apply_policy(p, policy_knobs[p]));
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

/* memcg/ in @parent, with no assignment */
int __init memcg_init(struct kobject *parent)
{
	int err;

	assignment_attrs_init();
	memcg_kobj = kobject_create_and_add("memcg", parent);
	if (!memcg_kobj)
		return -ENOMEM;
	err = sysfs_create_group(memcg_kobj, &memcg_group);
	if (err) {
		dir_remove(memcg_kobj);
		memcg_kobj = NULL;
	}
	return err;
}

/*
 * No new assignments once assign's writers are gone; then drop them all.
 * Nothing to do if memcg_init() failed or did not run.
 */
void memcg_exit(void)
{
	struct assignment *a;
	unsigned int i;

	if (!memcg_kobj)
		return;
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
	memcg_kobj = NULL;
}
