#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Compile the core files the series touches in configurations that the VM
# kernels do not cover but a kernel with the series applied must build
# in: CONFIG_SWAP=n (the hooks cannot be on), and CONFIG_SWAP=y with
# CONFIG_SWAPCACHE_AB_HOOKS=n, where each object must define and export
# what stock's does; and the module's objects with the hooks on but
# CONFIG_MEMCG=n and CONFIG_FAULT_INJECTION=n (its stubs).
# allnoconfig plus a fragment, so that the trees prepare in seconds; only
# the touched objects are built.  One TAP line per configuration; exits
# non-zero on a failure.
#
# Usage: vm/compile-check.sh   (after vm/build-kernel.sh has applied the
#   series to build/linux)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

export CCACHE_DIR
status=0
# directory, name, fragment lines, objects: the files each configuration
# builds; the objects of the module (module/*.o) with the hooks on, the
# others with the hooks off
check() {
	local name=$2 fragment=$3 objs=$4 obj=$BUILD_DIR/compile-check/$1 line log
	local hooks=n on=n ext=()

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
	# The module's sources copied, so that its objects here never mix with
	# those of the VM kernels' builds in module/
	case $objs in module/*)
		hooks=y ext=(M="$obj/src")
		rm -rf "$obj/src" && mkdir -p "$obj/src/module" &&
			cp "$top/Kbuild" "$top/dkms.conf" "$obj/src/" &&
			cp "$top/module/Kbuild" "$top"/module/*.[ch] "$obj/src/module/"
		# Released as the hooked kernels are: the module builds for no other
		hooked_localversion >"$obj/localversion-swapcache-ab"
		;;
	esac
	grep -q '^CONFIG_SWAPCACHE_AB_HOOKS=y' "$obj/.config" && on=y
	if [ $on != $hooks ]; then
		echo "not ok - $name: CONFIG_SWAPCACHE_AB_HOOKS is not $hooks in $obj/.config"
		status=1
		return
	fi
	# allnoconfig leaves them off (CGROUPS and DEBUG_KERNEL are)
	if [ $hooks = y ] && grep -qE '^CONFIG_(MEMCG|FAULT_INJECTION)=y' "$obj/.config"; then
		echo "not ok - $name: CONFIG_MEMCG or CONFIG_FAULT_INJECTION is on in $obj/.config"
		status=1
		return
	fi
	if [ $hooks = y ] && ! make -s -C "$SRC_DIR" O="$obj" ARCH=x86_64 -j"$(nproc)" \
		CC="ccache gcc" modules_prepare >>"$log" 2>&1; then
		echo "not ok - $name: modules_prepare failed (see $log)"
		status=1
		return
	fi
	# shellcheck disable=SC2086
	if make -s -C "$SRC_DIR" O="$obj" ARCH=x86_64 -j"$(nproc)" CC="ccache gcc" \
		KCFLAGS=-Werror "${ext[@]}" $objs >>"$log" 2>&1; then
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
# With the hooks off a patched kernel is stock to modules too: each object
# above defines and exports (__ksymtab_, __export_symbol_) the global
# symbols stock's defines, built from the stock source with the same
# fragment, less the option stock does not have
# An object's global symbols and its exports (local symbols), type and name
exported() { # object
	nm --defined-only "$1" | awk '$2 ~ /^[A-Z]$/ || $3 ~ /^(__export_symbol_|__ksymtab_)/ { print $2, $3 }' | sort
}
same_symbols() { # objects
	local obj=$BUILD_DIR/compile-check/hooks-off sobj=$BUILD_DIR/compile-check/stock o differ=
	local log=$sobj/build.log

	mkdir -p "$sobj"
	grep -v SWAPCACHE_AB_HOOKS "$obj/fragment.config" >"$sobj/fragment.config"
	# shellcheck disable=SC2086
	if ! KCONFIG_ALLCONFIG=$sobj/fragment.config make -s -C "$STOCK_SRC_DIR" O="$sobj" \
		ARCH=x86_64 allnoconfig >"$log" 2>&1 ||
		! make -s -C "$STOCK_SRC_DIR" O="$sobj" ARCH=x86_64 -j"$(nproc)" CC="ccache gcc" \
			$1 >>"$log" 2>&1; then
		echo "not ok - stock's objects in the hooks-off configuration did not build (see $log)"
		status=1
		return
	fi
	for o in $1; do
		cmp -s <(exported "$obj/$o") <(exported "$sobj/$o") || differ+=" $o"
	done
	if [ -z "$differ" ]; then
		echo "ok - hooks off, the objects the series touches define and export what stock's do: $1"
	else
		echo "not ok - hooks off, these define or export other symbols than stock's:$differ"
		status=1
	fi
}
same_symbols "mm/memory.o mm/page-writeback.o mm/mm_init.o mm/swap_state.o mm/swapfile.o mm/shmem.o mm/util.o mm/mincore.o"
check module-memcg-off "CONFIG_MEMCG=n and CONFIG_FAULT_INJECTION=n (the module)" \
	'CONFIG_64BIT=y\nCONFIG_BLOCK=y\nCONFIG_SWAP=y\nCONFIG_MODULES=y\nCONFIG_SWAPCACHE_AB_HOOKS=y\n' \
	"module/main.o module/policies.o module/geometry.o"
exit $status
