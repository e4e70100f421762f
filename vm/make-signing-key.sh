#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make a fleet's image signing key, once, in DIR (kept if already there;
# its .der is made again from its .pem if missing; a .der without its
# .pem is an error):
#   DIR/image.pem, image.der    signs the kernel image (sbsign, by
#                               vm/build-packages.sh with FLEET_IMAGE_KEY):
#                               stays on the machine that builds.
# Modules need no key of the fleet's: the fleet's module package is
# signed at build time with its kernel's own kbuild key, which the kernel
# trusts built in and no host gets (vm/build-packages.sh).
# image.pem holds the private key and its self-signed X.509 certificate
# (what sbsign and sign-efi-sig-list take), mode 0600; image.der the
# certificate alone, which each host with Secure Boot enrols once:
# mokutil --import image.der.
# The private key is encrypted (AES-256) with the passphrase in the file
# FLEET_KEY_PASSFILE; FLEET_KEY_THROWAWAY=1 makes it unencrypted instead,
# for keys that sign only test machines (make fleet's guests, make
# check's Secure Boot check).  The certificate is valid FLEET_KEY_DAYS
# (default 730) days: firmware, shim and the kernel check signatures
# against it without looking at the dates, so expiry is the date by which
# fleet/README.md's rotation is due, not one at which hosts stop booting.
# RSA 4096, SHA-256 (every firmware, shim and kernel verifies it), the
# extensions of the kernel's own certs/default_x509.genkey.  Prints the
# two paths: image.pem, image.der.
#
# Usage: vm/make-signing-key.sh DIR [NAME]   (NAME: the certificate's CN
# start, default "swapcache_ab fleet")
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

[ $# -ge 1 ] || die "usage: vm/make-signing-key.sh DIR [NAME]"
dir=$1
name=${2:-swapcache_ab fleet}
days=${FLEET_KEY_DAYS:-730}
[[ $days =~ ^[1-9][0-9]{0,4}$ ]] || die "FLEET_KEY_DAYS: a number of days, not '$days'"
pem=$dir/image.pem der=$dir/image.der
# A certificate without its key: hosts may have enrolled it, and a new
# key would not match it
[ -s "$pem" ] || [ ! -e "$der" ] || die "$der without $pem: give the key, or move both away for a new one"
if [ ! -s "$pem" ]; then
	if [ "${FLEET_KEY_THROWAWAY:-0}" = 1 ]; then
		encrypt=(-noenc) how=unencrypted
	elif [ -n "${FLEET_KEY_PASSFILE:-}" ]; then
		check_key_passfile
		encrypt=(-passout "file:$FLEET_KEY_PASSFILE") how="encrypted, the passphrase in $FLEET_KEY_PASSFILE"
	else
		die "no key in $dir: give FLEET_KEY_PASSFILE (a file holding the passphrase that encrypts it), or FLEET_KEY_THROWAWAY=1 for an unencrypted key that signs test machines only"
	fi
	mkdir -p "$dir"
	log "making $pem ($name image signing key, $how, $days days)"
	tmp=$(mktemp -d "$dir/.key.XXXXXX")
	(
		umask 077
		openssl req -new -x509 -newkey rsa:4096 "${encrypt[@]}" -sha256 -days "$days" -batch -utf8 \
			-subj "/CN=$name image signing key" -addext basicConstraints=critical,CA:FALSE \
			-addext keyUsage=digitalSignature -addext extendedKeyUsage=codeSigning \
			-addext subjectKeyIdentifier=hash -addext authorityKeyIdentifier=keyid \
			-keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>"$tmp/openssl.log" &&
			cat "$tmp/key.pem" "$tmp/cert.pem" >"$tmp/all.pem" &&
			mv "$tmp/all.pem" "$pem"
	) || { cat "$tmp/openssl.log" >&2; rm -rf "$tmp"; die "openssl made no key $pem"; }
	rm -rf "$tmp"
	rm -f "$der"
fi
if [ ! -s "$der" ]; then
	openssl x509 -in "$pem" -outform DER -out "$der.tmp" && mv "$der.tmp" "$der" ||
		die "no certificate in $pem"
	chmod 0644 "$der"
fi
# Earlier versions made a module key too, which hosts got: see
# fleet/README.md's revocation
for old in "$dir/modules.pem" "$dir/modules.der"; do
	[ ! -e "$old" ] || log "$old is no longer used: revoke it as fleet/README.md says (mokutil --delete modules.der on the hosts)"
done
echo "$pem"
echo "$der"
