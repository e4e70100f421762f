#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make fleet: the fleet path end to end on local Debian 12 guests.
#   1. the patched kernel with what a Debian host boots on (fleet/host.config)
#      as bindeb-pkg packages, swapcache-ab-dkms, bench/'s programs;
#   2. FLEET_GUESTS guests from fleet/image.sh's image (fleet/guests.sh),
#      the last one left on Debian's kernel;
#   3. fleet/site.yml twice: the first installs, reboots, checks, runs the
#      A/B and reports; the second must change nothing on any host;
#   4. fleet/remove.yml: each host back to Debian's kernel, as it was;
#   5. the guests stopped (FLEET_KEEP=1 leaves them running).
# Wall times of each step at the end.
#
# Environment: FLEET_GUESTS=3, FLEET_BENCH_ARGS (the profile, below),
# FLEET_REMOVE=1 (0: keep everything installed), FLEET_KEEP=0, KVER.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
cd "$top"

guests=${FLEET_GUESTS:-3}
bench_args=${FLEET_BENCH_ARGS:-mode=knobs knobs=skip_wb_tags workloads=swap-w-seq runs=3 nr_task=2 mem=64}
dir=$top/build/fleet
results=$dir/results
timings=()
step() { # name command...
	local name=$1 t0=$SECONDS
	shift
	log "== $name"
	"$@"
	timings+=("$name: $((SECONDS - t0)) s")
}

vm/install-deps.sh fleet
step "host kernel build" vm/build-kernel.sh host
step "host kernel packages" vm/build-packages.sh host
dkms_deb=$(vm/build-dkms-deb.sh)
make -s -C bench OUT="$dir/bench"
release=$(make -s -C "$SRC_DIR" O="$(kernel_dir host)" kernelrelease)
pkgs=$(packages_dir host)
image_deb=$(ls "$pkgs"/linux-image-"$release"_*.deb | grep -v -- -dbg_)
headers_deb=$(ls "$pkgs"/linux-headers-"$release"_*.deb)

step "image (cached)" fleet/image.sh >/dev/null
trap '[ "${FLEET_KEEP:-0}" = 1 ] || fleet/guests.sh stop' EXIT
step "guests boot" fleet/guests.sh start "$guests" >/dev/null
rm -rf "$dir/state" "$results"
mkdir -p "$dir/state" "$results"

cat >"$dir/vars.yml" <<VARS
fleet_release: "$release"
fleet_kernel_debs: ["$headers_deb", "$image_deb"]
fleet_dkms_deb: "$dkms_deb"
fleet_module_version: "$(module_version)"
fleet_bench_dir: "$dir/bench"
fleet_bench_args: "$bench_args"
fleet_state_dir: "$dir/state"
fleet_results_dir: "$results"
VARS

export ANSIBLE_CONFIG=$top/fleet/ansible.cfg KVER
playbook() { # log playbook
	local log=$1
	shift
	ansible-playbook -i "$dir/inventory.ini" -e "@$dir/vars.yml" "$@" 2>&1 | tee "$log"
	return "${PIPESTATUS[0]}"
}
step "site.yml, first run" playbook "$dir/site-1.log" fleet/site.yml
step "site.yml, second run" playbook "$dir/site-2.log" fleet/site.yml
# Ansible's recap: "host : ok=N changed=N unreachable=N failed=N ..."
changed=$(sed -n 's/^\([a-z0-9]*\) *: ok=.* changed=\([0-9]*\) .*/\1 \2/p' "$dir/site-2.log" | awk '$2 != 0')
[ -z "$changed" ] || die "the second run of site.yml changed hosts: $changed"
log "second run of site.yml: changed=0 on every host"
if [ "${FLEET_REMOVE:-1}" = 1 ]; then
	step "remove.yml" playbook "$dir/remove.log" fleet/remove.yml
fi
printf '%s\n' "${timings[@]}"
log "report: $results/table.txt; logs: $dir/site-1.log $dir/site-2.log"
