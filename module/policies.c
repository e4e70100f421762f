// SPDX-License-Identifier: GPL-2.0
/*
 * swapcache_ab: the swap cache policies that upstream replaced, the code
 * that runs at the hook points of CONFIG_SWAPCACHE_AB_HOOKS.  Each runs at
 * its hook site only while its knob, or a memory cgroup's setting of it,
 * is 0: otherwise the site's static key is off and the kernel runs
 * mainline code alone.
 *
 * The key's policies (offset_key and trunks, two knobs for one site) are
 * key_ops[], data; each other policy is a row of policies[], which the
 * knobs, the counters and the memory cgroup settings are made from.
 */
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/swap.h>
#include <linux/swapops.h>
#include <linux/xarray.h>
#include "swapcache_ab.h"

/*
 * The key's policies are data, which the kernel applies inline: a lookup
 * under an old key costs what it cost in a kernel that had it.  Indexed
 * [offset_key][trunks]; both at 1 is mainline: no ops, but for
 * mainline_ops.
 *
 * Before v4.9 the swap cache was keyed by the whole entry, type bits too;
 * v4.9 and v4.10 by offset, in one tree per device; since v4.11 a device
 * has a swap address space per 64MB, and since v6.10 the index is the
 * offset within it.
 */
#define IN_TRUNK	((1UL << TRUNK_SHIFT) - 1)
#define TRUNK_BITS	(SWP_OFFSET_MASK & ~IN_TRUNK)

const struct swapcache_ab_ops key_ops[2][2] = {
	[0][0] = { .index_mask = ~0UL, .space_mask = 0 },
	[0][1] = { .index_mask = ~0UL, .space_mask = TRUNK_BITS },
	[1][0] = { .index_mask = SWP_OFFSET_MASK, .space_mask = 0 },
	[1][1] = {
		.index_mask = SWAPCACHE_AB_INDEX_IN_SPACE ? IN_TRUNK : SWP_OFFSET_MASK,
		.space_mask = TRUNK_BITS,
	},
};

/*
 * Whether @policy's old behaviour applies to @folio: the setting of the
 * nearest memory cgroup assignment that sets it, else the global knob.
 * Counted in stats/ when it does.
 */
static bool old_policy_applies(struct folio *folio, enum policy_id policy)
{
	int value = memcg_setting(folio, policy);

	if (value == SETTING_GLOBAL)
		value = READ_ONCE(policy_knobs[policy]);
	if (value)
		return false;
	count_stat(policy);
	return true;
}

/* skip_wb_tags=0 for @folio, globally or by its memory cgroup */
static bool tag_decision(struct folio *folio)
{
	hold_policy();
	return old_policy_applies(folio, POLICY_SKIP_WB_TAGS);
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

/*
 * Before v5.14 the swap cache folio a COW copied was left for reclaim;
 * false lets the kernel free it, as mainline does.
 */
static bool keep_after_cow(struct folio *folio)
{
	return folio_test_swapcache(folio) && old_policy_applies(folio, POLICY_COW_FREE);
}

static const struct swapcache_ab_ops cow_ops = {
	.keep_after_cow = keep_after_cow,
};

/*
 * One row per policy that a memory cgroup can set too; a new one is its
 * function, its ops, a row here and its enum policy_id entry.
 */
const struct policy policies[NR_POLICIES] = {
	[POLICY_SKIP_WB_TAGS] = {
		.name = "skip_wb_tags",
		.site = SWAPCACHE_AB_WB,
		.ops = &wb_ops,
		.unhooked = clear_wb_marks,
		.stat = "wb_tagged",
		.memcg_stats = { "wb_tagged", "wb_untagged" },
	},
	[POLICY_COW_FREE] = {
		.name = "cow_free",
		.site = SWAPCACHE_AB_COW,
		.ops = &cow_ops,
		.stat = "cow_kept",
		.memcg_stats = { "cow_kept", "cow_released" },
	},
};
