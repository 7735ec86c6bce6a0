#!/bin/bash
# The files numastor writes where the operator asks (lib/out/outfile.h; issue 28, part 2): check -O
# and snapshot -O replace a regular file, or make a new one, atomically; anything else at the
# target (a device node such as /dev/null, a FIFO, a socket, a directory, a symlink, even one to
# a regular file) is refused with exit 3, named, and left exactly as it was, with nothing left
# beside it. "-" and /dev/stdout write through to standard output, the one stream an operator
# names on purpose.
#   check-outfile.sh NUMASTOR [PART...]    parts: refuse, race, replace, through (default: all)
set -u
numastor=$1
shift
parts=${*:-refuse race replace through}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/numastor-outfile.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
	[[ ${NUMASTOR_FAIL_FAST:-0} != 1 ]] || exit 1
}
ok() { echo "ok   $*"; }
export NO_COLOR=1 NUMASTOR_TEST_NOW=1767225600
fx=cloud-2n64c-8nvme-forced-node0
python3 "$here/fixtures/gen-fixtures.py" "$tmp/gen" "$fx" >/dev/null || {
	echo "FAIL: generating $fx"
	exit 1
}
root=$tmp/gen/$fx

# what a path is, as ls -l shows its type, mode, size or device numbers, and link target
describe() { stat -c '%F %a %s %t:%T %N' "$1" 2>&1; }

# make KIND PATH: a target of that kind
make_target() {
	case $1 in
	chardev) mknod "$2" c 1 3 ;; # /dev/null's numbers, in a scratch directory
	fifo) mkfifo "$2" ;;
	socket) python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$2" ;;
	dir) mkdir "$2" && echo keep >"$2/inside" ;;
	link-stdout) ln -s /proc/self/fd/1 "$2" ;;
	link-file) echo "the operator's file" >"$tmp/linked" && ln -s "$tmp/linked" "$2" ;;
	esac
}

if [[ " $parts " == *" refuse "* ]]; then
	kinds="fifo socket dir link-stdout link-file"
	# mknod needs CAP_MKNOD: as root (CI, the bed) the device node is tested too
	if mknod "$tmp/probe-node" c 1 3 2>/dev/null; then
		rm -f "$tmp/probe-node"
		kinds="chardev $kinds"
	else
		echo "note: not root, no device node made; the FIFO and socket stand for it"
	fi
	for cmd in check snapshot; do
		for kind in $kinds; do
			d=$tmp/refuse-$cmd-$kind
			mkdir -p "$d"
			make_target "$kind" "$d/target"
			before=$(describe "$d/target")
			linked_before=$(cat "$tmp/linked" 2>/dev/null)
			if [ "$cmd" = check ]; then
				out=$(timeout 60 "$numastor" check -R "$root" -f prometheus -O "$d/target" 2>&1 </dev/null)
			else
				out=$(timeout 60 "$numastor" snapshot -R "$root" -O "$d/target" 2>&1 </dev/null)
			fi
			rc=$?
			left=$(ls -A "$d")
			if [ "$rc" != 3 ]; then
				fail "$cmd onto a $kind: exit $rc, not 3: ${out:0:300}"
			elif ! grep -q "not writing $d/target: it is a" <<<"$out" || ! grep -q "only a regular file" <<<"$out"; then
				fail "$cmd onto a $kind: the refusal does not say what the target is: ${out:0:300}"
			elif [ "$(describe "$d/target")" != "$before" ]; then
				fail "$cmd onto a $kind: the target changed: '$before' -> '$(describe "$d/target")'"
			elif [ "$left" != target ] && [ "$left" != "$(printf 'target')" ]; then
				fail "$cmd onto a $kind: something was left beside it: $(tr '\n' ' ' <<<"$left")"
			elif [ "$kind" = link-file ] && [ "$(cat "$tmp/linked")" != "$linked_before" ]; then
				fail "$cmd onto a $kind: the file the link points to was changed"
			elif [ "$kind" = dir ] && [ "$(cat "$d/target/inside")" != keep ]; then
				fail "$cmd onto a $kind: the directory's content changed"
			else
				ok "$cmd onto a $kind: refused (exit 3), left as it was"
			fi
			rm -f "$tmp/linked"
		done
	done
fi

if [[ " $parts " == *" race "* ]]; then
	# the target checked again right before the rename: a FIFO put at its name while the report
	# was written (NUMASTOR_TEST_OUTFILE_PAUSE_MS holds the window open) is refused and kept
	if ! grep -q -a NUMASTOR_TEST_OUTFILE_PAUSE_MS "$numastor"; then
		fail "$numastor was built without the test-only switches (-Dtest_hooks=true): the race is not tested"
	else
		for cmd in check snapshot; do
			d=$tmp/race-$cmd
			mkdir -p "$d"
			echo old >"$d/target"
			if [ "$cmd" = check ]; then
				NUMASTOR_TEST_OUTFILE_PAUSE_MS=3000 "$numastor" check -R "$root" -f prometheus -O "$d/target" \
					>"$d.out" 2>&1 &
			else
				NUMASTOR_TEST_OUTFILE_PAUSE_MS=3000 "$numastor" snapshot -R "$root" -O "$d/target" >"$d.out" 2>&1 &
			fi
			pid=$!
			# the report is being written once its temporary file is there
			for _ in $(seq 100); do
				[ "$(ls -A "$d" | wc -l)" -gt 1 ] && break
				sleep 0.05
			done
			rm -f "$d/target" && mkfifo "$d/target"
			wait "$pid"
			rc=$?
			if [ "$rc" != 3 ] || [ ! -p "$d/target" ] || [ "$(ls -A "$d")" != target ]; then
				fail "$cmd: a FIFO put at the target's name meanwhile: exit $rc, $(describe "$d/target"), beside it: $(ls -A "$d" | tr '\n' ' ') $(head -c 200 "$d.out")"
			else
				ok "$cmd: a FIFO put at the target's name while writing: refused (exit 3), kept, nothing left"
			fi
		done
	fi
fi

if [[ " $parts " == *" replace "* ]]; then
	# the twins: a regular file is replaced whole, a new name is made, mode 0644, nothing beside
	d=$tmp/replace
	mkdir -p "$d"
	echo "old metrics" >"$d/numastor.prom"
	chmod 600 "$d/numastor.prom"
	"$numastor" check -R "$root" -f prometheus -O "$d/numastor.prom" >"$d/../stdout" 2>&1
	rc=$?
	if [ "$rc" -gt 2 ] || ! grep -q '^numastor_check_status ' "$d/numastor.prom" || grep -q "old metrics" "$d/numastor.prom"; then
		fail "check -O over a regular file: exit $rc, $(head -c 200 "$d/numastor.prom")"
	elif [ "$(stat -c %a "$d/numastor.prom")" != 644 ] || [ "$(ls -A "$d")" != numastor.prom ]; then
		fail "check -O over a regular file: mode $(stat -c %a "$d/numastor.prom"), beside it: $(ls -A "$d")"
	else
		ok "check -O over a regular file: replaced, 0644, nothing beside it"
	fi
	"$numastor" snapshot -R "$root" -O "$d/new.tar.gz" >/dev/null 2>&1
	rc=$?
	"$numastor" check --snapshot "$d/new.tar.gz" --json >/dev/null 2>&1
	replay=$? # 2: the fixture's critical findings, replayed
	if [ "$rc" != 0 ] || [ "$replay" != 2 ]; then
		fail "snapshot -O to a new name: exit $rc, or the bundle does not replay"
	else
		ok "snapshot -O to a new name: written, replays"
	fi
	# the old spellings, hidden aliases until 0.3.0 (NEWS.md): -o and --output still write the bundle
	for old in -o --output; do
		rm -f "$d/old.tar.gz"
		if "$numastor" snapshot -R "$root" "$old" "$d/old.tar.gz" >/dev/null 2>&1 && [ -s "$d/old.tar.gz" ]; then
			ok "snapshot $old (0.2.0's hidden alias of -O): still writes the bundle"
		else
			fail "snapshot $old (0.2.0's hidden alias of -O): no bundle at $d/old.tar.gz"
		fi
	done
fi

if [[ " $parts " == *" through "* ]]; then
	# "-" and /dev/stdout: the report on standard output, byte for byte what no -O prints
	"$numastor" check -R "$root" --json >"$tmp/plain.json" 2>/dev/null
	for name in - /dev/stdout; do
		"$numastor" check -R "$root" --json -O "$name" >"$tmp/through.json" 2>"$tmp/through.err"
		rc=$?
		if [ "$rc" -gt 2 ] || ! cmp -s "$tmp/plain.json" "$tmp/through.json"; then
			fail "check -O $name: exit $rc, not the report on standard output: $(head -c 200 "$tmp/through.err")"
		else
			ok "check -O $name: the report written through to standard output"
		fi
		"$numastor" snapshot -R "$root" -O "$name" >"$tmp/through.tar.gz" 2>"$tmp/through.err"
		rc=$?
		magic=$(head -c 2 "$tmp/through.tar.gz" | od -An -tx1 | tr -d ' ')
		"$numastor" check --snapshot "$tmp/through.tar.gz" --json >/dev/null 2>&1
		replay=$?
		if [ "$rc" != 0 ] || [ "$magic" != 1f8b ] || ! grep -q "wrote the bundle to standard output" "$tmp/through.err" ||
			[ "$replay" != 2 ]; then
			fail "snapshot -O $name: exit $rc, magic '$magic', stderr $(head -c 200 "$tmp/through.err")"
		else
			ok "snapshot -O $name: a gzip bundle on standard output that replays, its line on stderr"
		fi
	done
fi

echo "outfile: $fails failed"
[ "$fails" = 0 ]
