#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make a fleet's two signing keys, once, in DIR (each kept if already
# there; its .der is made again from its .pem if missing; a .der without
# its .pem is an error):
#   DIR/image.pem, image.der    signs the kernel image (sbsign, by
#                               vm/build-packages.sh with FLEET_IMAGE_KEY):
#                               stays on the machine that builds it;
#   DIR/modules.pem, modules.der  signs modules: each host's DKMS signs
#                               what it builds with it (the swapcache_ab
#                               role puts modules.pem in /etc/dkms/), and
#                               the kernel-module-only extended key usage
#                               (1.3.6.1.4.1.2312.16.1.2) makes shim refuse
#                               an image it signed: a host's root, who can
#                               read it, cannot sign a kernel the fleet
#                               boots.
# NAME.pem holds the private key and its self-signed X.509 certificate
# (what sbsign, sign-file and kbuild take), mode 0600; NAME.der the
# certificate alone.  Each host enrols both certificates once, for every
# kernel and module the fleet gets: mokutil --import image.der modules.der.
# RSA 4096, SHA-256 (every firmware, shim and kernel verifies it; Debian's
# 6.1 config builds SHA-512 as a module), the extensions of the kernel's
# own certs/default_x509.genkey.  Prints the four paths: image.pem,
# image.der, modules.pem, modules.der.
#
# Usage: vm/make-signing-key.sh DIR [NAME]   (NAME: the certificates' CN
# start, default "swapcache_ab fleet")
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

[ $# -ge 1 ] || die "usage: vm/make-signing-key.sh DIR [NAME]"
dir=$1
name=${2:-swapcache_ab fleet}
mkdir -p "$dir"

make_key() { # base cn extended-key-usage
	local pem=$dir/$1.pem der=$dir/$1.der tmp
	# A certificate without its key: hosts may have enrolled it, and a new
	# key would not match it
	[ -s "$pem" ] || [ ! -e "$der" ] || die "$der without $pem: give the key, or move both away for a new one"
	if [ ! -s "$pem" ]; then
		log "making $pem ($2)"
		tmp=$(mktemp -d "$dir/.key.XXXXXX")
		(
			umask 077
			openssl req -new -x509 -newkey rsa:4096 -nodes -sha256 -days 36500 -batch -utf8 \
				-subj "/CN=$2" -addext basicConstraints=critical,CA:FALSE \
				-addext keyUsage=digitalSignature -addext "extendedKeyUsage=$3" \
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
	echo "$pem"
	echo "$der"
}
make_key image "$name image signing key" codeSigning
make_key modules "$name module signing key" 1.3.6.1.4.1.2312.16.1.2
