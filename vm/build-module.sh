#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build swapcache_ab.ko in place against a kernel build directory with
# kbuild, for make ab and make demo (make check installs it through DKMS
# instead, vm/dkms-install.sh).
#
# Usage: vm/build-module.sh [KERNEL_BUILD_DIR]   (default build/kernel)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

kdir=${1:-$KERNEL_DIR}
log "building $top/module/swapcache_ab.ko against $kdir"
make -s -C "$kdir" M="$top" W=1 modules
