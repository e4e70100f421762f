#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A Debian 12 disk image for the fleet's guests, as a fresh fleet machine
# has it: debootstrap from Debian's archive with Debian's own kernel,
# systemd, an ssh server that takes the fleet key, python3 for Ansible,
# and GRUB installed on the disk.  No DKMS, compiler or headers: the
# module comes built, in its package, as a fleet host gets it.  GRUB goes on at a first
# boot of the image's own kernel (direct kernel boot), from inside the
# guest, on its real /dev/vda: no loop device or mount on the build host.
# python3-apt too: Ansible's apt module needs it, and would otherwise
# install it itself, after site.yml has recorded the host's packages.
#
# Cached: rebuilt only when this script or the key changes.  Prints the
# image's path (qcow2, the guests' backing file).
#
# Usage: fleet/image.sh
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

dir=$top/build/fleet
image=$dir/debian12.qcow2
key=$dir/id_ed25519
stamp=$image.stamp
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
packages=systemd-sysv,udev,dbus,kmod,procps,iproute2,openssh-server,python3,python3-apt,sudo,grub-pc,initramfs-tools,zstd,linux-image-amd64

mkdir -p "$dir"
[ -f "$key" ] || ssh-keygen -q -t ed25519 -N '' -C swapcache_ab-fleet -f "$key"
want=$(cat "$0" "$key.pub" | sha1sum)
if [ -f "$image" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	echo "$image"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "debootstrap needs root"

root=$dir/rootfs
rm -rf "$root" "$image" "$stamp"
log "debootstrap bookworm from $mirror into $root"
debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" \
	>"$dir/debootstrap.log" 2>&1 || { tail -20 "$dir/debootstrap.log"; die "debootstrap failed"; }

echo fleet >"$root/etc/hostname"
echo 'LABEL=fleetroot / ext4 errors=remount-ro 0 1' >"$root/etc/fstab"
cat >"$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb http://deb.debian.org/debian-security bookworm-security main
SOURCES
mkdir -p "$root/etc/systemd/network" "$root/root/.ssh"
printf '[Match]\nName=en*\n\n[Network]\nDHCP=ipv4\n' >"$root/etc/systemd/network/20-wired.network"
install -m 600 "$key.pub" "$root/root/.ssh/authorized_keys"
# The serial console is the guest's only screen; a short menu timeout
cat >>"$root/etc/default/grub" <<'GRUB'
GRUB_TIMEOUT=1
GRUB_CMDLINE_LINUX="console=ttyS0,115200"
GRUB_TERMINAL=serial
GRUB_SERIAL_COMMAND="serial --unit=0 --speed=115200"
GRUB
cat >"$root/etc/systemd/system/fleet-install-grub.service" <<'UNIT'
[Unit]
Description=Install GRUB on the fleet image's disk, then power off
ConditionPathExists=!/var/lib/fleet-grub-installed
After=local-fs.target

[Service]
Type=oneshot
ExecStart=/usr/sbin/grub-install --target=i386-pc /dev/vda
ExecStart=/usr/sbin/update-grub
ExecStart=/usr/bin/touch /var/lib/fleet-grub-installed
ExecStart=/usr/bin/systemctl --no-block poweroff
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
UNIT
chroot "$root" systemctl enable systemd-networkd ssh fleet-install-grub.service >>"$dir/debootstrap.log" 2>&1
chroot "$root" apt-get clean

vmlinuz=$(ls "$root"/boot/vmlinuz-* | head -1)
initrd=$(ls "$root"/boot/initrd.img-* | head -1)
[ -f "$vmlinuz" ] && [ -f "$initrd" ] || die "no kernel or initramfs in $root/boot"
cp "$vmlinuz" "$dir/first-boot-vmlinuz"
cp "$initrd" "$dir/first-boot-initrd"

# One partition at 1 MiB, the root file system made from the tree as it is
log "making the disk image"
raw=$dir/debian12.raw
rm -f "$raw" "$dir/root.ext4"
mkfs.ext4 -q -L fleetroot -d "$root" "$dir/root.ext4" 6G >&2
rm -rf --one-file-system "$root"
truncate -s $((6 * 1024 + 1))M "$raw"
echo 'start=2048, type=83, bootable' | sfdisk -q "$raw"
dd if="$dir/root.ext4" of="$raw" bs=1M seek=1 conv=notrunc,sparse status=none
rm -f "$dir/root.ext4"

log "first boot: installing GRUB from inside the guest"
accel=$(qemu_accel_args)
# shellcheck disable=SC2086 # the words of $accel
timeout 900 qemu-system-x86_64 $accel -m 1024 -smp 2 -nographic -no-reboot \
	-kernel "$dir/first-boot-vmlinuz" -initrd "$dir/first-boot-initrd" \
	-append "root=LABEL=fleetroot console=ttyS0 systemd.show_status=0" \
	-drive file="$raw",format=raw,if=virtio >"$dir/first-boot.log" 2>&1 ||
	{ tail -20 "$dir/first-boot.log"; die "the first boot failed or timed out"; }
grep -q 'Installation finished. No error reported' "$dir/first-boot.log" ||
	{ tail -20 "$dir/first-boot.log"; die "grub-install did not finish (see $dir/first-boot.log)"; }
qemu-img convert -O qcow2 "$raw" "$image"
rm -f "$raw"
echo "$want" >"$stamp"
log "fleet image: $image"
echo "$image"
