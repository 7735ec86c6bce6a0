#!/bin/bash
# shellcheck disable=SC2317 # the functions below run through check and the EXIT trap
# The Debian packages (issue 16): build them, lint them, and install, upgrade and purge them in
# a fresh Debian 12 root, the way an administrator's apt-get would.
#
#   tests/check-deb.sh            (from anywhere; needs root: debootstrap, chroot, mount)
#
# 1. Builds the binary packages twice with `dpkg-buildpackage -us -uc -b -j2`, each in a scratch
#    copy of the work tree (git ls-files -co --exclude-standard: tracked and new files, as they
#    are now, uncommitted changes included; ignored files such as build/ left out): the tree as
#    it is, and the "previous version", the same tree with the top debian/changelog entry's
#    version rewritten to <upstream>-0~prev1, a lower Debian revision of the same upstream
#    version (so meson's version, which the packaging's /usr/src/numastor-<upstream> follows,
#    still matches). DEB_BUILD_OPTIONS is taken
#    from the environment (nocheck skips the package's build-time tests).
# 2. lintian --profile debian --fail-on error,warning over the current build's .changes (every
#    .deb it lists); overrides are the packaging's (debian/*.lintian-overrides).
# 3. A Debian 12 minbase root: debootstrap --variant=minbase --include=systemd bookworm from the
#    mirror this machine's apt uses for bookworm (deb.debian.org otherwise), with bookworm-updates
#    and bookworm-security, made once into $VM_CACHE/deb-root-bookworm/root and copied afresh for
#    every run. proc, sys, dev and the root's apt archive cache ($VM_CACHE/deb-root-bookworm/
#    archives, so the kernel headers and gcc are downloaded once) are mounted in a private mount
#    namespace and unmounted at exit, failure included. No policy-rc.d: whatever the maintainer
#    scripts would enable or start is what they do.
# 4. In that root: numastor's dependencies, then the list of files; the previous numastor
#    installed (numastor --version, numastor check: exit 0, 1 or 2), no unit enabled, linked or
#    running; upgraded to the current one (same checks, dpkg-query shows the new version);
#    removed, purged: the list of files is the one from before.
# 5. numastor-dkms, against the 6.1 kernel of the VM bed ($VM_CACHE/current-6.1, made by
#    tests/vm/fetch-kernel.sh): dkms and linux-headers-<release> installed (bookworm's
#    linux-headers-amd64 when the exact release has left the archive; said so), the list of
#    files, numastor-dkms installed (its own postinst only runs dkms add: dkms's common.postinst,
#    which dh_dkms would use, builds and installs for every kernel with headers whatever
#    AUTOINSTALL says; the install must succeed and put nothing into the kernel);
#    case A, no kernel source: `dkms build` fails and says to install linux-source-6.1;
#    case B, /usr/src/linux-source-6.1.tar.xz from $VM_CACHE/kmod-source/ (tests/kmod/
#    check-build.sh downloads it) at the headers' Debian version: `dkms build` builds scsi_mod.ko
#    and sd_mod.ko, and installs nothing (skipped, loudly, when that tarball is not in the cache);
#    case C, the package reinstalled with the source there: still nothing installed into the
#    kernel;
#    then numastor-dkms and dkms purged: /usr/src/numastor-*, /var/lib/dkms/numastor and every
#    other new file gone.
#
# Prints "ok   ..." / "FAIL ..." per check and "deb: ..." progress lines; ends with each
# phase's time and "deb: all passed (N checks)" or "deb: N failed (M passed)"; exit 1 on any
# failure (a missing host tool is a failure too).
#
# Environment:
#   NUMASTOR_SKIP_DEB=1   skip the whole test (says so; exit 0)
#   NUMASTOR_DEB_SRC=DIR  the source tree to package (a git work tree; default: this
#                         repository's top). For developing this test against a stand-in package.
#   NUMASTOR_DEB_KEEP=1   keep the scratch directory (builds, logs, the root) and say where
#   NUMASTOR_VM_CACHE     the bed's cache (default /var/cache/numastor-vm), see tests/vm/lib.sh
#   NUMASTOR_VM_REFRESH=1 debootstrap the cached root again
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
# VM_CACHE, vm_apt_mirror
# shellcheck source-path=SCRIPTDIR source=vm/lib.sh
. "$TOP/tests/vm/lib.sh"

if [[ ${NUMASTOR_SKIP_DEB:-0} == 1 ]]; then
	echo "deb: SKIPPED because NUMASTOR_SKIP_DEB=1 (the Debian packages are not built or tested)"
	exit 0
fi

SRC=$(cd "${NUMASTOR_DEB_SRC:-$TOP}" && pwd)
SUITE=bookworm
# The kernel line numastor-dkms is built for here, and Debian's source package of it.
KLINE=6.1
KSOURCE=linux-source-$KLINE
# The cached pristine root (root/), its debootstrap log, and the apt archive cache its copies use.
ROOT_CACHE=$VM_CACHE/deb-root-$SUITE
# The units the numastor package ships, none of which it may enable or start.
UNITS=(numastor-fix.service numastor-textfile.service numastor-textfile.timer)
export PATH=$PATH:/usr/sbin:/sbin

# ------------------------------------------------------------------ results
passed=0
failed=0
# Notes printed before the result: what was skipped, and why.
skipped=()
# ok, fail, check
# shellcheck source-path=SCRIPTDIR source=lib/checks.sh
. "$TOP/tests/lib/checks.sh"
say() { printf 'deb: %s\n' "$*"; }
# The command fails (for check).
not() { ! "$@"; }
# Does a glob match anything?
exists() { compgen -G "$1" >/dev/null; }
skip() {
	say "SKIPPED: $*"
	skipped+=("$*")
}

# Each phase's time, printed as it ends and again at the end.
phases=()
phase_t=$SECONDS
t_start=$SECONDS
phase_done() { # name of the phase that just ended
	local took=$((SECONDS - phase_t))
	phases+=("$1: $took s")
	say "-- $1: $took s"
	phase_t=$SECONDS
}

# Print the summary and exit (the EXIT trap cleans up).
finish() {
	local s
	if ((${#phases[@]})); then
		say "time:"
		for s in "${phases[@]}"; do echo "   $s"; done
		echo "   total: $((SECONDS - t_start)) s"
	fi
	for s in "${skipped[@]}"; do say "skipped: $s"; done
	if ((failed)); then
		say "$failed failed ($passed passed)"
		exit 1
	fi
	say "all passed ($passed checks)"
	exit 0
}
# A failure that stops the test: counted, then the summary.
die() {
	fail "$*"
	finish
}
# The last lines of a log, indented, after a failure.
show_tail() { # log [lines]
	echo "   --- last ${2:-25} lines of $1"
	tail -n "${2:-25}" "$1" | sed 's/^/   | /'
}

# ------------------------------------------------------------------ preconditions
for t in dpkg-buildpackage dpkg-parsechangelog dpkg-deb lintian debootstrap chroot git tar mount unshare; do
	command -v "$t" >/dev/null || die "needs $t on this machine (tools/install-deps)"
done
[[ $(id -u) == 0 ]] || die "needs root (debootstrap, chroot and mount)"
[[ -f $SRC/debian/changelog && -f $SRC/debian/control ]] || die "no debian/ packaging in $SRC"
git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1 || die "$SRC is not a git work tree"

# Everything mounted below lives in a mount namespace of its own: even a killed run leaves no
# mount on the host (the EXIT trap unmounts on every ordinary exit as well).
if [[ ${NUMASTOR_DEB_MOUNT_NS:-} != "$$" ]]; then
	NUMASTOR_DEB_MOUNT_NS=$$ exec unshare --mount --propagation private "$HERE/${BASH_SOURCE[0]##*/}" "$@"
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/numastor-deb.XXXXXX")
ROOT=$TMP/root
LOGS=$TMP/logs
mkdir -p "$LOGS"

# The mount points at or below ROOT, deepest first.
root_mounts() {
	awk -v r="$ROOT" '$2 == r || index($2, r "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}
# The processes running inside ROOT (their root directory is ROOT): "PID command line".
root_processes() {
	local p
	for p in /proc/[0-9]*; do
		[[ $(readlink "$p/root" 2>/dev/null) == "$ROOT" ]] || continue
		printf '%s %s\n' "${p#/proc/}" "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)"
	done
}
# At exit: stop what still runs in the root (this run started it), unmount everything under it,
# and remove the scratch directory unless NUMASTOR_DEB_KEEP=1 or something is still mounted.
cleanup() {
	local pid rest m
	while read -r pid rest; do
		[[ -n $pid ]] || continue
		say "stopping process $pid left in the root: $rest"
		kill "$pid" 2>/dev/null || true
	done < <(root_processes)
	for m in $(root_mounts); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "warning: cannot unmount $m"
	done
	if [[ -n $(root_mounts) ]]; then
		say "warning: still mounted under $ROOT, not removing $TMP"
	elif [[ ${NUMASTOR_DEB_KEEP:-0} == 1 ]]; then
		say "kept $TMP (NUMASTOR_DEB_KEEP=1): builds in cur/ and prev/, logs in logs/, the root in root/"
	else
		rm -rf --one-file-system "$TMP"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ versions
CUR_VERSION=$(dpkg-parsechangelog -l "$SRC/debian/changelog" -S Version)
# [epoch:]upstream[-revision]: the upstream part is what dkms and /usr/src/numastor-* carry.
UPSTREAM=${CUR_VERSION#*:}
[[ $UPSTREAM != *-* ]] || UPSTREAM=${UPSTREAM%-*}
# The previous version: the same upstream version (meson's, which the packaging's paths follow)
# with Debian revision 0~prev1, which sorts before any revision from 1 on; a native version
# (no revision) gets <upstream>~prev1, which sorts before <upstream>.
prev_version() {
	local epoch="" rest=$CUR_VERSION
	if [[ $rest == *:* ]]; then
		epoch=${rest%%:*}:
		rest=${rest#*:}
	fi
	if [[ $rest == *-* ]]; then
		echo "$epoch$UPSTREAM-0~prev1"
	else
		echo "$epoch$UPSTREAM~prev1"
	fi
}
PREV_VERSION=$(prev_version)
say "packaging $SRC: numastor $CUR_VERSION (upstream $UPSTREAM), previous version built as $PREV_VERSION"
check "the previous version $PREV_VERSION sorts before $CUR_VERSION" \
	dpkg --compare-versions "$PREV_VERSION" lt "$CUR_VERSION"

# ------------------------------------------------------------------ builds
# Copy git's files of the work tree SRC (tracked and untracked, not ignored; as they are on
# disk, so uncommitted edits count; tracked files deleted on disk are left out) into DEST.
copy_tree() { # src dest
	local f
	mkdir -p "$2"
	git -C "$1" ls-files -z -co --exclude-standard --deduplicate |
		while IFS= read -r -d '' f; do
			[[ -e $1/$f || -L $1/$f ]] && printf '%s\0' "$f"
		done |
		tar -C "$1" --null --no-recursion -T - -cf - | tar -C "$2" -xf -
}

# Build the binary packages of the copy DIR/src (dpkg-buildpackage puts them in DIR);
# the log is DIR/build.log.
build_debs() { # dir
	local dir=$1
	if (cd "$dir/src" && dpkg-buildpackage -us -uc -b -j2) >"$dir/build.log" 2>&1; then
		return 0
	fi
	show_tail "$dir/build.log" 40
	return 1
}

# The .deb files of a build, by the names the packaging promises.
deb_name() { # package version arch
	echo "${1}_${2#*:}_$3.deb"
}

say "building $CUR_VERSION (dpkg-buildpackage -us -uc -b -j2; log $TMP/cur/build.log)"
copy_tree "$SRC" "$TMP/cur/src"
check "dpkg-buildpackage of the tree as it is ($CUR_VERSION)" build_debs "$TMP/cur"
phase_done "build $CUR_VERSION"

say "building the previous version $PREV_VERSION (log $TMP/prev/build.log)"
copy_tree "$SRC" "$TMP/prev/src"
sed -i "1s/([^)]*)/($PREV_VERSION)/" "$TMP/prev/src/debian/changelog"
check "the previous tree's changelog says $PREV_VERSION" \
	[ "$(dpkg-parsechangelog -l "$TMP/prev/src/debian/changelog" -S Version)" == "$PREV_VERSION" ]
check "dpkg-buildpackage of the previous version ($PREV_VERSION)" build_debs "$TMP/prev"
phase_done "build $PREV_VERSION"

CUR_DEB=$TMP/cur/$(deb_name numastor "$CUR_VERSION" amd64)
CUR_DKMS_DEB=$TMP/cur/$(deb_name numastor-dkms "$CUR_VERSION" all)
PREV_DEB=$TMP/prev/$(deb_name numastor "$PREV_VERSION" amd64)
CHANGES=$TMP/cur/numastor_${CUR_VERSION#*:}_amd64.changes
for f in "$CUR_DEB" "$CUR_DKMS_DEB" "$PREV_DEB" "$CHANGES"; do
	check "built ${f#"$TMP"/}" [ -f "$f" ]
done
[[ -f $CUR_DEB && -f $CUR_DKMS_DEB && -f $PREV_DEB ]] || die "the packages were not built (see above)"

# What each package carries, as the packaging promises (dpkg-deb -c: "./path" names).
deb_has() { # deb path-regex (extended, anchored)
	dpkg-deb -c "$1" | awk '{ print $6 }' | grep -Eqx "\./$2"
}
for p in usr/sbin/numastor lib/systemd/system/numastor-fix.service lib/systemd/system/numastor-textfile.service \
	lib/systemd/system/numastor-textfile.timer lib/udev/rules.d/90-numastor.rules \
	usr/libexec/numastor/irqbalance-policy 'usr/share/numastor/.+' 'usr/share/man/man8/numastor\.8(\.gz)?' \
	'usr/share/bash-completion/completions/numastor'; do
	check "numastor ships /$p" deb_has "$CUR_DEB" "$p"
done
for p in dkms.conf build-modules.sh '[^/]+/series'; do
	check "numastor-dkms ships /usr/src/numastor-$UPSTREAM/$p" deb_has "$CUR_DKMS_DEB" "usr/src/numastor-$UPSTREAM/$p"
done
# dkms (and with it gcc, make and the headers) is numastor-dkms's business, not numastor's.
depends_on_dkms() { # deb
	local f
	for f in Pre-Depends Depends; do dpkg-deb -f "$1" "$f"; done | grep -Eq '(^|[,|] *)dkms( |,|$)'
}
check "numastor-dkms depends on dkms" depends_on_dkms "$CUR_DKMS_DEB"
check "numastor does not depend on dkms (Depends: $(dpkg-deb -f "$CUR_DEB" Depends))" \
	not depends_on_dkms "$CUR_DEB"

# ------------------------------------------------------------------ lintian
say "lintian --profile debian --fail-on error,warning ${CHANGES##*/}"
lintian_log=$LOGS/lintian.log
lintian_rc=0
lintian --profile debian --fail-on error,warning "$CHANGES" >"$lintian_log" 2>&1 || lintian_rc=$?
if [[ $lintian_rc == 0 ]] && ! grep -Eq '^[EW]: ' "$lintian_log"; then
	ok "lintian: no error or warning (${CHANGES##*/} and its packages)"
else
	fail "lintian (exit $lintian_rc):"
	grep -v '^running with root privileges is not recommended' "$lintian_log" | sed 's/^/   | /'
	echo "   (overrides belong in debian/*.lintian-overrides, each with its reason)"
fi
phase_done "lintian"

# ------------------------------------------------------------------ the Debian 12 root
# The mirrors this machine's apt takes bookworm and bookworm-security from, else Debian's own.
MIRROR=$(vm_apt_mirror "$SUITE")
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY=$(vm_apt_mirror "$SUITE-security")
SECURITY=${SECURITY:-http://deb.debian.org/debian-security}

# The pristine root, debootstrapped once into ROOT_CACHE/root (built beside it and renamed, so
# a failed or concurrent build never leaves half a root behind).
make_root_cache() {
	if [[ -f $ROOT_CACHE/.ready && ${NUMASTOR_VM_REFRESH:-0} != 1 ]]; then
		return 0
	fi
	local new=$ROOT_CACHE.new.$$
	say "debootstrap --variant=minbase --include=systemd $SUITE from $MIRROR into $ROOT_CACHE (once)"
	rm -rf "$new" && mkdir -p "$new" "$VM_CACHE/debootstrap-debs"
	# the packages are kept in the bed's debootstrap cache (tests/vm/build-image.sh uses it too)
	if ! debootstrap --variant=minbase --include=systemd --cache-dir="$VM_CACHE/debootstrap-debs" \
		"$SUITE" "$new/root" "$MIRROR" >"$new/debootstrap.log" 2>&1; then
		show_tail "$new/debootstrap.log" 30
		rm -rf --one-file-system "$new"
		return 1
	fi
	cat >"$new/root/etc/apt/sources.list" <<-EOF
		deb $MIRROR $SUITE main
		deb $MIRROR $SUITE-updates main
		deb $SECURITY $SUITE-security main
	EOF
	rm -f "$new/root/var/cache/apt/archives/"*.deb
	touch "$new/.ready"
	rm -rf --one-file-system "$ROOT_CACHE"
	mv "$new" "$ROOT_CACHE"
}

# Run a command inside the root, with a clean environment.
in_root() {
	chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}
# apt-get in the root; its output goes to LOGS/NAME.log, whose tail is shown on failure.
root_apt() { # name apt-get-arguments...
	local name=$1
	shift
	if in_root apt-get -q -y -o Dpkg::Use-Pty=0 "$@" >"$LOGS/$name.log" 2>&1; then
		return 0
	fi
	show_tail "$LOGS/$name.log"
	return 1
}

# Every path in the root but the kernel's file systems, temporary files, apt's downloads and
# lists, and logs (which installing anything changes), sorted.
root_files() {
	(cd "$ROOT" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp -o -path ./run \
		-o -path ./var/cache/apt -o -path ./var/lib/apt/lists -o -path ./var/log \) -prune -o -print) |
		sed 's|^\.||' | sort
}
# What may differ between a root's file list before an install and after the purge, every entry
# left by dpkg, apt or debhelper's helpers for any package, not by numastor's:
LEFT_BY_TOOLS=(
	# dpkg's own database: the package's info files go, but status-old, available and the
	# triggers' state files may appear on the first install into a fresh root
	'/var/lib/dpkg(/.*)?'
	# debconf's backup copies of its database, written on the first package that uses debconf
	'/var/cache/debconf/.*-old'
	# deb-systemd-helper's state directories (created empty on first use, kept by design)
	'/var/lib/systemd/deb-systemd-helper-(enabled|masked)(/.*)?'
	# apt's record of which packages were installed automatically
	'/var/lib/apt/extended_states'
	# depmod's indexes of a kernel's modules, remade whenever dkms installs or removes a module
	# (no package owns them; the linux-image package's postrm deletes them with the kernel)
	'/usr/lib/modules/[^/]+/modules\.[a-z.]+'
)
# Compare the root's file list with BEFORE (a file): each path added or removed that
# LEFT_BY_TOOLS does not explain is printed and fails the check.
same_files_as() { # before-file label
	local ignore diffs
	ignore="^[<>] ($(IFS='|'; echo "${LEFT_BY_TOOLS[*]}"))\$"
	root_files >"$LOGS/files-$2.txt"
	diffs=$(diff "$1" "$LOGS/files-$2.txt" | grep -E '^[<>] ' | grep -Ev "$ignore" || true)
	if [[ -z $diffs ]]; then
		return 0
	fi
	echo "   files that differ (< only before, > only after):"
	head -n 40 <<<"$diffs" | sed 's/^/   | /'
	(($(wc -l <<<"$diffs") <= 40)) || echo "   | ... ($(wc -l <<<"$diffs") in all; $LOGS/files-$2.txt)"
	return 1
}

say "preparing the $SUITE root in $ROOT"
make_root_cache || die "debootstrap of the $SUITE root failed (log above)"
cp -a "$ROOT_CACHE/root" "$ROOT"
mkdir -p "$ROOT_CACHE/archives/partial"
mount -t proc proc "$ROOT/proc"
mount -t sysfs sysfs "$ROOT/sys"
mount --rbind /dev "$ROOT/dev"
mount --bind "$ROOT_CACHE/archives" "$ROOT/var/cache/apt/archives"
root_apt update update || die "apt-get update in the root failed"
phase_done "the $SUITE root"

# ------------------------------------------------------------------ numastor: install, upgrade, purge
mkdir -p "$ROOT/tmp/cur" "$ROOT/tmp/prev"
cp "$CUR_DEB" "$CUR_DKMS_DEB" "$ROOT/tmp/cur/"
cp "$PREV_DEB" "$ROOT/tmp/prev/"
IN_CUR_DEB=/tmp/cur/${CUR_DEB##*/}
IN_CUR_DKMS_DEB=/tmp/cur/${CUR_DKMS_DEB##*/}
IN_PREV_DEB=/tmp/prev/${PREV_DEB##*/}

# numastor's dependencies (and recommendations) come first, so that the file lists before the
# install and after the purge differ by numastor alone.
deps=$(for f in Pre-Depends Depends Recommends; do dpkg-deb -f "$CUR_DEB" "$f"; done | sed '/^$/d' | paste -sd, -)
say "installing numastor's dependencies: ${deps:-none}"
if [[ -n $deps ]]; then
	if root_apt satisfy satisfy "$deps"; then
		ok "numastor's Depends and Recommends are installable from $SUITE"
	else
		die "numastor's Depends and Recommends are not installable from $SUITE"
	fi
fi
root_files >"$LOGS/files-before.txt"

# The numastor checks after an install or upgrade to VERSION.
installed_checks() { # version
	local out rc unit state links procs
	check "dpkg-query -W numastor: $1" [ "$(in_root dpkg-query -W -f="\${Version}" numastor)" == "$1" ]
	rc=0
	out=$(in_root numastor --version 2>&1) || rc=$?
	if [[ $rc == 0 && $out == *"$UPSTREAM"* ]]; then
		ok "numastor --version: $out"
	else
		fail "numastor --version: exit $rc, not naming $UPSTREAM:"
		printf '   | %s\n' "$out"
	fi
	rc=0
	out=$(in_root numastor check 2>&1) || rc=$?
	if ((rc <= 2)); then
		ok "numastor check runs (exit $rc: 0 ok, 1 warning, 2 critical)"
	else
		fail "numastor check: exit $rc:"
		tail -n 20 <<<"$out" | sed 's/^/   | /'
	fi
	for unit in "${UNITS[@]}"; do
		state=$(in_root systemctl is-enabled "$unit" 2>&1 || true)
		check "$unit is not enabled (systemctl is-enabled: $state)" \
			grep -Eqx 'disabled|static' <<<"$state"
	done
	# (by -name: the scratch directory's own path says numastor)
	links=$(find "$ROOT/etc/systemd" "$ROOT/var/lib/systemd/deb-systemd-helper-enabled" \
		-name '*numastor*' \( -type l -o -path '*.wants/*' \) -printf '%p ' 2>/dev/null || true)
	links=${links//"$ROOT"/}
	check "no numastor unit linked under /etc/systemd or recorded enabled by deb-systemd-helper${links:+: $links}" \
		[ -z "$links" ]
	procs=$(root_processes)
	check "nothing runs in the root${procs:+: $procs}" [ -z "$procs" ]
}

say "installing the previous version $PREV_VERSION (apt-get install $IN_PREV_DEB)"
if root_apt install-prev install "$IN_PREV_DEB"; then
	ok "apt-get install numastor $PREV_VERSION"
	installed_checks "$PREV_VERSION"
else
	fail "apt-get install numastor $PREV_VERSION"
fi

say "upgrading to $CUR_VERSION (apt-get install $IN_CUR_DEB)"
if root_apt upgrade install "$IN_CUR_DEB"; then
	ok "apt-get install numastor $CUR_VERSION (upgrade from $PREV_VERSION)"
	installed_checks "$CUR_VERSION"
else
	fail "apt-get install numastor $CUR_VERSION (upgrade from $PREV_VERSION)"
fi

say "removing and purging numastor"
check "apt-get remove numastor" root_apt remove remove numastor
check "after remove, /usr/sbin/numastor is gone" [ ! -e "$ROOT/usr/sbin/numastor" ]
check "apt-get purge numastor" root_apt purge purge numastor
state=$(in_root dpkg-query -W -f="\${db:Status-Abbrev}" numastor 2>/dev/null || true)
check "after purge, dpkg knows no numastor (status '${state% }')" grep -Eq '^(un|pn|)$' <<<"${state% }"
check "after purge, the root's files are those from before numastor" same_files_as "$LOGS/files-before.txt" after-purge
procs=$(root_processes)
check "nothing runs in the root${procs:+: $procs}" [ -z "$procs" ]
phase_done "numastor install, upgrade, purge"

# ------------------------------------------------------------------ numastor-dkms
# The bed's 6.1 kernel release (current-6.1 is its kernel directory, with a release file).
krel=""
if [[ ! -e $VM_CACHE/current-$KLINE ]]; then
	# the VM bed fetches it first; run alone (or with NUMASTOR_SKIP_VM=1), fetch it here
	say "no $KLINE kernel in $VM_CACHE yet: tests/vm/fetch-kernel.sh $KLINE"
	NUMASTOR_VM_KERNEL=$KLINE "$TOP/tests/vm/fetch-kernel.sh" >"$LOGS/fetch-kernel.log" 2>&1 ||
		die "fetching the $KLINE kernel failed (log: $LOGS/fetch-kernel.log)"
fi
if [[ -f $VM_CACHE/current-$KLINE/release ]]; then
	krel=$(<"$VM_CACHE/current-$KLINE/release")
elif [[ -L $VM_CACHE/current-$KLINE ]]; then
	krel=$(basename "$(readlink "$VM_CACHE/current-$KLINE")")
fi
[[ -n $krel ]] || die "no $KLINE kernel in $VM_CACHE (run NUMASTOR_VM_KERNEL=$KLINE tests/vm/fetch-kernel.sh)"

# The headers package in the root's archive: linux-headers-KREL, else bookworm's current one.
candidate() { # package
	in_root apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: *//p' | grep -v '^(none)$' || true
}
headers_pkg=linux-headers-$krel
if [[ -z $(candidate "$headers_pkg") ]]; then
	meta_dep=$(in_root apt-cache depends linux-headers-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-headers-[0-9].*-amd64\)$/\1/p' | head -n 1)
	[[ -n $meta_dep ]] || die "neither $headers_pkg nor linux-headers-amd64 is in the $SUITE archive"
	say "$headers_pkg (the bed's kernel) has left the $SUITE archive: using linux-headers-amd64's $meta_dep"
	headers_pkg=$meta_dep
	krel=${meta_dep#linux-headers-}
fi
say "installing dkms and $headers_pkg $(candidate "$headers_pkg") in the root (kernel $krel; this takes a while)"
if root_apt dkms install --no-install-recommends dkms "$headers_pkg"; then
	ok "apt-get install dkms $headers_pkg"
else
	die "apt-get install dkms $headers_pkg failed: numastor-dkms cannot be tested"
fi
for t in gcc make; do
	in_root sh -c "command -v $t" >/dev/null || {
		say "the root has no $t after installing dkms: installing it"
		root_apt "install-$t" install --no-install-recommends "$t" || die "apt-get install $t failed"
	}
done
root_files >"$LOGS/files-before-dkms.txt"
phase_done "dkms and $headers_pkg"

say "installing numastor-dkms (apt-get install $IN_CUR_DKMS_DEB)"
# dkms's common.postinst builds for every kernel with headers and fails the install when that
# build fails with anything but 77 (skipped): numastor-dkms must not use it; with the headers and
# without the kernel source, the package installs.
DKMS_SRC=/usr/src/numastor-$UPSTREAM
if root_apt install-dkms install "$IN_CUR_DKMS_DEB"; then
	ok "apt-get install numastor-dkms $CUR_VERSION (with $krel's headers, without $KSOURCE)"
else
	fail "apt-get install numastor-dkms $CUR_VERSION (with $krel's headers, without $KSOURCE): its postinst must not fail"
	[[ -f $ROOT$DKMS_SRC/dkms.conf ]] || die "numastor-dkms is not even unpacked"
fi
check "$DKMS_SRC/dkms.conf: PACKAGE_NAME numastor" \
	grep -Eqx 'PACKAGE_NAME="?numastor"?' "$ROOT$DKMS_SRC/dkms.conf"
check "$DKMS_SRC/dkms.conf: PACKAGE_VERSION $UPSTREAM" \
	grep -Eqx "PACKAGE_VERSION=\"?${UPSTREAM//./\\.}\"?" "$ROOT$DKMS_SRC/dkms.conf"
dkms_status=$(in_root dkms status numastor 2>&1 || true)
say "dkms status after the install: ${dkms_status:-(nothing)}"
check "dkms knows numastor/$UPSTREAM after the install (dkms add)" grep -q "^numastor/$UPSTREAM" <<<"$dkms_status"
# The kernel's module directory holds no module of numastor's, and dkms says none is installed.
nothing_installed() { # dkms-status
	[[ $1 != *installed* ]] && [[ -z $(find "$ROOT/lib/modules/$krel" -path '*/updates/*' \( -name 'scsi_mod.ko*' \
		-o -name 'sd_mod.ko*' \) 2>/dev/null) ]]
}
check "nothing installed into $krel's modules by the package's install (AUTOINSTALL empty)" nothing_installed "$dkms_status"

make_log=/var/lib/dkms/numastor/$UPSTREAM/build/make.log
# Case A: no kernel source in the root.
say "case A: dkms build numastor/$UPSTREAM -k $krel without $KSOURCE (must fail and say so)"
rc=0
in_root dkms build "numastor/$UPSTREAM" -k "$krel" >"$LOGS/dkms-build-a.log" 2>&1 || rc=$?
[[ ! -f $ROOT$make_log ]] || cat "$ROOT$make_log" >>"$LOGS/dkms-build-a.log"
check "case A: dkms build without the kernel source fails (exit $rc)" [ "$rc" != 0 ]
if grep -q "$KSOURCE" "$LOGS/dkms-build-a.log"; then
	ok "case A: the output or make.log names $KSOURCE: $(grep -m1 "$KSOURCE" "$LOGS/dkms-build-a.log")"
else
	fail "case A: neither dkms's output nor make.log names $KSOURCE"
	show_tail "$LOGS/dkms-build-a.log"
fi

# Case B: Debian's kernel source where linux-source-6.1 puts it, at the headers' version.
headers_version=$(in_root dpkg-query -W -f="\${Version}" "$headers_pkg")
tarball=$VM_CACHE/kmod-source/${KSOURCE}_$headers_version.tar.xz
if [[ ! -f $tarball ]]; then
	skip "case B (dkms build with the kernel source): no $tarball, the source at the headers' version $headers_version (tests/kmod/check-build.sh downloads the bed's; cached: $(cd "$VM_CACHE/kmod-source" 2>/dev/null && echo "${KSOURCE}"_*.tar.xz))"
else
	say "case B: dkms build numastor/$UPSTREAM -k $krel with /usr/src/$KSOURCE.tar.xz ($headers_version; a few minutes)"
	cp "$tarball" "$ROOT/usr/src/$KSOURCE.tar.xz"
	t_b=$SECONDS
	rc=0
	in_root dkms build "numastor/$UPSTREAM" -k "$krel" >"$LOGS/dkms-build-b.log" 2>&1 || rc=$?
	if [[ $rc == 0 ]]; then
		ok "case B: dkms build with the kernel source succeeds ($((SECONDS - t_b)) s)"
	else
		fail "case B: dkms build with the kernel source: exit $rc"
		show_tail "$LOGS/dkms-build-b.log"
		[[ ! -f $ROOT$make_log ]] || show_tail "$ROOT$make_log" 40
	fi
	dkms_status=$(in_root dkms status numastor 2>&1 || true)
	check "case B: dkms status: numastor/$UPSTREAM, $krel, x86_64: built (says: $dkms_status)" \
		grep -qx "numastor/$UPSTREAM, $krel, x86_64: built" <<<"$dkms_status"
	for m in scsi_mod sd_mod; do
		check "case B: /var/lib/dkms/numastor/$UPSTREAM/$krel/x86_64/module/$m.ko built" \
			exists "$ROOT/var/lib/dkms/numastor/$UPSTREAM/$krel/x86_64/module/$m.ko*"
	done
	check "case B: built, not installed into $krel's modules" nothing_installed "$dkms_status"

	# Case C: the package installed (here reinstalled, as an upgrade would) while the kernel
	# source is there: its postinst must still not install the modules into the kernel (they
	# replace the SCSI core: installed on purpose only).
	say "case C: apt-get install --reinstall numastor-dkms with $KSOURCE present"
	t_b=$SECONDS
	if root_apt reinstall-dkms install --reinstall "$IN_CUR_DKMS_DEB"; then
		ok "case C: apt-get install --reinstall numastor-dkms with the kernel source ($((SECONDS - t_b)) s)"
		dkms_status=$(in_root dkms status numastor 2>&1 || true)
		check "case C: nothing installed into $krel's modules by the postinst (dkms status: $dkms_status)" \
			nothing_installed "$dkms_status"
	else
		fail "case C: apt-get install --reinstall numastor-dkms with the kernel source (so whether its postinst installs modules is not known)"
	fi
	rm -f "$ROOT/usr/src/$KSOURCE.tar.xz"
fi
phase_done "numastor-dkms build"

say "purging numastor-dkms, then dkms"
check "apt-get purge numastor-dkms" root_apt purge-dkms purge numastor-dkms
check "after purge, the root's files are those from before numastor-dkms" \
	same_files_as "$LOGS/files-before-dkms.txt" after-purge-dkms
check "apt-get purge dkms" root_apt purge-dkms-tool purge dkms
left=$(compgen -G "$ROOT/usr/src/numastor-*" || true)
left=${left//"$ROOT"/}
[[ ! -e $ROOT/var/lib/dkms/numastor ]] || left+=" var/lib/dkms/numastor"
check "after purge, no /usr/src/numastor-* or /var/lib/dkms/numastor${left:+: $left}" [ -z "$left" ]
procs=$(root_processes)
check "nothing runs in the root${procs:+: $procs}" [ -z "$procs" ]
phase_done "numastor-dkms purge"

finish
