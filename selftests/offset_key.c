// SPDX-License-Identifier: GPL-2.0
/*
 * offset_key and trunks: the swap cache of a type-1 swap device is ~10
 * levels high when keyed by the whole swap entry and at most 3 when keyed
 * by offset; trunks=0 puts all of a device in one xarray; under no key
 * does module code run (the kernel applies its masks inline).  Under every key, a folio swapped in for one process
 * is found in the swap cache by the next (no second read from the device),
 * and freeing swap slots clears the shadows their folios left; the key
 * cannot change under an active swap device, whatever its type; data swapped out under any
 * key comes back intact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define TEST_BYTES	test_size(64UL << 20)
#define TEST_TYPE	1
/*
 * Freed swap slots wait in a per-CPU cache of SWAP_BATCH (64) before they
 * are released, and with them their shadows
 */
#define SLOT_CACHE	64

struct child_read {
	unsigned long pswpin;
	size_t bad;
};

/*
 * Entries with two users are swapped in through the swap cache: the parent
 * reads @buf from the device, then the child must find every folio in the
 * swap cache at the index the key gives, and read nothing.
 */
static void test_swap_cache_hits(const char *thp, int offset_key, char *buf, size_t len)
{
	struct child_read *child_read;
	unsigned long pswpin;
	int go[2], status;
	size_t bad;
	pid_t pid;

	child_read = mmap(NULL, sizeof(*child_read), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (child_read == MAP_FAILED || pipe(go))
		ksft_exit_fail_msg("mmap/pipe: %s\n", strerror(errno));
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		child_read->pswpin = vmstat_get("pswpin");
		child_read->bad = count_bad_words(buf, len, offset_key);
		child_read->pswpin = vmstat_get("pswpin") - child_read->pswpin;
		_exit(0);
	}
	close(go[0]);
	pswpin = vmstat_get("pswpin");
	bad = count_bad_words(buf, len, offset_key);
	pswpin = vmstat_get("pswpin") - pswpin;
	if (write(go[1], "x", 1) != 1)
		ksft_exit_fail_msg("pipe: %s\n", strerror(errno));
	close(go[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		ksft_exit_fail_msg("reading child ended with status %#x\n", status);
	ksft_print_msg("thp=%s offset_key=%d: parent read pswpin +%lu, then child read pswpin +%lu\n",
		       thp, offset_key, pswpin, child_read->pswpin);
	ksft_test_result(pswpin > 0 && child_read->pswpin == 0 &&
			 bad == 0 && child_read->bad == 0,
			 "thp=%s offset_key=%d: %lu pages read from swap by the parent, 0 = %lu by the child (swap cache hits), %zu + %zu bad words\n",
			 thp, offset_key, pswpin, child_read->pswpin, bad,
			 child_read->bad);
	munmap(child_read, sizeof(*child_read));
}

/* Swapped out and unmapped without a read: the shadows must go with the slots */
static void test_shadows_cleared(const char *thp, int offset_key)
{
	unsigned long bound = SLOT_CACHE * sysconf(_SC_NPROCESSORS_ONLN);
	struct swap_shape before, after;
	char *buf = map_anon(TEST_BYTES);
	int ret;

	fill_pattern(buf, TEST_BYTES, offset_key);
	if (page_out(buf, TEST_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	ret = swap_shape_get(TEST_TYPE, &before);
	munmap(buf, TEST_BYTES);
	if (!ret)
		ret = swap_shape_get(TEST_TYPE, &after);
	if (ret)
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(-ret));
	ksft_test_result(before.shadows > bound && after.shadows <= bound,
			 "thp=%s offset_key=%d: %lu shadows after page-out, %lu left once unmapped (<= %lu in slot caches)\n",
			 thp, offset_key, before.shadows, after.shadows, bound);
}

/*
 * Swap TEST_BYTES out under the key of @offset_key and @trunks; return the
 * shape it left.  The kernel applies every key inline, from the masks the
 * module registered: no counter of the module moves.
 */
static void swap_under_key(const char *thp, int offset_key, int trunks,
			   struct swap_shape *shape)
{
	unsigned long stats, pswpout, moved;
	char *buf;
	int ret;

	ret = swap_key_set(offset_key, trunks);
	if (!ret)
		ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("swap set-up: %s\n", strerror(-ret));

	stats = stats_sum();
	pswpout = vmstat_get("pswpout");
	buf = map_anon(TEST_BYTES);
	fill_pattern(buf, TEST_BYTES, offset_key);
	if (page_out(buf, TEST_BYTES))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	pswpout = vmstat_get("pswpout") - pswpout;
	moved = stats_sum() - stats;

	ret = swap_shape_get(TEST_TYPE, shape);
	if (ret || !shape->spaces)
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s, %lu type-%d spaces\n",
				   strerror(-ret), shape->spaces, TEST_TYPE);
	ksft_print_msg("thp=%s offset_key=%d trunks=%d: pswpout +%lu, type %d: %lu spaces, %lu used, %lu folios, %lu shadows, %lu nodes, height %u, all stats +%lu\n",
		       thp, offset_key, trunks, pswpout, TEST_TYPE, shape->spaces,
		       shape->used_spaces, shape->folios, shape->shadows,
		       shape->nodes, shape->max_height, moved);
	ksft_test_result(pswpout >= TEST_BYTES / PAGE_SZ / 2 && moved == 0,
			 "thp=%s offset_key=%d trunks=%d: swap-out ran no module code\n",
			 thp, offset_key, trunks);

	test_swap_cache_hits(thp, offset_key, buf, TEST_BYTES);
	munmap(buf, TEST_BYTES);
	test_shadows_cleared(thp, offset_key);
}

/* Swap is on under a key that is not mainline: nothing may move it */
static void test_key_held(const char *thp, const char *knob, int val)
{
	int ret;

	ret = knob_set(knob, !val);
	ksft_test_result(ret == -EBUSY && knob_get(knob) == val,
			 "thp=%s %s %d->%d with swap on: %s, value kept\n",
			 thp, knob, val, !val, strerror(-ret));
}

/*
 * The interlock covers every device in use, not only the first: the device
 * of type 0 alone, of type 1 alone (type 0 swapped off first) and of type
 * 2 alone.  On each, a write of either key knob is refused and both keep
 * their values.  The debugfs table, which lists the types in use, is the
 * control that the device in use is the one named.
 */
#define ALONE_TYPES	3

static void test_key_held_alone(void)
{
	static const char *const key_knobs[] = { "offset_key", "trunks" };
	unsigned int type, t, k, in_use;
	struct swap_shape shape;
	int ret;

	for (type = 0; type < ALONE_TYPES; type++) {
		ret = swap_key_set(1, 1);
		if (!ret)
			ret = swap_on_as_type(type, true);
		if (ret)
			ksft_exit_fail_msg("type %u alone: %s\n", type, strerror(-ret));
		for (t = in_use = 0; t < ALONE_TYPES; t++) {
			ret = swap_shape_get(t, &shape);
			if (ret)
				ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(-ret));
			in_use |= !!shape.spaces << t;
		}
		for (k = 0; k < ARRAY_SIZE(key_knobs); k++) {
			ret = knob_set(key_knobs[k], 0);
			ksft_test_result(in_use == 1U << type && ret == -EBUSY &&
					 knob_get("offset_key") == 1 && knob_get("trunks") == 1,
					 "type %u alone in use (types in use %#x): %s 1->0 %s, offset_key %d and trunks %d kept\n",
					 type, in_use, key_knobs[k], strerror(-ret),
					 knob_get("offset_key"), knob_get("trunks"));
		}
	}
	ret = swap_key_set(1, 1);
	if (ret)
		ksft_exit_fail_msg("back to mainline: %s\n", strerror(-ret));
}

static void test_thp_mode(const char *thp)
{
	struct swap_shape entry, offset, one_offset, one_entry;
	int ret;

	set_thp(thp);
	swap_under_key(thp, 0, 1, &entry);
	ksft_test_result(entry.max_height >= 9,
			 "thp=%s entry key: type-1 swap cache height %u >= 9\n",
			 thp, entry.max_height);
	test_key_held(thp, "offset_key", 0);
	test_key_held(thp, "trunks", 1);
	ret = module_unload();
	ksft_test_result(ret && module_loaded(),
			 "thp=%s unload refused under the entry key with swap on (%s)\n",
			 thp, strerror(-ret));

	swap_under_key(thp, 1, 1, &offset);
	ksft_test_result(offset.max_height >= 1 && offset.max_height <= 3,
			 "thp=%s offset key: type-1 swap cache height %u <= 3\n",
			 thp, offset.max_height);
	ksft_test_result(offset.nodes < entry.nodes,
			 "thp=%s offset key: %lu xarray nodes < %lu under the entry key\n",
			 thp, offset.nodes, entry.nodes);
	test_key_held(thp, "offset_key", 1);

	/* One xarray per device: v4.9 and v4.10, then before v4.9 */
	swap_under_key(thp, 1, 0, &one_offset);
	ksft_test_result(one_offset.used_spaces == 1 && one_offset.max_height >= 1 &&
			 one_offset.max_height <= 3,
			 "thp=%s trunks=0 offset key: %lu of %lu spaces used, height %u <= 3\n",
			 thp, one_offset.used_spaces, one_offset.spaces,
			 one_offset.max_height);
	test_key_held(thp, "trunks", 0);
	swap_under_key(thp, 0, 0, &one_entry);
	ksft_test_result(one_entry.used_spaces == 1 && one_entry.max_height >= 9,
			 "thp=%s trunks=0 entry key: %lu of %lu spaces used, height %u >= 9\n",
			 thp, one_entry.used_spaces, one_entry.spaces,
			 one_entry.max_height);

	ret = swap_key_set(1, 1);
	if (ret)
		ksft_exit_fail_msg("back to mainline: %s\n", strerror(-ret));
}

/*
 * mainline_ops=1 hooks the key site with the module's mainline key, which
 * make ab's key A/Bs run on both sides: it must give mainline's index and
 * swap address space.  A key that only keeps the data consistent (the whole
 * offset inside each 64MB space, say) passes every data check but shapes
 * the xarrays otherwise.  So: on a swap area of 80MB, whose second 64MB
 * space has 4096 slots, swap out 72MB, once unhooked and once hooked at
 * mainline, and compare the height of that second space: at most 2 with
 * the index in the space (6.12), 3 with the whole offset (6.1's mainline).
 * The slots are spread over the area, but 72MB cannot all fit in the first
 * space.  Then read some pages back through the hooked key's lookups.
 */
#define SPACE_BYTES	(64UL << 20)
#define AREA_BYTES	(SPACE_BYTES + (16UL << 20))
/* Not divided by SIZE_DIVISOR: the second space must be reached */
#define SWAPPED_BYTES	(SPACE_BYTES + (8UL << 20))
#define READ_BACK	(2UL << 20)

static void swap_past_space(int hooked, struct swap_shape *second, char **bufp)
{
	size_t len = SWAPPED_BYTES;
	int ret, refcnt = -1;
	FILE *f;

	/* A key knob's write hooks the key site: key_hooked unhooks it again */
	ret = swap_key_set(1, 1);
	if (!ret)
		ret = write_file(MAINLINE_OPS, hooked ? "1" : "0");
	if (!ret)
		ret = write_file(KEY_HOOKED, hooked ? "1" : "0");
	if (!ret)
		ret = swap_test_on_size(AREA_BYTES);
	if (ret)
		ksft_exit_fail_msg("mainline_ops=%d and swap on: %s\n", hooked, strerror(-ret));
	/* The control: a hooked key site holds the module, nothing else does */
	f = fopen("/sys/module/swapcache_ab/refcnt", "r");
	if (!f || fscanf(f, "%d", &refcnt) != 1)
		ksft_exit_fail_msg("reading the module's refcnt: %s\n", strerror(errno));
	fclose(f);

	*bufp = map_anon(len);
	if (madvise(*bufp, len, MADV_NOHUGEPAGE))
		ksft_exit_fail_msg("MADV_NOHUGEPAGE: %s\n", strerror(errno));
	fill_pattern(*bufp, len, hooked);
	if (page_out(*bufp, len))
		ksft_exit_fail_msg("MADV_PAGEOUT: %s\n", strerror(errno));
	ret = swap_space_get(TEST_TYPE, 1, second);
	if (ret)
		ksft_exit_fail_msg("reading " SPACES_FILE ": %s\n", strerror(-ret));
	ksft_print_msg("mainline_ops=%d (module refcnt %d): type %d space 1: %lu folios, %lu shadows, %lu nodes, height %u\n",
		       hooked, refcnt, TEST_TYPE, second->folios, second->shadows,
		       second->nodes, second->max_height);
	ksft_test_result((hooked ? refcnt > 0 : refcnt == 0) &&
			 second->folios + second->shadows > 0,
			 "mainline_ops=%d: key site %s, swap reached the second 64MB space\n",
			 hooked, hooked ? "hooked" : "unhooked");
}

/* Since v6.10 mainline indexes by the offset in its 64MB space */
static bool index_in_space(void)
{
	unsigned int major = 0, minor = 0;
	struct utsname u;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		ksft_exit_fail_msg("uname: %s\n", strerror(errno));
	return major * 100 + minor >= 610;
}

static void test_hooked_mainline(void)
{
	unsigned int in_space_height = index_in_space() ? 2 : 3;
	struct swap_shape unhooked, hooked;
	char *buf;
	int ret;

	set_thp("never");
	swap_past_space(0, &unhooked, &buf);
	munmap(buf, SWAPPED_BYTES);
	swap_past_space(1, &hooked, &buf);
	ksft_test_result(hooked.max_height == unhooked.max_height &&
			 unhooked.max_height <= in_space_height,
			 "mainline_ops=1: the second 64MB space is %u high, as unhooked (%u, at most %u on this kernel)\n",
			 hooked.max_height, unhooked.max_height, in_space_height);
	/*
	 * The map's last pages, in whichever spaces they went to: found in the
	 * swap cache through the hooked key, one read from the device
	 */
	test_swap_cache_hits("never", 1, buf + SWAPPED_BYTES - READ_BACK, READ_BACK);
	munmap(buf, SWAPPED_BYTES);
	ret = swap_all_off();
	if (!ret)
		ret = write_file(MAINLINE_OPS, "0");
	if (!ret)
		ret = write_file(KEY_HOOKED, "0");
	if (ret)
		ksft_exit_fail_msg("swap off, mainline_ops=0, key_hooked=0: %s\n", strerror(-ret));
}

int main(void)
{
	unsigned int i;

	ksft_print_header();
	if (getuid())
		ksft_exit_skip("needs root\n");
	ksft_set_plan(22 * ARRAY_SIZE(thp_modes) + 2 * ALONE_TYPES + 4);
	module_require();

	for (i = 0; i < ARRAY_SIZE(thp_modes); i++)
		test_thp_mode(thp_modes[i]);
	test_key_held_alone();
	test_hooked_mainline();

	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
	ksft_finished();
}
