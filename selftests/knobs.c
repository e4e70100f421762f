// SPDX-License-Identifier: GPL-2.0
/*
 * Loading and unloading swapcache_ab, and what its knobs accept: exactly
 * "0" or "1", from root, with every other write refused and the value
 * left as it was.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

struct bad_input {
	const char *name;
	const char *buf;
	size_t len;
	int err;	/* what the write returns */
};

static char long_input[4096];

/* sysfs turns a 0-byte write into a no-op before the module sees it */
static const struct bad_input bad_inputs[] = {
	{ "empty", "", 0, 0 },
	{ "newline", "\n", 1, -EINVAL },
	{ "whitespace", " \t\n", 3, -EINVAL },
	{ "leading space", " 1", 2, -EINVAL },
	{ "2", "2", 1, -EINVAL },
	{ "-1", "-1", 2, -EINVAL },
	{ "0x1", "0x1", 3, -EINVAL },
	{ "yes please", "yes please", 10, -EINVAL },
	{ "y", "y", 1, -EINVAL },
	{ "10", "10", 2, -EINVAL },
	{ "+1", "+1", 2, -EINVAL },
	{ "01", "01", 2, -EINVAL },
	{ "two newlines", "1\n\n", 3, -EINVAL },
	{ "4096 bytes", long_input, sizeof(long_input), -EINVAL },
	{ "embedded NUL", "1\0" "1", 3, -EINVAL },
	{ "trailing NUL", "0\0", 2, -EINVAL },
};

/* Every bad input, with the knob at @val: EINVAL, and @val stays */
static void check_bad_inputs(const char *knob, int val)
{
	unsigned int i, refused = 0;
	int ret;

	for (i = 0; i < ARRAY_SIZE(bad_inputs); i++) {
		const struct bad_input *in = &bad_inputs[i];

		ret = knob_write(knob, in->buf, in->len);
		if (ret == in->err && knob_get(knob) == val)
			refused++;
		else
			ksft_print_msg("%s=%d: '%s' gave %s, value now %d\n",
				       knob, val, in->name, strerror(-ret),
				       knob_get(knob));
	}
	ksft_test_result(refused == ARRAY_SIZE(bad_inputs),
			 "%s: %u of %zu bad inputs refused at %d (EINVAL; empty: no-op), value kept\n",
			 knob, refused, ARRAY_SIZE(bad_inputs), val);
}

static void check_good_inputs(const char *knob)
{
	bool ok = true;

	ok &= knob_write(knob, "0", 1) == 0 && knob_get(knob) == 0;
	ok &= knob_write(knob, "1", 1) == 0 && knob_get(knob) == 1;
	ok &= knob_write(knob, "0\n", 2) == 0 && knob_get(knob) == 0;
	ok &= knob_write(knob, "1\n", 2) == 0 && knob_get(knob) == 1;
	ksft_test_result(ok, "%s: \"0\", \"1\", with and without newline, take effect\n",
			 knob);
}

/* As nobody, the write is refused by the file's mode and changes nothing */
static void check_non_root(const char *knob)
{
	int status, before = knob_get(knob);
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		_exit(knob_write(knob, before ? "0" : "1", 1) == -EACCES ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	ksft_test_result(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
			 knob_get(knob) == before,
			 "%s: write as nobody refused with EACCES, value kept\n", knob);
}

/* A bool module parameter: 'Y', 'N', or 0 where it cannot be read */
static char param_get(const char *path)
{
	char buf[8] = "";
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return buf[0];
}

/* The parameter that hooks every site at mainline, for make ab's hooked A/A */
static void check_mainline_ops(void)
{
	char buf[8] = "";
	int ret;

	ret = module_unload();
	if (ret)
		ksft_exit_fail_msg("unloading swapcache_ab: %s\n", strerror(-ret));
	ret = module_load_params("mainline_ops=1");
	ksft_test_result(ret == -EINVAL && !module_loaded(),
			 "mainline_ops=1 at load refused with EINVAL (%s)\n", strerror(-ret));

	ret = module_load();
	if (ret)
		ksft_exit_fail_msg("loading swapcache_ab: %s\n", strerror(-ret));
	ret = write_file(MAINLINE_OPS, "1");
	buf[0] = param_get(MAINLINE_OPS);
	ksft_test_result(!ret && buf[0] == 'Y', "mainline_ops 1 once loaded, read back %s (%s)\n",
			 buf[0] ? "Y" : "nothing", strerror(-ret));

	ret = module_unload();
	ksft_test_result(ret && module_loaded(),
			 "unload refused while mainline_ops=1: the key holds the module (%s)\n",
			 strerror(-ret));

	ret = write_file(MAINLINE_OPS, "0");
	ksft_test_result(!ret && !module_unload() && !module_loaded(),
			 "mainline_ops back to 0, then unload works (%s)\n", strerror(-ret));
}

/*
 * A key knob written by hand keeps the key site hooked, at mainline's key
 * too, until key_hooked is written 0: both sides of a by-hand A/B of a key
 * knob pay the key's dispatch.  A module never written runs mainline
 * unhooked.  The hooked key site holds the module, as mainline_ops does.
 */
static void check_key_hooked(void)
{
	int ret, ret0;

	ret = module_load();
	if (ret)
		ksft_exit_fail_msg("loading swapcache_ab: %s\n", strerror(-ret));
	ret = param_get(KEY_HOOKED);
	ksft_test_result(ret == 'N' && !module_delete() && !module_loaded(),
			 "a module loaded and never written: key_hooked %c, unload works\n",
			 ret ? ret : '?');

	ret = module_load_params("key_hooked=1");
	ksft_test_result(ret == -EINVAL && !module_loaded(),
			 "key_hooked=1 at load refused with EINVAL (%s)\n", strerror(-ret));

	ret = module_load();
	if (!ret)
		ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("load and swap on: %s\n", strerror(-ret));
	/* Swap on: the site cannot be hooked, so a write of the value is a no-op */
	ret = knob_set("offset_key", 1);
	ret0 = knob_set("offset_key", 0);
	ksft_test_result(!ret && ret0 == -EBUSY && param_get(KEY_HOOKED) == 'N' &&
			 knob_get("offset_key") == 1,
			 "swap on: offset_key 1 (its value) a no-op (%s), 0 refused (%s), key_hooked and the knob as they were\n",
			 strerror(-ret), strerror(-ret0));

	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
	ret = knob_set("offset_key", 1);
	ksft_test_result(!ret && param_get(KEY_HOOKED) == 'Y' && module_delete() &&
			 module_loaded(),
			 "swap off: offset_key 1 written, key_hooked Y, unload refused: the key site holds the module (%s)\n",
			 strerror(-ret));

	if (swap_test_on())
		ksft_exit_fail_msg("swap on: %s\n", strerror(errno));
	ret = write_file(KEY_HOOKED, "0");
	ksft_test_result(ret == -EBUSY && param_get(KEY_HOOKED) == 'Y',
			 "key_hooked 0 with swap on refused, still Y (%s)\n", strerror(-ret));

	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
	ret = write_file(KEY_HOOKED, "0");
	ret0 = param_get(KEY_HOOKED);
	if (!ret)
		ret = knob_set("trunks", 1);
	ksft_test_result(!ret && ret0 == 'N' && param_get(KEY_HOOKED) == 'Y',
			 "key_hooked 0 with swap off reads N, then trunks 1 hooks it again (%s)\n",
			 strerror(-ret));
	ret = write_file(KEY_HOOKED, "0");
	ksft_test_result(!ret && !module_delete() && !module_loaded(),
			 "key_hooked 0 with swap off, then unload works (%s)\n", strerror(-ret));
}

/* What a key write may change: the two knobs and key_hooked */
struct key_state {
	int offset_key, trunks;
	char key_hooked;
};

static void key_state_get(struct key_state *st)
{
	st->offset_key = knob_get("offset_key");
	st->trunks = knob_get("trunks");
	st->key_hooked = param_get(KEY_HOOKED);
}

#define KEY_RACE_SECONDS	8

/*
 * A key write racing swapon and swapoff: each is refused (EBUSY) or done,
 * and a refused one leaves both knobs and key_hooked exactly as they
 * were, a done one changes its own knob only.  A child swaps a device on
 * and off meanwhile, so that a swapon can land between anything the
 * module and the kernel do for one write.
 */
static void check_key_race(void)
{
	unsigned int busy = 0, done = 0, bad = 0, i;
	struct key_state before, after;
	time_t end;
	pid_t pid;
	int ret;

	/* From trunks 0: a refused write that resets a knob to 1 shows at once */
	ret = module_load();
	if (!ret)
		ret = swap_key_set(1, 0);
	if (!ret)
		ret = make_swap(SMALL_SWAP_DEV);
	if (ret)
		ksft_exit_fail_msg("load, trunks 0 and swap set-up: %s\n", strerror(-ret));
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_msg("fork: %s\n", strerror(errno));
	if (!pid) {
		for (;;) {
			swapon(SMALL_SWAP_DEV, 0);
			swapoff(SMALL_SWAP_DEV);
		}
	}
	end = time(NULL) + KEY_RACE_SECONDS;
	for (i = 0; time(NULL) < end; i++) {
		bool is_trunks = i % 3 == 0, ok;
		const char *knob = is_trunks ? "trunks" : "offset_key";
		struct key_state want;

		key_state_get(&before);
		want = before;
		if (is_trunks)
			want.trunks = !before.trunks;
		else
			want.offset_key = !before.offset_key;
		want.key_hooked = 'Y';
		ret = knob_set(knob, is_trunks ? want.trunks : want.offset_key);
		key_state_get(&after);
		if (ret == -EBUSY) {
			busy++;
			want = before;
		} else if (!ret) {
			done++;
		}
		ok = (ret == -EBUSY || !ret) && after.offset_key == want.offset_key &&
		     after.trunks == want.trunks && after.key_hooked == want.key_hooked;
		if (!ok && bad++ < 5)
			ksft_print_msg("%s write %d (%s): offset_key %d->%d trunks %d->%d key_hooked %c->%c\n",
				       knob, is_trunks ? want.trunks : want.offset_key, strerror(-ret),
				       before.offset_key, after.offset_key, before.trunks,
				       after.trunks, before.key_hooked, after.key_hooked);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ret = swap_key_set(1, 1);
	if (!ret)
		ret = write_file(KEY_HOOKED, "0");
	if (ret)
		ksft_exit_fail_msg("back to mainline: %s\n", strerror(-ret));
	ksft_print_msg("key writes racing swapon/swapoff for %d s: %u refused, %u done, %u wrong\n",
		       KEY_RACE_SECONDS, busy, done, bad);
	ksft_test_result(!bad && busy && done && !module_unload(),
			 "key writes racing swapon: %u refused with both knobs and key_hooked as they were, %u done changing their knob only\n",
			 busy, done);
}

int main(void)
{
	unsigned int i;
	bool ok;
	int ret;

	ksft_print_header();
	if (getuid())
		ksft_exit_skip("needs root\n");
	ksft_set_plan(3 + 4 * ARRAY_SIZE(knob_names) + 9 + 7 + 1);
	memset(long_input, '1', sizeof(long_input));

	if (swap_all_off())
		ksft_exit_fail_msg("swapoff: %s\n", strerror(errno));
	if (module_loaded()) {
		knob_set("offset_key", 1);
		knob_set("trunks", 1);
		if (module_unload())
			ksft_exit_fail_msg("unloading the module left loaded: %s\n",
					   strerror(errno));
	}

	ret = module_load();
	ksft_test_result(ret == 0 && module_loaded(),
			 "load creates " KNOB_DIR " (%s)\n", strerror(-ret));
	if (ret)
		ksft_exit_fail();

	ok = true;
	for (i = 0; i < ARRAY_SIZE(knob_names); i++)
		ok &= knob_get(knob_names[i]) == 1;
	ksft_test_result(ok, "every knob starts at 1, mainline\n");

	ok = true;
	for (i = 0; i < ARRAY_SIZE(stat_names); i++) {
		char path[128];

		snprintf(path, sizeof(path), KNOB_DIR "/stats/%s", stat_names[i]);
		ok &= write_file(path, "0") == -EACCES;
		ksft_print_msg("stats/%s = %lu\n", stat_names[i], stat_get(stat_names[i]));
	}
	ksft_test_result(ok, "stats are read-only\n");

	for (i = 0; i < ARRAY_SIZE(knob_names); i++) {
		check_good_inputs(knob_names[i]);
		check_bad_inputs(knob_names[i], 1);
		knob_set(knob_names[i], 0);
		check_bad_inputs(knob_names[i], 0);
		check_non_root(knob_names[i]);
	}

	/* All knobs at 0 now: the entry key holds the module */
	ret = module_unload();
	ksft_test_result(ret && module_loaded(),
			 "unload refused while offset_key=0 trunks=0 (%s)\n", strerror(-ret));

	ksft_test_result(knob_set("offset_key", 1) == 0 && knob_set("trunks", 1) == 0,
			 "offset_key and trunks back to 1 with no swap on\n");

	/* The other two may stay at 0: unloading restores them */
	ret = module_unload();
	ksft_test_result(ret == 0 && !module_loaded(),
			 "unload with skip_wb_tags=0 cow_free=0 removes the knobs (%s)\n",
			 strerror(-ret));

	ret = module_load();
	ok = ret == 0;
	for (i = 0; ok && i < ARRAY_SIZE(knob_names); i++)
		ok &= knob_get(knob_names[i]) == 1;
	ksft_test_result(ok, "reload starts at mainline again\n");

	ret = module_load();
	ksft_test_result(ret == -EEXIST, "a second load fails with EEXIST (%s)\n",
			 strerror(-ret));

	check_mainline_ops();
	check_key_hooked();
	check_key_race();
	ksft_finished();
}
