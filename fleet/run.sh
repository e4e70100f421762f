#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make fleet: the fleet path end to end on local Debian 12 guests.
#   1. the server kernel (make fleet-kernel: Debian's config, the one a
#      fleet gets; FLEET_KERNEL=guest: fleet/guest.config's, for a quick
#      run of the playbooks only) and the stock kernel as bindeb-pkg
#      packages, the patched kernel's module package
#      swapcache-ab-modules-<release> (vm/build-packages.sh: built and
#      signed here with that kernel's own build key) and
#      swapcache-ab-bench; the fleet's signed apt repository of what the
#      hosts install (vm/build-apt-repo.sh), served to the guests over
#      HTTP while make fleet runs; the fleet's image key
#      (vm/make-signing-key.sh, throwaway) signs the server kernel's image;
#   2. FLEET_GUESTS guests from fleet/image.sh's image (fleet/guests.sh),
#      the last one left on Debian's kernel;
#   3. fleet/site.yml twice: the first installs, reboots, checks, runs the
#      A/B and reports, and every guest but the last must take part, the
#      last left out for its kernel's missing hooks; the second must change
#      nothing on any host (it measures again: a second report).  With 3
#      guests or more, guest2 has a swap of its own (a swap file in its
#      fstab, as the Debian installer makes a partition) and
#      fleet_other_swap=off: the A/B takes it off and it must be on again;
#   4. the module upgraded over the installed fleet (FLEET_UPGRADE=1): its
#      package built again at a bumped version, site.yml's install again,
#      the canary first, every host taking part on the new module;
#      then on guest1, with the module package installed, a kernel
#      without the hooks (stock, packaged by bindeb-pkg): apt must install
#      it, with no module of ours for it and no module package in the
#      fleet's repository for it; purged again (FLEET_HOOKLESS=0: not, nor
#      the stock kernel built).  (The last guest, on Debian's kernel, shows
#      the role leaving a host without a module package for its kernel
#      out, with the reason, in step 3);
#   5. fleet/remove.yml: each host back to Debian's kernel, as it was;
#      guest1 from its own records (the controller's deleted first), and
#      with 3 guests or more, guest2 as an older site.yml left it (the
#      controller's records only, the patched kernel GRUB's saved entry);
#      then a host whose preflight fails (guest1's /boot filled) is left
#      out of a roll-out with nothing on it changed;
#   6. the canary stop (FLEET_CANARY=1, with remove.yml): on the removed
#      guests, the roll-out again with guest1's patched kernel made
#      unbootable must fail on guest1, back on Debian's kernel, and touch
#      no other guest;
#   7. the guests stopped (FLEET_KEEP=1 leaves them running).
# Wall times of each step at the end.
# Environment: FLEET_KERNEL=server, FLEET_GUESTS=3, FLEET_BENCH_ARGS (the
# profile: fleet/vars.sh), FLEET_REMOVE=1 (0: keep everything installed),
# FLEET_UPGRADE=1, FLEET_HOOKLESS=1, FLEET_CANARY=1, FLEET_KEEP=0,
# FLEET_APT_PORT=2280, KVER.
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
# Throwaway keys, unencrypted: the image key and the apt repository's
# archive key sign test guests only
export FLEET_KEY_THROWAWAY=1
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
# The fleet's image key, a throwaway one made once: it signs the server
# kernel's image, as for a fleet with Secure Boot (the guests' BIOS
# checks no signature; the role's preflight checks it with sbverify).
# The module package needs none of the fleet's: vm/build-packages.sh
# signs its module with the kernel's own build key, which the kernel
# trusts built in, and the role checks the signer and that the kernel
# verified it
signing=$(vm/make-signing-key.sh "$dir/signing-keys" "swapcache_ab make fleet")
mapfile -t signing <<<"$signing"   # image.pem image.der
image_key=
[ "$variant" != server ] || image_key=${signing[0]}
# The kernel's packages and its module package
step "$variant kernel packages" env FLEET_IMAGE_KEY="$image_key" vm/build-packages.sh "$variant"
# A kernel without the hooks, which make fleet installs beside the module
# package on guest1 (step 4)
hookless=${FLEET_HOOKLESS:-1}
if [ "$hookless" = 1 ]; then
	step "stock kernel packages" bash -c 'vm/build-kernel.sh stock && vm/build-packages.sh stock'
fi

package_debs=$(vm/build-dkms-deb.sh)   # swapcache-ab-dkms, then swapcache-ab-bench
mapfile -t package_debs <<<"$package_debs"
release=$(kernel_release "$variant")
image_deb=$(kernel_deb "$variant" linux-image "$release")
modules_deb=$(modules_deb "$variant" "$release")

# The fleet's apt repository of what the hosts install (no headers, no
# DKMS: the module comes built), served to the guests from the
# controller's loopback, where QEMU's user network takes their 10.0.2.2
APT_REPO_FRESH=1 vm/build-apt-repo.sh "$dir/apt" "$image_deb" "$modules_deb" "${package_debs[1]}" >/dev/null
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
	ansible-playbook -i "$dir/inventory.ini" -e "@$dir/vars.yml" \
		-e "fleet_results_dir=$results/$run" "$@" 2>&1 | tee "$dir/$run.log"
	return "${PIPESTATUS[0]}"
}
# Ansible's recap: "host : ok=N changed=N unreachable=N failed=N ..."
recap() { # run
	sed -n 's/^\([A-Za-z0-9._-]*\) *: ok=[0-9]* *changed=\([0-9]*\) .*/\1 \2/p' "$dir/$1.log"
}
# An ad-hoc shell command on one guest (its output in scenarios.log)
on_guest() { # guest command
	ansible -i "$dir/inventory.ini" "$1" -b -m ansible.builtin.shell -a "$2" >>"$dir/scenarios.log" 2>&1
}
: >"$dir/scenarios.log"
# guest2's own swap, in its fstab, as the Debian installer makes one (a
# file here): with fleet_other_swap=off the A/B takes it off for the run
# and puts it back on
own_swap=0
if [ "$guests" -ge 3 ]; then
	own_swap=1
	on_guest guest2 'fallocate -l 64M /swap-own && chmod 600 /swap-own && mkswap /swap-own &&
		echo "/swap-own none swap sw 0 0" >>/etc/fstab && swapon /swap-own' ||
		die "could not give guest2 a swap of its own: see $dir/scenarios.log"
	sed -i 's/^\(guest2 .*\)$/\1 fleet_other_swap=off/' "$dir/inventory.ini"
fi
step "site.yml, first run" playbook site-1 fleet/site.yml
# The outcome make fleet shows: every guest but the last takes part, and
# the last, on Debian's kernel, is left out because it has no hooks, and
# so no module package
/usr/bin/python3 - "$results/site-1/provenance.json" "$guests" <<'CHECK' || die "the first run's outcome is not the expected one"
import json, sys
p = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
want = [f"guest{i}" for i in range(1, n)] if n > 1 else ["guest1"]
stock = p["left_out"].get(f"guest{n}", "") if n > 1 else "CONFIG_SWAPCACHE_AB_HOOKS, no module package"
print(f"taking part: {p['hosts']} (want {want}); guest{n} left out: {stock!r}")
sys.exit(0 if p["hosts"] == want and "CONFIG_SWAPCACHE_AB_HOOKS" in stock and "no module package" in stock else 1)
CHECK
if [ "$own_swap" = 1 ]; then
	on_guest guest2 'swapon --show=NAME --noheadings | grep -x /swap-own' ||
		die "guest2's own swap is not on again after the A/B: see $dir/scenarios.log"
	log "guest2 measured with its own swap taken off for the A/B, and on again after"
fi
step "site.yml, second run" playbook site-2 fleet/site.yml
[ "$(recap site-2 | wc -l)" -eq $((guests + 1)) ] || die "site.yml's second recap does not name every host"
changed=$(recap site-2 | awk '$2 != 0')
[ -z "$changed" ] || die "the second run of site.yml changed hosts: $changed"
log "second run of site.yml: changed=0 on every host"

# The module upgraded over the installed fleet, the kernel unchanged: its
# package built again at a bumped version (the kernel's tree as built),
# added to the repository, which then serves that version, and site.yml's
# install again, the canary first.  Each host taking part must unload the
# old module and load the new one, which reports the bumped version, and
# none may fail.  vars.yml names that version from here on
module_upgrade() {
	local v i
	v=$(module_version)+fleet1
	MODULES_VERSION=$v vm/build-packages.sh "$variant" modules
	vm/build-apt-repo.sh "$dir/apt" "$(modules_deb "$variant" "$release" "$v")" >/dev/null
	FLEET_KERNEL=$variant MODULES_VERSION=$v fleet/vars.sh "$dir" "http://10.0.2.2:$apt_port" "$dir/signing-keys" >/dev/null
	playbook upgrade fleet/site.yml --tags install || die "the module upgrade failed: see $dir/upgrade.log"
	for i in $(seq $((guests > 1 ? guests - 1 : 1))); do
		on_guest "guest$i" "grep -x '$v' /sys/module/swapcache_ab/version &&
			dpkg-query -W -f='\${Version}\n' swapcache-ab-modules-$release | grep -x '$v'" ||
			die "guest$i does not run the module $v from swapcache-ab-modules-$release $v after the upgrade: see $dir/scenarios.log"
	done
	log "module upgrade: swapcache-ab-modules-$release $v over $(module_version), the old module unloaded and $v loaded on every guest taking part"
}
if [ "${FLEET_UPGRADE:-1}" = 1 ]; then
	step "module upgrade" module_upgrade
fi
# A kernel without the hooks installs beside the module package: on
# guest1 (the patched kernel and its module package), the stock kernel's
# image as bindeb-pkg makes it installs with apt, and nothing of ours goes
# with it: no module under its /lib/modules, and no module package for it
# in the fleet's repository (the role would leave a host on it out, as it
# does the last guest).  The module package for the patched kernel stays
# as it was.  Then it is purged, and the guest is as it was
hookless_kernel() {
	local stock deb log=$dir/hookless-kernel.log
	stock=$(kernel_release stock)
	deb=$(kernel_deb stock linux-image "$stock")
	adhoc() { ansible -i "$dir/inventory.ini" guest1 -b "$@" >>"$log" 2>&1; }
	: >"$log"
	adhoc -m ansible.builtin.copy -a "src=$deb dest=/var/tmp/" || die "could not copy $deb: see $log"
	adhoc -m ansible.builtin.shell -a "apt-get install -y /var/tmp/$(basename "$deb") 2>&1" ||
		die "with swapcache-ab-modules-$release installed, apt could not install a hookless kernel: see $log"
	adhoc -m ansible.builtin.shell -a "echo stock-modules=\$(find /lib/modules/$stock -name 'swapcache_ab.ko*' | wc -l);
		echo stock-package=\$(apt-cache pkgnames swapcache-ab-modules- | grep -qxF swapcache-ab-modules-$stock && echo yes || echo none);
		echo ours=\$(modinfo -k $release -n swapcache_ab)" ||
		die "could not read guest1 after the hookless kernel's install: see $log"
	grep -qx "stock-modules=0" "$log" && grep -qx "stock-package=none" "$log" &&
		grep -qx "ours=/lib/modules/$release/updates/swapcache_ab.ko" "$log" ||
		die "the hookless kernel $stock got a module of ours, or the patched kernel lost its own: see $log"
	adhoc -m ansible.builtin.shell -a "apt-get purge -y linux-image-$stock 2>&1 && rm /var/tmp/$(basename "$deb")" ||
		die "could not purge the hookless kernel: see $log"
	log "a hookless kernel (bindeb-pkg) installed beside swapcache-ab-modules-$release on guest1: no module of ours for $stock, none in the repository"
}
if [ "$hookless" = 1 ]; then
	step "hookless kernel" hookless_kernel
fi
# remove.yml from the hosts' own records: guest1's on the controller
# deleted; guest2 as an older site.yml left it, which kept records on
# the controller only and made the patched kernel GRUB's saved entry
older_site() {
	cat >"$dir/older-site.sh" <<'OLDER'
#!/bin/sh
set -eu
cfg=/boot/grub/grub.cfg
sub=$(sed -n "s/^submenu .*\$menuentry_id_option '\([^']*\)'.*/\1/p" $cfg | head -n 1)
id=$(grep -o "gnulinux-$1-advanced-[^']*" $cfg | head -n 1)
[ -n "$sub" ] || exit 1
[ -n "$id" ] || exit 1
grub-set-default "$sub>$id"
rm -r /var/lib/swapcache-ab-fleet
grub-editenv /boot/grub/grubenv list
OLDER
	ansible -i "$dir/inventory.ini" guest2 -b -m ansible.builtin.script -a "$dir/older-site.sh $release" >>"$dir/scenarios.log" 2>&1
}
removal() {
	rm "$dir/state/guest1".*
	if [ "$own_swap" = 1 ]; then
		older_site || die "could not make guest2 as an older site.yml left it: see $dir/scenarios.log"
	fi
	playbook remove fleet/remove.yml || return
	grep -q "guest1: records: host;" "$dir/remove.log" || die "remove.yml did not read guest1's records from guest1"
	if [ "$own_swap" = 1 ]; then
		grep -q "guest2: records: controller;" "$dir/remove.log" || die "remove.yml did not read guest2's records from the controller"
	fi
	# Each guest as remove.yml's own check says, read apart from it
	local i
	for i in $(seq "$guests"); do
		on_guest "guest$i" 'echo "kernel=$(uname -r)"; grub-editenv /boot/grub/grubenv list;
			dpkg-query -W -f="\${db:Status-Status} \${binary:Package}\n" | grep -c "^installed .*swapcache-ab" || true;
			! uname -r | grep -q swapcache-ab && ! grub-editenv /boot/grub/grubenv list | grep -q swapcache-ab &&
			! dpkg-query -W -f="\${db:Status-Status} \${binary:Package}\n" | grep -q "^installed .*swapcache-ab" &&
			[ ! -e /var/lib/swapcache-ab-fleet ]' ||
			die "guest$i runs a patched kernel, has one in GRUB's environment, keeps our packages or records after remove.yml: see $dir/scenarios.log"
	done
	log "remove.yml: guest1 from its own records$([ "$own_swap" = 0 ] || echo ", guest2 as an older site.yml left it"); every guest without our kernel, packages or records"
}
# A host whose preflight fails (guest1's /boot filled, now that it has
# nothing of ours): left out with the reason, nothing on it changed
full_boot() {
	local before after rc=0
	on_guest guest1 'free=$(df -P -k /boot | awk "NR == 2 { print \$4 }") &&
		fallocate -l $(((free - 100 * 1024) * 1024)) /boot/fleet-fill && df -h /boot' ||
		die "could not fill guest1's /boot: see $dir/scenarios.log"
	before=$(ansible -i "$dir/inventory.ini" guest1 -b -m ansible.builtin.shell \
		-a 'grub-editenv /boot/grub/grubenv list; ls /etc/default/grub.d /etc/apt/sources.list.d; dpkg-query -W | md5sum' 2>&1) ||
		die "guest1: $before"
	ansible-playbook -i "$dir/inventory.ini" -e "@$dir/vars.yml" \
		-e "fleet_results_dir=$results/full-boot" --limit guest1,localhost \
		--tags install fleet/site.yml >"$dir/full-boot.log" 2>&1 || rc=$?
	after=$(ansible -i "$dir/inventory.ini" guest1 -b -m ansible.builtin.shell \
		-a 'grub-editenv /boot/grub/grubenv list; ls /etc/default/grub.d /etc/apt/sources.list.d; dpkg-query -W | md5sum' 2>&1) ||
		die "guest1: $after"
	on_guest guest1 'rm /boot/fleet-fill' || die "could not empty guest1's /boot again: see $dir/scenarios.log"
	[ "$rc" = 0 ] || die "site.yml failed with a host left out by its preflight: see $dir/full-boot.log"
	grep -q "guest1 takes no part, nothing on it changed: .*/boot has [0-9]* MiB free" "$dir/full-boot.log" ||
		die "guest1 with a full /boot was not left out for it: see $dir/full-boot.log"
	[ "$(recap full-boot | awk '$1 == "guest1" { print $2 }')" = 0 ] || die "guest1 changed with a full /boot: see $dir/full-boot.log"
	[ "$before" = "$after" ] || die "guest1 changed with a full /boot: $before / $after"
	log "a full /boot: guest1 left out by the preflight, nothing on it changed"
}
if [ "${FLEET_REMOVE:-1}" = 1 ]; then
	step "remove.yml" removal
	step "full /boot" full_boot
fi

# The canary stop, on the guests remove.yml left as new: guest1's patched
# kernel made unbootable (fleet_break_new_kernel empties its initramfs, so
# it cannot find its root by UUID and panics), so GRUB's one-shot boot
# falls back to Debian's kernel.  The roll-out must fail on guest1 with
# "did not come back" and touch no other guest.
canary() {
	local rc=0 other status
	sed 's/^\(guest1 .*\)$/\1 fleet_break_new_kernel=true/' "$dir/inventory.ini" >"$dir/inventory-canary.ini"
	ansible-playbook -i "$dir/inventory-canary.ini" -e "@$dir/vars.yml" \
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
			-a "echo modules-status=\$(dpkg-query -W -f='\${db:Status-Status}' swapcache-ab-modules-$release 2>/dev/null || echo none)" 2>&1) ||
			die "guest$other cannot be reached after the canary failed: $status"
		[[ $status == *modules-status=* ]] || die "guest$other did not answer after the canary failed: $status"
		[[ $status != *modules-status=installed* ]] || die "guest$other has swapcache-ab-modules-$release installed after the canary failed"
	done
	log "canary: the roll-out stopped at guest1, back on its own kernel; guests 2-$guests untouched"
}
if [ "${FLEET_CANARY:-1}" = 1 ] && [ "${FLEET_REMOVE:-1}" = 1 ] && [ "$guests" -gt 1 ]; then
	step "canary stop" canary
fi
printf '%s\n' "${timings[@]}"
log "reports: $results/site-1/table.txt, $results/site-2/table.txt; logs: $dir/*.log"
