# Shared settings for the VM test bed scripts (sourced, not run).
# shellcheck shell=bash

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # used by the scripts that source this
SRC_ROOT=$(cd "$VM_DIR/../.." && pwd)
# The kernel cache lives outside the source tree; reruns reuse it.
VM_CACHE=${NUMASTOR_VM_CACHE:-/var/cache/numastor-vm}

vm_log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
vm_die() { vm_log "error: $*"; exit 1; }

# The kernel lines the bed knows, and the one under test: NUMASTOR_VM_KERNEL (default 6.1,
# Debian 12's own). run-all.sh sets it for each line of NUMASTOR_VM_KERNELS in turn.
VM_LINES="5.10 6.1 6.12 6.12-cloud 7.2"
VM_KERNEL=${NUMASTOR_VM_KERNEL:-6.1}

# vm_line LINE: where Debian keeps the line, into
#   VM_SUITE      the suite apt fetches it from ("host": this machine's own apt sources; any
#                 other through the bed's private apt configuration, vm_apt)
#   VM_IMAGE_RE   the kernel release in a linux-image-RELEASE package name (extended regex)
#   VM_SRCLINE    the X.Y of linux-source-X.Y
#   VM_BUILDROOT  where a module for it is compiled: "host" (this machine's gcc and glibc fit
#                 the line's headers and kbuild tools) or the Debian suite of a debootstrapped
#                 build root (vm_buildroot; 5.10's headers call gcc-10, which Debian 12 lacks)
# 6.12 is Debian 13's generic build (trixie; gcc-14 and glibc 2.38 for its kbuild tools, a trixie
# build root): what a fleet installs with Debian 13, and the same upstream line as
# bookworm-backports' 6.12.95, which the bed ran until issue 33 (its capture stays a fixture,
# tests/fixtures/captures/6.12-bpo12). The cloud flavour is trixie's own too (Debian 13's cloud
# images): bookworm-backports' 6.12.95 cloud kernel double-faults in the ACPI bus scan on the
# bed's q35 machine under TCG (acpi_mipi_check_crs_csi2, measured), trixie's 6.12.118 boots.
# 7.2 is sid's (Debian 14 to be; gcc-16, a sid build root), the first 7.x line.
# shellcheck disable=SC2034 # read by the scripts that call it
vm_line() {
	case $1 in
	5.10) VM_SUITE=bullseye VM_IMAGE_RE='5\.10\.0-[0-9]+-amd64' VM_SRCLINE=5.10 VM_BUILDROOT=bullseye ;;
	6.1) VM_SUITE=host VM_IMAGE_RE='6\.1\.0-[0-9]+-amd64' VM_SRCLINE=6.1 VM_BUILDROOT=host ;;
	6.12) VM_SUITE=trixie VM_IMAGE_RE='6\.12\.[0-9]+\+deb13-amd64' VM_SRCLINE=6.12 VM_BUILDROOT=trixie ;;
	6.12-cloud)
		VM_SUITE=trixie VM_IMAGE_RE='6\.12\.[0-9]+\+deb13-cloud-amd64' VM_SRCLINE=6.12
		VM_BUILDROOT=trixie
		;;
	7.2) VM_SUITE=sid VM_IMAGE_RE='7\.2\.[0-9]+\+deb14-amd64' VM_SRCLINE=7.2 VM_BUILDROOT=sid ;;
	*) vm_die "unknown kernel line '$1' (the bed knows: $VM_LINES)" ;;
	esac
}

# The Debian package base of a kernel release: 6.1.0-57-amd64 -> 6.1.0-57,
# 6.12.95+deb12-cloud-amd64 -> 6.12.95+deb12 (linux-headers-BASE-common, and linux-kbuild-BASE
# where the kbuild package is per release rather than per line).
vm_release_base() {
	local b=${1%-amd64}
	echo "${b%-cloud}"
}

# The URI this machine's apt fetches Debian's SUITE from (its sources, whatever their format).
# shellcheck disable=SC2016 # apt-get expands $(CODENAME) itself
vm_apt_mirror() { # suite
	apt-get indextargets --format '$(CODENAME) $(ORIGIN) $(REPO_URI)' 2>/dev/null |
		awk -v s="$1" '$1 == s && $2 == "Debian" { print $3; exit }'
}

# apt-get / apt-cache on the bed's private apt configuration for SUITE under
# $VM_CACHE/apt/SUITE (its own sources.list, lists and archives; the machine's apt sources
# untouched). The mirrors are the ones this machine's apt uses for bookworm and
# bookworm-security. The lists are fetched at the first call, and again by `vm_apt SUITE
# apt-get update` (fetch-kernel.sh does that under NUMASTOR_VM_REFRESH=1).
vm_apt() { # suite apt-get|apt-cache args...
	local suite=$1 tool=$2 d="$VM_CACHE/apt/$1" mirror security
	shift 2
	if [[ ! -f "$d/sources.list" ]]; then
		mirror=$(vm_apt_mirror bookworm)
		security=$(vm_apt_mirror bookworm-security)
		[[ -n "$mirror" ]] || vm_die "this machine's apt has no Debian bookworm source to take the mirror from"
		mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
		{
			echo "deb $mirror $suite main"
			case $suite in
			*-backports | sid | unstable) ;; # no security suite of their own
			*) [[ -z "$security" ]] || echo "deb $security $suite-security main" ;;
			esac
		} > "$d/sources.list.tmp"
		mv "$d/sources.list.tmp" "$d/sources.list"
	fi
	local opts=(-o Dir::Etc::SourceList="$d/sources.list" -o Dir::Etc::SourceParts=/nonexistent
		-o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache" -o Dir::State::status=/dev/null
		-o APT::Architecture=amd64 -o Acquire::Languages=none)
	if [[ $tool == apt-get && ${1:-} == update ]] || [[ ! -f "$d/.ready" ]]; then
		apt-get "${opts[@]}" -q update >&2 || return 1
		touch "$d/.ready"
		[[ $tool == apt-get && ${1:-} == update ]] && return 0
	fi
	"$tool" "${opts[@]}" "$@"
}

# apt for the suite of the line in VM_SUITE (vm_line): this machine's own or the private one.
vm_line_apt() { # apt-get|apt-cache args...
	if [[ $VM_SUITE == host ]]; then
		"$@"
	else
		vm_apt "$VM_SUITE" "$@"
	fi
}

# The prepared kernel directory of the line under test (made by fetch-kernel.sh):
# $VM_CACHE/current-LINE.
vm_kernel_dir() {
	local d="$VM_CACHE/current-$VM_KERNEL"
	[[ -f "$d/.ready" ]] || vm_die "no prepared $VM_KERNEL kernel in $VM_CACHE (run NUMASTOR_VM_KERNEL=$VM_KERNEL tests/vm/fetch-kernel.sh)"
	readlink -f "$d"
}

# Does the kernel of KDIR (vm_kernel_dir) ship NAME as a loadable module (its modules.dep
# lists it, compressed or not)? The cloud flavour leaves out megaraid_sas, for one.
vm_kernel_has_module() { # kdir name
	local dep
	dep=$(echo "$1"/root/lib/modules/*/modules.dep)
	[[ -f "$dep" ]] && grep -Eq "/$2\.ko(\.xz|\.zst|\.gz)?:" "$dep"
}

# A Debian build root for compiling modules of a line whose headers this machine's toolchain
# cannot serve (vm_line's VM_BUILDROOT): debootstrap --variant=minbase SUITE with its gcc and
# make, once, into $VM_CACHE/buildroot-SUITE. Prints the directory.
vm_buildroot() { # suite
	local suite=$1 d="$VM_CACHE/buildroot-$1" mirror pkgs
	if [[ -f "$d/.ready" && "${NUMASTOR_VM_REFRESH:-0}" != 1 ]]; then
		echo "$d"
		return 0
	fi
	case $suite in
	bullseye) pkgs=gcc-10,make,libc6-dev,libelf1,libssl1.1,zlib1g,xz-utils ;;
	trixie) pkgs=gcc-14,make,libc6-dev,libelf1t64,libssl3t64,zlib1g,xz-utils,dwarves ;;
	sid) pkgs=gcc-16,make,libc6-dev,libelf1t64,libssl3t64,zlib1g,xz-utils,dwarves ;;
	*) vm_die "no build root known for Debian $suite" ;;
	esac
	[[ $(id -u) == 0 ]] || vm_die "making the $suite build root needs root (debootstrap)"
	PATH=$PATH:/usr/sbin:/sbin command -v debootstrap >/dev/null || vm_die "needs debootstrap (tools/install-deps)"
	mirror=$(vm_apt_mirror bookworm)
	[[ -n "$mirror" ]] || vm_die "this machine's apt has no Debian bookworm source to take the mirror from"
	vm_log "making the $suite build root in $d (debootstrap from $mirror)"
	rm -rf "$d"
	PATH=$PATH:/usr/sbin:/sbin debootstrap --variant=minbase --include="$pkgs" "$suite" "$d" "$mirror" \
		> "$d.log" 2>&1 || { tail -n 20 "$d.log" >&2; vm_die "debootstrap $suite failed (see $d.log)"; }
	rm -rf "$d/var/cache/apt/archives"/*.deb
	touch "$d/.ready"
	echo "$d"
}

# Run a command for the line of vm_line: on this machine, or inside the line's build root with
# each DIR given bind-mounted at its own path (a private mount namespace: nothing stays mounted).
vm_in_buildroot() { # "dir..." command args...
	local dirs=$1 root d
	shift
	if [[ $VM_BUILDROOT == host ]]; then
		"$@"
		return
	fi
	root=$(vm_buildroot "$VM_BUILDROOT") || return 1
	for d in $dirs; do mkdir -p "$root$d"; done
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private sh -c '
		root=$1 dirs=$2; shift 2
		for d in $dirs; do mount --bind "$d" "$root$d" || exit 1; done
		mount -t proc proc "$root/proc" || exit 1
		exec chroot "$root" /usr/bin/env PATH=/usr/bin:/bin "$@"' sh "$root" "$dirs" "$@"
}

# numastor's patched modules as tests/kmod/check-build.sh built them for RELEASE, copied into
# DEST (the guest's /vm/kmod; the scenarios copy them into /var/lib/numastor/modules/<release>/):
#   modules/         the build: scsi_mod.ko, sd_mod.ko, libata.ko, megaraid_sas.ko, mpt3sas.ko,
#                    lpfc.ko (the cloud flavour: the first three) and manifest.json (the nvme fix
#                    is upstream)
#   midlayer/        its manifest cut down to scsi_mod.ko and sd_mod.ko, for the scenarios that
#                    are not about the HBA drivers
#   prefix-modules/  nvme.ko patched and built against the pre-fix source (the marker)
#   nvme-only/       manifest.json of the nvme series alone: nothing to build
#   faults/          deliberately broken copies (fault-modules.py)
# Nothing is copied when the build is missing (vm_need_kmod in the guest says so).
vm_stage_kmod() { # release dest
	local kmod_build="$VM_CACHE/kmod-build/$1" dest=$2 d
	for d in modules prefix-modules nvme-only; do
		[[ -f "$kmod_build/$d/manifest.json" ]] || continue
		mkdir -p "$dest/$d"
		find "$kmod_build/$d" -maxdepth 1 -type f \( -name manifest.json -o -name '*.ko' \) \
			-exec cp -t "$dest/$d" {} +
	done
	# modules/ is the build as it came (the midlayer and the HBA drivers: libata, megaraid_sas,
	# mpt3sas, lpfc); midlayer/ the same manifest cut down to scsi_mod and sd_mod, which the
	# swap scenarios that are not about the HBA drivers load (stock HBA drivers load against
	# the patched scsi_mod: its CRCs are Debian's).
	if [[ -f "$dest/modules/manifest.json" ]]; then
		mkdir -p "$dest/midlayer"
		# line by line, keeping build-modules.sh's layout (one module a line: the scenarios
		# edit an entry with sed)
		python3 - "$dest/modules" "$dest/midlayer" <<'EOF' || vm_die "cutting the manifest down to the midlayer failed"
import json, re, shutil, sys
src, dst = sys.argv[1:]
lines, kept = open(f"{src}/manifest.json").read().splitlines(), []
for line in lines:
    m = re.match(r'^    \{"name": "([^"]+)"', line)
    if m and m.group(1) not in ("scsi_mod", "sd_mod"):
        continue
    kept.append(line)
mods = [i for i, l in enumerate(kept) if re.match(r'^    \{"name": ', l)]
for i in mods:
    kept[i] = kept[i].rstrip(",") + ("," if i != mods[-1] else "")
text = "\n".join(kept) + "\n"
names = [e["name"] for e in json.loads(text)["modules"]]
assert names == ["scsi_mod", "sd_mod"], names
for n in names:
    shutil.copy(f"{src}/{n}.ko", dst)
open(f"{dst}/manifest.json", "w").write(text)
EOF
	fi
	if [[ -f "$kmod_build/modules/sd_mod.ko" ]]; then
		mkdir -p "$dest/faults"
		python3 "$VM_DIR/fault-modules.py" "$kmod_build" "$dest/faults" ||
			vm_die "making the broken module copies failed"
	fi
}

# Debian's PACKAGE (the candidate version apt knows) and the EXTRA packages it needs beyond the
# host's libraries, dpkg -x'd once into $VM_CACHE/PACKAGE-<version>/root/, with $VM_CACHE/PACKAGE
# pointing at it; each CHECK path (relative to root/) must be an executable there. Prints the
# directory. A rerun finds .ready and does nothing; NUMASTOR_VM_REFRESH=1 looks for a newer
# version. What the binaries link beyond EXTRA comes from the host (build-initramfs.sh copies
# what ldd resolves).
vm_fetch_package() { # package "check paths" [extra packages...]
	local pkg=$1 checks=$2 ver dir deb c
	shift 2
	if [[ -f "$VM_CACHE/$pkg/.ready" && "${NUMASTOR_VM_REFRESH:-0}" != 1 ]]; then
		readlink -f "$VM_CACHE/$pkg"
		return 0
	fi
	mkdir -p "$VM_CACHE" || vm_die "cannot create the cache $VM_CACHE (set NUMASTOR_VM_CACHE)"
	ver=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
	if [[ ( -z "$ver" || "$ver" == "(none)" ) && $(id -u) == 0 ]]; then
		apt-get update -q >&2 || true
		ver=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
	fi
	[[ -n "$ver" && "$ver" != "(none)" ]] || vm_die "apt-cache knows no $pkg (run apt-get update)"
	dir="$VM_CACHE/$pkg-$ver"
	if [[ -f "$dir/.ready" ]]; then
		ln -sfn "${dir##*/}" "$VM_CACHE/$pkg"
		echo "$dir"
		return 0
	fi
	vm_log "preparing $pkg $ver in $dir"
	rm -rf "$dir" && mkdir -p "$dir/debs" "$dir/root"
	(cd "$dir/debs" && apt-get download -q "$pkg=$ver" "$@" 2>&1 |
		grep -v '^W: Download is performed unsandboxed' >&2) || vm_die "apt-get download failed"
	for deb in "$dir"/debs/*.deb; do
		dpkg -x "$deb" "$dir/root"
	done
	rm -rf "$dir/debs"
	for c in $checks; do
		[[ -x "$dir/root/$c" ]] || vm_die "unexpected package layout: no $c in $pkg"
	done
	echo "$ver" > "$dir/version"
	touch "$dir/.ready"
	ln -sfn "${dir##*/}" "$VM_CACHE/$pkg"
	vm_log "prepared $pkg $ver"
	echo "$dir"
}
