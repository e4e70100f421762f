#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build swapcache_ab.ko against a kernel build directory with kbuild, the
# way DKMS does: make -C <kernel> M=<sources>.
#
# Usage: vm/build-module.sh [KERNEL_BUILD_DIR [OUT_DIR]]
#   KERNEL_BUILD_DIR: default build/kernel
#   OUT_DIR: build a copy of the sources there (OUT_DIR/module/swapcache_ab.ko),
#            for a second kernel; default: in place, module/swapcache_ab.ko
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

kdir=${1:-$KERNEL_DIR}
src=$top
if [ -n "${2:-}" ]; then
	src=$2
	mkdir -p "$src/module"
	cp "$top/Kbuild" "$top/dkms.conf" "$src/"
	cp "$top"/module/Kbuild "$top"/module/*.c "$src/module/"
fi
log "building $src/module/swapcache_ab.ko against $kdir"
make -s -C "$kdir" M="$src" W=1 modules
