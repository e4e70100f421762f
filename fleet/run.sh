#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make fleet: the fleet path end to end on local Debian 12 guests.
#   1. the server kernel (make fleet-kernel: Debian's config, the one a
#      fleet gets; FLEET_KERNEL=guest: fleet/guest.config's, for a quick
#      run of the playbooks only) and the stock kernel as bindeb-pkg packages,
#      swapcache-ab-dkms and swapcache-ab-bench; the fleet's signed apt
#      repository of the packages (vm/build-apt-repo.sh), served to the
#      guests over HTTP while make fleet runs; the fleet's signing keys
#      (vm/make-signing-key.sh): the image key signs the server kernel,
#      the module key goes to the guests' DKMS;
#   2. FLEET_GUESTS guests from fleet/image.sh's image (fleet/guests.sh),
#      the last one left on Debian's kernel;
#   3. fleet/site.yml twice: the first installs, reboots, checks, runs the
#      A/B and reports, and every guest but the last must take part, the
#      last left out for its kernel's missing hooks; the second must change
#      nothing on any host (it measures again: a second report);
#   4. on the last guest, with swapcache-ab-dkms installed, a kernel
#      without the hooks (stock, packaged by bindeb-pkg): apt must install
#      its headers and image, DKMS skipping that kernel; purged again;
#   5. fleet/remove.yml: each host back to Debian's kernel, as it was;
#   6. the canary stop (FLEET_CANARY=1, with remove.yml): on the removed
#      guests, the roll-out again with guest1's patched kernel made
#      unbootable must fail on guest1, back on Debian's kernel, and touch
#      no other guest;
#   7. the guests stopped (FLEET_KEEP=1 leaves them running).
# Wall times of each step at the end.
# Environment: FLEET_KERNEL=server, FLEET_GUESTS=3, FLEET_BENCH_ARGS (the
# profile: fleet/vars.sh), FLEET_REMOVE=1 (0: keep everything installed),
# FLEET_CANARY=1, FLEET_KEEP=0, FLEET_APT_PORT=2280, KVER.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
cd "$top"

guests=${FLEET_GUESTS:-3}
variant=${FLEET_KERNEL:-server}
case $variant in server | guest) ;; *) die "FLEET_KERNEL: server or guest, not '$variant'" ;; esac
dir=$top/build/fleet
results=$dir/results
export PACKAGES_DIR=$dir/packages
timings=()
step() { # name command...
	local name=$1 t0=$SECONDS
	shift
	log "== $name"
	"$@"
	timings+=("$name: $((SECONDS - t0)) s")
}

vm/install-deps.sh fleet
step "$variant kernel build" vm/build-kernel.sh "$variant"
# The fleet's signing keys, throwaway ones made once: the image key signs
# the server kernel's image, as for a fleet with Secure Boot (the guests'
# BIOS checks no signature; the role's preflight checks it with
# sbverify); the role puts the module key where the guests' DKMS signs
# with it (their kernel, without the key in MOK, loads the module
# unverified, and the role checks its signer)
signing=$(vm/make-signing-key.sh "$dir/signing-keys" "swapcache_ab make fleet")
mapfile -t signing <<<"$signing"   # image.pem image.der modules.pem modules.der
image_key=
[ "$variant" != server ] || image_key=${signing[0]}
step "$variant kernel packages" env FLEET_IMAGE_KEY="$image_key" vm/build-packages.sh "$variant"
# A kernel without the hooks, which make fleet installs beside
# swapcache-ab-dkms on the last guest (step 4)
if [ "$guests" -gt 1 ]; then
	step "stock kernel packages" bash -c 'vm/build-kernel.sh stock && vm/build-packages.sh stock'
fi

package_debs=$(vm/build-dkms-deb.sh)   # swapcache-ab-dkms, then swapcache-ab-bench
mapfile -t package_debs <<<"$package_debs"
release=$(kernel_release "$variant")
image_deb=$(kernel_deb "$variant" linux-image "$release")
headers_deb=$(kernel_deb "$variant" linux-headers "$release")

# The fleet's apt repository, served to the guests from the controller's
# loopback, where QEMU's user network takes their 10.0.2.2
APT_REPO_FRESH=1 vm/build-apt-repo.sh "$dir/apt" "$headers_deb" "$image_deb" "${package_debs[@]}" >/dev/null
apt_port=${FLEET_APT_PORT:-2280}
/usr/bin/python3 -m http.server --bind 127.0.0.1 --directory "$dir/apt/public" "$apt_port" \
	>"$dir/apt-http.log" 2>&1 &
apt_http=$!
trap 'kill "$apt_http" 2>/dev/null || true; [ "${FLEET_KEEP:-0}" = 1 ] || fleet/guests.sh stop' EXIT
/usr/bin/python3 - "http://127.0.0.1:$apt_port/dists/swapcache-ab/InRelease" <<'WAIT' ||
import sys, time, urllib.request
for _ in range(50):
    try:
        urllib.request.urlopen(sys.argv[1], timeout=2).read()
        sys.exit(0)
    except OSError:
        time.sleep(0.2)
sys.exit(1)
WAIT
	die "the apt repository is not served on 127.0.0.1:$apt_port (FLEET_APT_PORT): see $dir/apt-http.log"
# (and by this server: not one a killed run left on that port)
kill -0 "$apt_http" 2>/dev/null || die "the apt repository's server exited: see $dir/apt-http.log"
# fleet/image.sh's build (cached) included
step "image and guests boot" fleet/guests.sh start "$guests" >/dev/null
# site.yml's preflight makes them again
rm -rf "$dir/state" "$results"

# site.yml's variables, as a fleet engineer makes them (build/fleet/vars.yml)
FLEET_KERNEL=$variant fleet/vars.sh "$dir" "http://10.0.2.2:$apt_port" "$dir/signing-keys" >/dev/null

export ANSIBLE_CONFIG=$top/fleet/ansible.cfg ANSIBLE_NOCOLOR=1 KVER
playbook() { # run playbook
	local run=$1
	shift
	# each run's report in its own folder
	# fleet_module_key_on=all: the guests boot by BIOS, and would get no
	# module key otherwise; this exercises its placement and the signer check
	ansible-playbook -i "$dir/inventory.ini" -e "@$dir/vars.yml" -e fleet_module_key_on=all \
		-e "fleet_results_dir=$results/$run" "$@" 2>&1 | tee "$dir/$run.log"
	return "${PIPESTATUS[0]}"
}
# Ansible's recap: "host : ok=N changed=N unreachable=N failed=N ..."
recap() { # run
	sed -n 's/^\([A-Za-z0-9._-]*\) *: ok=[0-9]* *changed=\([0-9]*\) .*/\1 \2/p' "$dir/$1.log"
}
step "site.yml, first run" playbook site-1 fleet/site.yml
# The outcome make fleet shows: every guest but the last takes part, and
# the last, on Debian's kernel, is left out because it has no hooks
/usr/bin/python3 - "$results/site-1/provenance.json" "$guests" <<'CHECK' || die "the first run's outcome is not the expected one"
import json, sys
p = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
want = [f"guest{i}" for i in range(1, n)] if n > 1 else ["guest1"]
stock = p["left_out"].get(f"guest{n}", "") if n > 1 else "CONFIG_SWAPCACHE_AB_HOOKS"
print(f"taking part: {p['hosts']} (want {want}); guest{n} left out: {stock!r}")
sys.exit(0 if p["hosts"] == want and "CONFIG_SWAPCACHE_AB_HOOKS" in stock else 1)
CHECK
step "site.yml, second run" playbook site-2 fleet/site.yml
[ "$(recap site-2 | wc -l)" -eq $((guests + 1)) ] || die "site.yml's second recap does not name every host"
changed=$(recap site-2 | awk '$2 != 0')
[ -z "$changed" ] || die "the second run of site.yml changed hosts: $changed"
log "second run of site.yml: changed=0 on every host"

# DKMS never fails another kernel's install: on the last guest (Debian's
# kernel, swapcache-ab-dkms from the first run), a kernel without the hooks
# as bindeb-pkg packages it (stock's; no .config in its headers) installs
# with apt, headers and image in one transaction: the image's postinst
# runs /etc/kernel/postinst.d, where the package's kernel hook has DKMS
# skip that kernel with its message (bindeb-pkg's headers package has no
# maintainer scripts).  Then both are purged, and the guest is as it was
hookless_kernel() {
	local release deb files=() log=$dir/hookless-kernel.log
	release=$(kernel_release stock)
	adhoc() { ansible -i "$dir/inventory.ini" "guest$guests" -b "$@" >>"$log" 2>&1; }
	: >"$log"
	for deb in "$(kernel_deb stock linux-headers "$release")" "$(kernel_deb stock linux-image "$release")"; do
		adhoc -m ansible.builtin.copy -a "src=$deb dest=/var/tmp/" || die "could not copy $deb: see $log"
		files+=("/var/tmp/$(basename "$deb")")
	done
	adhoc -m ansible.builtin.shell -a "apt-get install -y ${files[*]} 2>&1" ||
		die "with swapcache-ab-dkms installed, apt could not install a hookless kernel: see $log"
	grep -q "$release has no CONFIG_SWAPCACHE_AB_HOOKS" "$log" ||
		die "the hookless kernel installed without the package's skip message: see $log"
	adhoc -m ansible.builtin.shell -a "apt-get purge -y linux-image-$release linux-headers-$release 2>&1 &&
		rm ${files[*]}" || die "could not purge the hookless kernel: see $log"
	log "a hookless kernel (bindeb-pkg, no .config in its headers) installed beside swapcache-ab-dkms on guest$guests: DKMS skipped $release"
}
if [ "$guests" -gt 1 ]; then
	step "hookless kernel" hookless_kernel
fi
if [ "${FLEET_REMOVE:-1}" = 1 ]; then
	step "remove.yml" playbook remove fleet/remove.yml
fi

# The canary stop, on the guests remove.yml left as new: guest1's patched
# kernel made unbootable (fleet_break_new_kernel empties its initramfs, so
# it cannot find its root by UUID and panics), so GRUB's one-shot boot
# falls back to Debian's kernel.  The roll-out must fail on guest1 with
# "did not come back" and touch no other guest.
canary() {
	local rc=0 other status
	sed 's/^\(guest1 .*\)$/\1 fleet_break_new_kernel=true/' "$dir/inventory.ini" >"$dir/inventory-canary.ini"
	ansible-playbook -i "$dir/inventory-canary.ini" -e "@$dir/vars.yml" -e fleet_module_key_on=all \
		-e "fleet_results_dir=$results/canary" \
		--tags install fleet/site.yml >"$dir/canary.log" 2>&1 || rc=$?
	[ "$rc" -ne 0 ] || die "the roll-out with an unbootable canary succeeded: see $dir/canary.log"
	grep -q "the patched kernel did not come back" "$dir/canary.log" ||
		die "the roll-out did not stop on the canary's fallback: see $dir/canary.log"
	for other in $(seq 2 "$guests"); do
		# Every guest runs the preflight, which changes nothing
		[ "$(recap canary | awk -v h="guest$other" '$1 == h { print $2 }')" = 0 ] ||
			die "guest$other changed after the canary failed: see $dir/canary.log"
		grep -q "the roll-out stops, before guest2: guest1: failed" "$dir/canary.log" ||
			die "the roll-out did not stop before guest2's batch: see $dir/canary.log"
		# One line the command prints whatever dpkg knows of the package
		# (none, after a purge), so that ansible fails only when the
		# guest cannot be reached; not its callback's format, which
		# ANSIBLE_CONFIG's settings change
		status=$(ansible -i "$dir/inventory.ini" "guest$other" -m ansible.builtin.shell \
			-a "echo dkms-status=\$(dpkg-query -W -f='\${db:Status-Status}' swapcache-ab-dkms 2>/dev/null || echo none)" 2>&1) ||
			die "guest$other cannot be reached after the canary failed: $status"
		[[ $status == *dkms-status=* ]] || die "guest$other did not answer after the canary failed: $status"
		[[ $status != *dkms-status=installed* ]] || die "guest$other has swapcache-ab-dkms installed after the canary failed"
	done
	log "canary: the roll-out stopped at guest1, back on its own kernel; guests 2-$guests untouched"
}
if [ "${FLEET_CANARY:-1}" = 1 ] && [ "${FLEET_REMOVE:-1}" = 1 ] && [ "$guests" -gt 1 ]; then
	step "canary stop" canary
fi
printf '%s\n' "${timings[@]}"
log "reports: $results/site-1/table.txt, $results/site-2/table.txt; logs: $dir/*.log"
