# SPDX-License-Identifier: GPL-2.0
# Paths and helpers shared by the vm/ and bench/ scripts (sourced).
# $top is the repository root.
# shellcheck shell=bash
# Its variables are for the scripts that source it:
# shellcheck disable=SC2034
: "${top:?vm/lib.sh: set top to the repository root first}"

# The kernel everything is for (KVER=6.1 make check): core-patch/<KVER>/
# on Debian's linux-source-<KVER>
KVER=${KVER:-6.12}
case $KVER in
6.12 | 6.1) ;;
*)
	printf 'error: KVER=%s: core-patch/ has series for 6.12 and 6.1\n' "$KVER" >&2
	exit 1 ;;
esac
BASE_KERNEL_VERSION=$KVER
SERIES_DIR=$top/core-patch/$KVER
LINUX_TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-$KVER.tar.xz}
# 6.12's trees are in build/ itself, another kernel's in build/<KVER>/
if [ "$KVER" = 6.12 ]; then
	BUILD_DIR=${BUILD_DIR:-$top/build}
else
	BUILD_DIR=${BUILD_DIR:-$top/build/$KVER}
fi
SRC_DIR=$BUILD_DIR/linux
KERNEL_DIR=$BUILD_DIR/kernel
# Same names one level down: the same relative paths from object to source
# dir, so that ccache (base_dir) hits on what the two kernels share
STOCK_SRC_DIR=$BUILD_DIR/stock/linux
STOCK_KERNEL_DIR=$BUILD_DIR/stock/kernel
DEBUG_KERNEL_DIR=$BUILD_DIR/debug/kernel
# make ab's lock pass kernel (vm/locks.config)
LOCKS_KERNEL_DIR=$BUILD_DIR/locks/kernel
# The patched kernel with what the local Debian guests boot on
# (fleet/guest.config), and the one for servers, from Debian's config
GUEST_KERNEL_DIR=$BUILD_DIR/guest/kernel
SERVER_KERNEL_DIR=$BUILD_DIR/server/kernel
DEBIAN_CONFIG=/usr/src/linux-config-$KVER/config.amd64_none_amd64.xz
# A second build of the stock source, hard-linked, for make ab's A/A
# calibration of the boot-level comparison
STOCK2_SRC_DIR=$BUILD_DIR/stock2/linux
STOCK2_KERNEL_DIR=$BUILD_DIR/stock2/kernel
# Reference kernels of make ab's fidelity pass: stock 6.12 plus one patch
# of bench/reference/, the old policy compiled in; variant ref-NAME for
# bench/reference/NAME.patch, in build/ref-NAME/{linux,kernel}: the same
# depth as stock's, so ccache builds them from stock's objects
REFERENCE_DIR=$top/bench/reference
# Outside the clone, so that CI's fresh clone reuses what a session built
CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/swapcache_ab-ccache}
export CCACHE_BASEDIR=$top

# One of the variables above as another kernel's scripts see it
kver_var() { # KVER name
	KVER=$1 top=$top bash -c '. "$top/vm/lib.sh"; echo "${!1}"' _ "$2"
}
# The stock 6.12 tree, configured: what 6.1's tree lacks (mm/cow,
# run_kselftest.sh -o) comes from there.  Prints its source directory.
stock_612_src() {
	local src
	src=$(kver_var 6.12 STOCK_SRC_DIR)
	[ -f "$(kver_var 6.12 STOCK_KERNEL_DIR)/include/generated/autoconf.h" ] ||
		KVER=6.12 "$top/vm/build-kernel.sh" stock prepare >&2 || die "preparing stock 6.12"
	echo "$src"
}
# QEMU's -accel and -cpu words, for the test VM and the fleet's Debian
# guests: TCG unless ACCEL=kvm (nested KVM is unusable on the machines this
# was written on; -cpu host there fails on MSR 0x10a), its vCPUs in one
# host thread unless THREAD is multi, on a CPU without 5-level paging
# (vm/run-vm.sh says why of both)
qemu_accel_args() { # [tcg-thread]
	case ${ACCEL:-tcg} in
	# one host thread per vCPU: named "CPU N/TCG" (bench/ab.sh pins them)
	tcg) echo "-accel tcg,thread=${1:-single} -cpu max,la57=off$([ "${1:-}" = multi ] && echo " -name guest=swapcache_ab,debug-threads=on")" ;;
	kvm) echo "-accel kvm -cpu host" ;;
	*) die "ACCEL must be tcg or kvm" ;;
	esac
}
# A check's TAP line: "ok - DESCRIPTION" for a status of 0, "not ok - ..."
# for another; numbered ("ok N - ...") where a script sets tap_numbered=1.
# tap_count and tap_failed count the lines.  A failed check is counted,
# not fatal: it returns 0
tap_count=0 tap_failed=0 tap_numbered=0
tap_result() { # status description
	local n=
	tap_count=$((tap_count + 1))
	[ "$tap_numbered" = 1 ] && n=" $tap_count"
	if [ "$1" -eq 0 ]; then
		echo "ok$n - $2"
	else
		echo "not ok$n - $2"
		tap_failed=$((tap_failed + 1))
	fi
}
# A command as root: itself when this runs as root, else through sudo
as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# dkms.conf's PACKAGE_VERSION: the one version of the module
module_version() { sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf"; }
# The hook interface's number (dkms.conf), in the release of every kernel
# with the hooks: <version>-swapcache-ab<N>[-<variant>]
hook_abi() { sed -n 's/^SWAPCACHE_AB_HOOK_ABI=\([0-9]*\)$/\1/p' "$top/dkms.conf"; }
# A hooked kernel's localversion: -swapcache-ab<N>, then -VARIANT if given
hooked_localversion() { # [variant]
	local abi
	abi=$(hook_abi)
	[ -n "$abi" ] || die "no SWAPCACHE_AB_HOOK_ABI in dkms.conf"
	echo "-swapcache-ab$abi${1:+-$1}"
}
# Where vm/build-packages.sh leaves a variant's .debs (PACKAGES_DIR: make
# fleet keeps its own, signed with its throwaway keys, apart from a
# fleet's real ones)
packages_dir() { echo "${PACKAGES_DIR:-$BUILD_DIR/packages}/$1"; }
# The .deb of one of a variant's packages (linux-image, linux-headers), as
# vm/build-packages.sh names it
kernel_deb() { # variant package release
	echo "$(packages_dir "$1")/$2-$3_$(kernel_pkg_version "$3")_amd64.deb"
}
# The kernel packages' Debian revision, apart from the module's version:
# a new swapcache-ab-dkms upgrades no kernel package (which would replace
# the running kernel's files under the same release, with no reboot).
# Bump it when the kernel is rebuilt with changes under the same release
# (the hook interface unchanged; a changed one is a new release, beside
# the old).  bindeb-pkg makes it the build number too (uname -v "#N"),
# which vm/build-kernel.sh builds with
kernel_pkg_revision() { echo 1; }
# The kernel packages' version: the release, then that revision
kernel_pkg_version() { echo "$1-$(kernel_pkg_revision)"; }
# Where vm/build-dkms-deb.sh leaves our package dkms or bench
our_deb() { # dkms|bench
	case $1 in
	dkms) echo "$top/build/dkms-deb/swapcache-ab-dkms_$(module_version)_all.deb" ;;
	bench) echo "$top/build/dkms-deb/swapcache-ab-bench_$(module_version)_$(dpkg --print-architecture).deb" ;;
	*) die "our_deb: dkms or bench, not '$1'" ;;
	esac
}
# Where vm/build-packages.sh leaves a fleet kernel's module package,
# swapcache-ab-modules-<release>, at the module's version or VERSION
modules_deb() { # variant release [version]
	echo "$(packages_dir "$1")/swapcache-ab-modules-$2_${3:-$(module_version)}_$(dpkg --print-architecture).deb"
}
# A module built against one kernel as the Debian package
# swapcache-ab-modules-<release>, as Debian ships modules built and signed
# once for each kernel release: the .ko as given (signed or not: it is not
# touched here) in /lib/modules/<release>/updates/, where depmod prefers
# it to the kernel's own modules, depmod for that release at install and
# removal.  It conflicts with swapcache-ab-dkms, whose DKMS installs the
# same module under updates/dkms: one or the other provides it.  Its
# files dated debian/changelog's top entry, as dpkg-buildpackage dates our
# other packages, so that the same module packaged again is the same .deb
# (the fleet's apt repository refuses a version it has with other
# contents).  Writes OUT_DEB; 0 or 1 with the reason
package_module() { # module.ko release version out.deb
	local ko=$1 release=$2 version=$3 deb=$4 name root doc signer how epoch script rc=0
	name=swapcache-ab-modules-$release
	signer=$(/sbin/modinfo -F signer "$ko") || { echo "error: $ko is no module" >&2; return 1; }
	how=" It is unsigned: that kernel does not sign its modules."
	[ -z "$signer" ] || how=" It is signed there with that kernel's own build key, which the kernel
 trusts built in (signer: $signer)."
	epoch=${SOURCE_DATE_EPOCH:-$(dpkg-parsechangelog -l "$top/debian/changelog" -S Timestamp)}
	root=$(mktemp -d "${TMPDIR:-/tmp}/swapcache-ab-modules.XXXXXX") || return
	doc=$root/usr/share/doc/$name
	install -D -m 0644 "$ko" "$root/lib/modules/$release/updates/swapcache_ab.ko" &&
		install -D -m 0644 "$top/debian/copyright" "$doc/copyright" &&
		# A native version: the changelog is changelog.gz (Policy 12.7),
		# the source's, as swapcache-ab-dkms has it
		gzip -9nc "$top/debian/changelog" >"$doc/changelog.gz" &&
		chmod 0644 "$doc/changelog.gz" && mkdir -m 0755 "$root/DEBIAN" || rc=1
	# modprobe finds the module once depmod has read it: the kernel's own
	# package ran depmod before this one was there.  After a removal
	# (not the kernel's, which leaves no kernel/) modules.dep forgets it
	for script in postinst postrm; do
		[ $rc -eq 0 ] || break
		# shellcheck disable=SC2016 # $1 is the maintainer script's
		{
			echo '#!/bin/sh'
			echo 'set -e'
			if [ "$script" = postinst ]; then
				echo 'case "$1" in configure) ;; *) exit 0 ;; esac'
			else
				echo 'case "$1" in remove | purge) ;; *) exit 0 ;; esac'
			fi
			echo "if [ -d /lib/modules/$release/kernel ]; then"
			echo "	depmod -a $release"
			echo 'fi'
		} >"$root/DEBIAN/$script" && chmod 0755 "$root/DEBIAN/$script" || rc=1
	done
	[ $rc -ne 0 ] || cat >"$root/DEBIAN/control" <<CONTROL || rc=1
Package: $name
Version: $version
Architecture: $(dpkg --print-architecture)
Maintainer: $(sed -n 's/^Maintainer: //p' "$top/debian/control" | head -n 1)
Installed-Size: $(du -k -s --exclude=DEBIAN "$root" | cut -f 1)
Depends: linux-image-$release
Conflicts: swapcache-ab-dkms
Section: kernel
Priority: optional
Description: swapcache_ab module for Linux $release, prebuilt
 The swapcache_ab module, as swapcache-ab-dkms builds it, built once
 for the kernel linux-image-$release alone,
 where that kernel was built.
$how
 A host needs neither DKMS, a compiler, the kernel's headers nor any
 key for it.
CONTROL
	if [ $rc -eq 0 ]; then
		(cd "$root" && find lib usr -type f -print0 | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums" &&
			chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control" &&
			find "$root" -type d -exec chmod 0755 {} + &&
			find "$root" -exec touch -h -d "@$epoch" {} + &&
			SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz -b "$root" "$deb" >/dev/null || rc=1
	fi
	rm -rf "$root"
	[ $rc -eq 0 ] || echo "error: could not package $ko as $name" >&2
	return $rc
}
# A string option's value in a kernel config: CONFIG_X="value" gives value
config_string() { # config-file CONFIG_NAME
	sed -n "s/^$2=\"\(.*\)\"\$/\1/p" "$1"
}
# The kernel's own gen_init_cpio, from the source (whichever kernel was
# built), made again when the source is newer; prints its path
gen_init_cpio() {
	local gen=$BUILD_DIR/gen_init_cpio
	if [ ! -x "$gen" ] || [ "$SRC_DIR/usr/gen_init_cpio.c" -nt "$gen" ]; then
		gcc -O2 -o "$gen" "$SRC_DIR/usr/gen_init_cpio.c" || die "building gen_init_cpio"
	fi
	echo "$gen"
}
# Sign a module built against a kernel object tree, as modules_install
# would, when that kernel checks signatures (the debug kernel requires
# them): with the tree's own key, certs/signing_key.pem unless its config
# names another
sign_module() { # kernel_obj_dir module.ko
	local kobj=$1 ko hash key
	ko=$(realpath "$2")
	grep -qx 'CONFIG_MODULE_SIG=y' "$kobj/.config" || return 0
	hash=$(config_string "$kobj/.config" CONFIG_MODULE_SIG_HASH)
	key=$(config_string "$kobj/.config" CONFIG_MODULE_SIG_KEY)
	(cd "$kobj" && scripts/sign-file "$hash" "$key" certs/signing_key.x509 "$ko") || {
		echo "error: signing $ko with $kobj's $key" >&2
		return 1
	}
}
# The private root vm/dkms-install.sh installs a variant's packages into
dkms_root() { echo "$BUILD_DIR/dkms/$1"; }
# A variant's kernel object tree
kernel_dir() {
	case $1 in
	patched) echo "$KERNEL_DIR" ;;
	debug) echo "$DEBUG_KERNEL_DIR" ;;
	locks) echo "$LOCKS_KERNEL_DIR" ;;
	contention) echo "$BUILD_DIR/contention/kernel" ;;
	guest) echo "$GUEST_KERNEL_DIR" ;;
	server) echo "$SERVER_KERNEL_DIR" ;;
	stock) echo "$STOCK_KERNEL_DIR" ;;
	stock2) echo "$STOCK2_KERNEL_DIR" ;;
	ref-*)
		[ -f "$REFERENCE_DIR/${1#ref-}.patch" ] ||
			die "kernel variant '$1': no bench/reference/${1#ref-}.patch"
		echo "$BUILD_DIR/$1/kernel" ;;
	*) die "unknown kernel variant '$1' (patched, debug, locks, contention, guest, server, stock, stock2 or ref-NAME)" ;;
	esac
}
# A variant's kernel source tree: stock's for stock, hard links to it for
# stock2 and ref-NAME (vm/build-kernel.sh), build/linux for the others
kernel_src_dir() {
	case $1 in
	stock) echo "$STOCK_SRC_DIR" ;;
	stock2) echo "$STOCK2_SRC_DIR" ;;
	ref-*) echo "$BUILD_DIR/$1/linux" ;;
	*) echo "$SRC_DIR" ;;
	esac
}
# A configured variant's release (uname -r, and the packages' names): the
# version, then the localversion vm/build-kernel.sh writes into its tree
kernel_release() { make -s -C "$(kernel_src_dir "$1")" O="$(kernel_dir "$1")" kernelrelease; }
# The build sequence before a VM boots a VARIANT kernel (make check, ab,
# demo and mutants): what is missing installed, that kernel built, and,
# for another variant, the patched tree prepared: the selftests build
# upstream's cow against its uapi headers
prepare_kernel() { # variant
	"$top/vm/install-deps.sh"
	"$top/vm/build-kernel.sh" "$1"
	[ "$1" = patched ] || "$top/vm/build-kernel.sh" patched prepare
}
# Then what the VM runs on it: the module built in place (module: make ab
# and make demo; make check installs it through DKMS), the selftests and
# their test module against that kernel, and bench/'s programs
prepare_vm() { # variant [module]
	prepare_kernel "$1"
	if [ "${2:-}" = module ]; then
		"$top/vm/build-module.sh" "$(kernel_dir "$1")"
	fi
	"$top/vm/build-selftests.sh" "$(kernel_dir "$1")"
	make -s -C "$top/bench" OUT="$BUILD_DIR/bench"
}
# The debug kernel's selftest profile (make check, make mutants): under the
# sanitizers in TCG a swapped page costs ~20x what it does on the plain
# kernel, and one run of upstream's cow minutes: an eighth of the memory,
# a shorter stress, one cow run
DEBUG_VM_ENV="SIZE_DIVISOR=8 STRESS_SECONDS=30 RELOAD_CYCLES=15 UPSTREAM_PROFILE=short"
# The debug kernel boots fully preemptible, where races between a hook
# and its unsetting are widest (it is built with PREEMPT_DYNAMIC).  Its
# rmmod takes up to 4 s (CONFIG_DEBUG_KOBJECT_RELEASE delays the module
# kobject's release, which rmmod waits for): the slow swap device holds
# each I/O 8 s rather than 3, so that reload's writebacks outlast it
DEBUG_VM_APPEND="preempt=full null_blk.completion_nsec=8000000000"
# The VM's time limit for a profile's selftests (all, or those in the
# comma-separated list): their limits in vm/expected-results, plus ten
# minutes for boot and the final kmemleak scan
selftests_vm_timeout() { # profile [tests]
	local s
	s=$("$top/vm/tap-summary.py" --timeout "$1" "${2:-}") || return
	echo $((s + 600))
}
# FLEET_KEY_PASSFILE, the file holding the fleet keys' passphrase
# (vm/make-signing-key.sh, vm/build-apt-repo.sh): readable, not empty
check_key_passfile() {
	[ -r "$FLEET_KEY_PASSFILE" ] && [ -s "$FLEET_KEY_PASSFILE" ] ||
		die "FLEET_KEY_PASSFILE: $FLEET_KEY_PASSFILE is not a readable file holding the passphrase"
}
# A signing key's PEM file (private key and certificate, as
# vm/make-signing-key.sh makes it) with the key unencrypted, written as
# DIR/key.pem, mode 0600 (remove DIR after use): sbsign and
# sign-efi-sig-list would ask at a terminal for an encrypted key's
# passphrase, which is read here from the file FLEET_KEY_PASSFILE
plain_key() { # pem dir
	local pem=$1 out=$2/key.pem pass=()
	if grep -qx -- '-----BEGIN ENCRYPTED PRIVATE KEY-----' "$pem"; then
		[ -n "${FLEET_KEY_PASSFILE:-}" ] || die "$pem is encrypted: give FLEET_KEY_PASSFILE, the file of its passphrase"
		pass=(-passin "file:$FLEET_KEY_PASSFILE")
	fi
	(umask 077 && openssl pkey -in "$pem" "${pass[@]}" -out "$out" && openssl x509 -in "$pem" >>"$out") ||
		die "could not read the key in $pem${pass:+ with the passphrase in $FLEET_KEY_PASSFILE}"
	echo "$out"
}
