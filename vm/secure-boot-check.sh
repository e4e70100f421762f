#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fleet's Secure Boot chain in a QEMU guest under OVMF with Secure
# Boot on, its only trusted keys the fleet's image certificate and a module one (the image
# certificate as PK and KEK, both in db): the firmware must boot the
# kernel signed with the fleet's image key (vm/build-packages.sh with
# FLEET_IMAGE_KEY) and refuse it unsigned; the kernel, locked down, must
# load a module signed with a key in db (trusted through the platform
# keyring, where it loads db: the path of a single host's DKMS, whose own
# key the host enrols in MOK) and refuse the same module unsigned.  (A
# fleet's module package is signed with its kernel's built-in key, which
# needs no enrolment.)
#
#   boot 1, setup mode (no PK: nothing is checked): the guest writes db,
#     KEK and PK through efivarfs (efitools' authenticated lists), which
#     turns Secure Boot on in its variable store;
#   boot 2, the signed kernel: lockdown, the two modules;
#   boots 3 and 4, from a disk: the firmware must start the signed
#     kernel and not the unsigned one;
#   boots 5 and 6, a fleet host's chain from a disk: Debian's signed
#     shim (Microsoft's UEFI CA, which db gets too, signs it), Debian's
#     signed GRUB (shim trusts Debian's key), then the kernel, which
#     GRUB has shim verify: the signed kernel must boot as in boot 2,
#     the unsigned one must be refused.
#
# The db stands in for MOK: shim checks a kernel against db as against
# MOK, and the kernel loads both into the same platform keyring, but
# enrolling a MOK takes MokManager at the console, which this does not
# drive.
#
# Usage: vm/secure-boot-check.sh [IMAGE_DEB MODULE.ko]
#   IMAGE_DEB: a linux-image .deb whose kernel has the EFI stub and
#     Debian's platform keyring patch (the server kernel's); default
#     Debian 12's own kernel, its -unsigned image (apt-get download,
#     kept in build/secure-boot/), which make check runs;
#   MODULE.ko: a module for that kernel with no dependencies, signed or
#     not: it is stripped, then signed with a throwaway key made as DKMS
#     makes its own (its certificate in db); default the image's crc7.ko.
# Environment: FLEET_KEYS, the directory of vm/make-signing-key.sh's image
# key (default: a throwaway one made in the work directory; an encrypted
# one needs FLEET_KEY_PASSFILE), SB_WORK (default build/secure-boot).
# Prints TAP.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"

work=${SB_WORK:-$BUILD_DIR/secure-boot}
image_deb=${1:-} module=${2:-}
if [ -z "$image_deb" ]; then
	# Debian 12's kernel, as linux-image-amd64 names it
	image=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9.-]*-amd64\)$/\1/p' | head -1)
	[ -n "$image" ] || die "no linux-image-amd64 in apt's lists (apt-get update?)"
	mkdir -p "$work/debs"
	image_deb=$(find "$work/debs" -name "$image-unsigned_*.deb" | head -1)
	if [ -z "$image_deb" ]; then
		(cd "$work/debs" && apt-get download -q "$image-unsigned" >/dev/null 2>&1) ||
			die "apt-get download $image-unsigned"
		image_deb=$(find "$work/debs" -name "$image-unsigned_*.deb" | head -1)
	fi
fi
code=/usr/share/OVMF/OVMF_CODE_4M.secboot.fd
empty_vars=/usr/share/OVMF/OVMF_VARS_4M.fd
# OVMF's store with Microsoft's keys enrolled: where the UEFI CA that
# signs shim comes from
ms_vars=/usr/share/OVMF/OVMF_VARS_4M.ms.fd
# Debian's signed shim and GRUB, as a Debian host with Secure Boot boots:
# the versions apt would install now (an older download is replaced)
mkdir -p "$work/debs"
boot_debs=()
for p in shim-signed grub-efi-amd64-signed; do
	v=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^  Candidate: //p')
	[ -n "$v" ] && [ "$v" != "(none)" ] || die "no $p in apt's lists (apt-get update?)"
	deb=$work/debs/${p}_${v//:/%3a}_amd64.deb
	if [ ! -f "$deb" ]; then
		rm -f "$work/debs/${p}"_*.deb
		(cd "$work/debs" && apt-get download -q "$p=$v" >/dev/null 2>&1) && [ -f "$deb" ] ||
			die "apt-get download $p=$v"
	fi
	boot_debs+=("$deb")
done
for f in "$image_deb" "$code" "$empty_vars" "$ms_vars"; do
	[ -e "$f" ] || die "$f missing (ovmf: vm/install-deps.sh)"
done
command -v sign-efi-sig-list >/dev/null || die "no sign-efi-sig-list: vm/install-deps.sh (efitools)"

rm -rf "$work/run"
mkdir -p "$work/run"
run=$work/run
if [ -n "${FLEET_KEYS:-}" ]; then
	keys=$FLEET_KEYS
else
	keys=$work/keys
	export FLEET_KEY_THROWAWAY=1
fi
"$top/vm/make-signing-key.sh" "$keys" "swapcache_ab secure boot check" >/dev/null ||
	die "no fleet image key in $keys"
# sbsign and sign-efi-sig-list would ask for an encrypted key's passphrase
key=$(plain_key "$keys/image.pem" "$run")
# A stand-in for DKMS's own module key, made as dkms 3.0.10 makes it
module_key=$run/module.pem
openssl req -new -x509 -nodes -days 36500 -subj "/CN=DKMS module signing key" -newkey rsa:2048 \
	-keyout "$module_key" -out "$module_key.crt" >/dev/null 2>&1 && cat "$module_key.crt" >>"$module_key" ||
	die "openssl made no module key"
# kbuild's sign-file, from the source: a plain OpenSSL program
sign_file=$run/sign-file
gcc -O2 -o "$sign_file" "$SRC_DIR/scripts/sign-file.c" -lcrypto 2>"$run/sign-file.log" ||
	die "building scripts/sign-file: see $run/sign-file.log"

# The kernel, signed (unless the package's is already) and unsigned
# Only what the check reads: the image, its config and two modules (the
# whole package unpacks to about 450 MB)
mkdir -p "$run/pkg"
dpkg-deb --fsys-tarfile "$image_deb" |
	tar -x -C "$run/pkg" --wildcards './boot/*' '*/crc7.ko*' '*/efivarfs.ko*' ||
	die "unpacking $image_deb"
vmlinuz=$(find "$run/pkg/boot" -name 'vmlinuz-*' | head -1)
release=${vmlinuz##*/vmlinuz-}
[ -n "$release" ] || die "$image_deb has no /boot/vmlinuz-*"
if sbverify --cert "$key" "$vmlinuz" >/dev/null 2>&1; then
	cp "$vmlinuz" "$run/signed"
	sbattach --remove "$vmlinuz" >/dev/null 2>&1
	cp "$vmlinuz" "$run/unsigned"
	sbverify --list "$run/unsigned" 2>&1 | grep -q 'No signature table' ||
		die "$vmlinuz carries another signature besides the fleet's: pass the image unsigned"
	signed_by="the package"
else
	sbverify --list "$vmlinuz" 2>&1 | grep -q 'No signature table' || sbattach --remove "$vmlinuz"
	cp "$vmlinuz" "$run/unsigned"
	sbsign --key "$key" --cert "$key" --output "$run/signed" "$vmlinuz" >/dev/null ||
		die "sbsign $vmlinuz"
	signed_by="this check"
fi
sbverify --cert "$key" "$run/signed" >/dev/null 2>&1
tap_result $? "$release: the kernel signed with the fleet's image key (by $signed_by) verifies; a copy without signature"

[ -n "$module" ] || module=$(find "$run/pkg/lib/modules" -name crc7.ko | head -1)
[ -f "$module" ] || die "no module to load: ${module:-the image has no crc7.ko}"

# The module: stripped of any signature (objcopy keeps the ELF file only),
# and that signed with the stand-in for DKMS's key
# with the kernel's own hash, as DKMS signs (Debian's config builds SHA-512
# as a module, which a module signature cannot wait for)
hash=$(config_string "$run/pkg/boot/config-$release" CONFIG_MODULE_SIG_HASH)
objcopy "$module" "$run/unsigned.ko" && cp "$run/unsigned.ko" "$run/signed.ko" &&
	"$sign_file" "${hash:-sha256}" "$module_key" "$module_key" "$run/signed.ko"
[ $? -eq 0 ] && [ -z "$(modinfo -F signer "$run/unsigned.ko")" ] &&
	[ -n "$(modinfo -F signer "$run/signed.ko")" ]
tap_result $? "$(basename "$module"): a copy without signature, and one signed by '$(modinfo -F signer "$run/signed.ko" 2>/dev/null)'"
name=$(modinfo -F name "$module")
efivarfs=$(find "$run/pkg/lib/modules" -name 'efivarfs.ko*' | head -1)

# The variable store's keys: the image certificate as PK and KEK, both
# certificates and Microsoft's UEFI CA in db, each list signed with the image key (in setup mode
# the firmware takes them as they are), with efivarfs's 4-byte
# attributes in front: non-volatile, boot and runtime access, time-based
# authenticated write
guid=$(cat /proc/sys/kernel/random/uuid)
cert-to-efi-sig-list -g "$guid" "$key" "$run/image.esl" >/dev/null &&
	cert-to-efi-sig-list -g "$guid" "$module_key" "$run/modules.esl" >/dev/null ||
	die "cert-to-efi-sig-list"
# Microsoft's UEFI CA from OVMF's store: its EFI_CERT_X509 lists, each
# entry the owner's GUID and the DER certificate
/usr/bin/python3 - "$ms_vars" "$run/ms-uefi-ca.der" <<'MSCA' || die "no Microsoft UEFI CA in $ms_vars"
import struct, subprocess, sys, uuid
data = open(sys.argv[1], "rb").read()
x509 = uuid.UUID("a5c059a1-94e4-4aa7-87b5-ab155c2bf072").bytes_le
i = data.find(x509)
while i >= 0:
    size, header, entry = struct.unpack_from("<III", data, i + 16)
    for off in range(i + 28 + header, i + size - entry + 1, entry):
        der = data[off + 16:off + entry]
        subject = subprocess.run(["openssl", "x509", "-inform", "der", "-noout", "-subject"],
                                 input=der, capture_output=True).stdout.decode()
        if "CN = Microsoft Corporation UEFI CA 2011" in subject:
            open(sys.argv[2], "wb").write(der)
            sys.exit(0)
    i = data.find(x509, i + 16)
sys.exit(1)
MSCA
openssl x509 -inform der -in "$run/ms-uefi-ca.der" -out "$run/ms-uefi-ca.pem" &&
	cert-to-efi-sig-list -g 77fa9abd-0359-4d32-bd60-28f4e78f784b "$run/ms-uefi-ca.pem" "$run/ms.esl" >/dev/null ||
	die "cert-to-efi-sig-list: Microsoft's UEFI CA"
cat "$run/image.esl" "$run/modules.esl" "$run/ms.esl" >"$run/db.esl"
cp "$run/image.esl" "$run/KEK.esl"
cp "$run/image.esl" "$run/PK.esl"
for var in db KEK PK; do
	sign-efi-sig-list -k "$key" -c "$key" "$var" "$run/$var.esl" "$run/$var.auth" >/dev/null 2>&1 ||
		die "sign-efi-sig-list $var"
	{ printf '\047\000\000\000'; cat "$run/$var.auth"; } >"$run/$var.var"
done

# One initramfs for both boots: busybox, efivarfs, the keys, the modules,
# and an init that does what swapcache_ab.sb says
cat >"$run/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
for a in $(cat /proc/cmdline); do case $a in swapcache_ab.sb=*) job=${a#*=} ;; esac; done
say() { echo "SB-CHECK $*"; }
[ -e /efivarfs.ko ] && insmod /efivarfs.ko 2>/dev/null
mount -t efivarfs efivarfs /sys/firmware/efi/efivars
case $job in
enrol)
	# db, then KEK, then PK: writing PK leaves setup mode
	for v in db-d719b2cb-3d3a-4596-a3bc-dad00e67656f KEK-8be4df61-93ca-11d2-aa0d-00e098032b8c \
		PK-8be4df61-93ca-11d2-aa0d-00e098032b8c; do
		if dd if="/${v%%-*}.var" of="/sys/firmware/efi/efivars/$v" bs=1M 2>/dev/null; then
			say "enrolled ${v%%-*}"
		else
			say "FAILED to enrol ${v%%-*}"
		fi
	done
	;;
check)
	# efivarfs: 4 bytes of attributes, then the value
	sb=$(dd if=/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c bs=1 skip=4 count=1 2>/dev/null |
		od -An -t u1 | tr -d ' ')
	say "secureboot $sb"
	say "lockdown $(cat /sys/kernel/security/lockdown 2>&1)"
	out=$(insmod /unsigned.ko 2>&1) && say "unsigned loaded" || say "unsigned refused: $out"
	[ -d /sys/module/MODNAME ] && rmmod MODNAME
	out=$(insmod /signed.ko 2>&1) && say "signed loaded" || say "signed refused: $out"
	dmesg | grep -i -E 'keyring|X.509|secure ?boot|lockdown|module|sig|key' | sed 's/^/SB-CHECK dmesg /'
	;;
esac
say "done"
poweroff -f
INIT
sed -i "s/MODNAME/$name/g" "$run/init"
gen=$(gen_init_cpio) || exit 1
{
	for d in /bin /dev /proc /sys /tmp; do echo "dir $d 0755 0 0"; done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "file /bin/busybox /bin/busybox 0755 0 0"
	echo "slink /bin/sh busybox 0777 0 0"
	echo "file /init $run/init 0755 0 0"
	for v in db KEK PK; do echo "file /$v.var $run/$v.var 0644 0 0"; done
	echo "file /unsigned.ko $run/unsigned.ko 0644 0 0"
	echo "file /signed.ko $run/signed.ko 0644 0 0"
	[ -n "$efivarfs" ] && echo "file /efivarfs.ko $efivarfs 0644 0 0"
} >"$run/initramfs.list"
"$gen" "$run/initramfs.list" | gzip -1 >"$run/initramfs.cpio.gz" || die "initramfs"

cp "$empty_vars" "$run/vars.fd"
# The guest every boot runs: OVMF's Secure Boot build (SMM), this run's
# variable store
ovmf_guest=(qemu-system-x86_64 -machine "q35,smm=on" -accel tcg -m 1024M -smp 1
	-global "driver=cfi.pflash01,property=secure,value=on"
	-drive "if=pflash,format=raw,unit=0,file=$code,readonly=on"
	-drive "if=pflash,format=raw,unit=1,file=$run/vars.fd"
	-display none -monitor none -no-reboot -nodefaults)
boot() { # kernel job seconds
	timeout "$3" "${ovmf_guest[@]}" \
		-kernel "$1" -initrd "$run/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 quiet loglevel=4 swapcache_ab.sb=$2" \
		-serial "file:$run/console-$2-$(basename "$1").log" </dev/null
}
log "boot 1: setup mode, enrolling the fleet's certificate"
boot "$run/unsigned" enrol 600
c=$run/console-enrol-unsigned.log
[ "$(grep -c 'SB-CHECK enrolled' "$c")" = 3 ]
tap_result $? "setup mode: db, KEK and PK enrolled through efivarfs: $(grep -o 'SB-CHECK .*enrol.*' "$c" | tr '\n' ' ')"

log "boot 2: Secure Boot on, the signed kernel"
boot "$run/signed" check 600
c=$run/console-check-signed.log
grep -q 'SB-CHECK secureboot 1' "$c"
tap_result $? "the firmware booted the signed kernel with Secure Boot on: $(grep -o 'SB-CHECK secureboot.*' "$c" || echo 'no guest output')"
grep -q 'SB-CHECK lockdown .*\[integrity\]\|^SB-CHECK lockdown .*\[confidentiality\]' "$c"
tap_result $? "locked down: $(grep -o 'SB-CHECK lockdown.*' "$c")"
grep -q 'SB-CHECK unsigned refused: .*Key was rejected by service' "$c"
tap_result $? "the module without signature is refused: $(grep -o 'SB-CHECK unsigned.*' "$c")"
grep -q 'SB-CHECK signed loaded' "$c"
tap_result $? "the module signed with a key in db loads: $(grep -o 'SB-CHECK signed.*' "$c")"
grep 'SB-CHECK dmesg' "$c" | sed 's/^SB-CHECK dmesg/#/'

# The firmware's own check: QEMU's -kernel goes around it (OVMF started
# the unsigned kernel that way too), so the kernel boots as a fleet's
# does, an EFI application on a disk (\EFI\BOOT\BOOTX64.EFI on a FAT
# disk QEMU makes from a directory).  With no command line it gets no
# further than its EFI stub's messages, which are all this looks for:
# the stub says it started under Secure Boot, or the firmware's boot
# manager says it refused to load it
esp_boot() { # esp console seconds pattern: boot the guest from the ESP
	# directory until its console shows the pattern, it exits, or time is up
	local pid i
	"${ovmf_guest[@]}" -drive "if=none,id=esp,format=raw,readonly=on,file=fat:$1" \
		-device virtio-blk-pci,drive=esp -serial "file:$2" </dev/null 2>>"$run/qemu.log" &
	pid=$!
	for ((i = 0; i < $3; i++)); do
		grep -q "$4" "$2" 2>/dev/null && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
from_disk() { # kernel seconds: prints the stub's first message or the refusal
	local name esp c
	name=$(basename "$1")
	esp=$run/esp-$name c=$run/console-disk-$name.log
	mkdir -p "$esp/EFI/BOOT"
	cp "$1" "$esp/EFI/BOOT/BOOTX64.EFI"
	esp_boot "$esp" "$c" "$2" 'EFI stub\|No bootable option'
	tr -d '\r' <"$c" | grep -a -o -m1 'EFI stub.*\|BdsDxe: failed to load Boot0001.*'
}
log "boot 3: the signed kernel from a disk"
stub=$(from_disk "$run/signed" 180)
[[ $stub == *'Secure Boot is enabled'* ]]
tap_result $? "the firmware starts the signed kernel from a disk: '${stub:-nothing printed}'"
log "boot 4: the kernel without signature from a disk"
stub=$(from_disk "$run/unsigned" 180)
[[ $stub == 'BdsDxe: failed to load'*'Access Denied' ]]
tap_result $? "the firmware refuses the kernel without signature: '${stub:-nothing printed in 180 s}'"

# shim, then GRUB from \EFI\BOOT beside it (shim's second stage,
# grubx64.efi), whose built-in configuration reads grub.cfg from there;
# GRUB's linux command has shim verify the kernel
for deb in "${boot_debs[@]}"; do
	dpkg-deb -x "$deb" "$run/boot-pkgs" || die "unpacking $deb"
done
through_shim() { # kernel seconds: the guest's SB-CHECK lines, shim's and GRUB's errors
	local name esp c
	name=$(basename "$1")
	esp=$run/shim-esp-$name c=$run/console-shim-$name.log
	mkdir -p "$esp/EFI/BOOT" "$esp/sb"
	cp "$run/boot-pkgs/usr/lib/shim/shimx64.efi.signed" "$esp/EFI/BOOT/BOOTX64.EFI"
	cp "$run/boot-pkgs/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed" "$esp/EFI/BOOT/grubx64.efi"
	cp "$1" "$esp/sb/vmlinuz"
	cp "$run/initramfs.cpio.gz" "$esp/sb/initrd"
	cat >"$esp/EFI/BOOT/grub.cfg" <<-GRUB
		set timeout=0
		search --no-floppy --file --set=root /sb/vmlinuz
		echo "SB-CHECK grub: loading $name"
		linux /sb/vmlinuz console=ttyS0 panic=-1 quiet loglevel=4 swapcache_ab.sb=check
		initrd /sb/initrd
		boot
		echo "SB-CHECK grub: did not boot $name"
	GRUB
	esp_boot "$esp" "$c" "$2" 'SB-CHECK done\|SB-CHECK grub: did not boot\|No bootable option'
	tr -d '\r' <"$c" | grep -a -o 'SB-CHECK .*\|error: .*\|Verification failed.*\|.*Security Violation.*'
}
log "boot 5: shim, GRUB, the signed kernel"
out=$(through_shim "$run/signed" 600)
grep -q 'SB-CHECK grub: loading signed' <<<"$out" && grep -q 'SB-CHECK secureboot 1' <<<"$out" &&
	grep -q 'SB-CHECK lockdown .*\[\(integrity\|confidentiality\)\]' <<<"$out" &&
	grep -q 'SB-CHECK signed loaded' <<<"$out" &&
	grep -q 'SB-CHECK unsigned refused: .*Key was rejected by service' <<<"$out"
tap_result $? "Debian's shim and GRUB boot the signed kernel, locked down, the signed module loads and the unsigned one does not: $(grep -v dmesg <<<"$out" | tr '\n' ' ' | cut -c1-300)"
log "boot 6: shim, GRUB, the kernel without signature"
out=$(through_shim "$run/unsigned" 600)
grep -q 'SB-CHECK grub: loading unsigned' <<<"$out" && grep -q 'error: bad shim signature' <<<"$out" &&
	grep -q 'SB-CHECK grub: did not boot' <<<"$out" && ! grep -q 'SB-CHECK secureboot' <<<"$out"
tap_result $? "GRUB, through shim, refuses the kernel without signature: $(tr '\n' ' ' <<<"$out" | cut -c1-300)"
exit $((tap_failed > 0))
