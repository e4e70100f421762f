#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The variables fleet/site.yml and fleet/remove.yml take, for what this
# tree built, written to FLEET_DIR/vars.yml (JSON, which YAML reads; its
# path printed): the kernel's image package and its module package
# swapcache-ab-modules-<release> (make fleet-kernel), with the signer and
# key id the module reports (read from that package: the kernel's own
# build key, or none where the kernel does not sign its modules),
# swapcache-ab-bench (make dkms-deb), the apt repository's public key
# (vm/build-apt-repo.sh's), and with KEY_DIR the fleet's image
# certificate (vm/make-signing-key.sh's image.der: hosts with Secure Boot
# on enrol it).  No private key: the module package was signed where the
# kernel was built.  FLEET_DIR keeps the fleet's state (each host's
# kernel and packages before the roll-out, which remove.yml needs: keep
# it for as long as the hosts have our packages) and results; make fleet
# passes its own, build/fleet.  Give the file to ansible-playbook with
# -e @FLEET_DIR/vars.yml.  fleet_test_swap, the scratch device each host
# swaps on and wipes, goes in the inventory.
#
# Usage: fleet/vars.sh FLEET_DIR APT_URL [KEY_DIR]
#   APT_URL: where the hosts reach the repository's public/ directory
# Environment: FLEET_KERNEL=server (or guest), FLEET_BENCH_ARGS
#   (swapcache-ab-bench's profile), MODULES_VERSION (the module package's
#   version, as vm/build-packages.sh), APT_REPO_KEY_DIR (as
#   vm/build-apt-repo.sh), PACKAGES_DIR (as vm/build-packages.sh), KVER
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

(($# >= 2 && $# <= 3)) || die "usage: fleet/vars.sh FLEET_DIR APT_URL [KEY_DIR]"
dir=$(realpath -m -- "$1")
apt_url=$2
key_dir=${3:-}
[[ $apt_url =~ ^(https?://|file:/)[^[:space:]]+$ ]] ||
	die "APT_URL: an http://, https:// or file:/ URL of the repository's public/, without spaces, not '$apt_url'"
variant=${FLEET_KERNEL:-server}
case $variant in server | guest) ;; *) die "FLEET_KERNEL: server or guest, not '$variant'" ;; esac
bench_args=${FLEET_BENCH_ARGS:-mode=knobs knobs=skip_wb_tags workloads=swap-w-seq runs=3 nr_task=2 mem=64}
# Ansible would template what looks like Jinja in a variable's value
[[ $bench_args != *[{}%]* ]] || die "FLEET_BENCH_ARGS: bench/bench's key=value words, without {, } or %"

[ -f "$(kernel_dir "$variant")/arch/x86/boot/bzImage" ] ||
	die "no $variant kernel: make fleet-kernel (FLEET_KERNEL=guest: vm/build-kernel.sh guest)"
release=$(kernel_release "$variant")
version=${MODULES_VERSION:-$(module_version)}
files=(
	"$(kernel_deb "$variant" linux-image "$release")"
	"$(modules_deb "$variant" "$release" "$version")"
	"$(our_deb bench)"
	"${APT_REPO_KEY_DIR:-$BUILD_DIR/apt-key}/swapcache-ab-archive-keyring.gpg"
)
for i in "${!files[@]}"; do
	[ -f "${files[i]}" ] || die "no ${files[i]}: $(
		case $i in 0 | 1) echo "vm/build-packages.sh $variant" ;; 2) echo "make dkms-deb" ;;
		*) echo "vm/build-apt-repo.sh makes it" ;; esac)"
	files[i]=$(realpath -- "${files[i]}")
done
# The signer and key the module reports, as the kernel will read them
# (modinfo reads a file named *.ko, else looks up a module by that name)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ko=$tmp/swapcache_ab.ko
dpkg-deb --fsys-tarfile "${files[1]}" | tar -xO "./lib/modules/$release/updates/swapcache_ab.ko" >"$ko" ||
	die "no /lib/modules/$release/updates/swapcache_ab.ko in ${files[1]}"
signer=$(/sbin/modinfo -F signer "$ko") && sig_key=$(/sbin/modinfo -F sig_key "$ko") ||
	die "no module in ${files[1]}"
if [ -n "$key_dir" ]; then
	[ -f "$key_dir/image.der" ] || die "no $key_dir/image.der: vm/make-signing-key.sh $key_dir"
	files+=("$(realpath -- "$key_dir/image.der")")
fi

mkdir -p "$dir"
/usr/bin/python3 - "$dir" "$release" "$version" "$signer" "$sig_key" "$bench_args" "$apt_url" "${files[@]}" \
	>"$dir/vars.yml.new" <<'VARS'
import json, sys
d, release, version, signer, sig_key, bench_args, apt_url, image, modules, bench, keyring, *cert = sys.argv[1:]
v = {
    "fleet_release": release,
    "fleet_kernel_deb": image,
    "fleet_modules_deb": modules,
    "fleet_bench_deb": bench,
    "fleet_module_version": version,
    "fleet_module_signer": signer,
    "fleet_module_sig_key": sig_key,
    "fleet_bench_args": bench_args,
    "fleet_state_dir": f"{d}/state",
    "fleet_results_dir": f"{d}/results",
    "fleet_apt_keyring": keyring,
    "fleet_apt_url": apt_url,
}
if cert:
    v["fleet_image_cert"] = cert[0]
print(json.dumps(v, indent=1))
VARS
mv "$dir/vars.yml.new" "$dir/vars.yml"
echo "$dir/vars.yml"
