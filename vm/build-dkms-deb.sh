#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module as a fleet installs it: the swapcache-ab-dkms .deb, built
# with debhelper's dh-dkms from debian/ (dh_dkms writes the postinst that
# has DKMS build the module for the running and the newest kernel, where
# they have the hooks, and the prerm that removes it from every kernel),
# and the swapcache-ab-bench .deb (bench/'s runner, workloads and report,
# for this machine's architecture) from the same source.
# As Debian builds a package: the source package first, from the files of
# the work tree that git tracks or would (build outputs and build/ are
# left out, and a build running meanwhile in the tree cannot change the
# copy under dpkg-source; debian/source/options does the same for a
# source package built in the tree itself), then the .debs from it, with
# one .changes for all.  Its version is debian/changelog's, which make
# lint checks is dkms.conf's PACKAGE_VERSION.  Into build/dkms-deb/: the
# .dsc and its tarball, the .debs, the .buildinfo and the .changes
# (swapcache-ab_<version>_<arch>.changes); prints the paths of the
# swapcache-ab-dkms .deb, then of the swapcache-ab-bench .deb, one a line.
#
# Usage: vm/build-dkms-deb.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

version=$(module_version)
[ -n "$version" ] || die "no PACKAGE_VERSION in dkms.conf"
changelog=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
[ "$changelog" = "$version" ] ||
	die "debian/changelog's version $changelog is not dkms.conf's $version: add a changelog entry (dch -v $version)"
deb=$(our_deb dkms)
out=$(dirname "$deb")
name=swapcache-ab_$version
bench_deb=$(our_deb bench)
# A private stage: make check and make fleet may read the .deb meanwhile
mkdir -p "$out"
work=$(mktemp -d "$out/build.XXXXXX")
trap 'rm -rf "$work"' EXIT

log "building swapcache-ab $version: source package, swapcache-ab-dkms and swapcache-ab-bench"
src=$work/swapcache-ab-$version
mkdir "$src"
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git -C "$top" ls-files -z -c -o --exclude-standard |
		while IFS= read -r -d '' f; do
			# Tracked, but deleted in the work tree
			[ -e "$top/$f" ] || [ -L "$top/$f" ] && printf '%s\0' "$f"
		done | (cd "$top" && xargs -0 cp -p --parents -t "$src")
else
	# An unpacked source package: debian/source/options applies
	tar -C "$top" --exclude=./build -cf - . | tar -C "$src" -xf -
fi
# dpkg-buildpackage writes into the parent of the tree it builds: $work
(cd "$src" && dpkg-buildpackage --build=full -us -uc) >"$work/build.log" 2>&1 ||
	{ tail -20 "$work/build.log"; die "the package build failed (log: above)"; }
changes=$(find "$work" -maxdepth 1 -name "${name}_*.changes" | head -1)
if [ ! -f "$work/$(basename "$deb")" ] || [ ! -f "$work/$(basename "$bench_deb")" ] ||
	[ ! -f "$work/$name.dsc" ] || [ -z "$changes" ]; then
	die "dpkg-buildpackage made no $(basename "$deb"), $(basename "$bench_deb"), $name.dsc or .changes"
fi
mv "$work/build.log" "$out/build.log"
# The .debs last: whoever waits for them finds the rest in place
for f in "$work/$name".* "$work/$name"_*.buildinfo "$changes" "$work/$(basename "$bench_deb")"; do
	mv "$f" "$out/"
done
mv "$work/$(basename "$deb")" "$deb"
printf '%s\n' "$deb" "$bench_deb"
