#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# module_sig: the module a fleet's host gets loads where the kernel
# requires signatures (CONFIG_MODULE_SIG_FORCE, what lockdown requires
# under Secure Boot), and the same module without its signature does not.
# The debug kernel (make check) requires them, with its own key built in;
# DKMS signed /swapcache_ab.ko with that key, as a host's DKMS signs with
# the fleet's (vm/dkms-install.sh), and vm/make-initramfs.sh stripped the
# signature from a copy.  Other kernels do not check signatures: every
# check skips there.
KO=${SWAPCACHE_AB_KO:-/swapcache_ab.ko}
UNSIGNED=${KO%.ko}-unsigned.ko
ENFORCE=/sys/module/module/parameters/sig_enforce

n=0
failed=0
result() { # status description
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi
}
loaded() { [ -d /sys/module/swapcache_ab ]; }

echo "TAP version 13"
echo "1..3"
[ "$(id -u)" = 0 ] || { echo "Bail out! needs root"; exit 1; }
if [ "$(cat $ENFORCE 2>/dev/null)" != Y ]; then
	for t in "sig_enforce" "unsigned copy refused" "signed module loads"; do
		n=$((n + 1))
		echo "ok $n $t # SKIP this kernel does not require module signatures"
	done
	exit 4
fi
result 0 "sig_enforce is Y (CONFIG_MODULE_SIG_FORCE)"
loaded && { echo "Bail out! swapcache_ab is loaded: an earlier selftest left it"; exit 1; }

out=$(insmod "$UNSIGNED" 2>&1)
rc=$?
[ $rc -ne 0 ] && echo "$out" | grep -q 'Key was rejected by service' && ! loaded
result $? "the unsigned copy is refused: EKEYREJECTED ($out), not loaded"
loaded && rmmod swapcache_ab

out=$(insmod "$KO" 2>&1)
rc=$?
taint=$(cat /sys/module/swapcache_ab/taint 2>/dev/null)
[ $rc -eq 0 ] && loaded && case $taint in *E*) false ;; esac
result $? "the DKMS-signed module loads: insmod exit $rc${out:+ ($out)}, taint '$taint' (no E, unsigned)"
loaded && rmmod swapcache_ab
exit $failed
