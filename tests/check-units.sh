#!/bin/bash
# The systemd units as built: systemd-analyze security scores (printed; at most 2.5 for
# numastor-textfile.service, 5 for numastor-fix.service), systemd-analyze verify, the
# irqbalance drop-in (numastor's policy script added to Debian 12's ExecStart, loaded as a
# drop-in of that unit), and the textfile service's ExecStart run for real under the parts of
# its sandbox this machine can build without systemd as PID 1 (unshare, setpriv).
#   check-units.sh BUILDDIR
set -u
builddir=$(cd "$1" && pwd)
numastor=$builddir/numastor
data=$builddir/data
tmp=$(mktemp -d /dev/shm/numastor-units.XXXXXX 2>/dev/null || mktemp -d /tmp/numastor-units.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v systemd-analyze >/dev/null || {
	echo "FAIL: no systemd-analyze (Debian: systemd): nothing was tested"
	exit 1
}
prefix=$(meson introspect "$builddir" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')

# 1. exposure scores, offline (the unit files as built, nothing installed)
score() { # UNIT -> the overall exposure level
	systemd-analyze security --offline=true --no-pager "$data/$1" 2>&1 |
		sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p'
}
for pair in numastor-textfile.service:2.5 numastor-fix.service:5.0; do
	unit=${pair%:*} max=${pair#*:}
	s=$(score "$unit")
	echo "systemd-analyze security $unit: ${s:-?} (target <= $max)"
	if [ -z "$s" ]; then
		fail "$unit: no score: $(systemd-analyze security --offline=true --no-pager "$data/$unit" 2>&1 | tail -3)"
	elif ! awk -v s="$s" -v m="$max" 'BEGIN { exit !(s <= m) }'; then
		fail "$unit scores $s, above $max"
	fi
done

# 2. systemd-analyze verify, with ExecStart pointed at the built binary
for unit in numastor-fix.service numastor-textfile.service; do
	sed "s|$prefix/sbin/numastor|$numastor|" "$data/$unit" >"$tmp/$unit"
done
cp "$(dirname "$0")/../data/numastor-textfile.timer" "$tmp/"
out=$(cd "$tmp" && systemd-analyze verify --man=no numastor-fix.service numastor-textfile.service \
	numastor-textfile.timer 2>&1 | grep -v 'irqbalance.service')
[ -z "$out" ] || fail "systemd-analyze verify: $out"
grep -q 'systemd-udev-settle' "$data/numastor-fix.service" && fail "numastor-fix.service still names the deprecated systemd-udev-settle"
grep -q 'first placement, so' "$data/numastor-fix.service" && fail "numastor-fix.service still claims After= orders after irqbalance's first placement"
grep -q "^ExecStart=$prefix/sbin/numastor check --format prometheus --output-file " "$data/numastor-textfile.service" ||
	fail "numastor-textfile.service does not write its file with --output-file"

# 3. the drop-in: Debian 12's irqbalance.service with numastor's policy script added, the
# operator's IRQBALANCE_ARGS kept, loaded by systemd as a drop-in of that unit
dropin=$data/irqbalance-policy.conf
[ "$(grep -c '^ExecStart=$' "$dropin")" = 1 ] || fail "the drop-in does not reset ExecStart= first"
grep -qx "ExecStart=/usr/sbin/irqbalance --foreground --policyscript=$prefix/libexec/numastor/irqbalance-policy \$IRQBALANCE_ARGS" "$dropin" ||
	fail "the drop-in's ExecStart is not Debian's with the policy script: $(grep ^ExecStart "$dropin")"
[ "$(grep -v -e '^#' -e '^$' "$dropin" | wc -l)" = 3 ] || fail "the drop-in sets more than ExecStart: $(grep -v -e '^#' -e '^$' "$dropin")"
root=$tmp/root
mkdir -p "$root/lib/systemd/system" "$root/etc/systemd/system/irqbalance.service.d" "$root/usr/sbin"
cp /lib/systemd/system/*.target /lib/systemd/system/*.slice "$root/lib/systemd/system/" 2>/dev/null
# Debian 12's irqbalance.service (irqbalance 1.9.2-1), as the package ships it
cat >"$root/lib/systemd/system/irqbalance.service" <<'UNIT'
[Unit]
Description=irqbalance daemon
Documentation=man:irqbalance(1)
ConditionVirtualization=!container
ConditionCPUs=>1

[Service]
EnvironmentFile=-/usr/lib/irqbalance/defaults.env
EnvironmentFile=-/etc/default/irqbalance
ExecStart=/usr/sbin/irqbalance --foreground $IRQBALANCE_ARGS
ReadOnlyPaths=/
ReadWritePaths=/proc/irq
RestrictAddressFamilies=AF_UNIX
RuntimeDirectory=irqbalance/

[Install]
WantedBy=multi-user.target
UNIT
printf '#!/bin/sh\n' >"$root/usr/sbin/irqbalance"
chmod +x "$root/usr/sbin/irqbalance"
# linked as numastor fix --irqbalance=policy links it (an absolute link, read on the host)
ln -s "$dropin" "$root/etc/systemd/system/irqbalance.service.d/numastor-policy.conf"
verify_ib() { (cd "$tmp" && systemd-analyze verify --root="$root" --man=no irqbalance.service 2>&1); }
out=$(verify_ib) || fail "irqbalance.service with numastor's drop-in does not verify: $out"
# ...and it is read: a drop-in naming a missing binary fails the same verify
sed 's|/usr/sbin/irqbalance |/usr/sbin/no-such-irqbalance |' "$dropin" >"$tmp/broken.conf"
ln -sfn "$tmp/broken.conf" "$root/etc/systemd/system/irqbalance.service.d/numastor-policy.conf"
out=$(verify_ib) && fail "systemd-analyze verify did not read the linked drop-in"
grep -q "no-such-irqbalance" <<<"$out" || fail "the linked drop-in's ExecStart was not the one checked: $out"

# 4. the textfile service's ExecStart, run for real under what of its sandbox can be built here
if [ -d /run/systemd/system ] && [ "$(id -u)" = 0 ]; then
	echo "note: systemd runs here, but this test does not start units on the host"
fi
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null || ! command -v setpriv >/dev/null; then
	echo "SKIP: the sandboxed run needs root, unshare and setpriv"
elif ! "$numastor" check --help 2>&1 | grep -q -- '--output-file'; then
	fail "the built numastor has no check --output-file, which numastor-textfile.service runs"
else
	# ProtectSystem=strict and ProtectKernelTunables=yes: every mount read-only but the
	# output directory (ReadWritePaths=); PrivateNetwork=yes: a new network namespace;
	# CapabilityBoundingSet=CAP_SYS_PTRACE and NoNewPrivileges=yes: setpriv. (The system
	# call filter, ProtectProc= and the rest are systemd's own, not reproduced here.)
	out_dir=$tmp/textfile
	mkdir -p "$out_dir"
	cmd=$(sed -n 's/^ExecStart=//p' "$data/numastor-textfile.service" | sed "s|$prefix/sbin/numastor|$numastor|; s|$(meson introspect "$builddir" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="textfile_dir"][0])')|$out_dir|")
	cat >"$tmp/sandbox.sh" <<SH
set -e
mount --bind "$out_dir" "$out_dir"
findmnt -rn -o TARGET | while read -r m; do
	m=\$(printf '%b' "\$m")
	[ "\$m" = "$out_dir" ] && continue
	mount -o remount,bind,ro "\$m" 2>/dev/null || :
done
if touch "$tmp/outside" 2>/dev/null; then echo "the sandbox lets a write outside the output directory through"; exit 99; fi
exec setpriv --bounding-set=-all,+sys_ptrace --inh-caps=-all --no-new-privs -- $cmd
SH
	unshare --mount --propagation private --net -- bash "$tmp/sandbox.sh" >"$tmp/run.out" 2>&1
	rc=$?
	echo "sandboxed: $cmd -> exit $rc"
	case $rc in
	0 | 1 | 2) ;;
	*) fail "the textfile service's ExecStart under its sandbox exited $rc: $(cat "$tmp/run.out")" ;;
	esac
	[ -s "$out_dir/numastor.prom" ] || fail "the sandboxed run wrote no $out_dir/numastor.prom: $(cat "$tmp/run.out")"
	grep -q '^numastor_' "$out_dir/numastor.prom" 2>/dev/null || fail "the sandboxed run's numastor.prom holds no metric"
	ls "$out_dir" | grep -v -x numastor.prom | grep -q . && fail "the sandboxed run left other files: $(ls "$out_dir")"
fi

if [ "$fails" -gt 0 ]; then
	echo "units: $fails failed"
	exit 1
fi
echo "units: all passed"
