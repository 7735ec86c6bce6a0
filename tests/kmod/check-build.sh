#!/bin/bash
# shellcheck disable=SC2016 # bash -c and python -c scripts below get their values as arguments
# Build numastor's kernel patch series (kmod-patches/) against Debian 12's own 6.1 kernel and
# check the result: which patches are upstream, which modules were built, the manifest,
# the modinfo markers and the symbol CRCs the stock modules need.
#
#   tests/kmod/check-build.sh
#
# The kernel comes from tests/vm/fetch-kernel.sh's cache (${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm});
# the matching linux-source-6.1 tarball is downloaded with apt-get once and kept next to it;
# everything built goes to $VM_CACHE/kmod-build/<kernel release>/, never into the tree, so a
# rerun takes a few seconds. Prints each check and ends with "kmod: all passed" or
# "kmod: N failed" (exit 1).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KMOD=$TOP/kmod-patches
VM_CACHE=${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}

failed=0
passed=0
ok() {
	printf 'ok   %s\n' "$*"
	passed=$((passed + 1))
}
fail() {
	printf 'FAIL %s\n' "$*"
	failed=$((failed + 1))
}
check() { # DESCRIPTION COMMAND... : ok when the command succeeds
	local what=$1
	shift
	if "$@"; then ok "$what"; else fail "$what"; fi
}
die() {
	printf 'kmod: error: %s\n' "$*" >&2
	echo "kmod: setup failed"
	exit 1
}
finish() {
	if ((failed)); then
		echo "kmod: $failed failed ($passed passed)"
		exit 1
	fi
	echo "kmod: all passed ($passed checks)"
}

for t in python3 modinfo patch make gcc tar xz; do
	command -v "$t" >/dev/null 2>&1 || PATH=$PATH:/sbin:/usr/sbin command -v "$t" >/dev/null 2>&1 ||
		die "needs $t"
done
export PATH=$PATH:/sbin:/usr/sbin

# ------------------------------------------------------------------ inputs
echo "== the kernel: tests/vm/fetch-kernel.sh (cached in $VM_CACHE)"
kdir=$("$TOP/tests/vm/fetch-kernel.sh") || die "tests/vm/fetch-kernel.sh failed"
krel=$(<"$kdir/release")
root=$kdir/root
headers=$root/usr/src/linux-headers-$krel
[[ -f $headers/Module.symvers ]] || die "no headers in $headers"
kversion=$(sed -n 's|^# Linux/[^ ]* \([0-9][0-9.]*\) Kernel Configuration$|\1|p' "$headers/.config" | head -n 1)
xy=$(cut -d. -f1,2 <<<"$kversion")
debver=$(sed -n 's/^#define LINUX_PACKAGE_ID " *Debian \([^ "]*\)".*/\1/p' "$headers/include/generated/package.h")
[[ -n $kversion && -n $debver ]] || die "cannot tell the version of $headers"
echo "kernel $krel (Linux $kversion, Debian $debver), headers $headers"

tarball=$kdir/linux-source-$xy.tar.xz
if [[ ! -f $tarball ]]; then
	echo "downloading linux-source-$xy=$debver (once; kept as $tarball)"
	dl=$(mktemp -d)
	trap 'rm -rf "$dl"' EXIT
	(cd "$dl" && apt-get download -q "linux-source-$xy=$debver" 2>&1 |
		grep -v '^W: Download is performed unsandboxed') || die "apt-get download linux-source-$xy=$debver failed"
	dpkg-deb --fsys-tarfile "$dl"/linux-source-"$xy"_*.deb |
		tar -xO "./usr/src/linux-source-$xy.tar.xz" >"$tarball.tmp" || die "no linux-source-$xy.tar.xz in the package"
	mv "$tarball.tmp" "$tarball"
	rm -rf "$dl"
	trap - EXIT
fi
echo "source $tarball"

work=$VM_CACHE/kmod-build/$krel
mkdir -p "$work"
out=$work/modules
log=$work/build-modules.log

# ------------------------------------------------------------------ the patches themselves
echo "== patch series"
for s in nvme-no-forced-node scsi-numa-local-alloc; do
	d=$KMOD/$s
	if [[ ! -f $d/series ]]; then
		fail "$s: no series file"
		continue
	fi
	listed=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$d/series" | sort)
	present=$(cd "$d" && printf '%s\n' *.patch | sort)
	check "$s: series lists exactly the patches of the directory" [ "$listed" == "$present" ]
	for p in $present; do
		missing=()
		for field in '^From: ' '^Subject: \[PATCH' '^What: ' '^Why: ' '^Upstream: ' '^Applies: ' '^Module: ' '^diff --git '; do
			grep -q "$field" "$d/$p" || missing+=("${field//[\\^]/}")
		done
		check "$s/$p: header has From/Subject/What/Why/Upstream/Applies/Module${missing:+ (missing: ${missing[*]})}" \
			[ ${#missing[@]} -eq 0 ]
	done
done

# ------------------------------------------------------------------ build against Debian's 6.1
echo "== kmod-patches/build-modules.sh against $krel (log: $log)"
t0=$SECONDS
if ! "$KMOD/build-modules.sh" --kernel "$krel" --headers "$headers" --source "$tarball" \
	--out "$out" --build-dir "$work/build" 2>&1 | tee "$log"; then
	fail "build-modules.sh failed (see above)"
	finish
fi
echo "(build-modules.sh took $((SECONDS - t0)) s)"
manifest=$out/manifest.json

nvme_fix=$(sed -n 1p "$KMOD/nvme-no-forced-node/series")
check "nvme-no-forced-node/$nvme_fix reported \"already upstream\" ($krel has the fix)" \
	grep -qF "nvme-no-forced-node/$nvme_fix: already upstream" "$log"
check "no nvme.ko built" [ ! -e "$out/nvme.ko" ]
while IFS= read -r p; do
	check "scsi-numa-local-alloc/$p applied to linux-source-$xy $debver" \
		grep -qE "scsi-numa-local-alloc/$p: (marker )?applied" "$log"
done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$KMOD/scsi-numa-local-alloc/series")
for m in scsi_mod sd_mod; do
	check "$m.ko built" [ -f "$out/$m.ko" ]
done

# The manifest: exact keys, types, and every field checked against the files.
if python3 - "$manifest" "$out" "$krel" "$root/lib/modules/$krel" "$nvme_fix" <<'EOF'; then
import hashlib, json, os, re, subprocess, sys
path, out, krel, moddir, nvme_fix = sys.argv[1:]
errors = []
def err(msg): errors.append(msg)
try:
    m = json.load(open(path))
except Exception as e:
    print(f"manifest.json is not valid JSON: {e}"); sys.exit(1)
if set(m) != {"kernel_release", "built", "modules", "already_upstream"}:
    err(f"top-level keys {sorted(m)}")
if m.get("kernel_release") != krel:
    err(f"kernel_release {m.get('kernel_release')!r}, not {krel!r}")
if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", str(m.get("built"))):
    err(f"built {m.get('built')!r} is not an ISO 8601 UTC time")
names = []
for e in m.get("modules", []):
    keys = {"name", "file", "sha256", "vermagic", "srcversion", "patches", "replaces"}
    if set(e) != keys:
        err(f"module entry keys {sorted(e)}"); continue
    names.append(e["name"])
    f = os.path.join(out, e["file"])
    if e["file"] != e["name"] + ".ko" or not os.path.isfile(f):
        err(f"{e['name']}: file {e['file']!r} missing"); continue
    if hashlib.sha256(open(f, "rb").read()).hexdigest() != e["sha256"]:
        err(f"{e['name']}: sha256 does not match {f}")
    if e["vermagic"].split()[0] != krel:
        err(f"{e['name']}: vermagic {e['vermagic']!r} is not for {krel}")
    vm = subprocess.run(["modinfo", "-F", "vermagic", f], capture_output=True, text=True).stdout.rstrip("\n")
    if vm != e["vermagic"]:
        err(f"{e['name']}: vermagic {e['vermagic']!r} but the file says {vm!r}")
    sv = subprocess.run(["modinfo", "-F", "srcversion", f], capture_output=True, text=True).stdout.strip()
    if (sv or None) != e["srcversion"]:
        err(f"{e['name']}: srcversion {e['srcversion']!r} but the file says {sv!r}")
    if e["patches"] != ["scsi-numa-local-alloc"]:
        err(f"{e['name']}: patches {e['patches']!r}")
    if not os.path.isfile(os.path.join(moddir, e["replaces"])):
        err(f"{e['name']}: replaces {e['replaces']!r}, which the kernel package does not have")
if sorted(names) != ["scsi_mod", "sd_mod"]:
    err(f"modules {names}, expected scsi_mod and sd_mod")
if m.get("already_upstream") != [{"series": "nvme-no-forced-node", "patch": nvme_fix}]:
    err(f"already_upstream {m.get('already_upstream')!r}")
for x in errors:
    print("  " + x)
sys.exit(1 if errors else 0)
EOF
	ok "manifest.json: valid, keys as documented, sha256/vermagic/srcversion match the files, replaces exist in the kernel package"
else
	fail "manifest.json (see above)"
fi

uts=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$headers/include/generated/utsrelease.h")
for m in scsi_mod sd_mod; do
	[[ -f $out/$m.ko ]] || continue
	vm=$(modinfo -F vermagic "$out/$m.ko")
	check "$m.ko vermagic '${vm% }' is for the headers' release $uts" [ "${vm%% *}" == "$uts" ]
	marker=$(modinfo -F numastor "$out/$m.ko" || true)
	check "modinfo -F numastor $m.ko = scsi-numa-local-alloc (got '$marker')" [ "$marker" == scsi-numa-local-alloc ]
	stock=$root/lib/modules/$krel/kernel/drivers/scsi/$m.ko
	check "stock $m.ko has no numastor marker (tells the two apart)" [ -z "$(modinfo -F numastor "$stock")" ]
	check "$m.ko depends on what the stock one does ($(modinfo -F depends "$stock"))" \
		[ "$(modinfo -F depends "$out/$m.ko")" == "$(modinfo -F depends "$stock")" ]
done

# Symbol versions: the built scsi_mod exports exactly Debian's symbols with Debian's CRCs,
# so every stock module that uses it (sd_mod, sg, megaraid_sas, virtio_scsi...) loads.
if [[ -f $out/scsi_mod.ko ]]; then
	want=$(awk -F'\t' '$3 == "drivers/scsi/scsi_mod" {print $2, $1}' "$headers/Module.symvers" | sort)
	got=$(python3 "$HERE/kosyms.py" exports "$out/scsi_mod.ko")
	n=$(grep -c . <<<"$want" || true)
	if [[ $want == "$got" && $n -gt 0 ]]; then
		ok "scsi_mod.ko exports the $n symbols of Debian's Module.symvers with the same CRCs"
	else
		fail "scsi_mod.ko exports differ from Debian's Module.symvers:"
		diff <(echo "$want") <(echo "$got") | head -20
	fi
	moddir=$root/lib/modules/$krel
	mapfile -t deps < <(awk -F': *' -v m=kernel/drivers/scsi/scsi_mod.ko \
		'$1 != m && index(" " $2 " ", " " m " ") {print $1}' "$moddir/modules.dep")
	if summary=$(cd "$moddir" && python3 "$HERE/kosyms.py" verify "$out/scsi_mod.ko" kernel/drivers/scsi/scsi_mod.ko "${deps[@]}"); then
		ok "every stock module using scsi_mod finds its symbols and CRCs in the built one: $summary"
	else
		fail "stock modules would not load against the built scsi_mod:"
		echo "$summary" | head -20
	fi
	has() { # (no pipe into grep -q: with pipefail, printf's SIGPIPE would fail it)
		local d
		for d in "${deps[@]}"; do [[ $d != */"$1".ko ]] || return 0; done
		return 1
	}
	check "those include sd_mod and megaraid_sas" eval 'has sd_mod && has megaraid_sas'
fi

# A series whose only functional patch is upstream builds nothing, and says so.
nlog=$work/build-modules-nvme-only.log
rm -rf "$work/nvme-only"
if "$KMOD/build-modules.sh" --headers "$headers" --source "$tarball" --series nvme-no-forced-node \
	--out "$work/nvme-only" --build-dir "$work/build" >"$nlog" 2>&1; then
	check "--series nvme-no-forced-node alone: \"nothing to build\"" grep -q "nothing to build" "$nlog"
	check "... no .ko written, manifest with \"modules\": [] and the upstream patch" \
		python3 -c 'import json,sys,glob; m=json.load(open(sys.argv[1]+"/manifest.json")); sys.exit(not (m["modules"]==[] and len(m["already_upstream"])==1 and not glob.glob(sys.argv[1]+"/*.ko")))' "$work/nvme-only"
else
	fail "build-modules.sh --series nvme-no-forced-node failed:"
	tail -5 "$nlog"
fi

# ------------------------------------------------------------------ nvme from a pre-fix 6.1 source
# Debian's 6.1.192 has the nvme fix, so build the series against its source with the fix
# reversed (tests/vm/prefix-nvme-6.1.patch): both nvme patches must then apply and nvme.ko carry
# the marker. This is the path a kernel older than 6.1.56 takes.
echo "== nvme-no-forced-node against $krel's source with the fix reversed"
psrc=$work/prefix-src
if [[ ! -f $psrc/.ready ]]; then
	rm -rf "$psrc" && mkdir -p "$psrc"
	tar -x -f "$tarball" -C "$psrc" --strip-components=1 "linux-source-$xy/Makefile" "linux-source-$xy/drivers/nvme/host"
	patch -p1 -s -d "$psrc" <"$TOP/tests/vm/prefix-nvme-6.1.patch" || die "tests/vm/prefix-nvme-6.1.patch does not apply"
	touch "$psrc/.ready"
fi
plog=$work/build-modules-prefix.log
if "$KMOD/build-modules.sh" --headers "$headers" --source "$psrc" --series nvme-no-forced-node \
	--out "$work/prefix-modules" --build-dir "$work/prefix-build" 2>&1 | tee "$plog"; then
	while IFS= read -r p; do
		check "nvme-no-forced-node/$p applied to the pre-fix source" grep -qE "nvme-no-forced-node/$p: (marker )?applied" "$plog"
	done < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$KMOD/nvme-no-forced-node/series")
	ko=$work/prefix-modules/nvme.ko
	check "nvme.ko built" [ -f "$ko" ]
	check "modinfo -F numastor nvme.ko = nvme-no-forced-node" [ "$(modinfo -F numastor "$ko" 2>/dev/null)" == nvme-no-forced-node ]
	check "nvme.ko has a srcversion, recorded in the manifest" \
		grep -q "\"srcversion\": \"$(modinfo -F srcversion "$ko" 2>/dev/null)\"" "$work/prefix-modules/manifest.json"
	check "its manifest lists nothing as already upstream" grep -q '"already_upstream": \[\]' "$work/prefix-modules/manifest.json"
else
	fail "build-modules.sh --series nvme-no-forced-node on the pre-fix source failed"
fi

# ------------------------------------------------------------------ refusals
echo "== refusals"
# A patch that neither applies nor is in the source stops the build before anything is written.
bad=$(mktemp -d)
trap 'rm -rf "$bad"' EXIT
cp -a "$KMOD/build-modules.sh" "$bad/" && mkdir "$bad/broken"
sed 's/kzalloc(size, GFP_KERNEL);/kzalloc(size, GFP_NOWAIT);/' \
	"$KMOD/scsi-numa-local-alloc/$(sed -n 1p "$KMOD/scsi-numa-local-alloc/series")" >"$bad/broken/0001-broken.patch"
echo 0001-broken.patch >"$bad/broken/series"
if "$bad/build-modules.sh" --headers "$headers" --source "$work/build/src" --out "$bad/out" \
	--build-dir "$bad/build" >"$bad/log" 2>&1; then
	fail "a patch that does not apply was accepted"
else
	check "a patch that does not apply stops the build, with the reason" \
		grep -q "broken/0001-broken.patch neither applies to this source nor is already in it" "$bad/log"
	check "... and writes nothing" [ ! -e "$bad/out" ]
fi
if "$KMOD/build-modules.sh" --headers "$headers" --kernel 6.1.0-0-bogus --out "$bad/out2" >"$bad/log2" 2>&1; then
	fail "--kernel that does not match --headers was accepted"
else
	check "--kernel that does not match --headers is refused" grep -q "is for kernel $krel, not 6.1.0-0-bogus" "$bad/log2"
fi
# A source of another version is refused (a module must come from the kernel's own source).
mkdir -p "$bad/oldsrc" && cp -a "$work/build/src/." "$bad/oldsrc/"
sed -i 's/^SUBLEVEL = .*/SUBLEVEL = 1/' "$bad/oldsrc/Makefile"
if "$KMOD/build-modules.sh" --headers "$headers" --source "$bad/oldsrc" --out "$bad/out3" \
	--build-dir "$bad/build3" >"$bad/log3" 2>&1; then
	fail "a source of another version was accepted"
else
	check "a source of another version (6.1.1) is refused" grep -q "the source is Linux $xy.1 but $krel is $kversion" "$bad/log3"
fi

# ------------------------------------------------------------------ dkms.conf
echo "== dkms.conf"
dk() { # KERNEL_SOURCE_DIR -> "names|locations|exclusive|make"
	(
		# shellcheck disable=SC2034 # what dkms sets before sourcing dkms.conf
		kernelver=$krel arch=x86_64 kernel_source_dir=$1
		# shellcheck disable=SC1091
		. "$KMOD/dkms.conf"
		# shellcheck disable=SC2153 # MAKE comes from dkms.conf
		printf '%s|%s|%s|%s|%s\n' "${BUILT_MODULE_NAME[*]}" "${DEST_MODULE_LOCATION[*]}" \
			"$BUILD_EXCLUSIVE_KERNEL" "${MAKE[0]}" "$PACKAGE_NAME ${#BUILT_MODULE_LOCATION[@]} ${#STRIP[@]} [$AUTOINSTALL]"
	)
}
IFS='|' read -r names locs excl make rest < <(dk "$headers")
check "dkms.conf: PACKAGE_NAME numastor-kmod, arrays of equal length, AUTOINSTALL empty ($rest)" \
	[ "$rest" == "numastor-kmod 2 2 []" ]
check "dkms.conf lists the modules this build makes for $krel ($names)" [ "$names" == "scsi_mod sd_mod" ]
check "dkms.conf installs under /updates ($locs)" bash -c '[[ " $1" =~ ^(\ /updates[^ ]*)+$ ]]' _ "$locs"
check "dkms.conf BUILD_EXCLUSIVE_KERNEL '$excl' matches $krel" bash -c '[[ $1 =~ $2 ]]' _ "$krel" "$excl"
check "dkms.conf BUILD_EXCLUSIVE_KERNEL '$excl' excludes 6.12.0-1-amd64" bash -c '! [[ $1 =~ $2 ]]' _ 6.12.0-1-amd64 "$excl"
check "dkms.conf MAKE calls build-modules.sh for \$kernelver with --no-install" \
	bash -c '[[ $1 == *"build-modules.sh --kernel $2 --headers $3 "*"--no-install"* ]]' _ "$make" "$krel" "$headers"
old=$bad/oldheaders
mkdir -p "$old" && sed '3s/.*/# Linux\/x86 6.1.50 Kernel Configuration/' "$headers/.config" >"$old/.config"
IFS='|' read -r names _ < <(dk "$old")
check "dkms.conf adds nvme for a 6.1 kernel before the 6.1.56 backport ($names)" [ "$names" == "scsi_mod sd_mod nvme" ]

finish
