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
for f in sbin/numastor share/numastor/numastor.schema.json share/numastor/numastor-fix.schema.json \
	share/man/man8/numastor.8 share/man/man8/numastor-check.8 share/man/man8/numastor-fix.8 \
	share/man/man8/numastor-irqbalance-policy.8 share/man/man8/numastor-snapshot.8 share/bash-completion/completions/numastor \
	share/zsh/vendor-completions/_numastor share/fish/vendor_completions.d/numastor.fish \
	lib/systemd/system/numastor-fix.service lib/udev/rules.d/90-numastor.rules \
	lib/systemd/system/numastor-textfile.service lib/systemd/system/numastor-textfile.timer \
	share/numastor/numastor-alerts.yml \
	libexec/numastor/irqbalance-policy share/numastor/kmod-patches/build-modules.sh \
	share/numastor/kmod-patches/scsi-numa-local-alloc/series; do
	[ -e "$root/$f" ] || fail "not installed: $prefix/$f"
done
[ -x "$root/libexec/numastor/irqbalance-policy" ] || fail "the policy wrapper is not executable"
grep -q "ExecStart=$prefix/sbin/numastor fix --quiet" "$root/lib/systemd/system/numastor-fix.service" ||
	fail "the unit does not run the installed binary"
# systemd-analyze verify needs the ExecStart binary where the unit says: point it into the stage
for unit in numastor-fix.service numastor-textfile.service; do
	sed "s|$prefix/sbin/numastor|$root/sbin/numastor|" "$root/lib/systemd/system/$unit" >"$tmp/$unit"
done
cp "$root/lib/systemd/system/numastor-textfile.timer" "$tmp/"
out=$(cd "$tmp" && systemd-analyze verify --man=no numastor-fix.service numastor-textfile.service \
	numastor-textfile.timer 2>&1 | grep -v -E 'irqbalance.service|systemd-udev-settle')
[ -z "$out" ] || fail "systemd-analyze verify: $out"
udevadm verify "$root/lib/udev/rules.d/90-numastor.rules" >/dev/null 2>&1 ||
	grep -q 'ENV{SYSTEMD_WANTS}+="numastor-fix.service"' "$root/lib/udev/rules.d/90-numastor.rules" ||
	fail "udev rule does not start numastor-fix.service"
out=$(sed "s|$prefix/sbin/numastor|$root/sbin/numastor|" "$root/libexec/numastor/irqbalance-policy" | sh -s -- /sys/devices/nonexistent 0; echo "rc=$?")
grep -q "rc=0" <<<"$out" || fail "the policy wrapper did not run numastor irqbalance-policy: $out"
out=$(sed "s|$prefix/sbin/numastor|$root/sbin/numastor|" "$root/libexec/numastor/irqbalance-policy" | sh -s -- /sys 2>&1; echo "rc=$?")
grep -q "rc=2" <<<"$out" || fail "the policy wrapper did not pass numastor's usage error on: $out"

if [ "$fails" -gt 0 ]; then
	echo "install: $fails failed"
	exit 1
fi
echo "install: all passed"
