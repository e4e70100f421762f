#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Pack the test VM's initramfs with the kernel's own gen_init_cpio: static
# busybox, vm/guest-init as /init, the module, the selftests laid out as
# kselftest's run_kselftest.sh expects them, and the benchmark workloads.
#
# Usage: vm/make-initramfs.sh OUTPUT.cpio.gz [MODULE.ko [MORE.ko...]]
# MORE.ko: other modules, packed as /modules/<name>.ko (make ab's lock pass:
# the kernel's torture.ko and locktorture.ko)
# With VM_PERF=1 (make ab's, where the host has Debian's linux-perf), perf
# as /usr/bin/perf with the shared libraries ldd lists, at their paths:
# bench/bench's perf stat and perf record over each measured window
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

out=$1
ko=${2:-$top/module/swapcache_ab.ko}
more=("${@:3}")
ksft=$SRC_DIR/tools/testing/selftests
busybox=/bin/busybox

gen=$(gen_init_cpio)
file "$busybox" | grep -q 'statically linked' || die "$busybox is not static: install busybox-static"
[ -f "$ko" ] || die "$ko missing: build the module first"
# selftests/api's module, built by vm/build-selftests.sh for this kernel
api=$BUILD_DIR/selftests/modules/$(modinfo -F vermagic "$ko" | cut -d' ' -f1)/swapcache_ab_api.ko
[ -f "$api" ] || die "$api missing: run vm/build-selftests.sh for that kernel"

# kselftest's runner: the guest gives each test its own time limit with
# run_kselftest.sh -o, which 6.1's runner lacks: 6.12's runs the tests there
runner=$ksft
if ! grep -q -- --override-timeout "$runner/run_kselftest.sh"; then
	runner=$(stock_612_src)/tools/testing/selftests
fi

list=$(mktemp)
# The module without its signature (objcopy keeps the ELF file only, not
# what sign-file appended), which selftests/module_sig.sh must see refused
unsigned=$(mktemp)
trap 'rm -f "$list" "$unsigned"' EXIT
objcopy "$ko" "$unsigned" || die "objcopy $ko"
{
	for d in /bin /sbin /usr /usr/bin /usr/sbin /dev /proc /sys /tmp /mnt /root \
		/kselftest /kselftest/kselftest /kselftest/swapcache_ab /kselftest/upstream /bench /modules; do
		echo "dir $d 0755 0 0"
	done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	echo "file /bin/busybox $busybox 0755 0 0"
	echo "slink /bin/sh busybox 0777 0 0"
	echo "file /init $top/vm/guest-init 0755 0 0"
	echo "file /swapcache_ab.ko $ko 0644 0 0"
	echo "file /swapcache_ab-unsigned.ko $unsigned 0644 0 0"
	for f in "${more[@]}"; do
		[ -f "$f" ] || die "$f missing"
		echo "file /modules/$(basename "$f") $f 0644 0 0"
	done
	echo "file /kselftest/run_kselftest.sh $runner/run_kselftest.sh 0755 0 0"
	echo "file /kselftest/kselftest/runner.sh $runner/kselftest/runner.sh 0755 0 0"
	echo "file /kselftest/kselftest-list.txt $BUILD_DIR/selftests/kselftest-list.txt 0644 0 0"
	echo "file /kselftest/timeout $top/vm/guest-timeout 0755 0 0"
	echo "file /kselftest/swapcache_ab/swapcache_ab_api.ko $api 0644 0 0"
	for f in "$BUILD_DIR"/selftests/*; do
		[ -f "$f" ] || continue
		case $f in *.txt | *.ko) continue ;; esac
		echo "file /kselftest/swapcache_ab/$(basename "$f") $f 0755 0 0"
	done
	for f in "$BUILD_DIR"/selftests/upstream/*; do
		echo "file /kselftest/upstream/$(basename "$f") $f 0755 0 0"
	done
	for f in "$top"/selftests/*.sh; do
		echo "file /kselftest/swapcache_ab/$(basename "$f") $f 0755 0 0"
	done
	for f in "$top"/selftests/config "$top"/selftests/settings; do
		echo "file /kselftest/swapcache_ab/$(basename "$f") $f 0644 0 0"
	done
	if [ "${VM_PERF:-0}" = 1 ]; then
		perf=$(command -v perf) || die "VM_PERF=1: no perf on this host (install linux-perf)"
		perf=$(readlink -f "$perf")
		# gen_init_cpio copies what a path points to: each library once,
		# at the path the loader looks for
		libs=$(ldd "$perf" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)
		[ -n "$libs" ] || die "ldd $perf lists no libraries"
		for d in $(for l in $libs; do dirname "$l"; done | sort -u); do
			case $d in /bin | /sbin | /usr | /usr/bin | /usr/sbin) continue ;; esac
			p=
			for c in $(echo "${d#/}" | tr / ' '); do
				p=$p/$c
				echo "dir $p 0755 0 0"
			done
		done | awk '!seen[$0]++'
		for l in $libs; do echo "file $l $(readlink -f "$l") 0755 0 0"; done
		echo "file /usr/bin/perf $perf 0755 0 0"
	fi
	if [ -d "$BUILD_DIR/bench" ]; then
		for f in "$BUILD_DIR"/bench/*; do
			echo "file /bench/$(basename "$f") $f 0755 0 0"
		done
	fi
} >"$list"
"$gen" "$list" | gzip -1 >"$out"
