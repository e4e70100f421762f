#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install, from Debian 12's packages, what building the kernel and module,
# the selftests and the VM need (with "fleet": make fleet's too).  Does
# nothing when all are there.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

packages=(
	linux-source-6.12 linux-source-6.1 build-essential bc bison flex libelf-dev libssl-dev
	cpio kmod patch xz-utils rsync file ccache python3 debhelper dkms dh-dkms
	qemu-system-x86 busybox-static gnuplot-nox sparse clang-format shellcheck
	python3-scipy lintian ansible-lint
	reprepro gnupg openssl
	# Secure Boot: the kernel image signed for shim, and checked (sbverify);
	# vm/secure-boot-check.sh's firmware and key lists
	sbsigntool ovmf efitools
	# Debian's own kernel configs: the server kernel's base
	linux-config-6.12 linux-config-6.1
	# make ab's perf stat and perf-profile rows: perf and its libraries,
	# packed into the VM's initramfs (vm/make-initramfs.sh VM_PERF=1)
	linux-perf
)
# make fleet's: Debian guests (debootstrap, disk image tools) and Ansible
[ "${1:-}" = fleet ] && packages+=(debootstrap fdisk qemu-utils e2fsprogs openssh-client ansible-core)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
as_root apt-get update -q
as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
