#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the selftests with kselftest's lib.mk from the kernel tree, into
# build/selftests, with the list run_kselftest.sh reads.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

out=$BUILD_DIR/selftests
ksft=$SRC_DIR/tools/testing/selftests
mkdir -p "$out"
log "building selftests into $out"
make -s -C "$top/selftests" KSFT_DIR="$ksft" OUTPUT="$out"
make -s -C "$top/selftests" KSFT_DIR="$ksft" OUTPUT="$out" COLLECTION=swapcache_ab \
	emit_tests >"$out/kselftest-list.txt"

# Upstream's own mm/cow, static for the VM, against the patched kernel's
# uapi headers, for selftests/upstream_mm.sh
make -s -C "$SRC_DIR" O="$KERNEL_DIR" headers
mkdir -p "$out/upstream"
make -s -C "$ksft/mm" OUTPUT="$out/upstream" LDFLAGS=-static \
	KHDR_INCLUDES="-isystem $KERNEL_DIR/usr/include" "$out/upstream/cow"
