#!/bin/bash
# Run the mutants: each tests/mutation/NAME.patch removes one check; the test named in its
# header must then fail.
#
#   tests/mutation/run.sh [--fast] [NAME|FILE.patch ...]   (default: every tests/mutation/*.patch)
#
# --fast leaves out the mutants whose kill command boots the VM bed (tests/vm/) or builds
# kernel modules (tests/kmod/): what tests/run-all.sh runs; those are run by naming them, or
# without --fast.
#
# A mutant's first lines, before the diff:
#   # mutant: what check it removes
#   # kills: the shell command (run from the mutated tree's top, after it is built into
#   #        build/ with -Dtest_hooks=true when meson_options.txt has it) that must FAIL
# The tree as it is now (HEAD plus the working tree's changes, untracked files included) is
# copied once into a temporary directory and built there once; then for each mutant the patch
# is applied (patch -p1), what the kill command runs rebuilt (ninja: numastor and the build/
# paths it names, or everything when it runs meson; only what the patch touched), the kill
# command run (with NUMASTOR_FAIL_FAST=1: the test scripts that run many cases stop at the first
# failed one, since one is all a kill needs), and the patch taken out again (patch -R, checked). Prints `KILLED NAME (Ns, cpu Bs build + Ks kill)`, `SURVIVED NAME (...)` or
# `ERROR NAME: why` (the patch does not apply, the tree does not build, no kill command) per
# mutant and a summary (with the mutants' summed wall and CPU seconds); exits 1 when any survived or erred. NUMASTOR_MUTATION_KEEP=1 keeps
# the work directories; each mutant's build and kill output is in its directory's log.
# NUMASTOR_MUTATION_JOBS=N runs N shards at once (default 2 on two CPUs or more; see below).
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

# Mutants of the same source files run one after another: taking a mutant out changes its files
# again, and the next build compiles them back unless the next mutant changes them too. Sorted
# by the files they patch (the name within), a run compiles about once per file, not twice per
# mutant. A mutant that is not there keeps its place, for its ERROR line.
sort_by_files() {
	local m
	for m in "$@"; do
		printf '%s\t%s\n' "$( [[ -f $m ]] && sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$m" | sort -u | paste -sd, -)" "$m"
	done | sort -t $'\t' -k1,1 -k2,2 | cut -f2
}
mapfile -t mutants < <(sort_by_files "${mutants[@]}")

# Shards: with NUMASTOR_MUTATION_JOBS > 1 (default: 2 when the machine has two CPUs or more) and
# more than one mutant, the mutants are dealt to that many runs of this script, each with its own
# copy of the tree, at once; their lines interleave, and one summary counts them all. They are
# dealt by the files they patch, each file's mutants to one run (the largest groups first, each to
# the run with the fewest mutants yet), so that a run still compiles about once per file.
jobs=${NUMASTOR_MUTATION_JOBS:-$(($(nproc 2>/dev/null || echo 1) >= 2 ? 2 : 1))}
if [[ ! $jobs =~ ^[1-9][0-9]*$ ]]; then
	echo "mutation: NUMASTOR_MUTATION_JOBS takes a number of runs at once, not '$jobs'" >&2
	exit 1
fi
if ((jobs > 1 && ${#mutants[@]} > 1)); then
	shards=$(mktemp -d "${TMPDIR:-/tmp}/numastor-mutant-shards.XXXXXX")
	pids=()
	# shard of each mutant, by its files' group (the order within a shard stays the sorted one)
	mapfile -t shard_of < <(for m in "${mutants[@]}"; do
		[[ -f $m ]] && sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$m" | sort -u | paste -sd, - || echo "$m"
	done | awk -v jobs="$jobs" '{ key[NR] = $0; size[$0]++ }
		END {
			n = 0
			for (k in size) order[++n] = k
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)  # largest first, then by name
				if (size[order[j]] > size[order[i]] || (size[order[j]] == size[order[i]] && order[j] < order[i])) {
					t = order[i]; order[i] = order[j]; order[j] = t }
			for (i = 1; i <= n; i++) {
				best = 0
				for (j = 1; j < jobs; j++) if (count[j] < count[best]) best = j
				shard[order[i]] = best; count[best] += size[order[i]]
			}
			for (r = 1; r <= NR; r++) print shard[key[r]]
		}')
	for ((j = 0; j < jobs; j++)); do
		part=()
		for ((i = 0; i < ${#mutants[@]}; i++)); do ((shard_of[i] == j)) && part+=("${mutants[i]}"); done
		((${#part[@]})) || continue
		# each shard's summary goes to its own file; every other line straight through
		( NUMASTOR_MUTATION_JOBS=1 "$here/run.sh" $( ((fast)) && echo --fast) "${part[@]}" |
			while IFS= read -r line; do
				if [[ $line == "mutation: "*" killed"* ]]; then echo "$line" > "$shards/$j.summary"
				elif [[ $line == "mutation: time: "* ]]; then echo "$line" > "$shards/$j.time"
				else echo "$line"; fi
			done; exit "${PIPESTATUS[0]}" ) &
		pids+=($!)
	done
	rc=0
	for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
	killed=0 run=0 skipped=0 names=
	for f in "$shards"/*.summary; do
		[[ -e $f ]] || { rc=1; continue; }
		line=$(<"$f")
		[[ $line =~ ^mutation:\ ([0-9]+)\ of\ ([0-9]+)\ killed ]] && {
			killed=$((killed + BASH_REMATCH[1])); run=$((run + BASH_REMATCH[2])); }
		[[ $line =~ ,\ ([0-9]+)\ left\ out ]] && skipped=$((skipped + BASH_REMATCH[1]))
		[[ $line =~ survived\ or\ erred:\ ([^,]*) ]] && names="$names${names:+ }${BASH_REMATCH[1]}"
	done
	n=$(ls "$shards"/*.summary 2>/dev/null | wc -l)
	# the shards' times summed: mutant-seconds, whatever ran beside them
	cat "$shards"/*.time 2>/dev/null | awk '{ w += $3; b += $6; k += $9 }
		END { printf "mutation: time: %ds wall, cpu %.2fs building + %.2fs killing (summed over the runs)\n", w, b, k }'
	rm -rf "$shards"
	left=
	((skipped)) && left=", $skipped left out (--fast: those the VM bed or a module build kills)"
	echo "mutation: $killed of $run killed${names:+; survived or erred: $names}$left ($n runs at once)"
	((rc == 0 && killed == run))
	exit
fi

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

# CPU seconds (user+system) of every child this shell has waited for, to the hundredth: a
# mutant's time on a shared, loaded machine is its CPU time, not its wall time. `times` is a
# builtin, so its redirection forks nothing.
# cpu_now sets cpu; it runs in this shell (never in $(...), whose subshell has no children yet).
cpu_now() {
	times > "$work/.times"
	cpu=$(awk 'function sec(t) { split(t, a, /[ms]/); return a[1] * 60 + a[2] }
		NR == 2 { printf "%.2f\n", sec($1) + sec($2) }' "$work/.times") # the children's: 0m1.234s 0m0.567s
}
# NUMASTOR_MUTATION_TIMES=FILE: one line per mutant appended, NAME STATUS WALL BUILD_CPU KILL_CPU
times_file=${NUMASTOR_MUTATION_TIMES:-}
sum_wall=0 sum_build=0 sum_kill=0

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
	if ((fast)) && [[ $kill_cmd == *tests/vm/* || $kill_cmd == *tests/kmod/* ]]; then
		skipped=$((skipped + 1))
		continue
	fi
	log="$work/$name.log"
	status=
	build_cpu=0 kill_cpu=0
	cpu_now
	c0=$cpu
	if ! (cd "$work/tree" && patch -p1 --quiet --no-backup-if-mismatch < "$patch") > "$log" 2>&1; then
		status="ERROR $name: the patch does not apply (see $log)"
	else
		# Only what the kill command runs: numastor and the build/ paths it names (a unit test),
		# everything when it runs meson, ninja or a build of its own; ninja brings each of them up
		# to date with the sources as they are now, whatever an earlier mutant left built.
		targets=(numastor)
		if [[ $kill_cmd =~ (meson|ninja|check-release|check-install|check-units) ]]; then
			targets=()
		else
			read -ra words <<< "$kill_cmd"
			for w in "${words[@]}"; do [[ $w == build/* ]] && targets+=("${w#build/}"); done
		fi
		if ! ninja -C "$work/tree/build" "${targets[@]}" >> "$log" 2>&1; then
			status="ERROR $name: the mutated tree does not build (see $log)"
		else
			cpu_now
			c1=$cpu
			build_cpu=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }')
			if (cd "$work/tree" && NUMASTOR_FAIL_FAST=1 bash -c "$kill_cmd") >> "$log" 2>&1; then
				status="SURVIVED $name"
			else
				status="KILLED $name"
			fi
			cpu_now
			kill_cpu=$(awk -v a="$c1" -v b="$cpu" 'BEGIN { printf "%.2f", b - a }')
		fi
		if ! (cd "$work/tree" && patch -R -p1 --quiet --no-backup-if-mismatch < "$patch") >> "$log" 2>&1; then
			echo "mutation: $name could not be taken out again (see $log); stopping" >&2
			exit 1
		fi
	fi
	secs=$(($(date +%s) - start))
	took="${secs}s, cpu ${build_cpu}s build + ${kill_cpu}s kill"
	sum_wall=$((sum_wall + secs))
	read -r sum_build sum_kill < <(awk -v a="$sum_build" -v b="$build_cpu" -v c="$sum_kill" -v d="$kill_cpu" \
		'BEGIN { printf "%.2f %.2f\n", a + b, c + d }')
	[[ -z $times_file ]] || echo "$name ${status%% *} $secs $build_cpu $kill_cpu" >> "$times_file"
	case $status in
	KILLED*) killed=$((killed + 1)); echo "$status ($took)" ;;
	SURVIVED*) survived=$((survived + 1)); survivors+=("$name"); keep=1; echo "$status ($took): $kill_cmd passed (see $log)" ;;
	*) errors=$((errors + 1)); survivors+=("$name"); keep=1; echo "$status ($took)" ;;
	esac
done
ninja -C "$work/tree/build" > /dev/null 2>&1 || :
if [[ "${NUMASTOR_MUTATION_KEEP:-0}" != 1 && $keep == 0 ]]; then
	rm -rf "$work"
else
	echo "mutation: work directory kept: $work"
fi
left=
((skipped)) && left=", $skipped left out (--fast: those the VM bed or a module build kills)"
run=$((killed + survived + errors))
names=$(printf '%s\n' "${survivors[@]}" | paste -sd' ')
echo "mutation: time: ${sum_wall}s wall, cpu ${sum_build}s building + ${sum_kill}s killing"
echo "mutation: $killed of $run killed${names:+; survived or erred: $names}$left"
((survived == 0 && errors == 0))
