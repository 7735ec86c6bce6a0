#!/bin/bash
# Prometheus output: promtool accepts the metrics of every fixture machine and of this
# machine; the metrics say what the report says (prometheus/check-metrics.py); --output-file
# replaces the file atomically and leaves no temp file; the shipped alerting rules pass
# promtool check rules and their unit tests, every alert fires in one and none on the healthy
# fixture (prometheus/check-alerts.py).
set -u
numastor=$1
shift
# the parts to run (a mutant's kill command names the one that kills it): promtool (every
# fixture's metrics through promtool), metrics (check-metrics.py and the seed machines' values),
# outfile, alerts (the rules and check-alerts.py); default all
parts=" ${*:-promtool metrics outfile alerts} "
part() { [[ $parts == *" $1 "* ]]; }
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/numastor-prom.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { # NUMASTOR_FAIL_FAST=1 (tests/mutation/run.sh): the first failure ends the run
	echo "FAIL: $*"
	fails=$((fails + 1))
	[[ ${NUMASTOR_FAIL_FAST:-0} != 1 ]] || exit 1
}

python3 "$here/fixtures/gen-fixtures.py" "$tmp/fx" >/dev/null || fail "generating fixtures"
if part promtool; then
for root in "$tmp"/fx/* /; do
	[ -d "$root" ] || continue
	args=(--format prometheus)
	[ "$root" = / ] || args+=(--sysroot "$root")
	"$numastor" check "${args[@]}" >"$tmp/out.prom"
	rc=$?
	# 3 only for a verdict of unknown: devices not judged
	[ "$rc" -le 2 ] || { [ "$rc" = 3 ] && grep -q '^numastor_devices_unjudged [1-9]' "$tmp/out.prom"; } ||
		fail "$root: check --format prometheus exited $rc"
	out=$(promtool check metrics <"$tmp/out.prom" 2>&1) || fail "$root: promtool check metrics: $out"
	[ -z "$out" ] || fail "$root: promtool complains: $out"
	grep -q "^numastor_check_status $rc\$" "$tmp/out.prom" || fail "$root: numastor_check_status is not the exit code $rc"
	# bounded cardinality: no per-IRQ or per-CPU labels
	grep -qE '[{,](irq|cpu)="' "$tmp/out.prom" && fail "$root: per-IRQ or per-CPU labels"
done
fi

if part metrics; then
# the seed machine says what matters
"$numastor" check --sysroot "$tmp/fx/cloud-2n64c-8nvme-forced-node0" -f prometheus >"$tmp/cloud.prom"
grep -q '^numastor_device_node_forced{device="nvme0n1"} 1$' "$tmp/cloud.prom" || fail "cloud: node_forced metric"
grep -q '^numastor_finding{id="irq-confined",severity="critical",device="nvme0n1",cause="node-forced",role="effect"} 1$' "$tmp/cloud.prom" &&
	grep -q '^numastor_finding{id="node-forced",severity="critical",device="nvme0n1",cause="node-forced",role="cause"} 1$' "$tmp/cloud.prom" ||
	fail "cloud: irq-confined finding metric"

# the new metrics against the report, the series bound and the man page's count (see there)
python3 "$here/prometheus/check-metrics.py" "$numastor" "$tmp/fx" "$here/../man/numastor-check.8.scd" ||
	fail "check-metrics.py"

# the counter NumastorIrqsFireRemote takes rate() of: sda's one vector fired on node 0, sda is on node 1
"$numastor" check --sysroot "$tmp/fx/hba-megaraid-node1-irq-cpu0" -f prometheus >"$tmp/hba.prom"
grep -q '^numastor_device_queue_interrupts_total{device="sda",local="false"} 18233602$' "$tmp/hba.prom" &&
	grep -q '^numastor_device_queue_interrupts_total{device="sda",local="true"} 0$' "$tmp/hba.prom" ||
	fail "hba: queue interrupts by locality: $(grep queue_interrupts "$tmp/hba.prom")"
fi

if part outfile; then
# --output-file: atomic replace, no temp file left, errors are exit 3
echo "old" >"$tmp/numastor.prom"
"$numastor" check --sysroot "$tmp/fx/baremetal-2s-4nvme-healthy" -f prometheus -O "$tmp/numastor.prom" >"$tmp/stdout"
[ $? = 0 ] || fail "--output-file exited non-zero"
[ -s "$tmp/stdout" ] && fail "--output-file also wrote to stdout"
grep -q '^numastor_check_status 0$' "$tmp/numastor.prom" || fail "--output-file did not replace the file"
[ "$(ls "$tmp" | grep -c '^numastor.prom')" = 1 ] || fail "--output-file left a temp file: $(ls "$tmp")"
[ "$(stat -c %a "$tmp/numastor.prom")" = 644 ] || fail "--output-file file mode is $(stat -c %a "$tmp/numastor.prom")"
out=$("$numastor" check -f prometheus -O "$tmp/no/such/dir/numastor.prom" 2>&1)
[ $? = 3 ] && grep -q "cannot create a file beside $tmp/no/such/dir/numastor.prom" <<<"$out" ||
	fail "--output-file into a missing directory: $out"
# a run that fails after the target was accepted leaves its failure there (status 3 and the
# reason), never the last verdict: a fleet would keep reading the old OK
"$numastor" check --sysroot "$tmp/fx/no-such-machine" -f prometheus -O "$tmp/numastor.prom" 2>"$tmp/err"
rc=$?
[ $rc = 3 ] || fail "a failed run with --output-file exited $rc"
grep -q '^numastor_check_status 3$' "$tmp/numastor.prom" || fail "a failed run left the old verdict: $(cat "$tmp/numastor.prom")"
grep -q '^numastor_check_failed{reason="cannot use .*no-such-machine as the root' "$tmp/numastor.prom" ||
	fail "a failed run's file does not say why: $(cat "$tmp/numastor.prom")"
out=$(promtool check metrics <"$tmp/numastor.prom" 2>&1) && [ -z "$out" ] || fail "the failed run's file: promtool: $out"
# the same in JSON: the error document, in place of the last report
"$numastor" check --sysroot "$tmp/fx/no-such-machine" --json -O "$tmp/report.json" >/dev/null 2>&1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["error"]["exit_code"] == 3 and "no-such-machine" in d["error"]["message"], d' \
	"$tmp/report.json" 2>/dev/null || fail "a failed --json run's file is not the error document"
# a machine with devices that could not be judged: written (it is a verdict), status 3
"$numastor" check --sysroot "$tmp/fx/garbage-numbers" -f prometheus -O "$tmp/numastor.prom" 2>"$tmp/err"
rc=$?
[ $rc = 3 ] && grep -q '^numastor_check_status 3$' "$tmp/numastor.prom" &&
	grep -q '^numastor_devices_unjudged 4$' "$tmp/numastor.prom" && ! grep -q numastor_check_failed "$tmp/numastor.prom" ||
	fail "garbage-numbers: exit $rc, $(grep -v '^#' "$tmp/numastor.prom" | head -5)"
# a target numastor refuses (a directory) is left alone, failure or not
mkdir "$tmp/adir"
"$numastor" check --sysroot "$tmp/fx/no-such-machine" -f prometheus -O "$tmp/adir" >/dev/null 2>&1
[ -d "$tmp/adir" ] || fail "a refused target was replaced"
out=$("$numastor" check -f yaml 2>&1)
[ $? = 3 ] && grep -q "takes text, json, prometheus, svg or map, not 'yaml'" <<<"$out" || fail "--format yaml: $out"
fi

if part alerts; then
out=$(promtool check rules "$here/../data/numastor-alerts.yml" 2>&1) || fail "promtool check rules: $out"
# every alert fires in a case of alerts-test.yml (which promtool passes), none on the healthy
# fixture's own metrics, one per cause on the forced-node cloud fixture's
python3 "$here/prometheus/check-alerts.py" "$numastor" "$tmp/fx" || fail "check-alerts.py"
fi

if [ "$fails" -gt 0 ]; then
	echo "prometheus: $fails failed"
	exit 1
fi
echo "prometheus: all passed"
