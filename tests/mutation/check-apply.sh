#!/bin/bash
# Every mutant still applies to the tree as it is (patch --dry-run), and names what kills it:
# a mutant left behind by a change to the code under it is an ERROR of the mutation stage
# (tests/mutation/run.sh), found only after the long build there; here it fails in seconds.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
n=0
for p in "$top"/tests/mutation/*.patch; do
	n=$((n + 1))
	name=${p##*/}
	name=${name%.patch}
	# the two header lines read by the shell itself: 548 mutants, three processes fewer each
	line1= line2=
	{ IFS= read -r line1; IFS= read -r line2; } < "$p"
	if [[ $line1 != "# mutant: "?* || $line2 != "# kills: "?* ]]; then
		echo "FAIL: $name: its first lines are not '# mutant: ...' and '# kills: ...'"
		fails=$((fails + 1))
	elif kill=${line2#"# kills: "} && first=${kill%% *} && [[ $first == */* && -f "$top/$first" && ! -x "$top/$first" ]]; then
		# a kill command whose script cannot run "kills" every mutant with Permission denied
		echo "FAIL: $name: its kill command runs $first, which is not executable (chmod +x it, or name its interpreter)"
		fails=$((fails + 1))
	elif ! out=$(patch -p1 -d "$top" --dry-run -s -f <"$p" 2>&1); then
		echo "FAIL: $name no longer applies (make it again on the code as it is now): ${out:0:300}"
		fails=$((fails + 1))
	fi
done
echo "mutants: $n, $fails that do not apply, lack their header or cannot run their kill command"
[ "$fails" = 0 ]
