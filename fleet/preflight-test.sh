#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The host preflight (roles/swapcache_ab/tasks/host-preflight.yml) against
# this machine, through Ansible's local connection, as root: once as it
# is (it must leave the host in, change nothing), then once per check with
# that check broken on purpose, each of which must leave the host out
# naming that check.  Nothing on the machine changes: each case runs in a
# mount namespace of its own (unshare -m), where what it breaks is mounted
# over the real thing (a copy of /var/lib/dpkg with a lock held or a
# half-configured package, a /proc/swaps naming another swap device, a
# read-only or tmpfs GRUB directory); the test device is a loop device on
# a 64 MiB file, named through a /dev/disk/by-id/ link that goes with it;
# apt's package lists an empty tmpfs, and e2fsprogs taken out of the dpkg
# copy, for a host whose sources lack what our packages need.
# Stand-ins in a PATH of its own for what a Debian host has and this
# machine may not: grub-editenv (grub-common), and dkms where a case adds
# another module.  Prints one line per case and "N cases, M wrong"; exit
# 1 if any case was wrong.
#
# Usage: fleet/preflight-test.sh   (root; losetup, unshare, mkfs.ext4,
# wipefs; dmsetup where the kernel has device-mapper)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "preflight-test.sh: run as root" >&2; exit 2; }
work=$(mktemp -d /tmp/swapcache-ab-preflight.XXXXXX)
loop='' dm='' made=''
cleanup() {
	[ -z "$dm" ] || dmsetup remove "$dm" || true
	[ -z "$loop" ] || losetup -d "$loop" || true
	rm -f "/dev/disk/by-id/swapcache-ab-preflight-${work##*.}"
	# (the directories too, where this made them: a container has none)
	[ -z "$made" ] || rmdir /dev/disk/by-id /dev/disk 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

release=6.12.118-swapcache-ab1-server
truncate -s 64M "$work/disk.img"
loop=$(losetup -f --show "$work/disk.img")
[ -d /dev/disk/by-id ] || made=1
mkdir -p /dev/disk/by-id
byid=/dev/disk/by-id/swapcache-ab-preflight-${work##*.}
ln -s "$loop" "$byid"

mkdir -p "$work/bin" "$work/boot/grub" "$work/pb"
printf '#!/bin/sh\n[ "$2" = list ] || exit 2\ngrep -v "^#" "$1" || true\n' >"$work/bin/grub-editenv"
printf '# GRUB Environment Block\nsaved_entry=0\n' >"$work/boot/grub/grubenv"
# Debian's menu as 10_linux writes it: the running kernel in the submenu
cat >"$work/boot/grub/grub.cfg" <<EOF
submenu 'Advanced options for Debian GNU/Linux' \$menuentry_id_option 'gnulinux-advanced-u1' {
	menuentry 'Debian GNU/Linux, with Linux $(uname -r)' \$menuentry_id_option 'gnulinux-$(uname -r)-advanced-u1' {
	}
}
EOF
chmod +x "$work/bin/grub-editenv"
cat >"$work/pb/ansible.cfg" <<EOF
[defaults]
roles_path = $top/fleet/roles
stdout_callback = default
interpreter_python = /usr/bin/python3
retry_files_enabled = False
EOF
cat >"$work/pb/pf.yml" <<EOF
- name: Host preflight
  hosts: all
  gather_facts: false
  vars_files: $top/fleet/paths.yml
  tasks:
    - name: Host preflight
      ansible.builtin.import_role:
        name: swapcache_ab
        tasks_from: host-preflight
    - name: Result
      ansible.builtin.debug:
        msg: "LEFT_OUT={{ fleet_left_out | default('none') }}"
EOF

cases=0 wrong=0
# run NAME WANT SETUP [ansible-playbook args]: SETUP runs in the case's
# mount namespace first; WANT is "in" or a string the reason must hold
run() {
	local name=$1 want=$2 setup=$3 out got recap
	shift 3
	out=$(PATH="$work/bin:$PATH" ANSIBLE_CONFIG=$work/pb/ansible.cfg ANSIBLE_NOCOLOR=1 \
		unshare -m --propagation private bash -c "$setup"'
		exec ansible-playbook -i localhost, -c local "$@"' _ "$work/pb/pf.yml" \
		-e "fleet_release=$release" -e "fleet_test_swap=$byid" -e fleet_module_signer= \
		-e "fleet_grub_cfg=$work/boot/grub/grub.cfg" "$@" 2>&1) || true
	got=$(sed -n 's/.*"msg": "LEFT_OUT=\(.*\)"$/\1/p' <<<"$out")
	recap=$(grep -o 'changed=[0-9]*' <<<"$out" | head -n 1) || true
	cases=$((cases + 1))
	if { [ "$want" = in ] && [ "$got" = none ]; } || { [ "$want" != in ] && [[ $got == *"$want"* ]]; }; then
		[ "$recap" = changed=0 ] || { echo "WRONG $name: $recap"; wrong=$((wrong + 1)); return; }
		echo "ok $name: ${got:0:160}"
	else
		echo "WRONG $name: wanted ${want}, got '${got:-$(tail -n 5 <<<"$out")}'"
		wrong=$((wrong + 1))
	fi
}
fake_dpkg="cp -a /var/lib/dpkg $work/dpkg.\$\$ && mount --bind $work/dpkg.\$\$ /var/lib/dpkg"
swaps() { echo "printf 'Filename Type Size Used Priority\n%s partition 1024 0 -2\n' $1 >$work/swaps.\$\$ && mount --bind $work/swaps.\$\$ /proc/swaps"; }

run "as it is" in ":"
run "distribution" "supported Debian release" ":" -e '{"fleet_supported_os": ["debian 13"]}'
run "architecture" "supported Debian release" ":" -e fleet_arch=arm64
run "/boot space" "/boot has room" ":" -e fleet_boot_free_mib=100000000
cp "$work/boot/grub/grub.cfg" "$work/grub.cfg"
run "GRUB on tmpfs" "GRUB can write its environment" "mount -t tmpfs none $work/boot/grub && cp $work/grub.cfg $work/boot/grub/"
printf '#!/bin/sh\ncase " $* " in *" -s "*) printf "lvm\\ndisk\\n" ;; *) exec /usr/bin/lsblk "$@" ;; esac\n' >"$work/lsblk-lvm"
chmod +x "$work/lsblk-lvm"
run "GRUB over LVM (an lsblk stand-in says so)" "GRUB can write its environment" "touch $work/bin/lsblk && mount --bind $work/lsblk-lvm $work/bin/lsblk"
rm -f "$work/bin/lsblk"
run "GRUB's menu without the running kernel" "GRUB's menu has the running kernel" "mount --bind /dev/null $work/boot/grub/grub.cfg"
run "GRUB read-only" "GRUB can write its environment" "mount --bind -o ro $work/boot/grub $work/boot/grub"
run "GRUB without grub-editenv" "grub-editenv reads it" "mount --bind /dev/null $work/bin/grub-editenv"
# (the holder sleeps in the case's namespace, on the copy's lock)
run "dpkg lock held" "apt and dpkg are free" "$fake_dpkg"' && { python3 -c "import fcntl, os, time
fd = os.open(\"/var/lib/dpkg/lock-frontend\", os.O_RDWR | os.O_CREAT); fcntl.lockf(fd, fcntl.LOCK_EX); time.sleep(20)" & } && sleep 2'
run "dpkg half-configured" "apt and dpkg are free" "$fake_dpkg"' && sed -i "0,/^Status: install ok installed/s//Status: install ok half-configured/" /var/lib/dpkg/status'
# What the module package and swapcache-ab-bench depend on, as preflight.yml
# reads it from the .debs (the module package's one dependency, the
# patched kernel's image, is ours); the broken host has no package lists
# and no e2fsprogs
depends='{"fleet_depends_ours": ["kmod", "mount", "e2fsprogs", "python3", "libc6 (>= 2.34)"]}'
printf '%s\n' '#!/usr/bin/python3' 'import re, sys' 'p = open(sys.argv[1]).read().split("\n\n")' \
	'open(sys.argv[1], "w").write("\n\n".join(s for s in p if not re.match(r"Package: e2fsprogs\n", s)))' >"$work/drop-e2fsprogs"
chmod +x "$work/drop-e2fsprogs"
run "dependencies installable" in ":" -e "$depends"
run "dependencies without package lists or e2fsprogs" "apt can install them" \
	"$fake_dpkg"' && '"$work/drop-e2fsprogs"' /var/lib/dpkg/status && mount -t tmpfs none /var/lib/apt/lists' -e "$depends"
printf '#!/bin/sh\necho "zfs/2.1.11, 6.1.0-18-amd64, x86_64: installed"\n' >"$work/dkms-other"
printf '#!/bin/sh\necho "zfs/2.1.11, 6.1.0-18-amd64, x86_64: installed"\necho "zfs/2.1.11, %s, x86_64: installed"\n' "$release" >"$work/dkms-ready"
chmod +x "$work/dkms-other" "$work/dkms-ready"
run "other DKMS module" "every other DKMS module" "touch $work/bin/dkms && mount --bind $work/dkms-other $work/bin/dkms"
run "other DKMS module built for the kernel" in "touch $work/bin/dkms && mount --bind $work/dkms-ready $work/bin/dkms"
rm -f "$work/bin/dkms"
run "host's own swap" "host's own swap" "$(swaps /dev/vda9)"
run "host's own swap, other_swap=off" in "$(swaps /dev/vda9)" -e fleet_other_swap=off
run "test device not by-id" "named by /dev/disk/by-id/" ":" -e "fleet_test_swap=$loop"
run "test device missing" "no block device" ":" -e "fleet_test_swap=/dev/disk/by-id/swapcache-ab-no-such-disk"
run "test device swapped on" "swap: on" "$(swaps "$byid")"
mkfs.ext4 -q -F "$loop"
run "test device mounted" "is in use: mounted: " "mkdir -p $work/mnt && mount $loop $work/mnt"
run "test device holds a file system" "holds TYPE=ext4" ":"
run "test device holds a file system, wipe" in ":" -e fleet_wipe_test_swap=true
# Held by a device-mapper device, where the kernel has device-mapper
if dmsetup version >/dev/null 2>&1; then
	dm=swapcache-ab-preflight-${work##*.}
	dmsetup create "$dm" --table "0 $((64 * 2048)) linear $loop 0"
	run "test device held (dm)" "is in use: holders: dm-" ":"
	dmsetup remove "$dm"
	dm=''
else
	echo "SKIP test device held (dm): no device-mapper in this kernel (not counted)"
fi
wipefs -q -a "$loop"
# A DOS partition table: one partition, the boot signature
/usr/bin/python3 -c "import sys, struct
with open(sys.argv[1], 'r+b') as f:
    f.seek(446); f.write(bytes([0, 0, 0, 0, 0x83, 0, 0, 0]) + struct.pack('<II', 2048, 4096))
    f.seek(510); f.write(b'\x55\xaa')" "$loop"
run "test device holds a partition table" "holds PTTYPE=dos" ":"
wipefs -q -a "$loop"
run "test device blank again" in ":"
echo "$cases cases, $wrong wrong"
[ "$wrong" -eq 0 ]
