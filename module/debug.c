// SPDX-License-Identifier: GPL-2.0
/*
 * swapcache_ab: instrumentation for the selftests, built on debug kernels
 * only (CONFIG_FAULT_INJECTION): where the key's policies are called from,
 * and a tagging decision that holds its CPU in module text.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include "swapcache_ab.h"

/*
 * For selftests/callsites: where the key's policies are called from, while
 * recording is on.  The kernel makes a direct (static) call from the
 * function that computes the index or the space: its return address is
 * depth 0; where frame pointers tell, its caller's is depth 1
 * (folio_mapping()'s callers, say) and theirs depth 2 (6.1's
 * page_mapping() callers).  In debugfs, swapcache_ab/key_callers: "1"
 * empties it and records, "0" stops.  Any context may record: the table
 * is filled with cmpxchg() only.
 */
#define NR_KEY_CALLERS	512
static struct {
	unsigned long ip;
	unsigned int depth;
	atomic_long_t calls;
} key_callers[NR_KEY_CALLERS];
static atomic_long_t key_callers_lost;
bool key_callers_on;

void record_key_ip(unsigned long ip, unsigned int depth)
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

/*
 * For selftests/reload: the next tagging decision spins hold_policy_ms in
 * this module's text, preemptible as the site calls it, policy_held 1
 * meanwhile, so that a test can unhook the site and unload the module
 * under it: unregistering must wait.
 */
static unsigned int hold_policy_ms;
module_param(hold_policy_ms, uint, 0644);
/* Far below the RCU stall (21 s) and soft lockup (20 s) detectors */
#define HOLD_POLICY_MAX_MS	5000U
MODULE_PARM_DESC(hold_policy_ms, "debug: the next tagging decision spins this long (ms, 5000 at most)");
static int policy_held;
module_param(policy_held, int, 0444);
MODULE_PARM_DESC(policy_held, "debug: 1 while a CPU spins in the tagging decision");

void hold_policy(void)
{
	unsigned int ms = READ_ONCE(hold_policy_ms);

	if (ms && cmpxchg(&hold_policy_ms, ms, 0) == ms) {
		WRITE_ONCE(policy_held, 1);
		mdelay(min(ms, HOLD_POLICY_MAX_MS));
		WRITE_ONCE(policy_held, 0);
	}
}

void __init debug_init(struct dentry *dir)
{
	debugfs_create_file("key_callers", 0644, dir, NULL, &key_callers_fops);
}
