#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fleet's signed apt repository: reprepro adds the .debs given (the
# kernel's linux-headers and linux-image, swapcache-ab-dkms,
# swapcache-ab-bench) to the repository in OUT_DIR (made on first use),
# suite swapcache-ab, component main, its Release signed (InRelease,
# Release.gpg) with the fleet's archive key.  The suite holds one
# version of each package (bookworm's reprepro 5.3 keeps no more); each
# run then freezes the suite as it is into a snapshot,
# dists/swapcache-ab/snapshots/<APT_REPO_SNAPSHOT, default the UTC time>,
# which keeps its versions' files in the pool: a host rolls back to one
# with the role's fleet_apt_suite=swapcache-ab/snapshots/<name> and that
# snapshot's .debs as the variables.  A .deb whose name and version are
# in already with other contents is refused (a version published is never
# changed: bump it, debian/changelog); APT_REPO_FRESH=1 makes the
# repository afresh instead, with the .debs given alone (make fleet's
# throwaway one).  That key is made once with gpg under KEY_DIR and kept
# for the runs after, so that hosts which trust it go on trusting the
# repository rebuilt: protected by the passphrase in the file
# FLEET_KEY_PASSFILE (as vm/make-signing-key.sh's), or with
# FLEET_KEY_THROWAWAY=1 a throwaway one without (make fleet's, make
# check's); it expires after APT_REPO_KEY_EXPIRY (gpg's form, default 2y),
# after which apt on the hosts refuses the repository until the expiry is
# moved (fleet/README.md, "Keys").  Its public half is exported to
# KEY_DIR/swapcache-ab-archive-keyring.gpg, for /etc/apt/keyrings/ on the
# hosts.
#
# OUT_DIR/public/ is what is served (dists/, pool/); reprepro's conf/ and
# db/ stay beside it, and the private key in KEY_DIR (keep KEY_DIR out of
# what is served).  Prints the exported public key's path.
#
# Usage: vm/build-apt-repo.sh OUT_DIR DEB...
# Environment: APT_REPO_KEY_DIR (default build/apt-key), APT_REPO_FRESH=1,
# APT_REPO_SNAPSHOT, FLEET_KEY_PASSFILE, FLEET_KEY_THROWAWAY=1,
# APT_REPO_KEY_EXPIRY
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

[ $# -ge 2 ] || die "usage: vm/build-apt-repo.sh OUT_DIR DEB..."
out=$(realpath -m -- "$1")
shift
# Never add to, or remove, a directory that is not one of ours
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ] && [ ! -f "$out/conf/distributions" ]; then
	die "$out exists and is not an apt repository this script made: name a new directory"
fi
for deb in "$@"; do
	[ -f "$deb" ] || die "no such .deb: $deb"
	dpkg-deb -f "$deb" Package >/dev/null 2>&1 || die "not a Debian package: $deb"
done
command -v reprepro >/dev/null || die "no reprepro: vm/install-deps.sh installs it"
suite=swapcache-ab
snapshot=${APT_REPO_SNAPSHOT:-$(date -u +%Y%m%dT%H%M%SZ)}
[[ $snapshot =~ ^[A-Za-z0-9][A-Za-z0-9.+~_-]*$ ]] || die "APT_REPO_SNAPSHOT: letters, digits and .+~_- only, not '$snapshot'"
[ ! -e "$out/public/dists/$suite/snapshots/$snapshot" ] || die "snapshot $snapshot exists already: name another (APT_REPO_SNAPSHOT)"
key_dir=${APT_REPO_KEY_DIR:-$BUILD_DIR/apt-key}
keyring=$key_dir/swapcache-ab-archive-keyring.gpg

export GNUPGHOME=$key_dir/gnupg
mkdir -p "$GNUPGHOME"
chmod 700 "$GNUPGHOME"
# gpg and reprepro's gpgme start an agent for this home: stop it at the end
trap 'gpgconf --kill gpg-agent 2>/dev/null || true' EXIT
fingerprint() {
	gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }'
}
if [ -n "${FLEET_KEY_PASSFILE:-}" ]; then
	check_key_passfile
	pass=(--passphrase-file "$FLEET_KEY_PASSFILE") kind=""
elif [ "${FLEET_KEY_THROWAWAY:-0}" = 1 ]; then
	pass=(--passphrase '') kind="throwaway "
else
	pass=() kind=""
fi
fpr=$(fingerprint)
if [ -z "$fpr" ]; then
	[ ${#pass[@]} -gt 0 ] || die "no archive key in $GNUPGHOME: give FLEET_KEY_PASSFILE (a file holding the passphrase that protects it), or FLEET_KEY_THROWAWAY=1 for one without, for test machines only"
	expiry=${APT_REPO_KEY_EXPIRY:-2y}
	[[ $expiry =~ ^[1-9][0-9]*[dwmy]?$ ]] || die "APT_REPO_KEY_EXPIRY: gpg's form (730d, 2y), not '$expiry'"
	log "making the fleet's ${kind}archive key in $GNUPGHOME, expiring in $expiry"
	gpg --batch --quiet --pinentry-mode loopback "${pass[@]}" --quick-gen-key \
		"swapcache_ab fleet archive (${kind/throwaway /throwaway, }$(hostname)) <dev@swapcache-ab.invalid>" \
		ed25519 sign "$expiry"
	fpr=$(fingerprint)
	[ -n "$fpr" ] || die "gpg made no key in $GNUPGHOME"
fi
# A key that expired: apt would refuse what it signs
expires=$(gpg --batch --with-colons --list-keys "$fpr" | awk -F: '$1 == "pub" { print $7; exit }')
[ -z "$expires" ] || [ "$expires" -gt "$(date +%s)" ] ||
	die "the archive key $fpr expired on $(date -u -d "@$expires" +%F): move its expiry (fleet/README.md, Keys)"
# A signature now, with the passphrase if given: a wrong one, or a key
# with one and none given, stops here
echo | gpg --batch --quiet --pinentry-mode loopback "${pass[@]}" -u "$fpr" --sign >/dev/null 2>&1 ||
	die "gpg cannot sign with the archive key $fpr${pass:+ with the passphrase given}: a key with a passphrase needs FLEET_KEY_PASSFILE"
# reprepro signs through gpgme, which cannot give a passphrase: the agent
# holds it for this run (and forgets it when stopped at the end)
if [ -n "${FLEET_KEY_PASSFILE:-}" ]; then
	grep -qx allow-preset-passphrase "$GNUPGHOME/gpg-agent.conf" 2>/dev/null || {
		echo allow-preset-passphrase >>"$GNUPGHOME/gpg-agent.conf"
		gpgconf --kill gpg-agent 2>/dev/null || true
	}
	for grip in $(gpg --batch --with-colons --with-keygrip --list-secret-keys "$fpr" | awk -F: '$1 == "grp" { print $10 }'); do
		/usr/lib/gnupg/gpg-preset-passphrase --preset "$grip" <"$FLEET_KEY_PASSFILE" ||
			die "gpg-agent took no passphrase for the archive key"
	done
fi
gpg --batch --export "$fpr" >"$keyring.tmp"
mv "$keyring.tmp" "$keyring"

# Afresh only when asked: the .debs given, at their versions, and nothing else
[ "${APT_REPO_FRESH:-0}" != 1 ] || rm -rf "$out"
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
	rr includedeb "$suite" "$deb" ||
		die "reprepro could not add $deb (the same name and version in already, with other contents? bump the version)"
done
rr gensnapshot "$suite" "$snapshot" || die "reprepro could not snapshot $suite as $snapshot"
[ -f "$out/public/dists/$suite/InRelease" ] || die "reprepro signed no InRelease in $out/public/dists/$suite"
log "apt repository in $out/public (suite $suite, snapshot $suite/snapshots/$snapshot, signed by $fpr):"
rr list "$suite" >&2
echo "$keyring"
