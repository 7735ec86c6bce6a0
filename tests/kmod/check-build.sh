#!/bin/bash
# shellcheck disable=SC2016 # bash -c and python -c scripts below get their values as arguments
# Build numastor's kernel patch series (kmod-patches/) against Debian's kernel of each line the
# VM bed knows and check the result: which patch forms apply and which are upstream, which
# modules were built, the manifest, the modinfo markers and the symbol CRCs the stock modules
# need, the pre-fix nvme builds, the refusals and dkms.conf.
#
#   tests/kmod/check-build.sh
#
# Lines: $NUMASTOR_KMOD_LINES when set (e.g. "5.10 6.1"), else $NUMASTOR_VM_KERNEL alone when
# set (what tests/vm/run-all.sh exports for the line it runs), else every line: 5.10 6.1 6.12
# 6.12-cloud 7.2. Each kernel comes from tests/vm/fetch-kernel.sh's cache
# (${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}); the matching linux-source-X.Y tarball is
# downloaded with apt-get once (the line's apt: this machine's, or the bed's private one) and
# kept as $VM_CACHE/kmod-source/linux-source-X.Y_<Debian version>.tar.xz; everything built
# goes to $VM_CACHE/kmod-build/<kernel release>/ ($NUMASTOR_KMOD_WORK/<release>/ when set), never
# into the tree, so a rerun takes seconds:
#   modules/              both series: scsi_mod.ko, sd_mod.ko, manifest.json
#   prefix-modules/       nvme-no-forced-node from the source with the fix reversed
#                         (tests/vm/prefix-nvme-LINE.patch): nvme.ko; not on the cloud flavour,
#                         which builds nvme in
#   nvme-only/            nvme-no-forced-node alone: manifest.json, nothing to build
#   prebackport-modules/  (5.10, 6.1) nvme-no-forced-node from the source as it was before the
#                         stable backport (tests/kmod/prebackport-nvme-LINE.patch): nvme.ko
# A line whose headers want another compiler than this machine's (tests/vm/lib.sh's
# VM_BUILDROOT) compiles in its build root (make-in-buildroot.sh).
# Each line's checks end with "kmod: all passed (N checks)" or "kmod: N failed (M passed)";
# with more than one line a summary over the lines follows, ending in "kmod: all N lines
# passed (M checks)" or "kmod: N of M lines failed". Exit 1 on any failure.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
KMOD=$TOP/kmod-patches
# shellcheck source-path=SCRIPTDIR source=../vm/lib.sh
. "$TOP/tests/vm/lib.sh"
# ok, fail, check
# shellcheck source-path=SCRIPTDIR source=../lib/checks.sh
. "$TOP/tests/lib/checks.sh"

for t in python3 modinfo patch make tar xz apt-get dpkg-deb; do
	command -v "$t" >/dev/null 2>&1 || PATH=$PATH:/sbin:/usr/sbin command -v "$t" >/dev/null 2>&1 || {
		echo "kmod: error: needs $t" >&2
		echo "kmod: setup failed"
		exit 1
	}
done
export PATH=$PATH:/sbin:/usr/sbin

if [[ -n ${NUMASTOR_KMOD_LINES:-} ]]; then
	LINES=$NUMASTOR_KMOD_LINES
elif [[ -n ${NUMASTOR_VM_KERNEL:-} ]]; then
	LINES=$NUMASTOR_VM_KERNEL
else
	LINES="5.10 6.1 6.12 6.12-cloud 7.2"
fi
for line in $LINES; do
	(vm_line "$line") || exit 1
done

# The patches of a series, in order (as build-modules.sh reads them).
series_patches() { sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$KMOD/$1/series"; }

# ------------------------------------------------------------------ one line
check_line() { # LINE
	local line=$1
	failed=0 passed=0 # counted by ok, fail and check (tests/lib/checks.sh)
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
		exit 0
	}

	vm_line "$line"
	local tmp
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# -------------------------------------------------------------- inputs
	echo "== the $line kernel: tests/vm/fetch-kernel.sh $line (cached in $VM_CACHE)"
	local kdir krel root headers kversion xy debver moddir
	kdir=$(NUMASTOR_VM_KERNEL=$line "$TOP/tests/vm/fetch-kernel.sh" "$line") || die "tests/vm/fetch-kernel.sh $line failed"
	krel=$(<"$kdir/release")
	root=$kdir/root
	headers=$root/usr/src/linux-headers-$krel
	moddir=$root/lib/modules/$krel
	[[ -f $headers/Module.symvers ]] || die "no headers in $headers"
	kversion=$(sed -n 's|^# Linux/[^ ]* \([0-9][0-9.]*\) Kernel Configuration$|\1|p' "$headers/.config" | head -n 1)
	xy=$(cut -d. -f1,2 <<<"$kversion")
	debver=$(sed -n 's/^#define LINUX_PACKAGE_ID " *Debian \([^ "]*\)".*/\1/p' "$headers/include/generated/package.h")
	[[ -n $kversion && -n $debver ]] || die "cannot tell the version of $headers"
	[[ $xy == "$VM_SRCLINE" ]] || die "$krel is Linux $kversion, not of the $VM_SRCLINE line"
	echo "kernel $krel (Linux $kversion, Debian $debver, $VM_SUITE), headers $headers"

	local tarball=$VM_CACHE/kmod-source/linux-source-${xy}_$debver.tar.xz
	if [[ ! -f $tarball ]]; then
		echo "downloading linux-source-$xy=$debver from $VM_SUITE (once; kept as $tarball)"
		local dl=$tmp/download
		mkdir -p "$dl" "$VM_CACHE/kmod-source"
		(cd "$dl" && vm_line_apt apt-get download -q "linux-source-$xy=$debver" 2>&1 |
			grep -v '^W: Download is performed unsandboxed') || die "apt-get download linux-source-$xy=$debver failed"
		dpkg-deb --fsys-tarfile "$dl"/linux-source-"$xy"_*.deb |
			tar -xO "./usr/src/linux-source-$xy.tar.xz" >"$tarball.tmp" || die "no linux-source-$xy.tar.xz in the package"
		mv "$tarball.tmp" "$tarball"
		rm -rf "$dl"
	fi
	echo "source $tarball"

	# NUMASTOR_KMOD_WORK: elsewhere than the bed's cache (a mutant's build must not replace it)
	local work=${NUMASTOR_KMOD_WORK:-$VM_CACHE/kmod-build}/$krel
	mkdir -p "$work"
	local out=$work/modules log=$work/build-modules.log
	# The line's compiler: this machine's, or its build root's with the kernel and build
	# directories bind-mounted (make-in-buildroot.sh).
	local mk=()
	if [[ $VM_BUILDROOT != host ]]; then
		mk=(--make "$HERE/make-in-buildroot.sh $line $kdir:$work")
		echo "compiling in the $VM_BUILDROOT build root (tests/vm/lib.sh vm_in_buildroot)"
	fi
	# The cloud flavour builds nvme in.
	local nvme_builtin=0
	grep -qx 'kernel/drivers/nvme/host/nvme.ko' "$moddir/modules.builtin" && nvme_builtin=1
	# What this line's stock modules are called (6.12's are .ko.xz): modules.dep's own names.
	stock_path() { # NAME -> path relative to $moddir, or nothing
		sed -n "s|^\\(kernel/[^:]*/$1\\.ko\\(\\.[a-z]*\\)\\?\\):.*|\\1|p" "$moddir/modules.dep" | head -n 1
	}

	# -------------------------------------------------------------- the patches themselves
	echo "== patch series"
	local s d p f field missing listed present forms
	for s in nvme-no-forced-node scsi-numa-local-alloc; do
		d=$KMOD/$s
		if [[ ! -f $d/series ]]; then
			fail "$s: no series file"
			continue
		fi
		listed=$(series_patches "$s" | sort)
		present=$(cd "$d" && printf '%s\n' *.patch | sort)
		check "$s: series lists exactly the patches of the directory" [ "$listed" == "$present" ]
		forms=$(cd "$d" && find . -mindepth 2 -name '*.patch' | sed 's|^\./||' | sort)
		for f in $forms; do
			check "$s/$f: a form of a patch the series lists" grep -qxF "${f##*/}" <<<"$listed"
		done
		check "$s/lines names $xy" bash -c 'sed "s/#.*//" "$1" | tr -s "[:blank:]" "\n" | grep -qxF "$2"' _ "$d/lines" "$xy"
		for p in $present $forms; do
			missing=()
			for field in '^From: ' '^Subject: \[PATCH' '^What: ' '^Why: ' '^Upstream: ' '^Applies: ' '^Module: ' '^diff --git '; do
				grep -q "$field" "$d/$p" || missing+=("${field//[\\^]/}")
			done
			check "$s/$p: header has From/Subject/What/Why/Upstream/Applies/Module${missing:+ (missing: ${missing[*]})}" \
				[ ${#missing[@]} -eq 0 ]
		done
	done

	# -------------------------------------------------------------- the kernel's own source
	echo "== kmod-patches/build-modules.sh against $krel (log: $log)"
	local t0=$SECONDS
	if ! "$KMOD/build-modules.sh" --kernel "$krel" --headers "$headers" --source "$tarball" \
		--modules-dir "$moddir" --out "$out" --build-dir "$work/build" "${mk[@]}" 2>&1 | tee "$log"; then
		fail "build-modules.sh failed (see above)"
		finish
	fi
	echo "(build-modules.sh took $((SECONDS - t0)) s)"
	local manifest=$out/manifest.json nvme_fix scsi_fix
	nvme_fix=$(series_patches nvme-no-forced-node | head -n 1)
	scsi_fix=$(series_patches scsi-numa-local-alloc | head -n 1)

	# The fix's form: the split one, or from v6.16 (7.2) the one beside the per-node descriptor pools.
	local nvme_form=""
	[[ $xy != 7.2 ]] || nvme_form=" (form descriptor-pools)"
	check "nvme-no-forced-node/$nvme_fix reported \"already upstream\" ($krel has the fix, in the ${nvme_form:+descriptor-pools }split form)" \
		grep -qxF "build-modules: nvme-no-forced-node/$nvme_fix: already upstream$nvme_form (the source contains it); not built for this patch" "$log"
	check "no nvme.ko built" [ ! -e "$out/nvme.ko" ]
	# scsi_alloc_sdev() declares its queue limits from 6.11: 6.12 and 7.2 take the queue-limits form.
	local want_form=""
	[[ $xy != 6.12 && $xy != 7.2 ]] || want_form=" (form queue-limits)"
	check "scsi-numa-local-alloc/$scsi_fix applied to linux-source-$xy $debver${want_form:- (the top-level form)}" \
		grep -qF "scsi-numa-local-alloc/$scsi_fix: applied$want_form (scsi_mod)" "$log"
	while IFS= read -r p; do
		[[ $p != "$scsi_fix" ]] || continue
		check "scsi-numa-local-alloc/$p applied to linux-source-$xy $debver" \
			grep -qE "scsi-numa-local-alloc/$p: (marker )?applied \(" "$log"
	done < <(series_patches scsi-numa-local-alloc)
	# The host allocation (0005) has a form per shape of scsi_host_alloc(); lpfc's caller (0009)
	# an older one on 5.10.
	local host_fix lpfc_fix host_form="" lpfc_form=""
	host_fix=$(series_patches scsi-numa-local-alloc | grep -m1 '^0005-')
	lpfc_fix=$(series_patches scsi-numa-local-alloc | grep -m1 '^0009-')
	case $xy in
	5.10) host_form=" (form isa-dma)" lpfc_form=" (form no-sg-tablesize-helper)" ;;
	6.12 | 7.2) host_form=" (form const-template)" ;;
	esac
	# sd_probe() allocates with the typed kzalloc_obj() from 7.0: 7.2 takes the typed-alloc form.
	if [[ $xy == 7.2 ]]; then
		check "scsi-numa-local-alloc/0002 applied to linux-source-$xy $debver in its typed-alloc form" \
			grep -qF "scsi-numa-local-alloc/$(series_patches scsi-numa-local-alloc | grep -m1 '^0002-'): applied (form typed-alloc) (sd_mod)" "$log"
	fi
	check "scsi-numa-local-alloc/$host_fix applied to linux-source-$xy $debver${host_form:- (the top-level form)}" \
		grep -qF "scsi-numa-local-alloc/$host_fix: applied$host_form (scsi_mod)" "$log"
	check "scsi-numa-local-alloc/$lpfc_fix applied to linux-source-$xy $debver${lpfc_form:- (the top-level form)}" \
		grep -qF "scsi-numa-local-alloc/$lpfc_fix: applied$lpfc_form (lpfc)" "$log"
	# The HBA drivers built: libata, and each of megaraid_sas, mpt3sas, lpfc that the kernel
	# builds as a module (the cloud flavour has none of them); the others said so.
	local m cfg hba_mods=(libata)
	for m in megaraid_sas:MEGARAID_SAS mpt3sas:SCSI_MPT3SAS lpfc:SCSI_LPFC; do
		cfg=$(sed -n "s/^CONFIG_${m#*:}=//p" "$headers/.config")
		if [[ $cfg == m ]]; then
			hba_mods+=("${m%%:*}")
		else
			check "${m%%:*} not built: the build says it is not enabled in $krel" \
				grep -qF "build-modules: warning: ${m%%:*} is not enabled in $krel" "$log"
		fi
	done
	local built_mods=(scsi_mod sd_mod "${hba_mods[@]}")
	for m in "${built_mods[@]}"; do
		check "$m.ko built" [ -f "$out/$m.ko" ]
	done

	# The manifest: exact keys, types, and every field checked against the files; "replaces"
	# is the stock module as the kernel package installs it (modules.dep's name).
	if python3 - "$manifest" "$out" "$krel" "$moddir" "$nvme_fix" "${built_mods[*]}" <<'EOF'; then
import hashlib, json, os, re, subprocess, sys
path, out, krel, moddir, nvme_fix, built = sys.argv[1:]
errors = []
def err(msg): errors.append(msg)
try:
    m = json.load(open(path))
except Exception as e:
    print(f"manifest.json is not valid JSON: {e}"); sys.exit(1)
stock = {}
for l in open(os.path.join(moddir, "modules.dep")):
    p = l.split(":", 1)[0]
    stock[re.sub(r"\.ko(\.[a-z]+)?$", "", os.path.basename(p)).replace("-", "_")] = p
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
        err(f"{e['name']}: file {e['file']!r} missing (the built module is a plain .ko)"); continue
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
    if e["replaces"] != stock.get(e["name"]):
        err(f"{e['name']}: replaces {e['replaces']!r}, but the kernel package has {stock.get(e['name'])!r}")
    elif not os.path.isfile(os.path.join(moddir, e["replaces"])):
        err(f"{e['name']}: replaces {e['replaces']!r}, which the kernel package does not have")
if sorted(names) != sorted(built.split()):
    err(f"modules {names}, expected {built}")
if m.get("already_upstream") != [{"series": "nvme-no-forced-node", "patch": nvme_fix}]:
    err(f"already_upstream {m.get('already_upstream')!r}")
for x in errors:
    print("  " + x)
sys.exit(1 if errors else 0)
EOF
		ok "manifest.json: valid, keys as documented, modules ${built_mods[*]}, sha256/vermagic/srcversion match the files, replaces = the stock modules' own files ($(stock_path scsi_mod), $(stock_path sd_mod), ...)"
	else
		fail "manifest.json (see above)"
	fi

	local uts vm marker stock
	uts=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$headers/include/generated/utsrelease.h")
	for m in "${built_mods[@]}"; do
		[[ -f $out/$m.ko ]] || continue
		vm=$(modinfo -F vermagic "$out/$m.ko")
		check "$m.ko vermagic '${vm% }' is for the headers' release $uts" [ "${vm%% *}" == "$uts" ]
		marker=$(modinfo -F numastor "$out/$m.ko" || true)
		check "modinfo -F numastor $m.ko = scsi-numa-local-alloc (got '$marker')" [ "$marker" == scsi-numa-local-alloc ]
		stock=$moddir/$(stock_path "$m")
		check "stock ${stock##*/} has no numastor marker (tells the two apart)" [ -z "$(modinfo -F numastor "$stock")" ]
		check "$m.ko depends on what the stock one does ($(modinfo -F depends "$stock"))" \
			[ "$(modinfo -F depends "$out/$m.ko")" == "$(modinfo -F depends "$stock")" ]
	done

	# Symbol versions: the built scsi_mod exports Debian's symbols with Debian's CRCs, so every
	# stock module that uses it (sd_mod, sg, megaraid_sas, virtio_scsi...) loads, and one more,
	# scsi_host_alloc_node (0005), for the patched HBA drivers.
	# A kernel without CONFIG_MODVERSIONS (Debian's 7.2) versions no symbol: the checks below
	# then compare names only (kosyms.py reads CRC 0 for all, as its Module.symvers says).
	local nocrc=""
	grep -qx 'CONFIG_MODVERSIONS=y' "$headers/.config" || nocrc=" (names only: $krel has no CONFIG_MODVERSIONS)"
	if [[ -f $out/scsi_mod.ko ]]; then
		local want got n scsi_stock deps summary
		want=$(awk -F'\t' '$3 == "drivers/scsi/scsi_mod" {print $2, $1}' "$headers/Module.symvers" | sort)
		got=$(python3 "$HERE/kosyms.py" exports "$out/scsi_mod.ko")
		n=$(grep -c . <<<"$want" || true)
		if [[ $want == "$(grep -v '^scsi_host_alloc_node ' <<<"$got")" && $n -gt 0 ]] &&
			grep -q '^scsi_host_alloc_node 0x' <<<"$got" && ! grep -q '^scsi_host_alloc_node ' <<<"$want"; then
			ok "scsi_mod.ko exports the $n symbols of Debian's $krel Module.symvers with the same CRCs, and scsi_host_alloc_node$nocrc"
		else
			fail "scsi_mod.ko exports are not Debian's Module.symvers plus scsi_host_alloc_node:"
			diff <(echo "$want") <(echo "$got") | head -20
		fi
		scsi_stock=$(stock_path scsi_mod)
		mapfile -t deps < <(awk -F': *' -v m="$scsi_stock" \
			'$1 != m && index(" " $2 " ", " " m " ") {print $1}' "$moddir/modules.dep")
		if summary=$(cd "$moddir" && python3 "$HERE/kosyms.py" verify "$out/scsi_mod.ko" "$scsi_stock" \
			--extra-export scsi_host_alloc_node "${deps[@]}"); then
			ok "every stock module using scsi_mod finds its symbols and CRCs in the built one$nocrc: $summary"
		else
			fail "stock modules would not load against the built scsi_mod:"
			echo "$summary" | head -20
		fi
		# shellcheck disable=SC2317 # has and all_have run through check
		has() { # (no pipe into grep -q: with pipefail, printf's SIGPIPE would fail it)
			local d
			for d in "${deps[@]}"; do [[ $d != */"$1".ko* ]] || return 0; done
			return 1
		}
		# The cloud flavour ships no megaraid_sas.
		local hbas="sd_mod virtio_scsi"
		[[ -z $(stock_path megaraid_sas) ]] || hbas+=" megaraid_sas"
		# shellcheck disable=SC2317
		all_have() {
			local x
			for x in $hbas; do has "$x" || return 1; done
		}
		check "those include $hbas" all_have

		# The patched HBA drivers call scsi_host_alloc_node instead of scsi_host_alloc, with the
		# CRC the built scsi_mod exports it with; every other import is the stock module's.
		for m in "${hba_mods[@]}"; do
			[[ -f $out/$m.ko ]] || continue
			if summary=$(cd "$moddir" && python3 "$HERE/kosyms.py" caller "$out/$m.ko" "$(stock_path "$m")" \
				"$out/scsi_mod.ko" scsi_host_alloc scsi_host_alloc_node); then
				ok "$m.ko imports the stock $m's symbols and CRCs, scsi_host_alloc_node (the built scsi_mod's CRC) for scsi_host_alloc$nocrc: $summary"
			else
				fail "$m.ko imports differ from the stock $m's but for scsi_host_alloc_node:"
				echo "$summary" | head -20
			fi
		done
	fi
	# libata is also a library: ahci, libahci, ata_piix... load against the patched one.
	if [[ -f $out/libata.ko ]]; then
		local libata_stock ldeps lsummary
		libata_stock=$(stock_path libata)
		mapfile -t ldeps < <(awk -F': *' -v m="$libata_stock" \
			'$1 != m && index(" " $2 " ", " " m " ") {print $1}' "$moddir/modules.dep")
		if lsummary=$(cd "$moddir" && python3 "$HERE/kosyms.py" verify "$out/libata.ko" "$libata_stock" "${ldeps[@]}"); then
			ok "every stock module using libata finds its symbols and CRCs in the built one$nocrc: $lsummary"
		else
			fail "stock modules would not load against the built libata:"
			echo "$lsummary" | head -20
		fi
	fi

	# A series whose only functional patch is upstream builds nothing, and says so.
	local nlog=$work/build-modules-nvme-only.log
	rm -rf "$work/nvme-only"
	if "$KMOD/build-modules.sh" --headers "$headers" --source "$tarball" --series nvme-no-forced-node \
		--modules-dir "$moddir" --out "$work/nvme-only" --build-dir "$work/build" "${mk[@]}" >"$nlog" 2>&1; then
		check "--series nvme-no-forced-node alone: \"nothing to build\"" grep -q "nothing to build" "$nlog"
		check "... no .ko written, manifest with \"modules\": [] and the upstream patch" \
			python3 -c 'import json,sys,glob; m=json.load(open(sys.argv[1]+"/manifest.json")); sys.exit(not (m["modules"]==[] and len(m["already_upstream"])==1 and not glob.glob(sys.argv[1]+"/*.ko")))' "$work/nvme-only"
	else
		fail "build-modules.sh --series nvme-no-forced-node failed:"
		tail -5 "$nlog"
	fi

	# -------------------------------------------------------------- nvme from pre-fix sources
	# A copy of the extracted source (Makefile, drivers/nvme/host, drivers/scsi) with a test
	# patch applied, kept while the extraction and the patch are the same.
	nvme_source() { # DIR PATCH
		local dir=$1 patch=$2 key
		key="full $(<"$work/build/src/.numastor-source-key") $(sha256sum <"$patch" | cut -d' ' -f1)"
		if [[ -f $dir/.ready && $(<"$dir/.ready") == "$key" ]]; then return 0; fi
		rm -rf "$dir" && cp -a "$work/build/src" "$dir" && rm -f "$dir/.numastor-source-key"
		patch -p1 -s -d "$dir" <"$patch" || die "${patch#"$TOP"/} does not apply to linux-source-$xy $debver"
		echo "$key" >"$dir/.ready"
	}
	# what a module imports, from its symbol table (7.2 has no symbol versions to read it from)
	nvme_imports() { python3 "$HERE/kosyms.py" undefined "$1"; }

	# The fix reversed (tests/vm/prefix-nvme-LINE.patch, the VM bed's pre-fix driver): the
	# split form of the fix applies. The cloud flavour builds nvme in: nothing to replace.
	echo "== nvme-no-forced-node against $krel's source with the fix reversed (tests/vm/prefix-nvme-$xy.patch)"
	local psrc=$work/prefix-src plog=$work/build-modules-prefix.log ko
	nvme_source "$psrc" "$TOP/tests/vm/prefix-nvme-$xy.patch"
	if ((nvme_builtin)); then
		rm -rf "$work/prefix-modules"
		if "$KMOD/build-modules.sh" --headers "$headers" --source "$psrc" --series nvme-no-forced-node \
			--modules-dir "$moddir" --out "$tmp/prefix-out" --build-dir "$work/prefix-build" "${mk[@]}" >"$plog" 2>&1; then
			check "nvme-no-forced-node/$nvme_fix applies to the pre-fix source" grep -qF "nvme-no-forced-node/$nvme_fix: applied (nvme)" "$plog"
			check "... but nvme is built into $krel: \"a module cannot replace it\", no nvme.ko (no prefix-modules/ on this flavour)" \
				bash -c 'grep -q "nvme is built into .*a module cannot replace it" "$1" && ! [ -e "$2/nvme.ko" ]' _ "$plog" "$tmp/prefix-out"
		else
			fail "build-modules.sh on the pre-fix source failed:"
			tail -5 "$plog"
		fi
	elif "$KMOD/build-modules.sh" --headers "$headers" --source "$psrc" --series nvme-no-forced-node \
		--modules-dir "$moddir" --out "$work/prefix-modules" --build-dir "$work/prefix-build" "${mk[@]}" 2>&1 | tee "$plog"; then
		check "nvme-no-forced-node/$nvme_fix applied to the pre-fix source, in its ${nvme_form:+descriptor-pools }split form" \
			grep -qF "nvme-no-forced-node/$nvme_fix: applied$nvme_form (nvme)" "$plog"
		while IFS= read -r p; do
			[[ $p != "$nvme_fix" ]] || continue
			check "nvme-no-forced-node/$p applied to the pre-fix source" grep -qE "nvme-no-forced-node/$p: (marker )?applied" "$plog"
		done < <(series_patches nvme-no-forced-node)
		ko=$work/prefix-modules/nvme.ko
		check "nvme.ko built" [ -f "$ko" ]
		check "modinfo -F numastor nvme.ko = nvme-no-forced-node" [ "$(modinfo -F numastor "$ko" 2>/dev/null)" == nvme-no-forced-node ]
		check "nvme.ko has a srcversion, recorded in the manifest" \
			grep -q "\"srcversion\": \"$(modinfo -F srcversion "$ko" 2>/dev/null)\"" "$work/prefix-modules/manifest.json"
		check "its manifest lists nothing as already upstream" grep -q '"already_upstream": \[\]' "$work/prefix-modules/manifest.json"
		check "its manifest replaces $(stock_path nvme)" grep -qF "\"replaces\": \"$(stock_path nvme)\"" "$work/prefix-modules/manifest.json"
		# The forcing code needs first_memory_node, i.e. node_states: the VM bed's pre-fix
		# driver imports it, the patched one must not.
		check "the bed's pre-fix nvme.ko imports node_states (the forcing code), the patched one does not" \
			bash -c 'grep -qx node_states <<<"$1" && ! grep -qx node_states <<<"$2"' _ \
			"$(nvme_imports "$kdir/prefix-nvme/nvme.ko")" "$(nvme_imports "$ko")"
	else
		fail "build-modules.sh --series nvme-no-forced-node on the pre-fix source failed"
	fi

	# Before the stable backport (5.10 < 5.10.198, 6.1 < 6.1.56): nvme_probe() unsplit, the
	# forcing lines in it (tests/kmod/prebackport-nvme-LINE.patch). Only the unsplit-probe form
	# of the fix applies there.
	local bpatch=$HERE/prebackport-nvme-$xy.patch bsrc=$work/prebackport-src blog=$work/build-modules-prebackport.log
	if [[ -f $bpatch ]] && ((!nvme_builtin)); then
		echo "== nvme-no-forced-node against $krel's source as before the stable backport (tests/kmod/${bpatch##*/})"
		nvme_source "$bsrc" "$bpatch"
		check "the pre-backport source has no nvme_pci_alloc_dev() and forces the node in nvme_probe()" \
			bash -c '! grep -q nvme_pci_alloc_dev "$1" && grep -A12 "^static int nvme_probe" "$1" | grep -q "set_dev_node(&pdev->dev, first_memory_node)"' \
			_ "$bsrc/drivers/nvme/host/pci.c"
		t0=$SECONDS
		if "$KMOD/build-modules.sh" --headers "$headers" --source "$bsrc" --series nvme-no-forced-node \
			--modules-dir "$moddir" --out "$work/prebackport-modules" --build-dir "$work/prebackport-build" "${mk[@]}" 2>&1 | tee "$blog"; then
			echo "(build-modules.sh took $((SECONDS - t0)) s)"
			check "nvme-no-forced-node/$nvme_fix applied in its unsplit-probe form" \
				grep -qF "nvme-no-forced-node/$nvme_fix: applied (form unsplit-probe) (nvme)" "$blog"
			while IFS= read -r p; do
				[[ $p != "$nvme_fix" ]] || continue
				check "nvme-no-forced-node/$p applied to the pre-backport source" grep -qE "nvme-no-forced-node/$p: (marker )?applied" "$blog"
			done < <(series_patches nvme-no-forced-node)
			ko=$work/prebackport-modules/nvme.ko
			check "nvme.ko built, marker nvme-no-forced-node" [ "$(modinfo -F numastor "$ko" 2>/dev/null)" == nvme-no-forced-node ]
			check "... for $krel" [ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" == "$krel" ]
			check "... without the forcing code (no node_states import)" bash -c '! grep -qx node_states <<<"$1"' _ "$(nvme_imports "$ko")"
			check "its manifest lists nothing as already upstream" grep -q '"already_upstream": \[\]' "$work/prebackport-modules/manifest.json"
		else
			fail "build-modules.sh --series nvme-no-forced-node on the pre-backport source failed"
		fi
	fi

	# -------------------------------------------------------------- refusals
	echo "== refusals"
	local bad=$tmp/bad
	mkdir -p "$bad"
	# A patch that neither applies nor is in the source stops the build before anything is written.
	cp -a "$KMOD/build-modules.sh" "$bad/" && mkdir "$bad/broken"
	sed 's/kzalloc(size, GFP_KERNEL);/kzalloc(size, GFP_NOWAIT);/' "$KMOD/scsi-numa-local-alloc/$scsi_fix" >"$bad/broken/0001-broken.patch"
	echo 0001-broken.patch >"$bad/broken/series"
	if "$bad/build-modules.sh" --headers "$headers" --source "$work/build/src" --out "$bad/out" \
		--build-dir "$bad/build" "${mk[@]}" >"$bad/log" 2>&1; then
		fail "a patch that does not apply was accepted"
	else
		check "a patch that does not apply stops the build, with the reason" \
			grep -q "broken/0001-broken.patch neither applies to this source nor is already in it" "$bad/log"
		check "... and writes nothing" [ ! -e "$bad/out" ]
	fi
	# Two forms of one patch that both apply (the form this line takes, twice): the build
	# refuses to guess.
	rm -rf "$bad/broken"
	local fitting=$KMOD/scsi-numa-local-alloc/$scsi_fix
	[[ $xy != 6.12 && $xy != 7.2 ]] || fitting=$KMOD/scsi-numa-local-alloc/queue-limits/$scsi_fix
	mkdir -p "$bad/twice/again" && cp "$fitting" "$bad/twice/$scsi_fix" && cp "$fitting" "$bad/twice/again/$scsi_fix"
	echo "$scsi_fix" >"$bad/twice/series"
	echo "4.19 # not this line" >"$bad/twice/lines"
	if "$bad/build-modules.sh" --headers "$headers" --source "$work/build/src" --out "$bad/out4" \
		--build-dir "$bad/build" "${mk[@]}" >"$bad/log4" 2>&1; then
		fail "two forms of one patch that both apply were accepted"
	else
		check "two forms of one patch that both apply: refused (\"its forms disagree\")" grep -q "twice/$scsi_fix: its forms disagree" "$bad/log4"
	fi
	check "a series whose lines file does not name $xy: warned about" \
		grep -qF "warning: series twice is written and checked for the kernel lines 4.19, not $xy" "$bad/log4"
	rm -rf "$bad/twice"
	if "$KMOD/build-modules.sh" --headers "$headers" --kernel 6.1.0-0-bogus --out "$bad/out2" "${mk[@]}" >"$bad/log2" 2>&1; then
		fail "--kernel that does not match --headers was accepted"
	else
		check "--kernel that does not match --headers is refused" grep -q "is for kernel $krel, not 6.1.0-0-bogus" "$bad/log2"
	fi
	# A source of another version is refused (a module must come from the kernel's own source).
	mkdir -p "$bad/oldsrc" && cp -a "$work/build/src/." "$bad/oldsrc/"
	sed -i 's/^SUBLEVEL = .*/SUBLEVEL = 1/' "$bad/oldsrc/Makefile"
	if "$KMOD/build-modules.sh" --headers "$headers" --source "$bad/oldsrc" --out "$bad/out3" \
		--build-dir "$bad/build3" "${mk[@]}" >"$bad/log3" 2>&1; then
		fail "a source of another version was accepted"
	else
		check "a source of another version ($xy.1) is refused" grep -q "the source is Linux $xy.1 but $krel is $kversion" "$bad/log3"
	fi

	# -------------------------------------------------------------- dkms.conf
	echo "== dkms.conf"
	# the source as installed (/usr/src/numastor-VERSION): kmod-patches with PACKAGE_VERSION
	# filled in from meson.build's version
	local pkgver dkms_src=$work/dkms-src
	pkgver=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$TOP/meson.build" | head -n 1)
	rm -rf "$dkms_src" && cp -a "$KMOD" "$dkms_src"
	sed -i "s/@PACKAGE_VERSION@/$pkgver/" "$dkms_src/dkms.conf"
	# What DKMS reads from dkms.conf for a kernel, sourced the way dkms does (a subshell;
	# NUMASTOR_KMOD_SOURCE / NUMASTOR_KMOD_BUILD_DIR stand in for /usr/src/linux-source-X.Y and
	# /var/cache/numastor, which this machine does not have for these kernels).
	dk() { # KERNELVER KERNEL_SOURCE_DIR SOURCE BUILD_DIR [DKMS_TREE] -> names, locations, exclusive, make, rest (\x1f between)
		(
			# shellcheck disable=SC2034 # what dkms sets before sourcing dkms.conf
			kernelver=$1 arch=x86_64 kernel_source_dir=$2
			export NUMASTOR_KMOD_SOURCE=$3 NUMASTOR_KMOD_BUILD_DIR=$4
			if [[ -n ${5:-} ]]; then
				# shellcheck disable=SC2034
				dkms_tree=$5 module=numastor module_version=$pkgver
			fi
			# shellcheck disable=SC1091
			. "$dkms_src/dkms.conf" >/dev/null
			# shellcheck disable=SC2153 # MAKE comes from dkms.conf
			printf '%s\x1f%s\x1f%s\x1f%s\x1f%s\n' "${BUILT_MODULE_NAME[*]}" "${DEST_MODULE_LOCATION[*]}" \
				"$BUILD_EXCLUSIVE_KERNEL" "${MAKE[0]}" "$PACKAGE_NAME $PACKAGE_VERSION ${#BUILT_MODULE_LOCATION[@]} ${#STRIP[@]} [$AUTOINSTALL]"
		)
	}
	local names locs excl make rest
	IFS=$'\x1f' read -r names locs excl make rest < <(dk "$krel" "$headers" "$tarball" "$work/build")
	check "dkms.conf: PACKAGE_NAME numastor, PACKAGE_VERSION meson.build's ($pkgver) once installed, arrays of equal length, AUTOINSTALL empty ($rest)" \
		[ "$rest" == "numastor $pkgver ${#built_mods[@]} ${#built_mods[@]} []" ]
	check "dkms.conf lists the modules build-modules.sh makes for $krel's source ($names)" [ "$names" == "${built_mods[*]}" ]
	check "dkms.conf installs under /updates ($locs)" bash -c '[[ " $1" =~ ^(\ /updates[^ ]*)+$ ]]' _ "$locs"
	check "dkms.conf BUILD_EXCLUSIVE_KERNEL '$excl' matches $krel" bash -c '[[ $1 =~ $2 ]]' _ "$krel" "$excl"
	local other
	for other in 5.15.0-1-amd64 6.6.0-1-amd64 4.19.0-27-amd64 6.10.0-1-amd64 6.120.0-1-amd64; do
		check "dkms.conf BUILD_EXCLUSIVE_KERNEL excludes $other (a line no series is written for)" bash -c '! [[ $1 =~ $2 ]]' _ "$other" "$excl"
	done
	check "dkms.conf MAKE calls build-modules.sh for \$kernelver with --no-install and the series of $xy" \
		bash -c '[[ $1 == *"build-modules.sh --kernel $2 --headers $3 "*"--no-install"*"--series nvme-no-forced-node scsi-numa-local-alloc"* ]]' _ "$make" "$krel" "$headers"
	if [[ -f $bpatch ]] && ((!nvme_builtin)); then
		IFS=$'\x1f' read -r names _ < <(dk "$krel" "$headers" "$bsrc" "$work/prebackport-build")
		check "dkms.conf adds nvme for a source without the fix (the pre-backport one: $names)" [ "$names" == "nvme ${built_mods[*]}" ]
	fi
	# Once DKMS has built a kernel, dkms.conf lists what it built (install and remove use it).
	mkdir -p "$bad/dkms/numastor/$pkgver/$krel/x86_64/module"
	touch "$bad/dkms/numastor/$pkgver/$krel/x86_64/module/"{nvme,sd_mod}.ko.xz
	IFS=$'\x1f' read -r names _ < <(dk "$krel" "$headers" /nonexistent "$bad/nobuild" "$bad/dkms")
	check "dkms.conf lists the modules DKMS built for $krel when there are any ($names)" [ "$names" == "nvme sd_mod" ]

	finish
}

# ------------------------------------------------------------------ every line
n_lines=$(wc -w <<<"$LINES")
results=$(mktemp)
trap 'rm -f "$results"' EXIT
status=0
for line in $LINES; do
	echo "=============== kmod: kernel line $line"
	t_line=$SECONDS
	set +e
	(check_line "$line") 2>&1 | tee "$results.line"
	rc=${PIPESTATUS[0]}
	set -e
	verdict=$(grep '^kmod: ' "$results.line" | tail -n 1)
	krel=$(readlink -f "$VM_CACHE/current-$line" 2>/dev/null || true)
	printf '%s (%s, %d s): %s\n' "$line" "${krel##*/}" "$((SECONDS - t_line))" "${verdict#kmod: }" >>"$results"
	((rc == 0)) || status=1
done
rm -f "$results.line"
if ((n_lines > 1)); then
	echo "=============== kmod: summary over kernel lines"
	cat "$results"
	total=$(sed -n 's/.*all passed (\([0-9]*\) checks)$/\1/p' "$results" | awk '{ n += $1 } END { print n + 0 }')
	bad_lines=$(grep -vc ': all passed (' "$results" || true)
	if ((status == 0)); then
		echo "kmod: all $n_lines lines passed ($total checks)"
	else
		echo "kmod: $bad_lines of $n_lines lines failed"
	fi
fi
exit "$status"
