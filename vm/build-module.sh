#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build swapcache_ab.ko in place against a kernel build directory with
# kbuild, for make ab and make demo (make check installs it through DKMS
# instead, vm/dkms-install.sh).
#
# Usage: vm/build-module.sh [KERNEL_BUILD_DIR [OUT_DIR]]
#   (default build/kernel; OUT_DIR: a copy of the module's sources built
#   there, OUT_DIR/module/swapcache_ab.ko, for a second kernel beside the
#   first: make ab's lock pass kernel)
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
fi
log "building $src/module/swapcache_ab.ko against $kdir"
make -s -C "$kdir" M="$src" W=1 modules
sign_module "$kdir" "$src/module/swapcache_ab.ko"
