#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The variables fleet/site.yml and fleet/remove.yml take, for what this
# tree built, on stdout as YAML (JSON, which YAML reads): the kernel's
# packages (make fleet-kernel), swapcache-ab-dkms and swapcache-ab-bench
# (make dkms-deb), the apt repository's public key (vm/build-apt-repo.sh's),
# and with KEY_DIR the fleet's keys (vm/make-signing-key.sh's).  make fleet passes the same;
# give it to ansible-playbook with -e @vars.yml.  fleet_test_swap, the
# scratch device each host swaps on and wipes, goes in the inventory.
#
# Usage: fleet/vars.sh APT_URL [KEY_DIR] >vars.yml
#   APT_URL: where the hosts reach the repository's public/ directory
# Environment: FLEET_KERNEL=server (or guest), FLEET_DIR=build/fleet
#   (state/, results/), FLEET_BENCH_ARGS (bench/bench's profile),
#   APT_REPO_KEY_DIR (as vm/build-apt-repo.sh), KVER
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

(($# >= 1 && $# <= 2)) || die "usage: fleet/vars.sh APT_URL [KEY_DIR]"
apt_url=$1
key_dir=${2:-}
[[ $apt_url == http://* || $apt_url == https://* || $apt_url == file:/* ]] ||
	die "APT_URL: an http://, https:// or file:/ URL of the repository's public/, not '$apt_url'"
variant=${FLEET_KERNEL:-server}
case $variant in server | guest) ;; *) die "FLEET_KERNEL: server or guest, not '$variant'" ;; esac
dir=$(realpath -m -- "${FLEET_DIR:-$BUILD_DIR/fleet}")
bench_args=${FLEET_BENCH_ARGS:-mode=knobs knobs=skip_wb_tags workloads=swap-w-seq runs=3 nr_task=2 mem=64}

[ -f "$(kernel_dir "$variant")/arch/x86/boot/bzImage" ] ||
	die "no $variant kernel: make fleet-kernel (FLEET_KERNEL=guest: vm/build-kernel.sh guest)"
release=$(kernel_release "$variant")
debs=()
for p in linux-headers linux-image; do
	debs+=("$(kernel_deb "$variant" "$p" "$release")")
	[ -f "${debs[-1]}" ] || die "no ${debs[-1]}: vm/build-packages.sh $variant"
done
version=$(module_version)
dkms_deb=$top/build/dkms-deb/swapcache-ab-dkms_${version}_all.deb
bench_deb=$top/build/dkms-deb/swapcache-ab-bench_${version}_$(dpkg --print-architecture).deb
for deb in "$dkms_deb" "$bench_deb"; do
	[ -f "$deb" ] || die "no $deb: make dkms-deb"
done
keyring=${APT_REPO_KEY_DIR:-$BUILD_DIR/apt-key}/swapcache-ab-archive-keyring.gpg
[ -f "$keyring" ] || die "no $keyring: vm/build-apt-repo.sh makes it"
keys=()
if [ -n "$key_dir" ]; then
	for f in modules.pem modules.der image.der; do
		[ -f "$key_dir/$f" ] || die "no $key_dir/$f: vm/make-signing-key.sh $key_dir"
		keys+=("$(realpath -- "$key_dir/$f")")
	done
fi
/usr/bin/python3 - "$release" "$dkms_deb" "$bench_deb" "$version" "$dir" "$bench_args" "$keyring" "$apt_url" \
	"${debs[@]}" "${keys[@]}" <<'VARS'
import json, sys
release, dkms_deb, bench_deb, version, d, bench_args, keyring, apt_url, headers, image, *keys = sys.argv[1:]
v = {
    "fleet_release": release,
    "fleet_kernel_debs": [headers, image],   # headers first
    "fleet_dkms_deb": dkms_deb,
    "fleet_bench_deb": bench_deb,
    "fleet_module_version": version,
    "fleet_bench_args": bench_args,
    "fleet_state_dir": f"{d}/state",
    "fleet_results_dir": f"{d}/results",
    "fleet_apt_keyring": keyring,
    "fleet_apt_url": apt_url,
}
if keys:
    v.update(zip(("fleet_module_key", "fleet_module_cert", "fleet_image_cert"), keys))
print(json.dumps(v, indent=1))
VARS
