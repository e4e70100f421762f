#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Package a kernel built by vm/build-kernel.sh as a fleet installs it:
# the kernel's own "make bindeb-pkg", in the same object tree (so only the
# packaging steps run), giving linux-image-<release> and
# linux-headers-<release> .debs in build/packages/<variant>/; for the
# kernels a fleet gets (server, guest), the fleet's module package
# swapcache-ab-modules-<release> beside them (below).
#
# Usage: vm/build-packages.sh [patched|debug|guest|server|stock [modules]]
# (stock: a kernel without the hooks, as bindeb-pkg packages it, for make
# fleet's hookless kernel; modules: the module package alone, for a
# kernel built already)
# Environment: MODULES_VERSION, the module package's version and the
# module's (default dkms.conf's PACKAGE_VERSION: make fleet's module
# upgrade builds one at a bumped version)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

variant=${1:-patched}
what=${2:-all}
case $variant in patched | debug | guest | server | stock) ;; *) die "the $variant kernel is not packaged" ;; esac
case $what in all | modules) ;; *) die "usage: vm/build-packages.sh [VARIANT [modules]]" ;; esac
fleet=0
case $variant in server | guest) fleet=1 ;; esac
[ "$what" = all ] || [ "$fleet" = 1 ] || die "only the fleet's kernels (server, guest) get a module package"
obj=$(kernel_dir "$variant")
src=$(kernel_src_dir "$variant")
[ -f "$obj/arch/x86/boot/bzImage" ] || die "no kernel in $obj: run vm/build-kernel.sh $variant"

release=$(kernel_release "$variant")
out=$(packages_dir "$variant")

# The fleet's module package, as Debian's signed module packages are
# made: the module built once, here, against this kernel's object tree
# (vm/build-module.sh, on a copy of its sources beside the tree) and
# signed as modules_install signs the kernel's own modules, with the
# tree's own build key (certs/signing_key.pem, sign_module).  That key
# never leaves this machine, and the package holds the .ko alone: the
# kernel trusts its build key built in, so a host needs no key of the
# fleet's, no MOK enrolment for modules, and neither DKMS, a compiler nor
# the headers.  A kernel that does not sign its modules (no
# CONFIG_MODULE_SIG) gets it unsigned, and this says so
fleet_modules() {
	local version=${MODULES_VERSION:-$(module_version)} build deb ko signer
	build=$(dirname "$obj")/module-package
	deb=$(modules_deb "$variant" "$release" "$version")
	ko=$build/module/swapcache_ab.ko
	rm -rf "$build"
	mkdir -p "$out"
	"$top/vm/build-module.sh" "$obj" "$build" "$version" || die "building the module against $obj"
	[ "$(/sbin/modinfo -F vermagic "$ko" | cut -d ' ' -f 1)" = "$release" ] ||
		die "$ko is not built for $release: $(/sbin/modinfo -F vermagic "$ko")"
	[ "$(/sbin/modinfo -F version "$ko")" = "$version" ] || die "$ko reports version '$(/sbin/modinfo -F version "$ko")', not $version"
	signer=$(/sbin/modinfo -F signer "$ko")
	if grep -qx 'CONFIG_MODULE_SIG=y' "$obj/.config"; then
		[ -n "$signer" ] || die "the $variant kernel checks module signatures, and $ko is not signed"
	else
		[ -z "$signer" ] || die "$ko is signed, by '$signer', for a kernel that checks no signatures"
	fi
	package_module "$ko" "$release" "$version" "$deb" || die "packaging $ko"
	if [ -n "$signer" ]; then
		log "$(basename "$deb"): the module signed with $obj/certs' build key ('$signer')"
	else
		log "$(basename "$deb"): the module unsigned (the $variant kernel has no CONFIG_MODULE_SIG)"
	fi
}
if [ "$what" = modules ]; then
	fleet_modules
	exit
fi
export CCACHE_DIR
# A fixed package version keeps "uname -v" (#N, its revision) and so
# init/version.o from changing on every run; it is the kernel's own,
# apart from the module's (vm/lib.sh's kernel_pkg_revision)
KDEB_PKGVERSION=$(kernel_pkg_version "$release")
export KDEB_PKGVERSION
export KDEB_CHANGELOG_DIST=bookworm
export DEBEMAIL="swapcache_ab build <swapcache_ab@localhost>"

log "packaging $release from $obj"
rm -rf "$out"
mkdir -p "$out"
# bindeb-pkg leaves its output next to the object tree.  -d: the build
# dependencies are vm/install-deps.sh's (debian/control also names the
# cross-gcc package, which a native build does not need).  CC must match
# build-kernel.sh's, or kbuild would rebuild every object.
rm -f "$obj"/../*_"$KDEB_PKGVERSION"_*.deb "$obj"/../linux-upstream_"$KDEB_PKGVERSION"_*
make -s -C "$src" O="$obj" -j"$(nproc)" CC="ccache gcc" DPKG_FLAGS=-d bindeb-pkg \
	>"$out/bindeb-pkg.log" 2>&1 || { tail -30 "$out/bindeb-pkg.log"; die "bindeb-pkg failed"; }
mv "$obj"/../*_"$KDEB_PKGVERSION"_*.deb "$obj"/../linux-upstream_"$KDEB_PKGVERSION"_* "$out/"
for p in linux-image linux-headers; do
	[ -f "$(kernel_deb "$variant" "$p" "$release")" ] || die "bindeb-pkg made no $p package"
done

# Secure Boot: with FLEET_IMAGE_KEY (vm/make-signing-key.sh's image.pem),
# the kernel in the image signed with the fleet's image key, which shim
# boots on a host that enrolled it.  In the .deb, its md5sums updated:
# bindeb-pkg has no step for it
if [ -n "${FLEET_IMAGE_KEY:-}" ]; then
	grep -qx 'CONFIG_EFI_STUB=y' "$obj/.config" || die "FLEET_IMAGE_KEY: the $variant kernel has no EFI stub to sign"
	image=$(kernel_deb "$variant" linux-image "$release")
	unpacked=$out/image-unpacked
	rm -rf "$unpacked"
	dpkg-deb -R "$image" "$unpacked"
	vmlinuz=boot/vmlinuz-$release
	# (an encrypted key, opened with FLEET_KEY_PASSFILE, in memory where
	# /dev/shm is, removed at once)
	keydir=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
	key=$(plain_key "$FLEET_IMAGE_KEY" "$keydir") || { rm -rf "$keydir"; exit 1; }
	sbsign --key "$key" --cert "$key" --output "$unpacked/$vmlinuz.signed" "$unpacked/$vmlinuz" ||
		{ rm -rf "$keydir"; die "sbsign $vmlinuz with $FLEET_IMAGE_KEY"; }
	rm -rf "$keydir"
	mv "$unpacked/$vmlinuz.signed" "$unpacked/$vmlinuz"
	sbverify --cert "$FLEET_IMAGE_KEY" "$unpacked/$vmlinuz" >&2 ||
		die "the signed $vmlinuz does not verify with $FLEET_IMAGE_KEY"
	(cd "$unpacked" && sed -i "\\| $vmlinuz\$|d" DEBIAN/md5sums && md5sum "$vmlinuz" >>DEBIAN/md5sums)
	dpkg-deb --root-owner-group -b "$unpacked" "$image" >/dev/null
	rm -rf "$unpacked"
	log "signed $vmlinuz in $(basename "$image") with $FLEET_IMAGE_KEY"
fi
[ "$fleet" = 0 ] || fleet_modules
ls -l "$out"/*.deb >&2
log "packages in $out"
