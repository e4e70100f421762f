// SPDX-License-Identifier: GPL-2.0
/*
 * offset_key: the swap cache of a type-1 swap device is ~10 levels high
 * when keyed by the whole swap entry and at most 3 when keyed by offset;
 * the key cannot change under an active swap device; data swapped out
 * under either key comes back intact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define TEST_BYTES	test_size(64UL << 20)
#define TEST_TYPE	1

/* Swap TEST_BYTES out under @offset_key; return the shape it left */
static void swap_under_key(const char *thp, int offset_key,
			   struct swap_shape *shape)
{
	const char *counter = offset_key ? "index_offset" : "index_entry";
	unsigned long before, pswpout;
	size_t bad;
	char *buf;
	int ret;

	ret = swap_all_off();
	if (!ret)
		ret = knob_set("offset_key", offset_key);
	if (!ret)
		ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("swap set-up: %s\n", strerror(-ret));

	before = stat_get(counter);
	pswpout = vmstat_get("pswpout");
	buf = map_anon(TEST_BYTES);
	fill_pattern(buf, TEST_BYTES, offset_key);
	if (page_out(buf, TEST_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	pswpout = vmstat_get("pswpout") - pswpout;

	if (swap_shape_get(TEST_TYPE, shape))
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(errno));
	ksft_print_msg("thp=%s offset_key=%d: pswpout +%lu, type %d: %lu spaces, %lu folios, %lu shadows, %lu nodes, height %u, %s +%lu\n",
		       thp, offset_key, pswpout, TEST_TYPE, shape->spaces,
		       shape->folios, shape->shadows, shape->nodes,
		       shape->max_height, counter, stat_get(counter) - before);
	ksft_test_result(pswpout >= TEST_BYTES / PAGE_SZ / 2 &&
			 stat_get(counter) > before,
			 "thp=%s offset_key=%d: swap-out went through the %s key\n",
			 thp, offset_key, offset_key ? "offset" : "entry");

	bad = count_bad_words(buf, TEST_BYTES, offset_key);
	ksft_test_result(bad == 0, "thp=%s offset_key=%d: %lu MB read back, %zu bad words\n",
			 thp, offset_key, TEST_BYTES >> 20, bad);
	munmap(buf, TEST_BYTES);
}

static void test_thp_mode(const char *thp)
{
	struct swap_shape entry, offset;
	int ret;

	set_thp(thp);
	swap_under_key(thp, 0, &entry);
	ksft_test_result(entry.max_height >= 9,
			 "thp=%s entry key: type-1 swap cache height %u >= 9\n",
			 thp, entry.max_height);

	/* Swap is on, under the entry key: the key must not move */
	ret = knob_set("offset_key", 1);
	ksft_test_result(ret == -EBUSY && knob_get("offset_key") == 0,
			 "thp=%s offset_key 0->1 with swap on: %s, value kept\n",
			 thp, strerror(-ret));
	ret = module_unload();
	ksft_test_result(ret && module_loaded(),
			 "thp=%s unload refused under the entry key with swap on (%s)\n",
			 thp, strerror(-ret));

	swap_under_key(thp, 1, &offset);
	ksft_test_result(offset.max_height >= 1 && offset.max_height <= 3,
			 "thp=%s offset key: type-1 swap cache height %u <= 3\n",
			 thp, offset.max_height);
	ksft_test_result(offset.nodes < entry.nodes,
			 "thp=%s offset key: %lu xarray nodes < %lu under the entry key\n",
			 thp, offset.nodes, entry.nodes);

	ret = knob_set("offset_key", 0);
	ksft_test_result(ret == -EBUSY && knob_get("offset_key") == 1,
			 "thp=%s offset_key 1->0 with swap on: %s, value kept\n",
			 thp, strerror(-ret));
}

int main(void)
{
	unsigned int i;

	ksft_print_header();
	if (getuid())
		ksft_exit_skip("needs root\n");
	ksft_set_plan(10 * ARRAY_SIZE(thp_modes));
	module_require();

	for (i = 0; i < ARRAY_SIZE(thp_modes); i++)
		test_thp_mode(thp_modes[i]);

	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
	ksft_finished();
}
