#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Local Debian 12 hosts for the fleet playbook: N QEMU guests (ACCEL=kvm
# where nested KVM works), each on
# a fresh copy-on-write overlay of fleet/image.sh's image (so each starts
# as a new machine on Debian's own kernel), with a 1 GB scratch disk as
# its swap device under test (/dev/vdb) and ssh on a loopback-forwarded
# port.  Writes the Ansible inventory build/fleet/inventory.ini: the last
# guest is left on Debian's kernel (fleet_install_kernel=false).
#
# Usage: fleet/guests.sh start N     (stops any started before)
#        fleet/guests.sh stop
# Environment: FLEET_SSH_PORT=2220 (guest i listens on FLEET_SSH_PORT+i),
#              FLEET_GUEST_MB=1536, FLEET_GUEST_CPUS=2
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

dir=$top/build/fleet
port0=${FLEET_SSH_PORT:-2220}
mem=${FLEET_GUEST_MB:-1536}
cpus=${FLEET_GUEST_CPUS:-2}
key=$dir/id_ed25519
inventory=$dir/inventory.ini

stop() {
	local pidfile pid
	for pidfile in "$dir"/guest*.pid; do
		[ -f "$pidfile" ] || continue
		pid=$(cat "$pidfile")
		# A stale pidfile may name another process by now
		if grep -qa fleet-guest "/proc/$pid/cmdline" 2>/dev/null && kill "$pid"; then
			# QEMU exits on SIGTERM at once; give it 10 s before SIGKILL
			for _ in $(seq 10); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
			kill -9 "$pid" 2>/dev/null || true
		fi
		rm -f "$pidfile"
	done
}

ssh_guest() { # port command...
	local port=$1
	shift
	ssh -q -i "$key" -p "$port" -o BatchMode=yes -o ConnectTimeout=5 \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null root@127.0.0.1 "$@"
}

start() {
	local n=$1 i port base accel deadline
	[[ $n =~ ^[1-9][0-9]?$ ]] || die "start N: N is the number of guests (1-99), not '$n'"
	accel=$(qemu_accel_args)
	base=$("$top/fleet/image.sh")
	stop
	{
		echo "# fleet/guests.sh start $n: local Debian 12 guests"
		echo "[fleet]"
	} >"$inventory"
	for i in $(seq "$n"); do
		port=$((port0 + i))
		rm -f "$dir/guest$i.qcow2" "$dir/guest$i-swap.raw" "$dir/guest$i.console"
		qemu-img create -q -f qcow2 -F qcow2 -b "$base" "$dir/guest$i.qcow2"
		truncate -s 1G "$dir/guest$i-swap.raw"
		# shellcheck disable=SC2086 # the words of $accel
		qemu-system-x86_64 $accel -m "$mem" -smp "$cpus" \
			-name "fleet-guest$i" -display none -daemonize -pidfile "$dir/guest$i.pid" \
			-serial "file:$dir/guest$i.console" \
			-drive "file=$dir/guest$i.qcow2,format=qcow2,if=none,id=root" \
			-device virtio-blk-pci,drive=root,bootindex=0 \
			-drive "file=$dir/guest$i-swap.raw,format=raw,if=none,id=test" \
			-device virtio-blk-pci,drive=test,serial=swapcache-ab-test \
			-nic "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:$port-:22" ||
			die "guest$i did not start"
		echo -n "guest$i ansible_host=127.0.0.1 ansible_port=$port" >>"$inventory"
		[ "$i" -lt "$n" ] || [ "$n" -eq 1 ] || echo -n " fleet_install_kernel=false" >>"$inventory"
		echo >>"$inventory"
	done
	cat >>"$inventory" <<VARS

[fleet:vars]
ansible_user=root
ansible_ssh_private_key_file=$key
ansible_ssh_common_args='-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null'
fleet_test_swap=/dev/disk/by-id/virtio-swapcache-ab-test
VARS
	# Under TCG, N guests share the host's cores: allow 10 minutes for all
	deadline=$((SECONDS + 600))
	for i in $(seq "$n"); do
		port=$((port0 + i))
		until ssh_guest "$port" true; do
			[ $SECONDS -lt $deadline ] ||
				die "guest$i: no ssh on port $port after 10 minutes (see $dir/guest$i.console)"
			sleep 2
		done
		log "guest$i up: ssh -p $port root@127.0.0.1, $(ssh_guest "$port" uname -r)"
	done
	echo "$inventory"
}

case ${1:-} in
start) start "${2:-}" ;;
stop) stop ;;
*) die "usage: fleet/guests.sh start N | stop" ;;
esac
