#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unpack Debian's linux-source-$KVER (6.12 by default, or 6.1) under build/,
# apply core-patch/$KVER/ in series order, configure allnoconfig +
# vm/kernel.config + selftests/config (+ the variant's fragment), and build
# bzImage with ccache.  Repeat runs reuse the tree and its objects: the series is only
# re-applied when it changed, and make rebuilds what that touched.
#
# Usage: vm/build-kernel.sh [patched|stock|stock2|debug|locks|contention|guest|server|ref-NAME [MAKE_TARGETS...]]
# (in build/<KVER>/ for KVER other than 6.12)
#   patched (default): build/linux (source), build/kernel (objects)
#   stock:             build/stock/linux, build/stock/kernel, no series
#   stock2:            build/stock2/{linux,kernel}: stock built a second
#                      time, released as -stock2 (make ab's A/A)
#   debug:             build/linux, build/debug/kernel, + vm/debug.config
#                      (and vm/debug-KVER.config where there is one)
#   locks:             build/linux, build/locks/kernel, + vm/locks.config:
#                      make ab's lock pass (lock_stat, no runtime text
#                      patching, for multi-threaded TCG)
#   contention:        build/linux, build/contention/kernel, + vm/locks.config
#                      + vm/contention.config: the lock pass kernel without
#                      lockdep (perf lock's counter alone)
#   guest:             build/linux, build/guest/kernel, + fleet/guest.config:
#                      make fleet's kernel, which boots the local guests
#                      only (QEMU's virtio devices, no initramfs needed)
#   server:            build/linux, build/server/kernel, configured from
#                      Debian's own config for the source (linux-config-KVER)
#                      + fleet/server.config (and fleet/server-KVER.config
#                      where there is one) instead: the kernel that boots
#                      servers (make fleet-kernel)
#   ref-NAME:          build/ref-NAME/{linux,kernel}: stock plus
#                      bench/reference/NAME.patch, released as -ref-NAME
#                      (make ab's fidelity pass; 6.12 only)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

variant=${1:-patched}
shift || true
targets=(bzImage modules)
[ $# -gt 0 ] && targets=("$@")
obj=$(kernel_dir "$variant")
src=$(kernel_src_dir "$variant")
case $variant in
stock2)
	# Hard links to stock's source: the same relative paths from objects
	# to source, so ccache builds it from stock's objects
	"$top/vm/build-kernel.sh" stock prepare
	if [ ! -f "$src/Makefile" ]; then
		mkdir -p "$(dirname "$src")"
		cp -al "$STOCK_SRC_DIR" "$src"
	fi ;;
debug)
	EXTRA_CONFIG=$top/vm/debug.config
	# What only one kernel's Kconfig offers
	[ -f "$top/vm/debug-$KVER.config" ] && KVER_CONFIG=$top/vm/debug-$KVER.config ;;
guest) EXTRA_CONFIG=$top/fleet/guest.config ;;
locks) EXTRA_CONFIG=$top/vm/locks.config ;;
contention) EXTRA_CONFIG=$top/vm/locks.config KVER_CONFIG=$top/vm/contention.config ;;
ref-*)
	# As stock2, hard links to stock's source, with the files the patch
	# touches copied first: patch must not write through a link into
	# stock's tree.  A changed patch relinks the tree from stock
	[ "$KVER" = 6.12 ] || die "bench/reference/ patches stock 6.12, not $KVER"
	ref_patch=$REFERENCE_DIR/${variant#ref-}.patch
	"$top/vm/build-kernel.sh" stock prepare
	if [ -f "$src/Makefile" ] && ! cmp -s "$ref_patch" "$src/.swapcache_ab-reference.patch"; then
		log "$(basename "$ref_patch") changed: relinking $src from stock"
		rm -rf "$src"
	fi
	if [ ! -f "$src/Makefile" ]; then
		mkdir -p "$(dirname "$src")"
		rm -rf "$src.tmp"
		cp -al "$STOCK_SRC_DIR" "$src.tmp"
		ref_files=$(sed -n 's|^+++ b/||p' "$ref_patch")
		for f in $ref_files; do
			cp --remove-destination "$STOCK_SRC_DIR/$f" "$src.tmp/$f"
		done
		log "applying bench/reference/$(basename "$ref_patch") to $src"
		patch -s -d "$src.tmp" -p1 -N --no-backup-if-mismatch <"$ref_patch" ||
			die "$(basename "$ref_patch") does not apply to stock"
		for f in $ref_files; do
			! cmp -s "$STOCK_SRC_DIR/$f" "$src.tmp/$f" ||
				die "$f: the patch changed stock's copy too (a hard link)"
		done
		cp "$ref_patch" "$src.tmp/.swapcache_ab-reference.patch"
		mv "$src.tmp" "$src"
	fi ;;
esac

[ -f "$LINUX_TARBALL" ] || die "$LINUX_TARBALL missing: run vm/install-deps.sh"

if [ ! -f "$src/Makefile" ]; then
	log "unpacking $LINUX_TARBALL into $src"
	rm -rf "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xf "$LINUX_TARBALL" -C "$src.tmp" --strip-components=1
	mv "$src.tmp" "$src"
fi

# The tree version must be the one the series targets
version=$(make -s -C "$src" kernelversion)
case $version in
"$BASE_KERNEL_VERSION".*) ;;
*) die "kernel source is $version, the series targets $BASE_KERNEL_VERSION" ;;
esac

apply_series() {
	local applied=$src/.swapcache_ab-applied p

	if [ -d "$applied" ] && diff -qr "$SERIES_DIR" "$applied" >/dev/null; then
		return
	fi
	if [ -d "$applied" ]; then
		log "core-patch/$KVER changed: reverting the series applied before"
		for p in $(tac "$applied/series"); do
			patch -s -d "$src" -p1 -R <"$applied/$p"
		done
		rm -rf "$applied"
	fi
	log "applying core-patch/$KVER to $src"
	for p in $(cat "$SERIES_DIR/series"); do
		patch -s -d "$src" -p1 -N --no-backup-if-mismatch <"$SERIES_DIR/$p" ||
			die "$p does not apply to $version"
	done
	cp -r "$SERIES_DIR" "$applied"
}
case $variant in stock* | ref-*) ;; *) apply_series ;; esac

mkdir -p "$obj"
# The release names the packages and /lib/modules: patched and debug kernels
# must not pass for each other, nor for a distribution kernel.  It carries
# the hook interface's number, for which alone the module builds
case $variant in
patched) hooked_localversion >"$obj/localversion-swapcache-ab" ;;
debug | guest | server | locks | contention) hooked_localversion "$variant" >"$obj/localversion-swapcache-ab" ;;
stock) rm -f "$obj/localversion-swapcache-ab" ;;
stock2) echo -stock2 >"$obj/localversion-swapcache-ab" ;;
ref-*) echo "-$variant" >"$obj/localversion-swapcache-ab" ;;
esac
# allnoconfig plus only what the VM and the tests use: 1,255 objects for
# the patched kernel against 2,341 from x86_64_defconfig + kvm_guest.config
fragments=("$top/vm/kernel.config" "$top/selftests/config")
[ -n "${EXTRA_CONFIG:-}" ] && fragments+=("$EXTRA_CONFIG")
[ -n "${KVER_CONFIG:-}" ] && fragments+=("$KVER_CONFIG")
base=allnoconfig
# The server kernel: Debian's config, not allnoconfig, and none of the VM's
if [ "$variant" = server ]; then
	[ -f "$DEBIAN_CONFIG" ] || die "$DEBIAN_CONFIG missing: run vm/install-deps.sh"
	fragments=("$top/fleet/server.config")
	[ -f "$top/fleet/server-$KVER.config" ] && fragments+=("$top/fleet/server-$KVER.config")
	base="$DEBIAN_CONFIG $(xz -dc "$DEBIAN_CONFIG" | sha1sum)"
fi
stamp=$obj/.swapcache_ab-config
want=$(echo "$base" | cat - "${fragments[@]}" | sha1sum)
if [ ! -f "$obj/.config" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	log "configuring $obj"
	if [ "$variant" = server ]; then
		xz -dc "$DEBIAN_CONFIG" >"$obj/.config"
	else
		make -s -C "$src" O="$obj" allnoconfig
	fi
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "${fragments[@]}" >"$obj/merge_config.log"
	make -s -C "$src" O="$obj" olddefconfig
	# merge_config only warns when one of our options did not stick: fail
	# instead.  A later fragment's line for an option overrides an
	# earlier one's (vm/locks.config turns off JUMP_LABEL)
	grep -HE '^(CONFIG_[A-Z0-9_]+=|# CONFIG_[A-Z0-9_]+ is not set)' "${fragments[@]}" |
	awk -F: '{ line = substr($0, length($1) + 2); opt = line
		sub(/^# /, "", opt); sub(/[= ].*/, "", opt); last[opt] = $1 "\t" line }
		END { for (o in last) print last[o] }' |
	while IFS=$'\t' read -r f line; do
		[[ $variant == stock* || $variant == ref-* ]] && [[ $line == *SWAPCACHE_AB* ]] && continue
		grep -qxF "$line" "$obj/.config" || die "config: '$line' did not stick (see $f)"
	done
	echo "$want" >"$stamp"
fi
if [[ $variant == stock* || $variant == ref-* ]] && grep -q '^CONFIG_SWAPCACHE_AB_HOOKS=y' "$obj/.config"; then
	die "$variant kernel has the hooks"
fi

log "building $variant kernel in $obj: ${targets[*]}"
export CCACHE_DIR
mkdir -p "$CCACHE_DIR"
# The build number (uname -v "#N") is the one vm/build-packages.sh gives
# bindeb-pkg: alternating the two then relinks nothing
make -s -C "$src" O="$obj" -j"$(nproc)" CC="ccache gcc" KBUILD_BUILD_VERSION="$(kernel_pkg_revision)" \
	"${targets[@]}"
# With MODVERSIONS (Debian's config: the server kernel), kbuild appends an
# object's symbol versions to its .cmd file after compiling it: a run
# stopped in between leaves the object without them, and every later run
# takes it as built.  modpost only warns ("has no CRC", and only when it
# runs) and writes the symbol's version as 0, which the packages would
# carry: read Module.symvers itself, on every run
if grep -qx 'CONFIG_MODVERSIONS=y' "$obj/.config" && [ -f "$obj/Module.symvers" ]; then
	nocrc=$(awk '$1 == "0x00000000" { print $2 }' "$obj/Module.symvers")
	[ -z "$nocrc" ] || die "symbols without a version (a build stopped midway?): $(echo "$nocrc" | paste -sd ' '); in $obj, remove the object that exports each (its .cmd has no #SYMVER line) and the .cmd, and build again"
fi
log "built ${targets[*]} in $obj"
