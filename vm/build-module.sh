#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build swapcache_ab.ko in place against a kernel build directory with
# kbuild, for make ab and make demo (make check installs it through DKMS
# instead, vm/dkms-install.sh).
#
# Usage: vm/build-module.sh [KERNEL_BUILD_DIR [OUT_DIR [VERSION]]]
#   (default build/kernel; OUT_DIR: a copy of the module's sources built
#   there, OUT_DIR/module/swapcache_ab.ko, for a second kernel beside the
#   first: make ab's lock pass kernel, the fleet's module package;
#   VERSION: the copy's dkms.conf says it, and the module reports it:
#   make fleet's module upgrade)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

kdir=${1:-$KERNEL_DIR}
src=$top
if [ -n "${2:-}" ]; then
	src=$2
	mkdir -p "$src/module"
	cp "$top/Kbuild" "$top/dkms.conf" "$src/"
	cp "$top/module/Kbuild" "$top"/module/*.[ch] "$src/module/"
	if [ -n "${3:-}" ]; then
		[[ $3 =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || die "VERSION: a Debian version without a revision, not '$3'"
		sed -i "s/^PACKAGE_VERSION=\".*\"\$/PACKAGE_VERSION=\"$3\"/" "$src/dkms.conf"
	fi
elif [ -n "${3:-}" ]; then
	die "VERSION needs OUT_DIR: the sources' own dkms.conf is not changed"
fi
log "building $src/module/swapcache_ab.ko against $kdir"
make -s -C "$kdir" M="$src" W=1 modules
sign_module "$kdir" "$src/module/swapcache_ab.ko"
