#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build swapcache_ab.ko against a kernel build directory with kbuild, the
# way DKMS does: make -C <kernel> M=<this repository>.
#
# Usage: vm/build-module.sh [KERNEL_BUILD_DIR]   (default build/kernel)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

kdir=${1:-$KERNEL_DIR}
log "building module/swapcache_ab.ko against $kdir"
make -s -C "$kdir" M="$top" W=1 modules
