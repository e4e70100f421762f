#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module as a fleet installs it: the swapcache-ab-dkms .deb, built
# with debhelper's dh-dkms from debian/ (dh_dkms writes the postinst that
# has DKMS build the module for the running and the newest kernel, where
# they have the hooks, and the prerm that removes it from every kernel).  Its version is dkms.conf's
# PACKAGE_VERSION: debian/changelog is written here from it, so the two
# cannot drift.  Into build/dkms-deb/; prints the .deb's path.
#
# Usage: vm/build-dkms-deb.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

version=$(module_version)
[ -n "$version" ] || die "no PACKAGE_VERSION in dkms.conf"
out=$top/build/dkms-deb
deb=$out/swapcache-ab-dkms_${version}_all.deb
# A private stage: make check and make fleet may read the .deb meanwhile
mkdir -p "$out"
work=$(mktemp -d "$out/build.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/swapcache_ab-$version

# The package's source: make dkms-src's files, with debian/ and the
# Makefile whose dkms-src target debian/rules installs them with
make -s -C "$top" dkms-src DKMS_SOURCE_TREE="$work"
cp -r "$top/debian" "$top/Makefile" "$stage/"
# The date of the last commit, so that the same tree gives the same .deb
when=$(git -C "$top" log -1 --format=%cD 2>/dev/null || date -R)
cat >"$stage/debian/changelog" <<CHANGES
swapcache-ab ($version) bookworm; urgency=medium

  * swapcache_ab $version: the module's DKMS sources.

 -- swapcache_ab developers <swapcache_ab@localhost>  $when
CHANGES

log "building swapcache-ab-dkms $version"
# -A: the package is architecture-independent
(cd "$stage" && dpkg-buildpackage -A -us -uc) >"$work/build.log" 2>&1 ||
	{ tail -20 "$work/build.log"; die "dpkg-buildpackage failed"; }
[ -f "$work/$(basename "$deb")" ] || die "dpkg-buildpackage made no $(basename "$deb")"
mv "$work/build.log" "$out/build.log"
mv "$work/$(basename "$deb")" "$deb"
echo "$deb"
