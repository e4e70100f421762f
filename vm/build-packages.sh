#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Package a kernel built by vm/build-kernel.sh as a fleet installs it:
# the kernel's own "make bindeb-pkg", in the same object tree (so only the
# packaging steps run), giving linux-image-<release> and
# linux-headers-<release> .debs in build/packages/<variant>/.
#
# Usage: vm/build-packages.sh [patched|debug|guest|server|stock]
# (stock: a kernel without the hooks, as bindeb-pkg packages it, for make
# fleet's check that DKMS never fails another kernel's install)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

variant=${1:-patched}
case $variant in patched | debug | guest | server | stock) ;; *) die "the $variant kernel is not packaged" ;; esac
obj=$(kernel_dir "$variant")
src=$(kernel_src_dir "$variant")
[ -f "$obj/arch/x86/boot/bzImage" ] || die "no kernel in $obj: run vm/build-kernel.sh $variant"

release=$(kernel_release "$variant")
out=$(packages_dir "$variant")
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
	sbsign --key "$FLEET_IMAGE_KEY" --cert "$FLEET_IMAGE_KEY" --output "$unpacked/$vmlinuz.signed" \
		"$unpacked/$vmlinuz" || die "sbsign $vmlinuz with $FLEET_IMAGE_KEY"
	mv "$unpacked/$vmlinuz.signed" "$unpacked/$vmlinuz"
	sbverify --cert "$FLEET_IMAGE_KEY" "$unpacked/$vmlinuz" >&2 ||
		die "the signed $vmlinuz does not verify with $FLEET_IMAGE_KEY"
	(cd "$unpacked" && sed -i "\\| $vmlinuz\$|d" DEBIAN/md5sums && md5sum "$vmlinuz" >>DEBIAN/md5sums)
	dpkg-deb --root-owner-group -b "$unpacked" "$image" >/dev/null
	rm -rf "$unpacked"
	log "signed $vmlinuz in $(basename "$image") with $FLEET_IMAGE_KEY"
fi
ls -l "$out"/*.deb >&2
log "packages in $out"
