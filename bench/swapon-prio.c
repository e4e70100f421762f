// SPDX-License-Identifier: GPL-2.0
/*
 * swapon-prio DEVICE PRIO: swapon(2) with a priority, which busybox's
 * swapon cannot set.  The VM swaps on a small type-0 device first and the
 * device under test second, preferred, so that it gets type 1 and the
 * swap-outs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/swap.h>

int main(int argc, char **argv)
{
	char *end;
	long prio;

	if (argc != 3) {
		fprintf(stderr, "usage: swapon-prio DEVICE PRIO\n");
		return 2;
	}
	prio = strtol(argv[2], &end, 10);
	if (*end || prio < 0 || prio > SWAP_FLAG_PRIO_MASK) {
		fprintf(stderr, "swapon-prio: bad priority '%s'\n", argv[2]);
		return 2;
	}
	if (swapon(argv[1], SWAP_FLAG_PREFER | prio)) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
