#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make lint's checks of the package and the roll-out, as TAP lines
# (vm/lint.sh runs it last); none needs a kernel tree:
#  - debian/changelog's version is dkms.conf's PACKAGE_VERSION, and a
#    released top entry is newer than every change to what ships;
#  - dkms.conf repeats none of DKMS's defaults;
#  - the source package (vm/build-dkms-deb.sh) leaves build/, build
#    outputs and .git out, and so does debian/source/options for one
#    built in the tree itself;
#  - lintian --pedantic on its .changes (the .dsc, swapcache-ab-dkms and
#    swapcache-ab-bench): no tag;
#  - DKMS, with the package's dkms.conf and private trees, skips a kernel
#    without CONFIG_SWAPCACHE_AB_HOOKS=y (exit 77 and its BUILD_EXCLUSIVE
#    message) whether or not its headers have a .config, and one with
#    them whose release names another hook interface
#    (-swapcache-ab<N+1>), and goes on to build for one with the hooks
#    released -swapcache-ab<N>: fake headers trees, only include/config/auto.conf
#    (and .config) in them, so the build itself is not tried here
#    (vm/dkms-install.sh builds against real headers in make check);
#  - a hookless kernel installed later: DKMS's kernel hook (dkms
#    autoinstall) and the package's own succeed, DKMS's BUILD_EXCLUSIVE
#    message shown;
#  - swapcache-ab-bench's files, and that its commands run unpacked;
#  - the fleet's keys: the image key (vm/make-signing-key.sh) and the
#    archive key (vm/build-apt-repo.sh) with a passphrase, and expiring,
#    unless told they are throwaway ones;
#  - the fleet's signed apt repository of both .debs (vm/build-apt-repo.sh):
#    apt-get, with a private root and the exported key as Signed-By, reads
#    it and sees both packages at the version, and refuses it with
#    another key;
#  - ansible-lint (strict) on fleet/, and ansible-playbook --syntax-check
#    on each playbook.
# Exit 1 if any check failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/vm/lib.sh"
cd "$top" || exit 1

comment() { sed 's/^/# /'; }

version=$(module_version)
abi=$(hook_abi)
changelog=$(dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null)
[ -n "$version" ] && [ "$changelog" = "$version" ]
tap_result $? "debian/changelog's version '$changelog' is dkms.conf's PACKAGE_VERSION '$version'"

# Debian's convention: the top entry is UNRELEASED while it collects
# changes; once released (dch -r), what the packages ship does not change
# under its version again (0.1.0 shipped about 20 changes that way):
# the next change opens a new UNRELEASED entry (dch -i) and version
# (dkms.conf).  What they ship: dkms.conf, the Kbuilds and the module's
# sources (Makefile's DKMS_FILES), bench/'s runner, workloads and report,
# debian/ itself
distribution=$(dpkg-parsechangelog -l debian/changelog -S Distribution 2>/dev/null)
if [ "$distribution" = UNRELEASED ]; then
	tap_result 0 "debian/changelog: $changelog is UNRELEASED, collecting changes"
elif released=$(git log -1 --format=%H -- debian/changelog 2>/dev/null) && [ -n "$released" ]; then
	since=$(git log --format='%h %s' "$released..HEAD" -- dkms.conf Kbuild module/Kbuild 'module/*.[ch]' \
		'bench/*.[ch]' bench/Makefile bench/bench 'bench/*.py' debian ':!debian/changelog')
	[ -z "$since" ] || comment <<<"$since"
	[ -z "$since" ]
	tap_result $? "debian/changelog: nothing the packages ship changed since $changelog was released ($distribution)${since:+: $(wc -l <<<"$since") commits did, open an UNRELEASED entry (dch -i)}"
else
	tap_result 1 "debian/changelog: $changelog is released ($distribution), and no git history says what changed since"
fi

# DKMS's own defaults (dkms 3.0.10): the make and clean commands, and a
# module named after the package
make_default='"make -C \$\{?kernel_source_dir\}? M=\$\{?dkms_tree\}?/[^ ]*/build'
defaults=$(grep -nE "^MAKE\[0\]=$make_default( modules)?\"$|^CLEAN=$make_default clean\"$|^BUILT_MODULE_NAME\[0\]=\"?swapcache_ab\"?$" dkms.conf)
[ -z "$defaults" ] || comment <<<"$defaults"
[ -z "$defaults" ]
tap_result $? "dkms.conf repeats no DKMS default (MAKE[0], CLEAN, BUILT_MODULE_NAME)"

scratch=$top/build/lint-packaging
rm -rf "$scratch"
mkdir -p "$scratch"
debs=$(vm/build-dkms-deb.sh 2>"$scratch/build-dkms-deb.log")
rc=$?
deb=$(sed -n 1p <<<"$debs") bench_deb=$(sed -n 2p <<<"$debs")
[ $rc -eq 0 ] || comment <"$scratch/build-dkms-deb.log"
tap_result $rc "vm/build-dkms-deb.sh: source package, $(basename "${deb:-swapcache-ab-dkms.deb}"), $(basename "${bench_deb:-swapcache-ab-bench.deb}") and .changes"
out=$top/build/dkms-deb
changes=$out/swapcache-ab_${version}_$(dpkg --print-architecture).changes
tarball=$out/swapcache-ab_$version.tar.xz

if [ -f "$tarball" ]; then
	# Paths inside the tarball start with its top directory
	leaked=$(tar tJf "$tarball" | grep -E '^[^/]+/(build|\.git)(/|$)|\.(o|ko|mod)$|\.cmd$|__pycache__' | head -5)
	[ -z "$leaked" ] || comment <<<"$leaked"
	[ -z "$leaked" ]
	tap_result $? \
		"source package $(basename "$tarball") holds no build/, .git or build outputs ($(tar tJf "$tarball" | wc -l) entries)"
else
	tap_result 1 "source package $(basename "$tarball") was built"
fi

# debian/source/options itself, as dpkg-source applies it to a source
# package built in the tree (gbp, sbuild, dpkg-buildpackage there): a
# tree of debian/ and what make check, make ab and kbuild leave behind
opts=$scratch/options/swapcache-ab-$version
mkdir -p "$opts/build/linux" "$opts/module" "$opts/bench/__pycache__"
cp -r debian Kbuild "$opts/"
# What an in-place build leaves: each of module/*.c's object and .cmd
# file, the composite module's (swapcache_ab.ko and what links it), and
# kbuild's files at the top
artefacts=(build/linux/vmlinux bench/__pycache__/report.cpython-311.pyc
	Module.symvers modules.order .module-common.o ..module-common.o.cmd .Module.symvers.cmd
	.modules.order.cmd module/modules.order module/.modules.order.cmd)
for c in module/*.c; do
	case $c in *.mod.c) continue ;; esac
	artefacts+=("${c%.c}.o" "module/.$(basename "${c%.c}").o.cmd")
done
for f in swapcache_ab.o swapcache_ab.ko swapcache_ab.mod swapcache_ab.mod.c swapcache_ab.mod.o; do
	artefacts+=("module/$f" "module/.$f.cmd")
done
for f in "${artefacts[@]}"; do
	echo artefact >"$opts/$f"
done
if (cd "$scratch/options" && dpkg-source -b "swapcache-ab-$version") >"$scratch/options.log" 2>&1; then
	listing=$(tar tJf "$scratch/options/swapcache-ab_$version.tar.xz")
	kept=$(grep -E '/(build|__pycache__)/|\.(o|ko|mod|mod\.c|cmd)$|Module\.symvers|modules\.order' <<<"$listing")
	[ -z "$kept" ] || comment <<<"$kept"
	grep -qx "swapcache-ab-$version/Kbuild" <<<"$listing" && [ -z "$kept" ]
	tap_result $? "debian/source/options: dpkg-source -b leaves build/, module build outputs and __pycache__ out, keeps the sources"
else
	comment <"$scratch/options.log"
	tap_result 1 "debian/source/options: dpkg-source -b on a tree with build outputs"
fi

if [ -f "$changes" ]; then
	# lintian says on stderr that it runs as root
	lintian --pedantic --display-experimental --fail-on error,warning,info,pedantic \
		"$changes" >"$scratch/lintian.log" 2>&1
	rc=$?
	tags=$(grep -v 'running with root privileges' "$scratch/lintian.log")
	[ -z "$tags" ] || comment <<<"$tags"
	[ $rc -eq 0 ] && [ -z "$tags" ]
	tap_result $? \
		"lintian --pedantic $(basename "$changes") (.dsc, $(grep -c '\.deb$' <(sed -n '/^Files:/,/^[^ ]/p' "$changes")) .debs): exit $rc, $(grep -c . <<<"$tags") tags"
else
	tap_result 1 "vm/build-dkms-deb.sh kept $(basename "$changes")"
fi

# DKMS as a host runs it, on the package's own files, in private trees
dkms_check() { # name config-lines-in-auto.conf with-.config(0|1) want(skip|build) [release]
	local name=$1 conf=$2 dotconfig=$3 want=$4 hdr=$scratch/headers-$1 rc log
	local kver=${5:-6.12.0-lint-$name}
	mkdir -p "$hdr/include/config" "$scratch/$name-dkms"
	printf '%b' "$conf" >"$hdr/include/config/auto.conf"
	[ "$dotconfig" = 0 ] || printf '%b' "$conf" >"$hdr/.config"
	# A make that says it was run, where a real tree would build the module
	printf 'modules clean:\n\t@echo "fake kernel tree: make $@"\n' >"$hdr/Makefile"
	log=$scratch/$name-dkms.log
	dkms add -m swapcache_ab -v "$version" --dkmstree "$scratch/$name-dkms" \
		--sourcetree "$scratch/pkg/usr/src" >"$log" 2>&1 &&
		dkms build -m swapcache_ab -v "$version" --dkmstree "$scratch/$name-dkms" \
			--sourcetree "$scratch/pkg/usr/src" -k "$kver" --kernelsourcedir "$hdr" >>"$log" 2>&1
	rc=$?
	local desc="headers with .config, "
	[ "$dotconfig" = 1 ] || desc="headers without .config, "
	grep -q SWAPCACHE_AB_HOOKS=y "$hdr/include/config/auto.conf" || desc+="no "
	desc+="CONFIG_SWAPCACHE_AB_HOOKS=y"
	if [ "$want" = skip ]; then
		[ $rc -eq 77 ] && grep -q 'BUILD_EXCLUSIVE directive which does not match' "$log"
		tap_result $? "dkms build skips $kver ($desc): exit $rc, $(grep -o 'includes a BUILD_EXCLUSIVE directive[^.]*' "$log" || echo 'no BUILD_EXCLUSIVE message')"
	else
		# make.log: in the build directory, as the build failed
		[ $rc -ne 77 ] && ! grep -q BUILD_EXCLUSIVE "$log" &&
			grep -rqs 'fake kernel tree: make modules' "$scratch/$name-dkms"
		tap_result $? "dkms build goes on to make for $kver ($desc): exit $rc (the fake tree builds no .ko)"
	fi
	[ $rc -eq 77 ] || [ "$want" = build ] || comment <"$log"
}
# A kernel installed later, as its package's postinst runs the hooks in
# /etc/kernel/postinst.d: DKMS's own (dkms autoinstall) and the package's
# (etc/kernel/postinst.d/swapcache-ab-dkms), through a dkms that works in
# the private trees of dkms_check's run for that kernel
kernel_hooks_check() { # name
	local name=$1 kver=6.12.0-lint-$1 bin=$scratch/$1-bin rc log=$scratch/$1-hook.log
	mkdir -p "$bin" "$scratch/$name-modules/$kver" "$scratch/$name-install"
	ln -sfn "$scratch/headers-$name" "$scratch/$name-modules/$kver/build"
	cat >"$bin/dkms" <<DKMS
#!/bin/sh
exec /usr/sbin/dkms "\$@" --dkmstree "$scratch/$name-dkms" --sourcetree "$scratch/pkg/usr/src" \\
	--installtree "$scratch/$name-install" --kernelsourcedir "$scratch/headers-$name" --no-depmod
DKMS
	chmod +x "$bin/dkms"
	PATH=$bin:$PATH dkms autoinstall -k "$kver" >"$log" 2>&1
	rc=$?
	[ $rc -eq 0 ] || comment <"$log"
	tap_result $rc "dkms autoinstall -k $kver (DKMS's kernel hook) leaves swapcache_ab alone: exit $rc"
	PATH=$bin:$PATH SWAPCACHE_AB_MODULES_DIR=$scratch/$name-modules \
		"$scratch/pkg/etc/kernel/postinst.d/swapcache-ab-dkms" "$kver" >"$log" 2>&1
	rc=$?
	[ $rc -eq 0 ] && grep -q 'BUILD_EXCLUSIVE directive which does not match' "$log"
	tap_result $? "/etc/kernel/postinst.d/swapcache-ab-dkms $kver (no hooks): exit $rc, $(grep -o 'has no CONFIG_SWAPCACHE_AB_HOOKS[^:]*' "$log" || echo 'no skip message')"
	[ $rc -eq 0 ] || comment <"$log"
}
if [ -f "${deb:-}" ] && dpkg-deb -x "$deb" "$scratch/pkg"; then
	dkms_check nohooks 'CONFIG_MODULES=y\n' 0 skip
	dkms_check nohooks-config 'CONFIG_MODULES=y\n# CONFIG_SWAPCACHE_AB_HOOKS is not set\n' 1 skip
	dkms_check hooks 'CONFIG_MODULES=y\nCONFIG_SWAPCACHE_AB_HOOKS=y\n' 0 build "6.12.0-swapcache-ab$abi-lint"
	# The hooks of another interface: another number in the release
	dkms_check hooks-abi 'CONFIG_MODULES=y\nCONFIG_SWAPCACHE_AB_HOOKS=y\n' 0 skip "6.12.0-swapcache-ab$((abi + 1))-lint"
	kernel_hooks_check nohooks
	[ -x "$scratch/pkg/etc/kernel/header_postinst.d/swapcache-ab-dkms" ]
	tap_result $? "swapcache-ab-dkms ships its kernel hook in /etc/kernel/postinst.d and header_postinst.d"
else
	tap_result 1 "the swapcache-ab-dkms .deb unpacked for the DKMS checks"
fi

# swapcache-ab-bench: the runner finds its workloads beside itself, the
# fleet report bench/report.py beside itself, as installed
bench_files="usr/bin/swapcache-ab-bench usr/bin/swapcache-ab-report usr/bin/swapcache-ab-fleet-report
usr/libexec/swapcache-ab/bench usr/libexec/swapcache-ab/report.py usr/libexec/swapcache-ab/fleet-report.py
$(printf 'usr/libexec/swapcache-ab/%s\n' usemem pmbench readtwice swapon-prio)"
if [ -f "${bench_deb:-}" ] && dpkg-deb -x "$bench_deb" "$scratch/bench-pkg"; then
	missing=$(for f in $bench_files; do [ -x "$scratch/bench-pkg/$f" ] || echo "$f"; done)
	[ -z "$missing" ] || comment <<<"missing: $missing"
	usage=$("$scratch/bench-pkg/usr/libexec/swapcache-ab/bench" lint=1 2>&1)
	usage+=$'\n'$("$scratch/bench-pkg/usr/bin/swapcache-ab-fleet-report" 2>&1)
	[ -z "$missing" ] && grep -q "unknown argument 'lint=1'" <<<"$usage" &&
		grep -q '^usage: .*swapcache-ab-fleet-report RESULTS_DIR' <<<"$usage"
	rc=$?
	[ $rc -eq 0 ] || comment <<<"$usage"
	tap_result $rc "swapcache-ab-bench: runner, workloads and reports under /usr/libexec/swapcache-ab, commands in /usr/bin; they run unpacked"
	# The runner on each host needs no python3-scipy (with it, a host gets
	# a C++ compiler and Boost's headers through python3-pythran): the
	# report, which does, recommends it
	depends=$(dpkg-deb -f "$bench_deb" Depends) recommends=$(dpkg-deb -f "$bench_deb" Recommends)
	! grep -q 'python3-scipy' <<<"$depends" && grep -q 'libc6' <<<"$depends" &&
		grep -q 'python3-scipy' <<<"$recommends" && grep -q 'python3-numpy' <<<"$recommends" &&
		grep -q linux-perf <<<"$recommends"
	tap_result $? "swapcache-ab-bench depends on its shared libraries ($depends), recommends python3-scipy, python3-numpy and linux-perf ($recommends)"
else
	tap_result 1 "the swapcache-ab-bench .deb unpacked"
fi

# The fleet's apt repository (vm/build-apt-repo.sh) of the two .debs, as a
# host's apt reads it: apt-get with a private root (APT_CONFIG: its Dir,
# sources, lists, status; no host apt.conf.d, no trusted.gpg.d) and one
# deb822 source whose Signed-By is the exported key; the host's apt is
# left alone.  A key that did not sign it must be refused.
apt_repo_check() { # keyring-to-trust name
	local aroot=$scratch/apt-root-$2 log=$scratch/apt-$2.log
	rm -rf "$aroot"
	mkdir -p "$aroot"/etc/apt/{apt.conf.d,preferences.d,sources.list.d,trusted.gpg.d} \
		"$aroot"/var/lib/apt/lists/partial "$aroot"/var/cache/apt/archives/partial "$aroot"/var/lib/dpkg
	: >"$aroot/var/lib/dpkg/status"
	cat >"$aroot/apt.conf" <<APT
Dir "$aroot/";
Dir::State::status "$aroot/var/lib/dpkg/status";
APT::Architecture "$(dpkg --print-architecture)";
APT::Sandbox::User "root";
APT
	cat >"$aroot/etc/apt/sources.list.d/swapcache-ab.sources" <<SRC
Types: deb
URIs: file:$scratch/apt-repo/public
Suites: swapcache-ab
Components: main
Signed-By: $1
SRC
	APT_CONFIG=$aroot/apt.conf apt-get -q update >"$log" 2>&1 || return 1
	# A source apt reads unsigned, or with a warning, counts as not read
	! grep -qE '^(W|E):' "$log" || return 1
	local p policy
	for p in swapcache-ab-dkms swapcache-ab-bench; do
		policy=$(APT_CONFIG=$aroot/apt.conf apt-cache policy "$p" 2>&1)
		echo "$policy" >>"$log"
		grep -qx "  Candidate: $version" <<<"$policy" || return 1
	done
}
# The keys as a fleet makes them: with a passphrase (FLEET_KEY_PASSFILE),
# never without one unless told they are throwaway ones
passfile=$scratch/passphrase
echo "lint $$ $RANDOM" >"$passfile"
no_pass=$(APT_REPO_KEY_DIR=$scratch/apt-key-none vm/build-apt-repo.sh "$scratch/apt-repo-none" "${deb:-/nonexistent}" 2>&1 >/dev/null)
[ ! -e "$scratch/apt-key-none/swapcache-ab-archive-keyring.gpg" ] && grep -q 'FLEET_KEY_PASSFILE' <<<"$no_pass"
tap_result $? "vm/build-apt-repo.sh makes no archive key without FLEET_KEY_PASSFILE or FLEET_KEY_THROWAWAY=1: $(tail -1 <<<"$no_pass" | cut -c1-80)"
no_pass=$(vm/make-signing-key.sh "$scratch/image-key-none" 2>&1 >/dev/null)
[ ! -e "$scratch/image-key-none/image.pem" ] && grep -q 'FLEET_KEY_PASSFILE' <<<"$no_pass"
tap_result $? "vm/make-signing-key.sh makes no image key without FLEET_KEY_PASSFILE or FLEET_KEY_THROWAWAY=1"
image_key=$(FLEET_KEY_PASSFILE=$passfile vm/make-signing-key.sh "$scratch/image-key" 2>"$scratch/make-signing-key.log" | head -1)
end=$(openssl x509 -in "${image_key:-/nonexistent}" -noout -enddate 2>/dev/null | sed 's/^notAfter=//')
grep -qx -- '-----BEGIN ENCRYPTED PRIVATE KEY-----' "${image_key:-/nonexistent}" &&
	! openssl pkey -in "$image_key" -passin pass:not-it -noout 2>/dev/null &&
	openssl pkey -in "$image_key" -passin "file:$passfile" -noout &&
	[ -n "$end" ] && [ "$(date -d "$end" +%s)" -le $(($(date +%s) + 731 * 86400)) ]
tap_result $? "vm/make-signing-key.sh: the image key encrypted, opened by its passphrase alone, its certificate valid until ${end:-?}"
if [ -f "${deb:-}" ] && [ -f "${bench_deb:-}" ] &&
	keyring=$(FLEET_KEY_PASSFILE=$passfile APT_REPO_KEY_DIR=$scratch/apt-key vm/build-apt-repo.sh "$scratch/apt-repo" \
		"$deb" "$bench_deb" 2>"$scratch/build-apt-repo.log"); then
	# The agent that held the passphrase is gone: without it, no signature
	expires=$(gpg --with-colons --show-keys "$keyring" 2>/dev/null | awk -F: '$1 == "pub" { print $7; exit }')
	! APT_REPO_KEY_DIR=$scratch/apt-key APT_REPO_SNAPSHOT=lint-no-pass vm/build-apt-repo.sh "$scratch/apt-repo" \
		"$deb" >/dev/null 2>&1 && [ -n "$expires" ]
	tap_result $? "vm/build-apt-repo.sh: the archive key has a passphrase (refused without it) and expires ($(date -u -d "@${expires:-0}" +%F))"
	apt_repo_check "$keyring" fleet-key
	rc=$?
	[ $rc -eq 0 ] || comment <"$scratch/apt-fleet-key.log"
	tap_result $rc "apt-get (private root, Signed-By the exported key) reads vm/build-apt-repo.sh's signed index: $(
		awk '/^swapcache-ab-[a-z]*:$/ { p = $1 } /^  Candidate: / { printf "%s%s %s", sep, p, $2; sep = ", " }' \
			"$scratch/apt-fleet-key.log")"
	# Another throwaway key, which did not sign the repository
	other=$scratch/other-key
	mkdir -p "$other" && chmod 700 "$other" &&
		GNUPGHOME=$other gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
			--quick-gen-key 'not the fleet <lint@swapcache-ab.invalid>' ed25519 sign never &&
		GNUPGHOME=$other gpg --batch --export >"$other/keyring.gpg"
	GNUPGHOME=$other gpgconf --kill gpg-agent 2>/dev/null
	apt_repo_check "$other/keyring.gpg" other-key
	rc=$?
	[ $rc -ne 0 ] && grep -q 'NO_PUBKEY\|not signed' "$scratch/apt-other-key.log"
	tap_result $? "apt-get refuses the repository with Signed-By a key that did not sign it: $(
		grep -o 'NO_PUBKEY [0-9A-F]*\|is not signed' "$scratch/apt-other-key.log" | head -1)"
else
	comment <"$scratch/build-apt-repo.log"
	tap_result 1 "vm/build-apt-repo.sh: a signed repository of $(basename "${deb:-swapcache-ab-dkms.deb}") and $(basename "${bench_deb:-swapcache-ab-bench.deb}")"
fi

# Ansible: its own cache in build/, no network
if command -v ansible-lint >/dev/null; then
	lint=$(XDG_CACHE_HOME=$scratch/cache ansible-lint --offline --strict --nocolor -p fleet/ 2>&1)
	rc=$?
	[ $rc -eq 0 ] || comment <<<"$lint"
	tap_result $rc "ansible-lint --strict fleet/: $(grep -cE '^[^ ]+:[0-9]+' <<<"$lint") violations"
else
	tap_result 1 "ansible-lint installed (vm/install-deps.sh)"
fi
for p in fleet/site.yml fleet/remove.yml; do
	out=$(ANSIBLE_CONFIG=$top/fleet/ansible.cfg ansible-playbook -i localhost, --syntax-check "$p" 2>&1)
	rc=$?
	[ $rc -eq 0 ] || comment <<<"$out"
	tap_result $rc "ansible-playbook --syntax-check $p"
done

echo "# lint-packaging: $((tap_count - tap_failed)) passed, $tap_failed failed"
[ "$tap_failed" -eq 0 ]
