#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the selftests with kselftest's lib.mk from the kernel tree, into
# build/selftests, with the list run_kselftest.sh reads, and their test
# module against the kernel the VM boots (its object tree: the patched
# kernel's by default).
#
# Usage: vm/build-selftests.sh [KERNEL_OBJ_DIR]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
kobj=${1:-$KERNEL_DIR}

out=$BUILD_DIR/selftests
ksft=$SRC_DIR/tools/testing/selftests
mkdir -p "$out"
log "building selftests into $out"
make -s -C "$top/selftests" KSFT_DIR="$ksft" OUTPUT="$out"
make -s -C "$top/selftests" KSFT_DIR="$ksft" OUTPUT="$out" COLLECTION=swapcache_ab \
	emit_tests >"$out/kselftest-list.txt"
# selftests/api's module, built in a copy so that the repository stays
# clean, one per kernel release: jobs for two variants of one KVER (make
# check's and make ab's) share this folder, and vm/make-initramfs.sh packs
# the one built for its module's kernel
mod=$out/modules/$(make -s -C "$kobj" kernelrelease)
rm -rf "$mod"
mkdir -p "$mod"
cp -r "$top/selftests/test_modules/." "$mod/"
make -s -C "$kobj" M="$mod" modules
sign_module "$kobj" "$mod/swapcache_ab_api.ko"

# Upstream's own mm/cow, static for the VM, against the patched kernel's
# uapi headers, for selftests/upstream_mm.sh.  cow came in 6.2: for 6.1,
# 6.12's cow, built against 6.12's headers (stock 6.12, configured only)
cow_src=$SRC_DIR hdr_src=$SRC_DIR hdr_obj=$KERNEL_DIR
if [ ! -f "$cow_src/tools/testing/selftests/mm/cow.c" ]; then
	cow_src=$(stock_612_src)
	hdr_src=$cow_src hdr_obj=$(kver_var 6.12 STOCK_KERNEL_DIR)
fi
make -s -C "$hdr_src" O="$hdr_obj" headers
mkdir -p "$out/upstream"
make -s -C "$cow_src/tools/testing/selftests/mm" OUTPUT="$out/upstream" LDFLAGS=-static \
	KHDR_INCLUDES="-isystem $hdr_obj/usr/include" "$out/upstream/cow"
