// SPDX-License-Identifier: GPL-2.0
/*
 * swapcache_ab: the shape of every swap cache xarray, in debugfs
 * (swapcache_ab/swap_spaces), the mechanism behind the key knobs and a
 * check of the writeback policy's marks, independent of timing.
 */
#include <linux/debugfs.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/swap.h>
#include <linux/xarray.h>
#include "swapcache_ab.h"

/* Call @fn for every swap address space of every swap device in use */
void walk_swap_spaces(void (*fn)(struct seq_file *m, unsigned int type,
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

void __init geometry_init(struct dentry *dir)
{
	debugfs_create_file("swap_spaces", 0444, dir, NULL, &swap_spaces_fops);
}
