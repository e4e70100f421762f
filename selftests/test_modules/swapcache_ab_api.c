// SPDX-License-Identifier: GPL-2.0
/*
 * What the core's registration interface refuses, asked by a module of its
 * own: selftests/api writes a check's number to
 * /sys/module/swapcache_ab_api/parameters/check, and the write succeeds
 * only if the interface answered as include/linux/swapcache_ab.h says.
 * The ops registered here give mainline's answers, so that a site they
 * hold for a moment runs as mainline does.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/swap.h>
#include <linux/swapcache_ab.h>
#include <linux/swapops.h>

static bool no_tag(struct folio *folio)
{
	return false;
}

static void no_mark(struct folio *folio, struct address_space *mapping, bool end)
{
}

static const struct swapcache_ab_ops wb_ops = { .writeback = no_mark };
static const struct swapcache_ab_ops wb_ops2 = { .writeback = no_mark };
static const struct swapcache_ab_ops cow_ops = { .keep_after_cow = no_tag };
/* v4.9's key: the whole offset, one space per device; then v4.11's */
static const struct swapcache_ab_ops key_ops = { .index_mask = SWP_OFFSET_MASK };
static const struct swapcache_ab_ops key_ops2 = {
	.index_mask = SWP_OFFSET_MASK,
	.space_mask = SWP_OFFSET_MASK,
};

#define IN_64MB	((1UL << 14) - 1)
/* Keys that would lose data: two entries in one slot, a folio split */
static const struct swapcache_ab_ops shared_slot_ops = { .index_mask = IN_64MB };
static const struct swapcache_ab_ops split_folio_ops = {
	.index_mask = SWP_OFFSET_MASK & ~1UL,
	.space_mask = 1,
};

static const struct swapcache_ab_ops past_spaces_ops = {
	.index_mask = ~0UL,
	.space_mask = ~0UL,
};

static const struct swapcache_ab_ops key_wb_ops = {
	.index_mask = SWP_OFFSET_MASK,
	.writeback = no_mark,
};

static const struct swapcache_ab_ops two_sites_ops = {
	.writeback = no_mark,
	.keep_after_cow = no_tag,
};

/*
 * What setting the key and registering the other sites from init returned:
 * a module in its init may fail and go
 */
static int key_in_init, wb_in_init, cow_in_init;

static bool expect(const char *what, int got, int want)
{
	if (got == want)
		return true;
	pr_info("%s: %d, expected %d\n", what, got, want);
	return false;
}

/* A registration that must fail, undone if it did not */
static bool refused(const char *what, enum swapcache_ab_site site,
		    const struct swapcache_ab_ops *ops, int want)
{
	int err = swapcache_ab_register(site, ops);

	if (!err)
		swapcache_ab_unregister(site, ops);
	return expect(what, err, want);
}

/* A key that must be refused, mainline's again if it was not */
static bool key_refused(const char *what, const struct swapcache_ab_ops *ops, int want)
{
	int err = swapcache_ab_replace_key(NULL, ops);

	if (!err)
		swapcache_ab_replace_key(ops, NULL);
	return expect(what, err, want);
}

/* Register, check, unregister: the site is mainline's again after each */
static bool check_taken(void)
{
	bool ok;

	ok = expect("register WB", swapcache_ab_register(SWAPCACHE_AB_WB, &wb_ops), 0);
	ok &= expect("register the same WB ops again",
		     swapcache_ab_register(SWAPCACHE_AB_WB, &wb_ops), -EBUSY);
	ok &= expect("register other WB ops over them",
		     swapcache_ab_register(SWAPCACHE_AB_WB, &wb_ops2), -EBUSY);
	ok &= expect("unregister WB ops not registered",
		     swapcache_ab_unregister(SWAPCACHE_AB_WB, &wb_ops2), -EINVAL);
	ok &= expect("unregister WB", swapcache_ab_unregister(SWAPCACHE_AB_WB, &wb_ops), 0);
	ok &= expect("unregister WB twice",
		     swapcache_ab_unregister(SWAPCACHE_AB_WB, &wb_ops), -EINVAL);
	return ok;
}

/*
 * Set, replace in one step and unset the key: the key holds its module
 * while set, once however often replaced; a stale old key is refused
 */
static bool check_key(int want)
{
	int refs = module_refcount(THIS_MODULE), err;
	bool ok;

	err = swapcache_ab_replace_key(NULL, &key_ops);
	ok = expect("set the key", err, want);
	if (err)
		return ok;
	ok &= expect("the key holds its module", module_refcount(THIS_MODULE), refs + 1);
	ok &= expect("set it again", swapcache_ab_replace_key(&key_ops, &key_ops), 0);
	ok &= expect("set a key over it as if none were", swapcache_ab_replace_key(NULL, &key_ops2),
		     -EINVAL);
	ok &= expect("replace it", swapcache_ab_replace_key(&key_ops, &key_ops2), 0);
	ok &= expect("replace the old one again", swapcache_ab_replace_key(&key_ops, &key_ops),
		     -EINVAL);
	ok &= expect("the key holds its module once", module_refcount(THIS_MODULE), refs + 1);
	ok &= expect("unset the key", swapcache_ab_replace_key(&key_ops2, NULL), 0);
	ok &= expect("the key lets its module go", module_refcount(THIS_MODULE), refs);
	return ok;
}

/* Longest a CPU-bound thread spins; within the soft lockup detector's 20 s */
#define SPIN_MS		10000
/* What the ABI promises an unhook: milliseconds, well under a second */
#define UNHOOK_BOUND_MS	1000

/*
 * Busy for SPIN_MS at most, never sleeping until told to stop: under
 * preempt=full it is preempted, never scheduled out voluntarily, so it
 * holds off every RCU Tasks grace period while it spins, and no RCU one.
 */
static int spin(void *unused)
{
	unsigned long end = jiffies + msecs_to_jiffies(SPIN_MS);

	while (!kthread_should_stop() && time_before(jiffies, end))
		cpu_relax();
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

/* Unhooking a site beside a CPU-bound kernel thread takes milliseconds */
static bool check_unhook_bound(void)
{
	struct task_struct *spinner;
	ktime_t start;
	s64 ms;
	bool ok;

	spinner = kthread_run(spin, NULL, "swapcache_ab_spin");
	if (IS_ERR(spinner))
		return expect("start a CPU-bound thread", PTR_ERR(spinner), 0);
	msleep(100);	/* running, or preempted, on its CPU */
	ok = expect("register WB", swapcache_ab_register(SWAPCACHE_AB_WB, &wb_ops), 0);
	start = ktime_get();
	ok &= expect("unregister WB", swapcache_ab_unregister(SWAPCACHE_AB_WB, &wb_ops), 0);
	ms = ktime_ms_delta(ktime_get(), start);
	kthread_stop(spinner);
	pr_info("unregister beside a CPU-bound thread: %lld ms (at most %d)\n", ms,
		UNHOOK_BOUND_MS);
	return ok && ms <= UNHOOK_BOUND_MS;
}

static bool run_check(int n)
{
	switch (n) {
	case 1:
		return refused("register NULL ops", SWAPCACHE_AB_COW, NULL, -EINVAL) &
		       expect("unregister NULL ops",
			      swapcache_ab_unregister(SWAPCACHE_AB_COW, NULL), -EINVAL) &
		       refused("an unknown site", NR_SWAPCACHE_AB_SITES, &wb_ops, -EINVAL) &
		       expect("unregister at an unknown site",
			      swapcache_ab_unregister(NR_SWAPCACHE_AB_SITES, &wb_ops), -EINVAL);
	case 2:
		return refused("WB ops at the COW site", SWAPCACHE_AB_COW, &wb_ops, -EINVAL) &
		       refused("key ops at the WB site", SWAPCACHE_AB_WB, &key_ops, -EINVAL) &
		       refused("the key through register", SWAPCACHE_AB_KEY, &key_ops, -EINVAL) &
		       key_refused("a key with a WB callback, not read there", &key_wb_ops, 0) &
		       key_refused("a key with two entries per slot", &shared_slot_ops, -EINVAL) &
		       key_refused("a key splitting a large folio", &split_folio_ops, -EINVAL) &
		       key_refused("a key past the device's spaces", &past_spaces_ops, -EINVAL) &
		       refused("callbacks of two sites, one read at each", SWAPCACHE_AB_WB,
			       &two_sites_ops, 0);
	case 3:
		return check_taken();
	case 4:
		return expect("register COW",
			      swapcache_ab_register(SWAPCACHE_AB_COW, &cow_ops), 0) &
		       expect("unregister COW",
			      swapcache_ab_unregister(SWAPCACHE_AB_COW, &cow_ops), 0);
	case 5:
		return expect("set the key during init", key_in_init, -EBUSY) &
		       expect("register WB during init", wb_in_init, -EBUSY) &
		       expect("register COW during init", cow_in_init, -EBUSY);
	case 6:		/* with no swap device in use */
		return check_key(0);
	case 7:		/* with a swap device in use */
		return check_key(-EBUSY);
	case 8:
		return check_unhook_bound();
	}
	return false;
}

static int check_set(const char *val, const struct kernel_param *kp)
{
	int n, err;

	err = kstrtoint(val, 10, &n);
	if (err)
		return err;
	/*
	 * Only a preemptible kernel (preempt=full, PREEMPT_RT) lets this
	 * task run beside a thread that never yields its CPU
	 */
	if (n == 8 && !preempt_model_preemptible())
		return -EOPNOTSUPP;
	return run_check(n) ? 0 : -EBADE;
}

static const struct kernel_param_ops check_ops = { .set = check_set };
module_param_cb(check, &check_ops, NULL, 0200);
MODULE_PARM_DESC(check, "run one check of the registration interface");

static int __init swapcache_ab_api_init(void)
{
	/* Refused or not, nothing may stay */
	key_in_init = swapcache_ab_replace_key(NULL, &key_ops);
	if (!key_in_init)
		swapcache_ab_replace_key(&key_ops, NULL);
	wb_in_init = swapcache_ab_register(SWAPCACHE_AB_WB, &wb_ops);
	if (!wb_in_init)
		swapcache_ab_unregister(SWAPCACHE_AB_WB, &wb_ops);
	cow_in_init = swapcache_ab_register(SWAPCACHE_AB_COW, &cow_ops);
	if (!cow_in_init)
		swapcache_ab_unregister(SWAPCACHE_AB_COW, &cow_ops);
	return 0;
}

/*
 * Whatever a check left registered, as a broken interface may let it: every
 * pair of site and ops this module ever passes (a key set holds this
 * module, so exit finds it gone unless the core forgot to).
 */
static void __exit swapcache_ab_api_exit(void)
{
	const struct swapcache_ab_ops *const all[] = {
		&wb_ops, &wb_ops2, &cow_ops, &key_ops, &key_ops2, &shared_slot_ops,
		&split_folio_ops, &past_spaces_ops, &key_wb_ops, &two_sites_ops,
	};
	unsigned int site, i;

	for (i = 0; i < ARRAY_SIZE(all); i++) {
		swapcache_ab_replace_key(all[i], NULL);
		for (site = SWAPCACHE_AB_WB; site < NR_SWAPCACHE_AB_SITES; site++)
			swapcache_ab_unregister(site, all[i]);
	}
}

module_init(swapcache_ab_api_init);
module_exit(swapcache_ab_api_exit);

MODULE_IMPORT_NS(SWAPCACHE_AB);
MODULE_DESCRIPTION("Checks of the swapcache_ab registration interface");
MODULE_LICENSE("GPL");
