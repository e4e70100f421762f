#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fleet's signed apt repository: reprepro puts the .debs given (the
# kernel's linux-headers and linux-image, swapcache-ab-dkms,
# swapcache-ab-bench) into a repository made afresh in OUT_DIR, suite
# swapcache-ab, component main, its Release signed (InRelease,
# Release.gpg) with the fleet's archive key.  That key is a throwaway one
# made once with gpg under KEY_DIR (no passphrase, batch mode) and kept
# for the runs after, so that hosts which trust it go on trusting the
# repository rebuilt; its public half is exported to
# KEY_DIR/swapcache-ab-archive-keyring.gpg, for /etc/apt/keyrings/ on the
# hosts.
#
# OUT_DIR/public/ is what is served (dists/, pool/); reprepro's conf/ and
# db/ stay beside it, and the private key in KEY_DIR (keep KEY_DIR out of
# what is served).  Prints the exported public key's path.
#
# Usage: vm/build-apt-repo.sh OUT_DIR DEB...
# Environment: APT_REPO_KEY_DIR (default build/apt-key)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

[ $# -ge 2 ] || die "usage: vm/build-apt-repo.sh OUT_DIR DEB..."
out=$(realpath -m -- "$1")
shift
# It is made afresh: never remove a directory that is not one of ours
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ] && [ ! -f "$out/conf/distributions" ]; then
	die "$out exists and is not an apt repository this script made: name a new directory"
fi
for deb in "$@"; do
	[ -f "$deb" ] || die "no such .deb: $deb"
	dpkg-deb -f "$deb" Package >/dev/null 2>&1 || die "not a Debian package: $deb"
done
command -v reprepro >/dev/null || die "no reprepro: vm/install-deps.sh installs it"
key_dir=${APT_REPO_KEY_DIR:-$BUILD_DIR/apt-key}
suite=swapcache-ab
keyring=$key_dir/swapcache-ab-archive-keyring.gpg

export GNUPGHOME=$key_dir/gnupg
mkdir -p "$GNUPGHOME"
chmod 700 "$GNUPGHOME"
# gpg and reprepro's gpgme start an agent for this home: stop it at the end
trap 'gpgconf --kill gpg-agent 2>/dev/null || true' EXIT
fingerprint() {
	gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }'
}
fpr=$(fingerprint)
if [ -z "$fpr" ]; then
	log "making the fleet's throwaway archive key in $GNUPGHOME"
	gpg --batch --quiet --pinentry-mode loopback --passphrase '' --quick-gen-key \
		"swapcache_ab fleet archive (throwaway, $(hostname)) <dev@swapcache-ab.invalid>" \
		ed25519 sign never
	fpr=$(fingerprint)
	[ -n "$fpr" ] || die "gpg made no key in $GNUPGHOME"
fi
gpg --batch --export "$fpr" >"$keyring.tmp"
mv "$keyring.tmp" "$keyring"

# Afresh each time: the .debs given, at their versions, and nothing else
rm -rf "$out"
mkdir -p "$out/conf"
arch=$(dpkg --print-architecture)
cat >"$out/conf/distributions" <<CONF
Origin: swapcache_ab
Label: swapcache_ab fleet
Codename: $suite
Architectures: $arch
Components: main
Description: swapcache_ab's kernel, DKMS module and benchmark for a fleet
SignWith: $fpr
CONF
rr() { reprepro --silent -b "$out" --outdir "$out/public" "$@"; }
for deb in "$@"; do
	rr includedeb "$suite" "$deb" || die "reprepro could not add $deb"
done
[ -f "$out/public/dists/$suite/InRelease" ] || die "reprepro signed no InRelease in $out/public/dists/$suite"
log "apt repository in $out/public (suite $suite, signed by $fpr):"
rr list "$suite" >&2
echo "$keyring"
