#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: build what make check builds, boot the VM and run bench/demo
# there: the knobs and counters moving on a small swap workload.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
cd "$top"

prepare_vm patched module
mkdir -p "$BUILD_DIR/vm"
vm/make-initramfs.sh "$BUILD_DIR/vm/initramfs.cpio.gz"
vm/run-vm.sh "$KERNEL_DIR/arch/x86/boot/bzImage" "$BUILD_DIR/vm/initramfs.cpio.gz" demo
