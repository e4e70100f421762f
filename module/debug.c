// SPDX-License-Identifier: GPL-2.0
/*
 * swapcache_ab: instrumentation for the selftests, built on debug kernels
 * only (CONFIG_FAULT_INJECTION): a tagging decision that holds its CPU in
 * module text.
 */
#include <linux/delay.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include "swapcache_ab.h"

/*
 * For selftests/reload: the next tagging decision spins hold_policy_ms in
 * this module's text, inside the site's RCU read-side section, policy_held 1
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
