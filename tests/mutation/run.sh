#!/bin/bash
# Run the mutants: each tests/mutation/NAME.patch removes one check; the test named in its
# header must then fail.
#
#   tests/mutation/run.sh [--fast] [NAME|FILE.patch ...]   (default: every tests/mutation/*.patch)
#
# --fast leaves out the mutants whose kill command boots the VM bed (tests/vm/): what
# tests/run-all.sh runs; the VM-killed ones are run by naming them, or without --fast.
#
# A mutant's first lines, before the diff:
#   # mutant: what check it removes
#   # kills: the shell command (run from the mutated tree's top, after it is built into
#   #        build/ with -Dtest_hooks=true when meson_options.txt has it) that must FAIL
# The tree as it is now (HEAD plus the working tree's changes, untracked files included) is
# copied once into a temporary directory and built there once; then for each mutant the patch
# is applied (patch -p1), the tree rebuilt (ninja: only what the patch touched), the kill
# command run, and the patch taken out again (patch -R, checked). Prints `KILLED NAME (Ns)`, `SURVIVED NAME (Ns)` or
# `ERROR NAME: why` (the patch does not apply, the tree does not build, no kill command) per
# mutant and a summary; exits 1 when any survived or erred. NUMASTOR_MUTATION_KEEP=1 keeps
# the work directories; each mutant's build and kill output is in its directory's log.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

fast=0
if [[ "${1:-}" == --fast ]]; then
	fast=1
	shift
fi
mutants=()
if (($#)); then
	for m in "$@"; do
		case $m in
		*/*) mutants+=("$(realpath "$m")") ;;
		*.patch) mutants+=("$here/$m") ;;
		*) mutants+=("$here/$m.patch") ;;
		esac
	done
else
	for m in "$here"/*.patch; do
		[[ -e "$m" ]] && mutants+=("$m")
	done
fi
((${#mutants[@]})) || { echo "mutation: no mutants in $here" >&2; exit 1; }

# The tree as it is now: tracked and untracked (not ignored) files that exist.
copy_tree() { # DEST
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[[ -e "$f" || -L "$f" ]] && printf '%s\0' "$f"
		done | tar --null -T - -cf -) | tar -xf - -C "$1"
}

work=$(mktemp -d "${TMPDIR:-/tmp}/numastor-mutants.XXXXXX")
mkdir "$work/tree"
copy_tree "$work/tree"
opts=()
grep -q "'test_hooks'" "$work/tree/meson_options.txt" 2>/dev/null && opts+=(-Dtest_hooks=true)
if ! (cd "$work/tree" && meson setup build "${opts[@]}" && ninja -C build) > "$work/build.log" 2>&1; then
	echo "mutation: the tree does not build unmutated (see $work/build.log)" >&2
	exit 1
fi
keep=0

killed=0 survived=0 errors=0 skipped=0
survivors=()
for patch in "${mutants[@]}"; do
	name=$(basename "$patch" .patch)
	start=$(date +%s)
	if [[ ! -f "$patch" ]]; then
		echo "ERROR $name: no such mutant ($patch)"
		errors=$((errors + 1)); survivors+=("$name")
		continue
	fi
	kill_cmd=$(sed -n '1,/^diff /s/^# kills: //p' "$patch" | head -n 1)
	if [[ -z "$kill_cmd" ]]; then
		echo "ERROR $name: no '# kills:' line"
		errors=$((errors + 1)); survivors+=("$name")
		continue
	fi
	if ((fast)) && [[ $kill_cmd == *tests/vm/* ]]; then
		skipped=$((skipped + 1))
		continue
	fi
	log="$work/$name.log"
	status=
	if ! (cd "$work/tree" && patch -p1 --quiet --no-backup-if-mismatch < "$patch") > "$log" 2>&1; then
		status="ERROR $name: the patch does not apply (see $log)"
	else
		if ! ninja -C "$work/tree/build" >> "$log" 2>&1; then
			status="ERROR $name: the mutated tree does not build (see $log)"
		elif (cd "$work/tree" && bash -c "$kill_cmd") >> "$log" 2>&1; then
			status="SURVIVED $name"
		else
			status="KILLED $name"
		fi
		if ! (cd "$work/tree" && patch -R -p1 --quiet --no-backup-if-mismatch < "$patch") >> "$log" 2>&1; then
			echo "mutation: $name could not be taken out again (see $log); stopping" >&2
			exit 1
		fi
	fi
	secs=$(($(date +%s) - start))
	case $status in
	KILLED*) killed=$((killed + 1)); echo "$status (${secs}s)" ;;
	SURVIVED*) survived=$((survived + 1)); survivors+=("$name"); keep=1; echo "$status (${secs}s): $kill_cmd passed (see $log)" ;;
	*) errors=$((errors + 1)); survivors+=("$name"); keep=1; echo "$status" ;;
	esac
done
ninja -C "$work/tree/build" > /dev/null 2>&1 || :
if [[ "${NUMASTOR_MUTATION_KEEP:-0}" != 1 && $keep == 0 ]]; then
	rm -rf "$work"
else
	echo "mutation: work directory kept: $work"
fi
left=
((skipped)) && left=", $skipped left out (--fast: those the VM bed kills)"
run=$((killed + survived + errors))
names=$(printf '%s\n' "${survivors[@]}" | paste -sd' ')
echo "mutation: $killed of $run killed${names:+; survived or erred: $names}$left"
((survived == 0 && errors == 0))
