#!/bin/bash
# Documentation in step with the code: the man pages lint clean, and every subcommand and
# every long option that --help lists appears in the man pages and in the bash, zsh and fish
# completions. The bash completion is driven for real.
set -u
numastor=$1
builddir=$2
src=$(cd "$(dirname "$0")/.." && pwd)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for page in "$builddir"/man/*.8 "$builddir"/man/*.7; do
	[ -e "$page" ] || { fail "no man pages were built in $builddir/man"; break; }
	# scdoc 1.11 puts a .P before and after each .SH; mandoc warns about both. That warning is scdoc's, not ours.
	out=$(mandoc -Tlint -W warning "$page" 2>&1 | grep -v -E 'skipping paragraph macro: PP (empty|after SH)') || true
	[ -z "$out" ] || fail "mandoc -Tlint $page: $out"
done

# every rule id the schema knows has its entry in numastor-findings(7), and no other
ids=$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["$defs"]["finding"]["properties"]["id"]["enum"]))' "$src/schema/numastor.schema.json")
[ -n "$ids" ] || fail "no finding ids in schema/numastor.schema.json"
for id in $ids; do
	grep -q "^\*$id\* (" "$src/man/numastor-findings.7.scd" || fail "finding $id has no entry in man/numastor-findings.7.scd"
done
# numastor trace's finding (MEASURED): in its own schema and raised by its writers, not check's rules
trace_ids=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["properties"]["findings"]["items"]["properties"]["id"]["const"])' "$src/schema/numastor-trace.schema.json")
for id in $trace_ids; do
	grep -q "^\*$id\* (" "$src/man/numastor-findings.7.scd" || fail "trace's finding $id has no entry in man/numastor-findings.7.scd"
	grep -q "\"$id\"" "$src/cmd/trace-output.c" || fail "numastor-findings(7) documents $id, which cmd/trace-output.c never writes"
done
for id in $(sed -n 's/^\*\([a-z-]*\)\* (\(critical\|warning\|info\).*/\1/p' "$src/man/numastor-findings.7.scd"); do
	[[ " $trace_ids " == *" $id "* ]] && continue
	grep -q "\"$id\"" "$src/schema/numastor.schema.json" || fail "numastor-findings(7) documents $id, which the schema does not know"
	grep -q "\"$id\"" "$src/lib/model/findings.c" || fail "numastor-findings(7) documents $id, which lib/model/findings.c never raises"
done
[ -e "$builddir/man/numastor-findings.7" ] || fail "numastor-findings.7 was not built"

commands=$("$numastor" --help | awk '/^Commands:/{on=1; next} on && !NF {exit} on {print $1}')
[ -n "$commands" ] || fail "numastor --help lists no commands"
for c in $commands; do
	[ -f "$src/man/numastor-$c.8.scd" ] || fail "command $c has no man page man/numastor-$c.8.scd"
	grep -q "^\*$c\*" "$src/man/numastor.8.scd" || fail "command $c missing from numastor(8)"
	for f in numastor.bash _numastor numastor.fish; do
		grep -qw -- "$c" "$src/completions/$f" || fail "command $c missing from completions/$f"
	done
	# the options are the help lines that start with one ("  -j, --json", "      --revert")
	opts=$("$numastor" "$c" --help | grep -E '^ +(-[a-zA-Z], )?--[a-z]' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
	for o in $opts; do
		grep -q -- "\*$o\*" "$src/man/numastor-$c.8.scd" || fail "$c $o missing from man/numastor-$c.8.scd"
		grep -q -- "$o" "$src/completions/numastor.bash" || fail "$c $o missing from completions/numastor.bash"
		grep -q -- "$o" "$src/completions/_numastor" || fail "$c $o missing from completions/_numastor"
		grep -q -- "-l ${o#--}" "$src/completions/numastor.fish" || fail "$c $o missing from completions/numastor.fish"
	done
done

# drive the bash completion
complete_words() { # complete_words WORD... -> COMPREPLY of the last word
	bash -c '
		source /usr/share/bash-completion/bash_completion
		source "$0"
		COMP_WORDS=("${@}")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="${COMP_WORDS[*]}"
		COMP_POINT=${#COMP_LINE}
		_numastor numastor "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
		printf "%s\n" "${COMPREPLY[@]}"
	' "$src/completions/numastor.bash" "$@"
}
got=$(complete_words numastor ch)
[ "$got" = check ] || fail "bash completion of 'numastor ch' gave '$got'"
got=$(complete_words numastor check --js)
[ "$got" = --json ] || fail "bash completion of 'numastor check --js' gave '$got'"
got=$(complete_words numastor check --color al | tr '\n' ' ')
[ "$got" = "always " ] || fail "bash completion of '--color al' gave '$got'"
got=$(complete_words numastor check --inter)
[ "$got" = --interval ] || fail "bash completion of 'numastor check --inter' gave '$got'"
got=$(complete_words numastor check --interval "" | tr '\n' ' ')
[ "$got" = "1 2 5 10 " ] || fail "bash completion of '--interval' gave '$got'"
tmp=$(mktemp -d)
mkdir -p "$tmp/sys/block/nvme7n1" "$tmp/sys/block/sdq"
got=$(complete_words numastor check --sysroot "$tmp" nvm)
[ "$got" = nvme7n1 ] || fail "bash completion of devices under a sysroot gave '$got'"
rm -rf "$tmp"

if [ "$fails" -gt 0 ]; then
	echo "docs: $fails failed"
	exit 1
fi
echo "docs: all passed"
