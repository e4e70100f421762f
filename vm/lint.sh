#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make lint: review hygiene, as TAP.
#  - scripts/checkpatch.pl --strict on every patch of core-patch/$KVER/ and
#    on the module's files: zero errors, warnings and checks;
#  - the hook patches (2 on) add at most $HOOK_BUDGET lines outside
#    Documentation/ (kernel-doc comments aside),
#    and patch 1, which routes the swap cache index through
#    swap_cache_index() for them, adds no hook;
#  - the hook interface (its header) is the one core-patch/hook-abi
#    records for dkms.conf's SWAPCACHE_AB_HOOK_ABI;
#  - sparse (C=2) on the module: zero warnings;
#  - sparse on the core files the series touches: no warning that the same
#    files do not already have in stock $KVER (mainline's own sparse
#    warnings in mm/ are not ours to fix here);
#  - shellcheck -S warning on every shell script: none;
#  - file modes: executable where a #! line runs the file, and only there;
#  - the server kernel's config keeps what a server needs (and the check
#    names each of those options taken away).
# Needs the patched and stock trees prepared, with the same (plain) config:
# vm/build-kernel.sh patched prepare; vm/build-kernel.sh stock prepare.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
cd "$top" || exit 1

tap_numbered=1
checkpatch() { # checkpatch arguments...
	local out
	out=$(cd /tmp && "$SRC_DIR/scripts/checkpatch.pl" --strict --no-tree "$@" 2>&1)
	grep -qE '^total: 0 errors, 0 warnings, 0 checks' <<<"$out" && return 0
	grep -E '^(ERROR|WARNING|CHECK)' -A3 <<<"$out" | sed 's/^/# /'
	return 1
}

series=$(cat "$SERIES_DIR/series")
for p in $series; do
	checkpatch "$SERIES_DIR/$p"
	tap_result $? "checkpatch --strict: core-patch/$KVER/$p"
done
for f in module/*.[ch] selftests/test_modules/*.c; do
	case $f in *.mod.c) continue ;; esac
	checkpatch -f "$top/$f"
	tap_result $? "checkpatch --strict: $f"
done

# Hook points only: the budget of lines the hook patches add to the kernel,
# counted as the cover letter counts them (every + line of a diff outside
# Documentation/, file headers and kernel-doc comments aside; the cover
# letter states the kernel-doc lines on their own).  The budget leaves
# room for one check per statement, as linux-mm asks.  Patch 1 converts
# the index sites the key hook needs (3 lines on 6.12, 29 on 6.1, which
# has no swap_cache_index()): it is counted apart and must add no hook.
added_lines() { # patch
	awk '/^diff --git / { indiff = 1; doc = ($3 ~ /^a\/Documentation\//); kdoc = 0 }
	     indiff && !doc && /^\+/ && !/^\+\+\+ / {
		if (/^\+[ \t]*\/\*\*([ \t]|$)/) kdoc = 1
		if (!kdoc) n++
		if (kdoc && /\*\/[ \t]*$/) kdoc = 0
	     } END { print n + 0 }' "$SERIES_DIR/$1"
}
HOOK_BUDGET=200
read -r first _ <<<"$series"
if [ -z "$first" ] || [ ! -f "$SERIES_DIR/$first" ]; then
	tap_result 1 "core-patch/$KVER/series names its patches (first: '$first')"
else
	added=0
	for p in $series; do
		[ "$p" = "$first" ] || added=$((added + $(added_lines "$p")))
	done
	tap_result $(( added > HOOK_BUDGET )) \
		"core-patch/$KVER hook patches add $added lines outside Documentation/ (at most $HOOK_BUDGET)"
	# Patch 1 converts call sites and may add helpers, not hook code
	hooks=$(grep -ci '^+.*swapcache_ab' "$SERIES_DIR/$first")
	first_added=$(added_lines "$first")
	tap_result $(( hooks > 0 || first_added > 40 )) \
		"core-patch/$KVER/$first adds no hook ($hooks lines name swapcache_ab) in $first_added lines (at most 40)"
fi

# The hook interface's number (dkms.conf's SWAPCACHE_AB_HOOK_ABI, in the
# release of every hooked kernel) moves with the interface: the header the
# series makes (the ops' layout, the hooks' signatures), whose hash
# core-patch/hook-abi records for that number.  An export that went away
# needs no number: the module would not load (unknown symbol)
# core-patch/hook-abi keeps every number's hash, one line each in order:
# numbers increasing, no hash twice (an interface that changed back is
# a new number still), the last line the current one
abi=$(hook_abi)
history=$(grep -v '^#' core-patch/hook-abi)
read -r abi_recorded hash_recorded < <(tail -n 1 <<<"$history")
hash=$(sha256sum <"$SRC_DIR/include/linux/swapcache_ab.h" | cut -d' ' -f1)
[ -n "$abi" ] && [ "$abi" = "$abi_recorded" ] && [ "$hash" = "$hash_recorded" ] &&
	awk '$1 !~ /^[0-9]+$/ || $1 <= last || seen[$2]++ { bad = 1 } { last = $1 } END { exit bad }' <<<"$history"
rc=$?
[ $rc -eq 0 ] || sed 's/^/# /' <<<"dkms.conf: SWAPCACHE_AB_HOOK_ABI=$abi; core-patch/hook-abi's last: $abi_recorded $hash_recorded; the interface now: $hash.
A changed interface takes a new number: bump SWAPCACHE_AB_HOOK_ABI and add a line with it and the new hash."
tap_result $rc "hook interface $abi (include/linux/swapcache_ab.h) is core-patch/hook-abi's: ${hash:0:12}"

# The object alone: a prepared tree is enough, no modpost
out=$(make -s -C "$KERNEL_DIR" M="$top" C=2 CHECK="sparse -Wno-decl" module/swapcache_ab.o 2>&1)
warnings=$(grep -cE ': (warning|error):' <<<"$out")
grep -E ': (warning|error):' <<<"$out" | sed 's/^/# /'
tap_result $(( warnings > 0 )) "sparse: module, $warnings warnings"

core_files=$(grep -h '^+++ b/' "$SERIES_DIR"/0*.patch | sed 's|^+++ b/||' | grep '\.c$' | sort -u)
sparse_core() { # source dir, object dir
	local objs f
	# Files the series adds are not in the stock tree
	objs=$(for f in $core_files; do [ -f "$1/$f" ] && echo "${f%.c}.o"; done)
	# $objs must split into words
	# shellcheck disable=SC2086
	make -s -C "$1" O="$2" C=2 $objs 2>&1 | grep -E ': (warning|error):' |
		sed -E 's/:[0-9]+:[0-9]+:/:/' | sed "s|$1/||" | sort -u
}
new=$(comm -13 <(sparse_core "$STOCK_SRC_DIR" "$STOCK_KERNEL_DIR" | grep -v swapcache_ab) \
	<(sparse_core "$SRC_DIR" "$KERNEL_DIR"))
[ -n "$new" ] && sed 's/^/# /' <<<"$new"
[ -z "$new" ]
tap_result $? "sparse: no new warnings in $(wc -w <<<"$core_files") touched core files"

# Every shell script the tree has, through shellcheck at warning level:
# *.sh, and the files whose #! line runs sh, bash or dash (.shellcheckrc:
# it follows vm/lib.sh from the scripts that source it)
shell_scripts() {
	local f
	{ git ls-files 2>/dev/null || find . -path ./build -prune -o -type f -print; } |
	while read -r f; do
		f=${f#./}
		case $f in
		*.sh) echo "$f" ;;
		*) [ -f "$f" ] && head -n 1 "$f" | grep -qE '^#! *(/usr)?/bin/(env +)?(ba|da)?sh( |$)' &&
			echo "$f" ;;
		esac
	done
}
if command -v shellcheck >/dev/null; then
	mapfile -t scripts < <(shell_scripts)
	out=$(shellcheck -S warning -f gcc "${scripts[@]}" 2>&1)
	rc=$?
	[ -z "$out" ] || sed 's/^/# /' <<<"$out"
	tap_result $rc "shellcheck -S warning: ${#scripts[@]} shell scripts, $(grep -c ': \(warning\|error\):' <<<"$out") warnings or errors"
else
	tap_result 1 "shellcheck installed (vm/install-deps.sh)"
fi

# Modes that match use, as git records them: a file with a #! line is run,
# and executable; one without (vm/lib.sh, sourced) is not
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	modes=$(git ls-files -s | while read -r mode _ _ f; do
		[ "$mode" = 100644 ] || [ "$mode" = 100755 ] || continue
		if [ "$(head -c 2 "$f")" = '#!' ]; then
			[ "$mode" = 100755 ] || echo "$f: a #! line, not executable"
		else
			[ "$mode" = 100644 ] || echo "$f: executable, no #! line"
		fi
	done)
	[ -z "$modes" ] || sed 's/^/# /' <<<"$modes"
	[ -z "$modes" ]
	tap_result $? "file modes: executable where a #! line runs the file, and only there"
fi

# Commit subjects, as CONTRIBUTING.md asks: `area: summary`, at most 72
# characters, the area one of its table's or a file or folder the commit
# touches, extension optional (`bench/report.py`, `vm/mutants`); a
# revert's is the reverted subject in `Revert "..."`.  From
# SUBJECTS_SINCE on: the history before it keeps the spellings it has.
SUBJECTS_SINCE=a34895e4be9dd4d8b623f687f3c15ff460baa683
subject_ok() { # subject, the paths its commit touches (one per line)
	local s=$1 area
	[ ${#s} -le 72 ] || return 1
	[[ $s =~ ^Revert\ \"(.*)\"$ ]] && s=${BASH_REMATCH[1]}
	[[ $s =~ ^([^\ :,]+):\ [^\ ] ]] || return 1
	area=${BASH_REMATCH[1]}
	grep -qxF "$area" <<<"$areas" && return 0
	awk -v a="$area" 'index($0, a) == 1 && substr($0, length(a) + 1, 1) ~ /^([.\/]|)$/ { f = 1 } END { exit !f }' <<<"$2"
}
areas=$(sed -n 's/^| `\([^`]*\)` |.*/\1/p' CONTRIBUTING.md)
if git rev-parse -q --verify "$SUBJECTS_SINCE^{commit}" >/dev/null; then
	# The rule on subjects it must refuse and take, first
	! subject_ok "lint: a prefix CONTRIBUTING.md names as wrong" vm/lint.sh &&
		! subject_ok "bench, vm: two areas joined" bench/bench &&
		! subject_ok "vm/lint: $(printf '%070d' 0)" vm/lint.sh &&
		! subject_ok "bench/report.py: an area the commit does not touch" bench/bench &&
		subject_ok "vm/lint: an area that is a file, extension left out" vm/lint.sh &&
		subject_ok "Revert \"ci: a table area\"" .ci/run
	tap_result $? "commit subjects: the rule refuses a wrong prefix, two areas, 73 characters, an untouched file"
	commits=$(git log --no-merges --format='%h %s' "$SUBJECTS_SINCE..HEAD")
	bad=$(while IFS= read -r line; do
		[ -n "$line" ] || continue
		c=${line%% *}
		subject_ok "${line#* }" "$(git diff-tree --no-commit-id --name-only -r "$c")" || echo "$line"
	done <<<"$commits")
	[ -z "$bad" ] || sed 's/^/# /' <<<"$bad"
	tap_result "$([ -z "$bad" ]; echo $?)" "commit subjects since ${SUBJECTS_SINCE:0:7}: $(grep -c . <<<"$commits") follow CONTRIBUTING.md"
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	tap_result 1 "commit subjects: ${SUBJECTS_SINCE:0:7} is not in this clone's history (shallow?)"
fi

# The server kernel's configuration (fleet/server.config on Debian's own
# config, through olddefconfig as vm/build-kernel.sh server makes it):
# what a server boots, stores and is reached on stays, whatever the trims.
# "y": built in; "ym": built in or a module; "n": off
SERVER_NEEDS="y:EFI y:EFI_STUB y:BLK_DEV_INITRD y:MODULES y:MODULE_SIG y:MODULE_SIG_ALL
	y:SWAP y:MEMCG y:SWAPCACHE_AB_HOOKS y:DEBUG_INFO_NONE n:MODULE_FORCE_UNLOAD
	ym:VIRTIO_PCI ym:VIRTIO_BLK ym:VIRTIO_NET ym:SCSI_VIRTIO
	ym:BLK_DEV_NVME ym:SATA_AHCI ym:SCSI ym:BLK_DEV_SD ym:MEGARAID_SAS ym:SCSI_MPT3SAS
	ym:BLK_DEV_DM ym:DM_CRYPT ym:BLK_DEV_MD ym:MD_RAID1 ym:MD_RAID456 ym:EXT4_FS ym:XFS_FS
	ym:E1000E ym:IGB ym:IXGBE ym:I40E ym:ICE ym:BNXT ym:TIGON3 ym:MLX5_CORE
	ym:BONDING ym:VLAN_8021Q ym:DM_MULTIPATH ym:MD_RAID0 ym:MD_RAID10
	ym:USB_XHCI_HCD ym:USB_HID ym:HID_GENERIC y:SERIAL_8250_CONSOLE ym:IPMI_SI
	ym:DRM_AST ym:DRM_MGAG200 y:FB_EFI"
# Prints what CONFIG file lacks of SERVER_NEEDS
server_config_misses() { # config
	local need want opt
	for need in $SERVER_NEEDS; do
		want=${need%%:*} opt=CONFIG_${need#*:}
		case $want in
		y) grep -qx "$opt=y" "$1" ;;
		ym) grep -qxE "$opt=[ym]" "$1" ;;
		n) ! grep -qE "^$opt=" "$1" ;;
		esac || echo "$opt ($want)"
	done
}
if out=$("$top/vm/build-kernel.sh" server olddefconfig 2>&1); then
	server_config=$(kernel_dir server)/.config
	misses=$(server_config_misses "$server_config")
	[ -z "$misses" ] || sed 's/^/# lacks /' <<<"$misses"
	tap_result "$([ -z "$misses" ]; echo $?)" \
		"server kernel config keeps what servers need ($(wc -w <<<"$SERVER_NEEDS") options; $(grep -c '=m$' "$server_config") modules)"
	# The check's own control: with each option turned the other way, the
	# check names it
	blind=
	for need in $SERVER_NEEDS; do
		opt=CONFIG_${need#*:}
		if [ "${need%%:*}" = n ]; then
			{ grep -v -e "^$opt=" -e "^# $opt is not set" "$server_config"; echo "$opt=y"; } >"$server_config.broken"
		else
			grep -v -e "^$opt=" "$server_config" >"$server_config.broken"
		fi
		server_config_misses "$server_config.broken" | grep -q "^$opt " || blind="$blind $opt"
	done
	rm -f "$server_config.broken"
	[ -z "$blind" ] || echo "# blind to:$blind"
	tap_result "$([ -z "$blind" ]; echo $?)" "server kernel config check: names each option taken away"
else
	tail -5 <<<"$out" | sed 's/^/# /'
	tap_result 1 "server kernel config: vm/build-kernel.sh server olddefconfig"
fi

# Advisory only, not a gate: CONTRIBUTING.md says why
cf_files=(module/*.[ch] selftests/*.[ch])
if command -v clang-format >/dev/null; then
	cf_lines=0
	for f in "${cf_files[@]}"; do
		# The kernel's own style file, the root's copy of 6.12's
		d=$(clang-format --style=file:"$top/.clang-format" "$f" | diff "$f" - | grep -c '^[<>]')
		cf_lines=$((cf_lines + d))
	done
	echo "# clang-format (advisory): $cf_lines diff lines over ${#cf_files[@]} files"
fi

echo "1..$tap_count"
echo "# lint: $((tap_count - tap_failed)) passed, $tap_failed failed"
[ "$tap_failed" -eq 0 ]
"$top/vm/lint-packaging.sh" && [ "$tap_failed" -eq 0 ]
