#!/bin/bash
# A staged install (meson install with DESTDIR) puts every file in place, the systemd unit
# passes systemd-analyze verify, the udev rule parses, and the policy wrapper runs numastor.
set -u
builddir=$1
tmp=$(mktemp -d /tmp/numastor-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

prefix=$(meson introspect "$builddir" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
DESTDIR="$tmp/stage" meson install -C "$builddir" --no-rebuild --quiet >/dev/null 2>&1 || {
	fail "meson install failed"
	DESTDIR="$tmp/stage" meson install -C "$builddir" --no-rebuild
}
root=$tmp/stage$prefix
# Where meson put what the system decides (units and udev rules: pkg-config systemd and udev;
# the DKMS source: PREFIX/src/numastor-VERSION), as the build's own install list says.
installed() { # NAME -> its install path (the first that ends in /NAME)
	meson introspect "$builddir" --installed | python3 -c '
import json, sys
print(next((v for v in json.load(sys.stdin).values() if v.endswith("/" + sys.argv[1])), ""))' "$1"
}
unitdir=$(dirname "$(installed numastor-fix.service)")
[ "$unitdir" = "$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo "$prefix/lib/systemd/system")" ] ||
	fail "the units go to $unitdir, not pkg-config's systemdsystemunitdir"
rules_path=$(installed 90-numastor.rules)
[ "$rules_path" = "$(pkg-config --variable=udevdir udev 2>/dev/null || echo "$prefix/lib/udev")/rules.d/90-numastor.rules" ] ||
	fail "the udev rule goes to $rules_path, not pkg-config's udevdir/rules.d"
version=$("$builddir/numastor" --version | sed -n 's/^numastor \([^ ]*\).*/\1/p')
dkmsdir=$prefix/src/numastor-$version
units=$tmp/stage$unitdir
for f in sbin/numastor share/numastor/numastor.schema.json share/numastor/numastor-fix.schema.json share/numastor/journal.schema.json \
	share/man/man8/numastor.8 share/man/man8/numastor-check.8 share/man/man8/numastor-fix.8 \
	share/man/man8/numastor-irqbalance-policy.8 share/man/man8/numastor-snapshot.8 share/man/man7/numastor-findings.7 \
	share/man/man8/numastor-trace.8 share/numastor/numastor-trace.schema.json \
	share/bash-completion/completions/numastor \
	share/zsh/vendor-completions/_numastor share/fish/vendor_completions.d/numastor.fish \
	share/numastor/numastor-alerts.yml share/numastor/irqbalance-policy.conf \
	libexec/numastor/irqbalance-policy; do
	[ -e "$root/$f" ] || fail "not installed: $prefix/$f"
done
for f in "$unitdir/numastor-fix.service" "$rules_path" "$unitdir/numastor-textfile.service" \
	"$unitdir/numastor-textfile.timer" "$dkmsdir/build-modules.sh" "$dkmsdir/scsi-numa-local-alloc/series" \
	"$dkmsdir/dkms.conf"; do
	[ -e "$tmp/stage$f" ] || fail "not installed: $f"
done
# DKMS finds the source by PACKAGE_NAME-PACKAGE_VERSION: numastor-VERSION, the version filled in
if ! grep -qx 'PACKAGE_NAME="numastor"' "$tmp/stage$dkmsdir/dkms.conf" ||
	! grep -qx "PACKAGE_VERSION=\"$version\"" "$tmp/stage$dkmsdir/dkms.conf"; then
	fail "the installed dkms.conf does not name numastor $version: $(grep PACKAGE_ "$tmp/stage$dkmsdir/dkms.conf" 2>&1)"
fi
find "$tmp/stage" -path '*share/numastor/kmod-patches*' | grep -q . && fail "kmod-patches is still installed under share/numastor"
# no source-tree path in what the binary says (kmod-patches/build-modules.sh): the installed one
strings "$root/sbin/numastor" | grep -q "build the modules with $dkmsdir/build-modules.sh" ||
	fail "numastor does not name the installed build-modules.sh ($dkmsdir/build-modules.sh)"
strings "$root/sbin/numastor" | grep -q "with kmod-patches/" && fail "numastor names a source-tree path (kmod-patches/...)"
[ -x "$root/libexec/numastor/irqbalance-policy" ] || fail "the policy wrapper is not executable"
grep -q "ExecStart=$prefix/sbin/numastor fix --hotplug" "$units/numastor-fix.service" ||
	fail "the unit does not run the installed binary"
# systemd-analyze verify needs the ExecStart binary where the unit says: point it into the stage
for unit in numastor-fix.service numastor-textfile.service; do
	sed "s|$prefix/sbin/numastor|$root/sbin/numastor|" "$units/$unit" >"$tmp/$unit"
done
cp "$units/numastor-textfile.timer" "$tmp/"
out=$(cd "$tmp" && systemd-analyze verify --man=no numastor-fix.service numastor-textfile.service \
	numastor-textfile.timer 2>&1 | grep -v -E 'irqbalance.service')
[ -z "$out" ] || fail "systemd-analyze verify: $out"
# irqbalance's drop-in is installed disabled: in numastor's data directory, not in any
# irqbalance.service.d/ (numastor fix --irqbalance=policy links it there), and it runs the
# installed policy wrapper
find "$tmp/stage" -path '*irqbalance.service.d*' | grep -q . && fail "the drop-in is installed enabled: $(find "$tmp/stage" -path '*irqbalance.service.d*')"
grep -q -- "--policyscript=$prefix/libexec/numastor/irqbalance-policy " "$root/share/numastor/irqbalance-policy.conf" 2>/dev/null ||
	fail "the installed drop-in does not name the installed policy wrapper"
strings "$root/sbin/numastor" | grep -q -x "$prefix/share/numastor/irqbalance-policy.conf" ||
	fail "numastor does not link the drop-in from where it is installed ($prefix/share/numastor/irqbalance-policy.conf)"
rules=$tmp/stage$rules_path
if udevadm verify --help >/dev/null 2>&1; then # systemd >= 253
	udevadm verify "$rules" >/dev/null 2>&1 || fail "udevadm verify: $(udevadm verify "$rules" 2>&1)"
fi
# (the rule itself is run by Debian's systemd-udevd in tests/vm's modswap-udev scenario)
grep -q 'ENV{SYSTEMD_WANTS}+="numastor-hotplug.service"' "$rules" || fail "the udev rule does not ask for numastor-hotplug.service"
grep -q 'numastor-fix.service' <(grep -v '^#' "$rules") && fail "the udev rule asks for numastor-fix.service itself: it would run while disabled"

# Hot-plug follows `systemctl enable`: the rule asks for numastor-hotplug.service, which only
# enabling creates (the unit's Alias=). On the staged tree (systemctl --root, with this host's
# targets so that the unit's default dependencies resolve): disabled, systemd finds no
# numastor-hotplug.service (a SYSTEMD_WANTS= of a unit that does not exist starts nothing);
# enabled, it is numastor-fix.service; disabled again, it is gone, without `mask`.
if command -v systemctl >/dev/null && [ -d /lib/systemd/system ]; then
	mkdir -p "$tmp/stage/lib/systemd/system"
	cp /lib/systemd/system/*.target /lib/systemd/system/*.slice "$tmp/stage/lib/systemd/system/" 2>/dev/null
	verify() { (cd "$tmp" && systemd-analyze verify --root="$tmp/stage" --man=no "$@" 2>&1); }
	out=$(verify numastor-hotplug.service) && fail "disabled, numastor-hotplug.service exists: $out"
	grep -q "Unit numastor-hotplug.service not found" <<<"$out" || fail "disabled: systemd-analyze verify says: $out"
	systemctl --root="$tmp/stage" enable numastor-fix.service >/dev/null 2>&1 || fail "systemctl --root enable failed"
	[ "$(readlink "$tmp/stage/etc/systemd/system/numastor-hotplug.service")" = "$unitdir/numastor-fix.service" ] ||
		fail "systemctl enable did not create the numastor-hotplug.service alias"
	[ -L "$tmp/stage/etc/systemd/system/multi-user.target.wants/numastor-fix.service" ] ||
		fail "systemctl enable did not make the boot-time run"
	out=$(verify numastor-hotplug.service) || fail "enabled, numastor-hotplug.service does not load: $out"
	[ "$(systemctl --root="$tmp/stage" is-enabled numastor-hotplug.service 2>/dev/null)" = alias ] ||
		fail "enabled, numastor-hotplug.service is not an alias of numastor-fix.service"
	systemctl --root="$tmp/stage" disable numastor-fix.service >/dev/null 2>&1 || fail "systemctl --root disable failed"
	[ ! -e "$tmp/stage/etc/systemd/system/numastor-hotplug.service" ] || fail "systemctl disable left the alias"
	out=$(verify numastor-hotplug.service) && fail "disabled again, numastor-hotplug.service still exists: $out"
	[ -e "$tmp/stage/etc/systemd/system/numastor-fix.service" ] && fail "disable masked the unit"
else
	fail "no systemctl: the enable/disable switch of hot-plug runs is untested"
fi
out=$(sed "s|$prefix/sbin/numastor|$root/sbin/numastor|" "$root/libexec/numastor/irqbalance-policy" | sh -s -- /sys/devices/nonexistent 0; echo "rc=$?")
grep -q "rc=0" <<<"$out" || fail "the policy wrapper did not run numastor irqbalance-policy: $out"
out=$(sed "s|$prefix/sbin/numastor|$root/sbin/numastor|" "$root/libexec/numastor/irqbalance-policy" | sh -s -- /sys 2>&1; echo "rc=$?")
grep -q "rc=3" <<<"$out" || fail "the policy wrapper did not pass numastor's usage error on: $out"

if [ "$fails" -gt 0 ]; then
	echo "install: $fails failed"
	exit 1
fi
echo "install: all passed"
