// SPDX-License-Identifier: GPL-2.0
/*
 * The core's registration interface (include/linux/swapcache_ab.h), as a
 * module sees it: test_modules/swapcache_ab_api.ko runs each check when
 * its number is written to its "check" parameter, and the write fails
 * unless the interface answered as documented (the module's log line says
 * what it got).  swapcache_ab itself is not loaded meanwhile: it could
 * hold a site.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

#define API_KO		"/kselftest/swapcache_ab/swapcache_ab_api.ko"
#define API_CHECK	"/sys/module/swapcache_ab_api/parameters/check"

static const char *const checks[] = {
	NULL,
	"NULL ops and an unknown site refused, to register and to unregister (EINVAL)",
	"ops without the site's callback or a key that would lose data refused (EINVAL), other members not read",
	"a taken site refused, to the same ops too (EBUSY), only the registered ops unregistered (EINVAL otherwise)",
	"COW ops registered and unregistered",
	"the key, WB and COW refused to a module still in its init (EBUSY)",
	"the key set, replaced and unset with no swap device in use, holding its module while set",
	"the key refused while a swap device is in use (EBUSY)",
	"WB unregistered within 1 s while a CPU-bound kernel thread runs (preemptible kernel)",
};

static void run(int n)
{
	char buf[16];
	int ret;

	snprintf(buf, sizeof(buf), "%d", n);
	ret = write_file(API_CHECK, buf);
	if (ret == -EOPNOTSUPP)
		ksft_test_result_skip("%s: the kernel is not preemptible\n", checks[n]);
	else
		ksft_test_result(!ret, "%s%s%s\n", checks[n], ret ? ": " : "",
				 ret ? strerror(-ret) : "");
}

int main(void)
{
	const char *ko = getenv("SWAPCACHE_AB_API_KO");
	int n, ret;

	ksft_print_header();
	ksft_set_plan(8);
	if (module_loaded() && module_unload())
		ksft_exit_fail_msg("unloading swapcache_ab: %s\n", strerror(errno));
	ret = swap_all_off();
	if (ret)
		ksft_exit_fail_msg("swapoff: %s\n", strerror(-ret));
	ret = module_file_load(ko ? ko : API_KO, "");
	if (ret)
		ksft_exit_fail_msg("loading swapcache_ab_api.ko: %s\n", strerror(-ret));

	for (n = 1; n <= 6; n++)
		run(n);
	run(8);
	ret = swap_test_on();
	if (ret)
		ksft_exit_fail_msg("swap set-up: %s\n", strerror(-ret));
	run(7);
	ret = swap_all_off();
	if (ret)
		ksft_exit_fail_msg("swapoff: %s\n", strerror(-ret));
	if (syscall(SYS_delete_module, "swapcache_ab_api", O_NONBLOCK))
		ksft_exit_fail_msg("unloading swapcache_ab_api: %s\n", strerror(errno));
	ksft_finished();
}
