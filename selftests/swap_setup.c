// SPDX-License-Identifier: GPL-2.0
/*
 * swap_setup on|off: the selftests' swap devices for shell tests, with the
 * device under test preferred and of type 1 (see swap_test_on()).
 */
#include <stdio.h>
#include <string.h>

#include "kselftest.h"
#include "swapcache_ab_util.h"

int main(int argc, char **argv)
{
	int ret;

	if (argc != 2 || (strcmp(argv[1], "on") && strcmp(argv[1], "off"))) {
		fprintf(stderr, "usage: swap_setup on|off\n");
		return 2;
	}
	ret = strcmp(argv[1], "on") ? swap_all_off() : swap_test_on();
	if (ret) {
		fprintf(stderr, "swap_setup %s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	return 0;
}
