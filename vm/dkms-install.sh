#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the module the way a fleet gets it, with real DKMS, into a private
# root instead of the host's /lib/modules: unpack the linux-image and
# linux-headers packages of vm/build-packages.sh there and the module's
# DKMS package (vm/build-dkms-deb.sh), then dkms add, build and install
# with dkms 3's --dkmstree, --sourcetree and --installtree pointing into
# that root.  Checks the result, and that
# DKMS skips a kernel without the hooks (Debian's own linux-headers) with
# its BUILD_EXCLUSIVE message instead of failing.
#
# Prints one TAP line per check; exits non-zero if any failed.  The VM
# then boots <root>/boot/vmlinuz-<release> with the module DKMS installed.
#
# Usage: vm/dkms-install.sh [patched|debug]
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

variant=${1:-patched}
pkgs=$(packages_dir "$variant")
root=$(dkms_root "$variant")
version=$(module_version)
dkms_log=$root.log
# dkms with every tree inside $1, the rest of the arguments after the action.
# DKMS reads its signing configuration from /etc/dkms alone: where the
# private root has an etc/dkms (a kernel that checks signatures, below),
# dkms runs in a mount namespace of its own with that as /etc/dkms
private_dkms() {
	local r=$1 action=$2
	shift 2
	mkdir -p "$r/var/lib/dkms"
	set -- dkms "$action" -m swapcache_ab -v "$version" --dkmstree "$r/var/lib/dkms" \
		--sourcetree "$r/usr/src" --installtree "$r/lib/modules" "$@"
	if [ -d "$r/etc/dkms" ]; then
		# shellcheck disable=SC2016 # expanded by the inner shell
		set -- unshare --mount sh -c 'mount --bind "$0" /etc/dkms && exec "$@"' "$r/etc/dkms" "$@"
	fi
	"$@" >>"$dkms_log" 2>&1
}

release=$(kernel_release "$variant")
image=$(kernel_deb "$variant" linux-image "$release")
headers=$(kernel_deb "$variant" linux-headers "$release")
[ -f "$image" ] && [ -f "$headers" ] || die "no packages for $release in $pkgs: run vm/build-packages.sh $variant"

rm -rf "$root" "$dkms_log"
mkdir -p "$root"
dpkg-deb -x "$image" "$root" && dpkg-deb -x "$headers" "$root"
tap_result $? "unpacked $(basename "$image") and $(basename "$headers") into $root"
ksrc=$root/usr/src/linux-headers-$release
# bindeb-pkg's headers carry no .config (Debian's do); the image's copy
# stands in for the one dkms keeps with its build log
kconfig=$root/boot/config-$release

# The module's sources where its package puts them: the swapcache-ab-dkms
# .deb, unpacked as dpkg would (its postinst's dkms calls are the ones below,
# pointed at the private root)
dkms_deb=$("$top/vm/build-dkms-deb.sh" 2>>"$dkms_log" | head -n 1)
[ "$(dpkg-deb -f "$dkms_deb" Version 2>/dev/null)" = "$version" ]
tap_result $? "built $(basename "$dkms_deb") with dh-dkms, version dkms.conf's $version"
dpkg-deb -x "$dkms_deb" "$root" && [ -f "$root/usr/src/swapcache_ab-$version/dkms.conf" ]
tap_result $? "unpacked it into $root: /usr/src/swapcache_ab-$version"

# A kernel that checks module signatures (the debug kernel requires them):
# DKMS's configuration naming a signing key of the host's choice
# (framework.conf.d, mok_signing_key and mok_certificate), here the
# kernel's own key: the key it trusts.  And sign-file from the headers,
# where DKMS would find it on a host (/lib/modules/<release>/build/scripts/)
signing=0 signer=
if grep -qx 'CONFIG_MODULE_SIG=y' "$kconfig"; then
	signing=1
	kobj=$(kernel_dir "$variant")
	mkdir -p "$root/etc/dkms/framework.conf.d"
	printf '%s\n' mok_signing_key=/etc/dkms/swapcache-ab-modules.pem \
		mok_certificate=/etc/dkms/swapcache-ab-modules.der >"$root/etc/dkms/framework.conf.d/swapcache-ab.conf"
	cp "$kobj/certs/signing_key.pem" "$root/etc/dkms/swapcache-ab-modules.pem"
	cp "$kobj/certs/signing_key.x509" "$root/etc/dkms/swapcache-ab-modules.der"
	echo "sign_file=$ksrc/scripts/sign-file" >"$root/etc/dkms/framework.conf.d/zz-private-root.conf"
	signer=$(openssl x509 -inform DER -in "$root/etc/dkms/swapcache-ab-modules.der" -noout \
		-subject -nameopt multiline | sed -n 's/^ *commonName *= //p')
	[ -x "$ksrc/scripts/sign-file" ] && [ -n "$signer" ]
	tap_result $? "$(basename "$headers") has scripts/sign-file; DKMS's key is the kernel's own ('$signer')"
fi

private_dkms "$root" add
tap_result $? "dkms add swapcache_ab/$version"
private_dkms "$root" build -k "$release" --kernelsourcedir "$ksrc" --config "$kconfig"
tap_result $? "dkms build swapcache_ab/$version against linux-headers-$release"
# depmod on the private root here, not dkms's on the host's /lib/modules
private_dkms "$root" install -k "$release" --kernelsourcedir "$ksrc" --config "$kconfig" --no-depmod
tap_result $? "dkms install swapcache_ab/$version for $release"
depmod -b "$root" -F "$root/boot/System.map-$release" "$release" >>"$dkms_log" 2>&1
tap_result $? "depmod -b on the private root"

ko=$root/lib/modules/$release/updates/dkms/swapcache_ab.ko
found=$(modinfo -b "$root" -k "$release" -n swapcache_ab 2>/dev/null)
[ "$found" = "$ko" ]
tap_result $? "modinfo finds swapcache_ab at /lib/modules/$release/updates/dkms (${found#"$root"})"

# The vermagic of a module the kernel package ships is the kernel's own
ref=$(find "$root/lib/modules/$release/kernel" -name '*.ko*' | head -1)
want=$(modinfo -F vermagic "$ref" 2>/dev/null)
got=$(modinfo -F vermagic "$ko" 2>/dev/null)
[ -n "$want" ] && [ "$got" = "$want" ] && [ "${got%% *}" = "$release" ]
tap_result $? "vermagic '$got' is the kernel's ('$want', from $(basename "$ref"))"
[ "$(modinfo -F version "$ko" 2>/dev/null)" = "$version" ]
tap_result $? "installed module's MODULE_VERSION is dkms.conf's $version"
if [ $signing = 1 ]; then
	got=$(modinfo -F signer "$ko" 2>/dev/null)
	hash=$(config_string "$kconfig" CONFIG_MODULE_SIG_HASH)
	[ -n "$got" ] && [ "$got" = "$signer" ] && [ "$(modinfo -F sig_hashalgo "$ko" 2>/dev/null)" = "$hash" ]
	tap_result $? "DKMS signed it with the key /etc/dkms/framework.conf.d names: signer '$got', $hash"
fi

# A kernel without the hooks: Debian 12's own headers, unpacked likewise
stock_root=$(dkms_root debian-stock)
debs=$BUILD_DIR/dkms/debian-debs
debian_headers() {
	apt-cache depends linux-headers-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-headers-[0-9.-]*-amd64\)$/\1/p' | head -1
}
stock=$(debian_headers)
if [ -z "$stock" ]; then
	# A machine whose package lists were never fetched
	as_root apt-get update -q >>"$dkms_log" 2>&1
	stock=$(debian_headers)
fi
if [ -z "$stock" ]; then
	tap_result 1 "found Debian's linux-headers-amd64 in apt (apt-get update?)"
else
	mkdir -p "$debs"
	[ -n "$(ls "$debs/${stock}"_*.deb 2>/dev/null)" ] ||
		(cd "$debs" && apt-get download -q "$stock" >>"$dkms_log" 2>&1)
	rm -rf "$stock_root"
	mkdir -p "$stock_root"
	dpkg-deb -x "$(ls "$debs/${stock}"_*.deb | head -1)" "$stock_root"
	stock_release=${stock#linux-headers-}
	stock_ksrc=$stock_root/usr/src/$stock
	grep -q '^CONFIG_SWAPCACHE_AB_HOOKS' "$stock_ksrc/.config"
	[ $? -eq 1 ]
	tap_result $? "$stock has no CONFIG_SWAPCACHE_AB_HOOKS"
	dpkg-deb -x "$dkms_deb" "$stock_root"
	private_dkms "$stock_root" add
	private_dkms "$stock_root" build -k "$stock_release" --kernelsourcedir "$stock_ksrc"
	rc=$?
	[ $rc -eq 77 ] && tail -5 "$dkms_log" | grep -q 'BUILD_EXCLUSIVE directive which does not match' &&
		[ -z "$(find "$stock_root/var/lib/dkms" -name '*.ko')" ]
	tap_result $? "dkms skips $stock_release (exit $rc, the BUILD_EXCLUSIVE message, no .ko built)"
fi

echo "# dkms log: $dkms_log" >&2
exit $((tap_failed > 0))
