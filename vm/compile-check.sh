#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Compile the core files the series touches in configurations that the VM
# kernels do not cover but a kernel with the series applied must build
# in: CONFIG_SWAP=n (the hooks cannot be on), and CONFIG_SWAP=y with
# CONFIG_SWAPCACHE_AB_HOOKS=n.  allnoconfig plus a fragment, so that the
# trees prepare in seconds; only the touched objects are built.  One TAP
# line per configuration; exits non-zero on a failure.
#
# Usage: vm/compile-check.sh   (after vm/build-kernel.sh has applied the
#   series to build/linux)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

export CCACHE_DIR
status=0
# directory, name, fragment lines, objects: the files each configuration
# builds
check() {
	local name=$2 fragment=$3 objs=$4 obj=$BUILD_DIR/compile-check/$1 line log

	mkdir -p "$obj"
	log=$obj/build.log
	printf '%b' "$fragment" >"$obj/fragment.config"
	if ! KCONFIG_ALLCONFIG=$obj/fragment.config make -s -C "$SRC_DIR" O="$obj" \
		ARCH=x86_64 allnoconfig >"$log" 2>&1; then
		echo "not ok - $name: allnoconfig failed (see $log)"
		status=1
		return
	fi
	# The options the check is about must have stuck
	while read -r line; do
		[ -z "$line" ] && continue
		if ! grep -qxF "$line" "$obj/.config"; then
			echo "not ok - $name: '$line' did not stick in $obj/.config"
			status=1
			return
		fi
	done < <(printf '%b' "$fragment")
	if grep -q '^CONFIG_SWAPCACHE_AB_HOOKS=y' "$obj/.config"; then
		echo "not ok - $name: the hooks are on in $obj/.config"
		status=1
		return
	fi
	# shellcheck disable=SC2086
	if make -s -C "$SRC_DIR" O="$obj" ARCH=x86_64 -j"$(nproc)" CC="ccache gcc" \
		KCFLAGS=-Werror $objs >>"$log" 2>&1; then
		echo "ok - the series builds with $name: $objs"
	else
		echo "not ok - the series does not build with $name: $objs"
		grep -E 'error|warning' "$log" | head -5 | sed 's/^/# /'
		status=1
	fi
}

check swap-off "CONFIG_SWAP=n" 'CONFIG_64BIT=y\n# CONFIG_SWAP is not set\n' \
	"mm/memory.o mm/page-writeback.o mm/mm_init.o mm/shmem.o mm/util.o mm/mincore.o"
check hooks-off "CONFIG_SWAP=y, CONFIG_SWAPCACHE_AB_HOOKS=n" \
	'CONFIG_64BIT=y\nCONFIG_BLOCK=y\nCONFIG_SWAP=y\nCONFIG_MODULES=y\n# CONFIG_SWAPCACHE_AB_HOOKS is not set\n' \
	"mm/memory.o mm/page-writeback.o mm/mm_init.o mm/swap_state.o mm/swapfile.o mm/shmem.o mm/util.o mm/mincore.o"
exit $status
