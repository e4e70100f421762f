#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make a fleet's signing key, once, in DIR (kept if already there):
#   DIR/fleet.pem  the private key and its self-signed X.509 certificate,
#                  PEM, mode 0600: what sbsign signs the kernel image
#                  with, what DKMS signs modules with on each host
#                  (mok_signing_key), and what kbuild's
#                  CONFIG_MODULE_SIG_KEY takes;
#   DIR/fleet.der  the certificate alone, DER: what each host enrols
#                  (mokutil --import), and DKMS's mok_certificate.
# One key for the fleet, so that a host enrols it once, for every kernel
# and module the fleet gets.  RSA 4096 and SHA-256 (Debian-config kernels
# have SHA-512 as a module only), the extensions of the kernel's own
# certs/default_x509.genkey, and code signing usage.
# Prints the two paths, key first.
#
# Usage: vm/make-signing-key.sh DIR [COMMON_NAME]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

[ $# -ge 1 ] || die "usage: vm/make-signing-key.sh DIR [COMMON_NAME]"
dir=$1
cn=${2:-swapcache_ab fleet signing key}
pem=$dir/fleet.pem
der=$dir/fleet.der

if [ ! -s "$pem" ] || [ ! -s "$der" ]; then
	log "making the fleet's signing key in $dir ($cn)"
	mkdir -p "$dir"
	tmp=$(mktemp -d "$dir/.key.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(
		umask 077
		openssl req -new -x509 -newkey rsa:4096 -nodes -sha256 -days 36500 -batch -utf8 \
			-subj "/CN=$cn" -addext basicConstraints=critical,CA:FALSE \
			-addext keyUsage=digitalSignature -addext extendedKeyUsage=codeSigning \
			-addext subjectKeyIdentifier=hash -addext authorityKeyIdentifier=keyid \
			-keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>"$tmp/openssl.log" ||
			{ cat "$tmp/openssl.log" >&2; exit 1; }
		cat "$tmp/key.pem" "$tmp/cert.pem" >"$tmp/fleet.pem"
	) || die "openssl made no key in $dir"
	openssl x509 -in "$tmp/cert.pem" -outform DER -out "$tmp/fleet.der"
	chmod 0644 "$tmp/fleet.der"
	mv "$tmp/fleet.der" "$der"
	mv "$tmp/fleet.pem" "$pem"
fi
echo "$pem"
echo "$der"
