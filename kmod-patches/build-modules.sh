#!/bin/bash
# build-modules.sh: build numastor's patched kernel modules for one kernel, out of tree.
#
#   build-modules.sh [--kernel KVER] [--headers DIR] [--source TARBALL|DIR] [--out DIR]
#                    [--series NAME...] [--build-dir DIR] [--modules-dir DIR] [--jobs N]
#                    [--make COMMAND] [--no-install] [--allow-version-mismatch]
#                    [--list-modules]
#
# For the running kernel (uname -r) or the one named, it finds the kernel's build tree,
# obtains the kernel's source the distribution's way (Debian: /usr/src/linux-source-X.Y.tar.xz
# from the linux-source-X.Y package), extracts only the driver directories the patched
# modules need, decides per patch whether the source already contains it ("already
# upstream") or which of the patch's forms fits it, applies those, builds the affected
# modules against the headers and writes them with manifest.json to the output directory
# (default /var/lib/numastor/modules/<KVER>/). See README.md next to this script.
set -euo pipefail
umask 022
export LC_ALL=C

PROG=build-modules
KMOD_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SELF="$KMOD_DIR/$(basename "${BASH_SOURCE[0]}")"

LIST_ONLY=0
# Progress goes to stdout, except with --list-modules, whose stdout is the module list.
say() { if ((LIST_ONLY)); then printf '%s: %s\n' "$PROG" "$*" >&2; else printf '%s: %s\n' "$PROG" "$*"; fi; }
warn() { printf '%s: warning: %s\n' "$PROG" "$*" >&2; }
die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 1
}

usage() {
	cat <<'EOF'
usage: build-modules.sh [options]

Build numastor's patched kernel modules (kmod-patches/<series>/) for one kernel.

  --kernel KVER          kernel release to build for (default: the running kernel, uname -r;
                         with --headers alone: the release of those headers)
  --headers DIR          the kernel's build tree (default: /lib/modules/KVER/build)
  --source TARBALL|DIR   the kernel's source: a tarball (.tar.xz/.tar.gz/.tar.bz2/.tar) or
                         a source tree (default: $NUMASTOR_KMOD_SOURCE if set, else, Debian,
                         /usr/src/linux-source-X.Y.tar.xz of the linux-source-X.Y package at
                         the kernel's own version)
  --out DIR              where the .ko files and manifest.json go
                         (default: /var/lib/numastor/modules/KVER)
  --series NAME...       only these series (default: every kmod-patches/*/series)
  --build-dir DIR        extraction and compile directory, kept for fast reruns
                         (default: $NUMASTOR_KMOD_BUILD_DIR if set, else
                         /var/cache/numastor/kmod-build/KVER)
  --modules-dir DIR      the kernel's installed modules, where the stock modules the
                         manifest's "replaces" names are looked up (default: /lib/modules/KVER)
  --jobs N               parallel compile jobs (default: nproc)
  --make COMMAND         what runs kbuild's make (split on spaces; the make arguments follow),
                         e.g. a wrapper entering a build root whose compiler is the kernel's
                         (default: make, with the kernel's compiler installed here)
  --no-install           never install linux-source-X.Y with apt-get
  --allow-version-mismatch
                         build even when the source's version differs from the headers'
  --list-modules         only decide: print the modules a build would make (one per line)
                         and exit, building and writing nothing (dkms.conf asks this)
  -h, --help             this text
EOF
}

# Modules the series may touch: name -> directory in the kernel tree.
declare -A MOD_DIR=(
	[nvme]=drivers/nvme/host
	[scsi_mod]=drivers/scsi
	[sd_mod]=drivers/scsi
	[libata]=drivers/ata
	[megaraid_sas]=drivers/scsi/megaraid
	[mpt3sas]=drivers/scsi/mpt3sas
	[lpfc]=drivers/scsi/lpfc
)
KNOWN_MODULES=(nvme scsi_mod sd_mod libata megaraid_sas mpt3sas lpfc)
# What is extracted from the source (tar patterns below the top directory; no '*' crosses '/').
SOURCE_PARTS=(Makefile drivers/nvme/host drivers/scsi/Makefile 'drivers/scsi/*.c' 'drivers/scsi/*.h'
	drivers/ata/Makefile 'drivers/ata/*.c' 'drivers/ata/*.h' drivers/scsi/megaraid drivers/scsi/mpt3sas
	drivers/scsi/lpfc)

KVER="" HEADERS="" SOURCE="" OUT="" BUILD="" JOBS="" NO_INSTALL=0 ALLOW_MISMATCH=0
MODULES_DIR="" MAKE_CMD=""
SERIES=()

parse_args() {
	while (($#)); do
		case $1 in
		--kernel | --headers | --source | --out | --build-dir | --modules-dir | --jobs | --make)
			if (($# < 2)) || [[ -z $2 ]]; then die "$1 needs a value"; fi
			case $1 in
			--kernel) KVER=$2 ;;
			--headers) HEADERS=$2 ;;
			--source) SOURCE=$2 ;;
			--out) OUT=$2 ;;
			--build-dir) BUILD=$2 ;;
			--modules-dir) MODULES_DIR=$2 ;;
			--jobs) JOBS=$2 ;;
			--make) MAKE_CMD=$2 ;;
			esac
			shift 2
			;;
		--kernel=* | --headers=* | --source=* | --out=* | --build-dir=* | --modules-dir=* | --jobs=* | --make=*)
			local opt=${1%%=*}
			parse_args "$opt" "${1#*=}"
			shift
			;;
		--series)
			shift
			while (($#)) && [[ $1 != -* ]]; do
				SERIES+=("$1")
				shift
			done
			;;
		--series=*)
			SERIES+=("${1#*=}")
			shift
			;;
		--no-install) NO_INSTALL=1 && shift ;;
		--allow-version-mismatch) ALLOW_MISMATCH=1 && shift ;;
		--list-modules) LIST_ONLY=1 && NO_INSTALL=1 && shift ;;
		-h | --help) usage && exit 0 ;;
		*) usage >&2 && die "unknown argument: $1" ;;
		esac
	done
	if [[ -n $JOBS ]]; then
		[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die "--jobs wants a positive number, not '$JOBS'"
	fi
}

need_tools() {
	local t missing=()
	declare -A pkg=([make]=make [gcc]=gcc [patch]=patch [tar]=tar [xz]=xz-utils [modinfo]=kmod
		[sha256sum]=coreutils [strip]=binutils [awk]=gawk/mawk [flock]=util-linux [sed]=sed)
	local tools=(make patch tar xz modinfo sha256sum strip awk flock sed)
	# With --make the compiler is the wrapper's business (a build root's, say), not this
	# machine's; --list-modules compiles nothing.
	[[ -n $MAKE_CMD ]] || ((LIST_ONLY)) || tools+=(gcc)
	for t in "${tools[@]}"; do
		command -v "$t" >/dev/null 2>&1 || PATH=$PATH:/sbin:/usr/sbin command -v "$t" >/dev/null 2>&1 ||
			missing+=("$t (Debian package ${pkg[$t]})")
	done
	((${#missing[@]} == 0)) || die "missing tools: ${missing[*]}"
	command -v modinfo >/dev/null 2>&1 || export PATH=$PATH:/sbin:/usr/sbin
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# ---------------------------------------------------------------- kernel and headers

headers_release() { # DIR -> the kernel release the build tree is for
	local d=$1 r=""
	if [[ -f $d/include/generated/utsrelease.h ]]; then
		r=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$d/include/generated/utsrelease.h")
	fi
	if [[ -z $r && -f $d/include/config/kernel.release ]]; then
		r=$(<"$d/include/config/kernel.release")
	fi
	printf '%s' "$r"
}

# The upstream version (e.g. 6.1.192) of the kernel configured in a build tree.
headers_version() {
	sed -n 's|^# Linux/[^ ]* \([0-9][0-9.]*\) Kernel Configuration$|\1|p' "$1/.config" | head -n 1
}

find_headers() {
	if [[ -n $HEADERS ]]; then
		[[ -d $HEADERS ]] || die "--headers $HEADERS: no such directory"
		HEADERS=$(cd "$HEADERS" && pwd -P)
		local r
		r=$(headers_release "$HEADERS")
		[[ -n $r ]] || die "$HEADERS does not look like a configured kernel build tree (no include/generated/utsrelease.h)"
		if [[ -z $KVER ]]; then
			KVER=$r
		elif [[ $KVER != "$r" ]]; then
			die "--headers $HEADERS is for kernel $r, not $KVER"
		fi
	else
		[[ -n $KVER ]] || KVER=$(uname -r)
		local b=/lib/modules/$KVER/build
		[[ -e $b ]] || die "no build tree for $KVER at $b: install the headers (Debian: apt-get install linux-headers-$KVER) or pass --headers DIR"
		HEADERS=$(cd "$b" && pwd -P) || die "$b is a dangling link: install linux-headers-$KVER"
		local r
		r=$(headers_release "$HEADERS")
		[[ $r == "$KVER" ]] || die "$b is for kernel '${r:-unknown}', not $KVER"
	fi
	local f
	for f in .config Makefile Module.symvers include/config/auto.conf; do
		[[ -f $HEADERS/$f ]] || die "$HEADERS/$f is missing: not a usable build tree for $KVER"
	done
	KVERSION=$(headers_version "$HEADERS")
	[[ -n $KVERSION ]] || die "cannot tell the kernel version from $HEADERS/.config"
	say "kernel $KVER (Linux $KVERSION), build tree $HEADERS"

	# Debian's arch headers Makefile is one line, "include /usr/src/linux-headers-*-common/Makefile",
	# an absolute path. In an extracted (dpkg -x) tree that path does not exist: use the
	# common tree next to it, the way tests/vm does, without editing the headers.
	MAKE_ARGS=(-C "$HEADERS")
	local inc
	inc=$(sed -n 's/^include[[:space:]]\{1,\}\(\/[^[:space:]]*\/Makefile\)[[:space:]]*$/\1/p' "$HEADERS/Makefile" | head -n 1)
	if [[ -n $inc && ! -f $inc ]]; then
		local common
		common="$(dirname "$HEADERS")/$(basename "$(dirname "$inc")")"
		[[ -f $common/Makefile ]] ||
			die "$HEADERS/Makefile includes $inc, which does not exist, and neither does $common/Makefile"
		say "the headers' Makefile includes $inc (absent here); using $common/Makefile"
		MAKE_ARGS+=(-f "$common/Makefile")
		# From 7.x it also names its own directory, KBUILD_OUTPUT=/usr/src/linux-headers-KVER,
		# where the common tree finds .config and include/config: here that is HEADERS.
		local out
		out=$(sed -n 's/^KBUILD_OUTPUT[[:space:]]*:\{0,1\}=[[:space:]]*\(\/[^[:space:]]*\)[[:space:]]*$/\1/p' "$HEADERS/Makefile" | head -n 1)
		if [[ -n $out && ! -d $out ]]; then
			MAKE_ARGS+=("KBUILD_OUTPUT=$HEADERS")
		fi
	fi

	# Debian builds with a versioned compiler (CC = gcc-12 in .kernelvariables). A --make
	# wrapper brings its own; --list-modules needs none.
	[[ -z $MAKE_CMD ]] && ((!LIST_ONLY)) || return 0
	local cc
	cc=$(sed -n 's/^CC *= *.*(CROSS_COMPILE)\([^[:space:]]*\)$/\1/p' "$HEADERS/.kernelvariables" 2>/dev/null | head -n 1)
	if [[ -n $cc ]] && ! command -v "$cc" >/dev/null 2>&1; then
		die "the kernel was built with $cc, which is not installed (Debian: apt-get install $cc)"
	fi
}

# ---------------------------------------------------------------- series and patches

list_series() {
	local d
	for d in "$KMOD_DIR"/*/; do
		if [[ -f $d/series ]]; then basename "$d"; fi
	done
}

# The patches of a series, in order (blank lines and # comments skipped).
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$KMOD_DIR/$1/series"
}

# The forms of one patch: the same change written for differently shaped sources. The
# series directory holds the patch itself (SERIES/NAME) and may hold other forms of it in
# subdirectories named for the source shape they fit (SERIES/SHAPE/NAME). Prints the
# forms' paths relative to the series directory, the top-level one first.
patch_forms() { # SERIES NAME
	local d=$KMOD_DIR/$1 f
	if [[ -f $d/$2 ]]; then echo "$2"; fi
	for f in "$d"/*/"$2"; do
		if [[ -f $f ]]; then echo "${f#"$d"/}"; fi
	done
}

# A form's label for messages: its subdirectory, or "" for the top-level one.
form_label() { if [[ $1 == */* ]]; then printf ' (form %s)' "${1%/*}"; fi; }

# The kernel lines (X.Y) a series is written and checked for: SERIES/lines, blank lines and
# # comments skipped. Used to warn on other lines and by dkms.conf; not to choose forms.
series_lines() {
	[[ -f $KMOD_DIR/$1/lines ]] || return 0
	sed -e 's/#.*//' "$KMOD_DIR/$1/lines" | tr -s '[:blank:]' '\n' | sed '/^$/d'
}

# Files a patch changes (paths relative to the top of the kernel tree).
patch_files() {
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$1" | sort -u
}

# A marker patch only adds MODULE_INFO(numastor, ...) lines (and blank lines).
is_marker_patch() {
	awk '
		/^diff --git / { body = 1 }
		!body { next }
		/^(\+\+\+|---) / { next }
		/^-/ { bad = 1 }
		/^\+/ {
			line = substr($0, 2)
			if (line ~ /^[[:space:]]*$/) next
			if (line ~ /^MODULE_INFO\(numastor, *"[^"]*"\);[[:space:]]*$/) { marker = 1; next }
			bad = 1
		}
		END { exit !(marker && !bad) }
	' "$1"
}

# ---------------------------------------------------------------- source

debian_package_version() { # the Debian version of the kernel's packages, e.g. 6.1.192-3
	local v=""
	if [[ -f $HEADERS/include/generated/package.h ]]; then
		v=$(sed -n 's/^#define LINUX_PACKAGE_ID " *Debian \([^ "]*\)".*/\1/p' "$HEADERS/include/generated/package.h")
	fi
	if [[ -z $v ]] && command -v dpkg-query >/dev/null 2>&1; then
		v=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "linux-image-$KVER" 2>/dev/null |
			sed -n 's/^ii *//p' || true)
	fi
	printf '%s' "$v"
}

# Sets SOURCE to the Debian source tarball of the kernel, installing it if allowed.
debian_source() {
	command -v dpkg-query >/dev/null 2>&1 ||
		die "cannot find the source of $KVER the distribution's way (no dpkg here): pass --source TARBALL|DIR"
	local xy=${KVERSION%.*} want have status tarball
	xy=$(cut -d. -f1,2 <<<"$KVERSION")
	local srcpkg=linux-source-$xy
	want=$(debian_package_version)
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$srcpkg" 2>/dev/null || true)
	have=""
	if [[ $status == ii* ]]; then have=$(dpkg-query -W -f='${Version}' "$srcpkg"); fi
	tarball=""
	local t
	for t in "/usr/src/$srcpkg.tar.xz" "/usr/src/$srcpkg.tar.bz2"; do
		if [[ -f $t ]]; then tarball=$t && break; fi
	done
	if [[ -n $tarball && -n $have && -n $want && $have != "$want" ]]; then
		die "$srcpkg $have is installed but $KVER is $want: install the matching source (apt-get install $srcpkg=$want) or pass --source"
	fi
	if [[ -z $tarball ]]; then
		local spec=$srcpkg${want:+=$want}
		if ((NO_INSTALL)); then
			die "$srcpkg is not installed and --no-install was given: apt-get install $spec, or pass --source"
		elif [[ $(id -u) != 0 ]]; then
			die "$srcpkg is not installed: run 'apt-get install $spec' as root, or pass --source"
		elif ! command -v apt-get >/dev/null 2>&1; then
			die "$srcpkg is not installed and there is no apt-get: pass --source"
		fi
		say "installing $spec with apt-get (the kernel's source; --no-install refuses this)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$spec" ||
			die "apt-get install $spec failed (apt-get update? is $want still in the archive?); or pass --source"
		for t in "/usr/src/$srcpkg.tar.xz" "/usr/src/$srcpkg.tar.bz2"; do
			if [[ -f $t ]]; then tarball=$t && break; fi
		done
		[[ -n $tarball ]] || die "$srcpkg is installed but /usr/src/$srcpkg.tar.xz is not there"
	fi
	SOURCE=$tarball
	say "source: $SOURCE ($srcpkg ${have:-${want:-?}})"
}

# Fills $BUILD/src with the parts of the source the modules need (cached for a tarball).
extract_source() {
	local src=$BUILD/src key
	if [[ -d $SOURCE ]]; then
		SOURCE=$(cd "$SOURCE" && pwd -P)
		[[ -f $SOURCE/Makefile && -d $SOURCE/drivers ]] || die "--source $SOURCE is not a kernel source tree (no Makefile, drivers/)"
		say "copying the driver directories from $SOURCE"
		rm -rf "$src.new" && mkdir -p "$src.new"
		local p
		(
			cd "$SOURCE"
			shopt -s nullglob
			for p in "${SOURCE_PARTS[@]}"; do
				# shellcheck disable=SC2086 # the globs are meant
				set -- $p
				for f in "$@"; do
					if [[ -e $f ]]; then cp -a --parents "$f" "$src.new/"; fi
				done
			done
		)
	else
		[[ -f $SOURCE ]] || die "--source $SOURCE: no such file or directory"
		SOURCE=$(cd "$(dirname "$SOURCE")" && pwd -P)/$(basename "$SOURCE")
		key="tar:$SOURCE:$(stat -c '%s:%Y' "$SOURCE"):${SOURCE_PARTS[*]}"
		if [[ -f $src/.numastor-source-key && $(<"$src/.numastor-source-key") == "$key" ]]; then
			say "source already extracted in $src"
			return 0
		fi
		say "extracting the driver directories from $SOURCE"
		rm -rf "$src.new" "$src.tmp" && mkdir -p "$src.tmp"
		local pats=() p
		for p in "${SOURCE_PARTS[@]}"; do pats+=("*/$p"); done
		tar -x -f "$SOURCE" -C "$src.tmp" --wildcards --no-wildcards-match-slash "${pats[@]}" ||
			die "extracting from $SOURCE failed (is it a kernel source tarball?)"
		local tops=("$src.tmp"/*)
		if ((${#tops[@]} != 1)) || [[ ! -d ${tops[0]} ]]; then
			die "$SOURCE: expected one top-level directory"
		fi
		mv "${tops[0]}" "$src.new" && rmdir "$src.tmp"
	fi
	[[ -d $src.new/drivers/scsi || -d $src.new/drivers/nvme/host ]] ||
		die "$SOURCE has neither drivers/scsi nor drivers/nvme/host"
	if [[ -n ${key:-} ]]; then printf '%s' "$key" >"$src.new/.numastor-source-key"; fi
	rm -rf "$src" && mv "$src.new" "$src"
}

check_source_version() {
	local mk=$BUILD/src/Makefile v p s
	v=$(sed -n 's/^VERSION *= *//p' "$mk" | head -n 1)
	p=$(sed -n 's/^PATCHLEVEL *= *//p' "$mk" | head -n 1)
	s=$(sed -n 's/^SUBLEVEL *= *//p' "$mk" | head -n 1)
	SRCVERSION_STR="$v.$p.$s"
	if [[ $SRCVERSION_STR != "$KVERSION" ]]; then
		if ((ALLOW_MISMATCH)); then
			warn "the source is Linux $SRCVERSION_STR but $KVER is $KVERSION (--allow-version-mismatch)"
		else
			die "the source is Linux $SRCVERSION_STR but $KVER is $KVERSION: a module built from it could differ from the running kernel's (pass the right --source, or --allow-version-mismatch)"
		fi
	else
		say "source is Linux $SRCVERSION_STR, as the headers"
	fi
}

# ---------------------------------------------------------------- modules and Kbuild

# The Makefile lines that define a module's objects (NAME-y, NAME-objs, NAME-$(CONFIG_...)),
# continuation lines included, plus the directory's ccflags and the module objects' CFLAGS_.
# A continuation at the end of the Makefile is closed with an empty line.
module_lines() { # NAME MAKEFILE
	awk -v m="$1" '
		cont { print; cont = /\\$/; next }
		$0 ~ ("^" m "-(y|objs|\\$\\()") || $0 ~ /^(subdir-)?ccflags-/ { print; cont = /\\$/ }
		END { if (cont) print "" } # a list whose last line ends in a backslash (mpt3sas)
	' "$2"
}

# The config symbol that makes NAME a module: obj-$(CONFIG_X) += NAME.o (lpfc: :=) in the directory.
module_config_symbol() { # NAME MAKEFILE
	sed -n "s/^obj-\\\$(\\(CONFIG_[A-Za-z0-9_]*\\))[[:space:]]*[+:]=[[:space:]]*$1\\.o[[:space:]]*\$/\\1/p" "$2" | head -n 1
}

config_value() { # CONFIG_X -> y, m or empty
	sed -n "s/^$1=\\(.*\\)$/\\1/p" "$HEADERS/.config" | head -n 1
}

# The evaluated object list of a module with the kernel's .config.
module_objects() { # NAME DIR(absolute)
	local mk
	[[ -f $2/Makefile ]] || return 0
	mk=$(mktemp)
	{
		printf 'include %s/include/config/auto.conf\n' "$HEADERS"
		printf 'src := %s\n' "$2"
		module_lines "$1" "$2/Makefile"
		# shellcheck disable=SC2016 # make syntax
		printf '$(info $(strip $(%s-objs) $(%s-y)))\n' "$1" "$1"
		printf 'all: ;\n'
	} >"$mk"
	make -s --no-print-directory -f "$mk" all 2>/dev/null
	rm -f "$mk"
}

# Extra Kbuild text a module needs beyond its object lines.
module_extra_kbuild() {
	case $1 in
	scsi_mod)
		# drivers/scsi/Makefile: scsi_sysfs.c includes the generated scsi_devinfo_tbl.c.
		cat <<'EOF'
$(obj)/scsi_sysfs.o: $(obj)/scsi_devinfo_tbl.c
quiet_cmd_bflags = GEN     $@
      cmd_bflags = sed -n 's/.*define *BLIST_\([A-Z0-9_]*\) *.*/BLIST_FLAG_NAME(\1),/p' $< > $@
$(obj)/scsi_devinfo_tbl.c: $(srctree)/include/scsi/scsi_devinfo.h FORCE
	$(call if_changed,bflags)
targets += scsi_devinfo_tbl.c
EOF
		;;
	esac
}

# Which known modules a file of the tree belongs to (a .c by the object lists; anything
# else in a module's directory conservatively to every module of that directory).
declare -A MOD_OBJS=()
modules_of_file() {
	local f=$1 m dir base
	dir=$(dirname "$f")
	base=$(basename "$f")
	for m in "${KNOWN_MODULES[@]}"; do
		[[ ${MOD_DIR[$m]} == "$dir" ]] || continue
		if [[ $base == *.c ]]; then
			if [[ " ${MOD_OBJS[$m]} " == *" ${base%.c}.o "* ]]; then echo "$m"; fi
		else
			echo "$m"
		fi
	done
}

# ---------------------------------------------------------------- main steps

# For each selected series, in order: its functional patches first (each either already in
# the source, "already upstream", or applied; anything else stops the build), then its
# marker patches, applied only to modules that got a functional patch of that series.
decide_and_apply() {
	local stage=$BUILD/stage s
	rm -rf "$stage" && cp -a "$BUILD/src" "$stage"
	APPLIED=() UPSTREAM=()
	declare -gA MOD_SERIES=() # module -> series names with an applied functional patch
	for s in "${SERIES[@]}"; do
		apply_series "$s" "$stage"
	done
}

# The modules a patch file changes, space-separated and sorted (dies on a file outside them).
patch_modules() { # SERIES FORM
	local s=$1 f=$2 file ms mods=()
	while IFS= read -r file; do
		ms=$(modules_of_file "$file")
		[[ -n $ms ]] || die "$s/$f changes $file, which is not part of a module this build knows (${KNOWN_MODULES[*]}); an out-of-tree build cannot change it"
		mapfile -t -O "${#mods[@]}" mods <<<"$ms"
	done < <(patch_files "$KMOD_DIR/$s/$f")
	((${#mods[@]})) || die "$s/$f changes no file"
	printf '%s\n' "${mods[@]}" | sort -u | paste -sd' ' -
}

# Dry runs, always with --fuzz=0: a hunk that only matches with its context trimmed proves
# nothing, either way.
fits_forward() { patch -p1 -N -f -s --dry-run --fuzz=0 -d "$1" <"$2" >/dev/null 2>&1; }
fits_reverse() { patch -p1 -R -f -s --dry-run --fuzz=0 -d "$1" <"$2" >/dev/null 2>&1; }

# What patch(1) says about each form that does not apply (for the error message).
forms_report() { # SERIES STAGE FORM...
	local s=$1 stage=$2 f
	shift 2
	for f; do
		printf -- '--- %s/%s:\n' "$s" "$f"
		patch -p1 -N -f --dry-run --fuzz=0 -d "$stage" <"$KMOD_DIR/$s/$f" 2>&1 || true
	done
}

apply_series() { # SERIES STAGE
	local s=$1 stage=$2 p f m mods n=0 entry xy lines
	local -A changed=() # module -> 1 when a functional patch of this series was applied
	local -a markers=() forms fit up
	xy=$(cut -d. -f1,2 <<<"$KVERSION")
	lines=$(series_lines "$s" | paste -sd' ' -)
	if [[ -n $lines && " $lines " != *" $xy "* ]]; then
		warn "series $s is written and checked for the kernel lines $lines, not $xy: its forms are tried on this source all the same"
	fi
	while IFS= read -r p; do
		n=$((n + 1))
		mapfile -t forms < <(patch_forms "$s" "$p")
		((${#forms[@]})) || die "$s/series lists $p, which does not exist"
		# Every form is the same change: same modules, same kind (functional or marker).
		mods=$(patch_modules "$s" "${forms[0]}")
		local marker=0
		if is_marker_patch "$KMOD_DIR/$s/${forms[0]}"; then marker=1; fi
		for f in "${forms[@]:1}"; do
			[[ $(patch_modules "$s" "$f") == "$mods" ]] ||
				die "$s/$f changes other modules than $s/${forms[0]} ($mods): forms of one patch must be the same change"
			local k=0
			if is_marker_patch "$KMOD_DIR/$s/$f"; then k=1; fi
			((k == marker)) || die "$s/$f and $s/${forms[0]} are not both marker patches: forms of one patch must be the same change"
		done
		if ((marker)); then
			markers+=("$p|$mods")
			continue
		fi
		fit=() up=()
		for f in "${forms[@]}"; do
			if fits_reverse "$stage" "$KMOD_DIR/$s/$f"; then up+=("$f"); fi
			if fits_forward "$stage" "$KMOD_DIR/$s/$f"; then fit+=("$f"); fi
		done
		if ((${#fit[@]} == 0 && ${#up[@]} > 0)); then
			say "$s/$p: already upstream$(form_label "${up[0]}") (the source contains it); not built for this patch"
			UPSTREAM+=("$s|$p")
		elif ((${#fit[@]} == 1 && ${#up[@]} == 0)); then
			f=${fit[0]}
			patch -p1 -N -f -s --fuzz=0 --no-backup-if-mismatch -d "$stage" <"$KMOD_DIR/$s/$f" >/dev/null ||
				die "$s/$f: applying failed after a clean dry run"
			say "$s/$p: applied$(form_label "$f") ($mods)"
			APPLIED+=("$s|$p")
			for m in $mods; do
				changed[$m]=1
				[[ " ${MOD_SERIES[$m]:-} " == *" $s "* ]] || MOD_SERIES[$m]="${MOD_SERIES[$m]:+${MOD_SERIES[$m]} }$s"
			done
		elif ((${#fit[@]} == 0)); then
			die "$s/$p neither applies to this source nor is already in it, in any of its forms (${forms[*]}): this kernel's source has a shape the series does not know (it is written for the kernel lines ${lines:-?}; this is Linux $KVERSION)
$(forms_report "$s" "$stage" "${forms[@]}")"
		else
			die "$s/$p: its forms disagree about this source (applies: ${fit[*]:-none}; already in the source: ${up[*]:-none}); refusing to guess"
		fi
	done < <(series_patches "$s")
	((n)) || die "$s/series lists no patch"
	for entry in "${markers[@]}"; do
		IFS='|' read -r p mods <<<"$entry"
		local want=0
		for m in $mods; do
			if [[ -n ${changed[$m]:-} ]]; then want=1; fi
		done
		if ((want)); then
			mapfile -t forms < <(patch_forms "$s" "$p")
			fit=()
			for f in "${forms[@]}"; do
				if fits_forward "$stage" "$KMOD_DIR/$s/$f"; then fit+=("$f"); fi
			done
			((${#fit[@]} == 1)) || {
				((${#fit[@]} == 0)) && die "$s/$p (marker) does not apply in any of its forms:
$(forms_report "$s" "$stage" "${forms[@]}")"
				die "$s/$p (marker): several forms apply (${fit[*]}); refusing to guess"
			}
			patch -p1 -N -f -s --fuzz=0 --no-backup-if-mismatch -d "$stage" <"$KMOD_DIR/$s/${fit[0]}" >/dev/null 2>&1 ||
				die "$s/${fit[0]} (marker): applying failed after a clean dry run"
			say "$s/$p: marker applied$(form_label "${fit[0]}") ($mods)"
			APPLIED+=("$s|$p")
		else
			say "$s/$p: marker not applied (this series changes nothing in $mods here)"
		fi
	done
}

write_kbuild() { # DIR(absolute) MODULE...
	local dir=$1 m
	shift
	{
		echo "# Generated by numastor's build-modules.sh from this directory's Makefile."
		echo "obj-m := $(printf '%s.o ' "$@")"
		for m in "$@"; do
			module_lines "$m" "$dir/Makefile" | awk '!seen[$0]++'
			module_extra_kbuild "$m"
		done
		# A trace header written for the kernel tree names its own directory as seen from
		# include/trace (6.12's sd_trace.h: #define TRACE_INCLUDE_PATH ../../drivers/scsi), and
		# define_trace.h, in the headers, includes it by that path. Out of tree that points
		# next to the headers; an include/trace beside this directory's copy (BUILD/work) on
		# the include path makes ../../drivers/scsi this directory.
		if grep -qsE '^#define[[:space:]]+TRACE_INCLUDE_PATH[[:space:]]+\.\./\.\./' "$dir"/*.h; then
			mkdir -p "$BUILD/work/include/trace"
			echo "ccflags-y += -I$BUILD/work/include/trace"
		fi
	} | awk '!/^(subdir-)?ccflags-/ || !seen[$0]++' >"$dir/Kbuild"
}

# The directories to compile, in order: scsi_mod's first when it is built, for the HBA drivers
# built with it call what it exports (scsi_host_alloc_node); then the rest, sorted.
compile_order() {
	local first=""
	if [[ -n ${by_dir[${MOD_DIR[scsi_mod]}]:-} && " ${by_dir[${MOD_DIR[scsi_mod]}]} " == *" scsi_mod "* ]]; then
		first=${MOD_DIR[scsi_mod]}
		echo "$first"
	fi
	printf '%s\n' "${!by_dir[@]}" | sort | { grep -vxF "${first:-/}" || true; }
}

compile() {
	local work=$BUILD/work dir m mods extra=()
	declare -A by_dir=()
	for m in "${BUILD_MODULES[@]}"; do
		by_dir[${MOD_DIR[$m]}]+="$m "
	done
	for dir in $(compile_order); do
		read -r -a mods <<<"${by_dir[$dir]}"
		write_kbuild "$work/$dir" "${mods[@]}"
		local desc=() t0 t1
		for m in "${mods[@]}"; do
			local objs
			read -r -a objs <<<"${MOD_OBJS[$m]}"
			desc+=("$m (${#objs[@]} objects)")
		done
		say "compiling ${desc[*]} in $dir against $HEADERS, $JOBS jobs"
		t0=$SECONDS
		local run=(make)
		if [[ -n $MAKE_CMD ]]; then read -r -a run <<<"$MAKE_CMD"; fi
		if ! "${run[@]}" "${MAKE_ARGS[@]}" M="$work/$dir" "${extra[@]}" -j"$JOBS" modules >"$work/$dir/build.log" 2>&1; then
			tail -n 40 "$work/$dir/build.log" >&2
			die "compiling in $dir failed (whole log: $work/$dir/build.log)"
		fi
		t1=$SECONDS
		if grep -E 'WARNING: modpost: .*(undefined|version generation failed)' "$work/$dir/build.log" >&2; then
			die "modpost found unresolved symbols or missing CRCs (log: $work/$dir/build.log)"
		fi
		for m in "${mods[@]}"; do
			[[ -f $work/$dir/$m.ko ]] || die "no $m.ko after the build (log: $work/$dir/build.log)"
		done
		say "compiled in $((t1 - t0)) s"
		# the patched scsi_mod's exports (with its CRCs) for the directories after it
		if [[ " ${mods[*]} " == *" scsi_mod "* ]]; then
			extra=("KBUILD_EXTRA_SYMBOLS=$work/$dir/Module.symvers")
		fi
	done
}

# The stock module's path relative to /lib/modules/KVER, as the kernel's package installed it
# (kernel/drivers/scsi/scsi_mod.ko, or .ko.xz where the modules are compressed, as on 6.12).
replaces_path() { # MODULE
	local m=$1 rel="kernel/${MOD_DIR[$1]}/$1.ko" ext
	for ext in "" .xz .zst .gz; do
		if [[ -f $MODULES_DIR/$rel$ext ]]; then
			printf '%s' "$rel$ext"
			return
		fi
	done
	warn "no stock $m in $MODULES_DIR (not installed here? --modules-dir DIR): the manifest says $rel"
	printf '%s' "$rel"
}

json_str() {
	local s=$1
	s=${s//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	s=${s//$'\r'/\\r}
	printf '"%s"' "$s"
}

install_output() {
	local work=$BUILD/work m
	mkdir -p "$OUT" || die "cannot create $OUT (pass --out DIR)"
	OUT=$(cd "$OUT" && pwd -P)
	if [[ -n $(find "$OUT" -maxdepth 0 -perm /022) ]]; then
		warn "$OUT is group- or world-writable: numastor fix --modules will refuse modules from it"
	fi
	# Drop the old manifest first: a reader never pairs it with new files.
	local old=()
	if [[ -f $OUT/manifest.json ]]; then
		mapfile -t old < <(grep -o '"file": *"[^"/]*"' "$OUT/manifest.json" | sed 's/.*"\([^"]*\)"$/\1/')
		rm -f "$OUT/manifest.json"
	fi
	local entries=() f sum vm sv
	for m in "${BUILD_MODULES[@]}"; do
		local ko=$work/${MOD_DIR[$m]}/$m.ko
		f=$m.ko
		# As modules_install with INSTALL_MOD_STRIP=1: debug info out, everything else kept.
		strip --strip-debug -o "$OUT/.$f.tmp" "$ko"
		chmod 0644 "$OUT/.$f.tmp"
		mv -f "$OUT/.$f.tmp" "$OUT/$f"
		sum=$(sha256 "$OUT/$f")
		vm=$(modinfo -F vermagic "$OUT/$f")
		sv=$(modinfo -F srcversion "$OUT/$f" || true)
		[[ ${vm%% *} == "$KVER" ]] || die "$f has vermagic '$vm', not for $KVER"
		local marker
		marker=$(modinfo -F numastor "$OUT/$f" | paste -sd, -)
		[[ -n $marker ]] || die "$f carries no numastor marker"
		local plist="" s
		for s in ${MOD_SERIES[$m]}; do plist+="${plist:+, }$(json_str "$s")"; done
		entries+=("    {\"name\": $(json_str "$m"), \"file\": $(json_str "$f"), \"sha256\": $(json_str "$sum"), \"vermagic\": $(json_str "$vm"), \"srcversion\": $([[ -n $sv ]] && json_str "$sv" || echo null), \"patches\": [$plist], \"replaces\": $(json_str "$(replaces_path "$m")")}")
		say "wrote $OUT/$f (sha256 $sum, marker $marker)"
	done
	local ups=() e s p
	for e in "${UPSTREAM[@]}"; do
		IFS='|' read -r s p <<<"$e"
		ups+=("    {\"series\": $(json_str "$s"), \"patch\": $(json_str "$p")}")
	done
	{
		echo "{"
		echo "  \"kernel_release\": $(json_str "$KVER"),"
		echo "  \"built\": $(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)"),"
		if ((${#entries[@]})); then
			echo "  \"modules\": ["
			local i
			for i in "${!entries[@]}"; do
				printf '%s%s\n' "${entries[$i]}" "$( ((i + 1 < ${#entries[@]})) && echo ,)"
			done
			echo "  ],"
		else
			echo "  \"modules\": [],"
		fi
		if ((${#ups[@]})); then
			echo "  \"already_upstream\": ["
			for i in "${!ups[@]}"; do
				printf '%s%s\n' "${ups[$i]}" "$( ((i + 1 < ${#ups[@]})) && echo ,)"
			done
			echo "  ]"
		else
			echo "  \"already_upstream\": []"
		fi
		echo "}"
	} >"$OUT/.manifest.json.tmp"
	chmod 0644 "$OUT/.manifest.json.tmp"
	mv -f "$OUT/.manifest.json.tmp" "$OUT/manifest.json"
	# Modules of an earlier build that this one did not produce.
	for f in "${old[@]}"; do
		[[ " ${BUILD_MODULES[*]/%/.ko} " != *" $f "* ]] || continue
		if [[ -f $OUT/$f ]]; then
			rm -f "$OUT/$f"
			say "removed $OUT/$f (not built this time)"
		fi
	done
	say "wrote $OUT/manifest.json"
}

main() {
	parse_args "$@"
	need_tools
	find_headers
	[[ -n $JOBS ]] || JOBS=$(nproc 2>/dev/null || echo 1)
	[[ -n $OUT ]] || OUT=/var/lib/numastor/modules/$KVER
	[[ -n $BUILD ]] || BUILD=${NUMASTOR_KMOD_BUILD_DIR:-/var/cache/numastor/kmod-build/$KVER}
	[[ -n $MODULES_DIR ]] || MODULES_DIR=/lib/modules/$KVER
	[[ -n $SOURCE ]] || SOURCE=${NUMASTOR_KMOD_SOURCE:-}
	mkdir -p "$BUILD" 2>/dev/null || die "cannot create the build directory $BUILD (pass --build-dir DIR)"
	BUILD=$(cd "$BUILD" && pwd -P)
	exec 9>"$BUILD/.lock"
	flock -n 9 || {
		say "another build is using $BUILD; waiting"
		flock 9
	}

	local all s
	mapfile -t all < <(list_series)
	((${#all[@]})) || die "no patch series in $KMOD_DIR"
	if ((${#SERIES[@]} == 0)); then
		SERIES=("${all[@]}")
	else
		for s in "${SERIES[@]}"; do
			[[ " ${all[*]} " == *" $s "* ]] || die "unknown series '$s' (known: ${all[*]})"
		done
	fi
	say "series: ${SERIES[*]}"

	[[ -n $SOURCE ]] || debian_source
	extract_source
	check_source_version

	local m cfg val
	for m in "${KNOWN_MODULES[@]}"; do
		MOD_OBJS[$m]=$(module_objects "$m" "$BUILD/src/${MOD_DIR[$m]}")
	done

	decide_and_apply

	BUILD_MODULES=()
	for m in "${KNOWN_MODULES[@]}"; do
		[[ -n ${MOD_SERIES[$m]:-} ]] || continue
		cfg=$(module_config_symbol "$m" "$BUILD/stage/${MOD_DIR[$m]}/Makefile")
		val=""
		[[ -z $cfg ]] || val=$(config_value "$cfg")
		case $val in
		m) BUILD_MODULES+=("$m") ;;
		y) warn "$m is built into $KVER ($cfg=y): a module cannot replace it; not building it" ;;
		*) warn "$m is not enabled in $KVER (${cfg:-no config symbol found}); not building it" ;;
		esac
	done

	if ((LIST_ONLY)); then
		rm -rf "$BUILD/stage"
		if ((${#BUILD_MODULES[@]})); then printf '%s\n' "${BUILD_MODULES[@]}"; fi
		return 0
	fi
	if ((${#BUILD_MODULES[@]} == 0)); then
		say "nothing to build: no selected patch is missing from $KVER's source"
		rm -rf "$BUILD/stage"
	else
		# Reuse the previous compile when nothing that goes into it changed.
		local stamp e
		stamp=$({
			echo "kernel $KVER headers $HEADERS make ${MAKE_CMD:-make}"
			sha256 "$HEADERS/Module.symvers"
			sha256 "$HEADERS/.config"
			sha256 "$SELF"
			(cd "$BUILD/stage" && find . -type f ! -name '.numastor-*' -print0 | sort -z | xargs -0 sha256sum)
			echo "modules ${BUILD_MODULES[*]}"
		} | sha256sum | cut -d' ' -f1)
		local fresh=1
		if [[ -f $BUILD/work/.numastor-stamp && $(<"$BUILD/work/.numastor-stamp") == "$stamp" ]]; then
			fresh=0
			for m in "${BUILD_MODULES[@]}"; do
				[[ -f $BUILD/work/${MOD_DIR[$m]}/$m.ko ]] || fresh=1
			done
		fi
		if ((fresh)); then
			rm -rf "$BUILD/work" && mv "$BUILD/stage" "$BUILD/work"
			compile
			echo "$stamp" >"$BUILD/work/.numastor-stamp"
		else
			rm -rf "$BUILD/stage"
			say "build tree $BUILD/work is up to date for these patches; reusing its modules"
		fi
	fi
	install_output
	say "done: ${#BUILD_MODULES[@]} module(s) built, ${#UPSTREAM[@]} patch(es) already upstream"
}

main "$@"
