#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""numastor probe on a loop device of this machine (root: losetup).

A 32 MiB file of random bytes behind a read-only loop device (losetup -r):
- while it runs, the kernel shows the probe's descriptor of the device O_RDONLY|O_DIRECT
  (/proc/PID/fdinfo flags);
- `probe --json` exits 0, its document validates against schema/numastor-probe.schema.json,
  has one run per node with online CPUs (as /sys/devices/system/node says), each with reads
  done, IOPS = ios / seconds, p50 <= p99 <= p99.9 <= max, and no interrupts (a loop device has
  none of its own);
- the device's bytes are identical before and after (sha256 of the whole device);
- on a terminal its stderr shows progress (device, node, elapsed seconds, running IOPS); the
  text report, piped, prints the table and on stderr only the estimate;
- before the first read, stderr says how long the whole probe takes: devices x nodes x duration
  per run (nodes counted from sysfs here), one line when it is not a terminal, before the first
  progress line on one; a probe of 2 devices x 75 s from one node is said to take about
  2 min 30 s before it has read anything (then stopped with SIGINT);
- every line of the text report fits 80 columns; under a hypervisor (the `hypervisor` CPU
  flag, as /proc/cpuinfo says) it says so, else it does not;
- as an unprivileged user (setpriv, uid 65534) the probe is refused with exit 3 and a message
  saying it cannot read the device, also as a JSON error document;
- a /dev node that is another device than sys/block says is refused (exit 3) before any read;
- --block-size below the device's logical block size (a loop device of 4096-byte sectors) is
  refused with exit 3 before any read; bad options exit 3 with "Try 'numastor probe --help'".
"""

import hashlib
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

import jsonschema
import schemas

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor-probe.schema.json")))
ERROR_SCHEMA = json.load(open(os.path.join(HERE, "..", "schema", "numastor-error.schema.json")))
failed = 0


def fail(msg):
    global failed
    failed += 1
    print(f"FAIL {msg}")


def sha(dev):
    h = hashlib.sha256()
    with open(dev, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def nodes_with_cpus():
    base = "/sys/devices/system/node"
    out = []
    for d in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        if d.startswith("node") and d[4:].isdigit():
            with open(os.path.join(base, d, "cpulist")) as f:
                if f.read().strip():
                    out.append(int(d[4:]))
    return sorted(out) or [0]


def losetup(path, *extra):
    return subprocess.run(["losetup", "-f", "--show", *extra, path], check=True, capture_output=True,
                          text=True).stdout.strip()


def under_hypervisor():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return "hypervisor" in line.split(":", 1)[1].split()
    return False


def seconds(s):
    """Seconds below two minutes as the estimate says them: a tenth below 10 s unless whole."""
    s = round(s, 6)
    return f"{s:.1f} s" if s < 10 and s != int(s) else f"{round(s)} s"


def estimate_line(ndevs, nnodes, per, total):
    """The estimate as numastor-probe says it, from numbers counted here."""
    return (f"numastor probe: {ndevs} device{'s' if ndevs != 1 else ''} x {nnodes} node{'s' if nnodes != 1 else ''}"
            f" x {per} per run: about {total}")


def run(numastor, *args, user=None):
    cmd = [numastor, "probe", *args]
    if user:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    numastor = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        print("SKIP: check-probe needs root (losetup)")
        return 77
    scratch = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="numastor-probe.", dir=scratch) as tmp:
        img = os.path.join(tmp, "disk.img")
        with open(img, "wb") as f:
            f.write(os.urandom(32 << 20))
        loops = []
        try:
            dev = losetup(img, "-r")
            loops.append(dev)
            name = os.path.basename(dev)
            before = sha(dev)

            p = run(numastor, "--duration", "0.5", "--json", name)
            try:
                doc = json.loads(p.stdout)
                schemas.validate(doc, SCHEMA)
            except (ValueError, jsonschema.ValidationError) as e:
                fail(f"probe --json {name}: exit {p.returncode}: {type(e).__name__}: {str(e)[:300]}; "
                     f"stderr {p.stderr[:300]!r}")
                doc = None
            if p.returncode != 0:
                fail(f"probe --json {name}: exit {p.returncode}, stderr {p.stderr[:300]!r}")
            if doc is not None:
                devs = doc["devices"]
                if [d["name"] for d in devs] != [name]:
                    fail(f"probe: devices {[d['name'] for d in devs]}, expected [{name}]")
                runs = devs[0]["nodes"] if devs else []
                if [r["node"] for r in runs] != nodes_with_cpus():
                    fail(f"probe: runs from nodes {[r['node'] for r in runs]}, the machine's nodes with CPUs "
                         f"are {nodes_with_cpus()}")
                for r in runs:
                    lat = r["latency_us"]
                    if not (r["ios"] > 0 and r["bytes"] == r["ios"] * 4096 and r["seconds"] > 0):
                        fail(f"probe: node {r['node']}: ios {r['ios']}, bytes {r['bytes']}, seconds {r['seconds']}")
                    elif abs(r["iops"] - r["ios"] / r["seconds"]) > 0.01 * r["iops"] + 1:
                        fail(f"probe: node {r['node']}: iops {r['iops']} is not ios / seconds "
                             f"({r['ios']} / {r['seconds']})")
                    if not (0 < lat["p50"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]):
                        fail(f"probe: node {r['node']}: latency percentiles out of order: {lat}")
                    if r["interrupts"] is not None:
                        fail(f"probe: node {r['node']}: interrupts {r['interrupts']} for a loop device")
                if doc["exit_code"] != p.returncode:
                    fail(f"probe: exit_code {doc['exit_code']} but the process exited {p.returncode}")
            after = sha(dev)
            if after != before:
                fail(f"probe changed {dev}: sha256 {before} before, {after} after")

            # how the probe holds the device, as the kernel says (fdinfo flags): read-only, direct
            proc = subprocess.Popen([numastor, "probe", "-d", "1.5", name], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            flags = None
            for _ in range(100):
                time.sleep(0.02)
                try:
                    for fd in os.listdir(f"/proc/{proc.pid}/fd"):
                        if os.path.realpath(f"/proc/{proc.pid}/fd/{fd}") == dev:
                            with open(f"/proc/{proc.pid}/fdinfo/{fd}") as f:
                                flags = int(next(x for x in f if x.startswith("flags:")).split()[1], 8)
                except (OSError, StopIteration):
                    pass
                if flags is not None:
                    break
            proc.wait()
            if flags is None:
                fail(f"probe {name}: never saw it hold {dev} open")
            elif flags & os.O_ACCMODE != os.O_RDONLY or not flags & os.O_DIRECT:
                fail(f"probe {name}: holds {dev} with flags {flags:o}: not O_RDONLY|O_DIRECT")

            # on a terminal, stderr shows the device, the node, the elapsed time and the IOPS
            master, slave = pty.openpty()
            proc = subprocess.Popen([numastor, "probe", "-d", "0.8", name], stdout=subprocess.DEVNULL,
                                    stderr=slave)
            os.close(slave)
            seen = b""
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            proc.wait()
            os.close(master)
            if not re.search(rb"%s from node \d+: +[0-9.]+/0\.8 s, \d+ IOPS" % name.encode(), seen):
                fail(f"probe on a terminal: no progress line on stderr: {seen[:300]!r}")
            nn = len(nodes_with_cpus())
            est = estimate_line(1, nn, "0.8 s", seconds(0.8 * nn)).encode()
            at = seen.find(est)
            if at < 0 or at > seen.find(b"from node"):
                fail(f"probe on a terminal: no estimate {est!r} before the progress: {seen[:300]!r}")

            p = run(numastor, "-d", "0.3", name)
            if p.returncode != 0 or "DEVICE" not in p.stdout or name not in p.stdout:
                fail(f"probe (text, piped): exit {p.returncode}, stdout {p.stdout[:300]!r}, stderr {p.stderr[:300]!r}")
            elif p.stderr != estimate_line(1, nn, "0.3 s", seconds(0.3 * nn)) + "\n":
                fail(f"probe (text, piped): stderr is not the one estimate line: {p.stderr[:300]!r}")
            wide = [l for l in p.stdout.splitlines() if len(l) > 80]
            if wide:
                fail(f"probe (text): lines over 80 columns: {wide}")
            said = "under a hypervisor" in p.stdout
            if said != under_hypervisor():
                fail(f"probe (text): the hypervisor caveat {'shown' if said else 'missing'}, /proc/cpuinfo's flags "
                     f"{'have' if under_hypervisor() else 'lack'} hypervisor")
            print(f"PASS probe: the estimate {p.stderr.strip()!r}; text within 80 columns, hypervisor caveat "
                  f"{'shown' if said else 'absent'} as /proc/cpuinfo says")

            for args in (["-d", "0.3", name], ["-d", "0.3", "--json", name]):
                p = run(numastor, *args, user="65534")
                if p.returncode != 3 or f"cannot read /dev/{name}" not in p.stderr:
                    fail(f"probe {' '.join(args)} as uid 65534: exit {p.returncode}, stderr {p.stderr[:300]!r}")
                if "--json" in args:
                    try:
                        schemas.validate(json.loads(p.stdout), ERROR_SCHEMA)
                    except (ValueError, jsonschema.ValidationError) as e:
                        fail(f"probe --json as uid 65534: not an error document: {str(e)[:200]}")

            big = losetup(img, "-r", "--sector-size", "4096")
            loops.append(big)

            # the estimate comes before the first read: 2 devices x 1 node x 75 s, said at once
            proc = subprocess.Popen([numastor, "probe", "-d", "75", "-N", str(nodes_with_cpus()[0]), name,
                                     os.path.basename(big)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            t0 = time.monotonic()
            # at most 20 s for it: the runs themselves would take 150 s
            first = proc.stderr.readline() if select.select([proc.stderr], [], [], 20)[0] else ""
            waited = time.monotonic() - t0
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=60)
            if first != estimate_line(2, 1, "75 s", "2 min 30 s") + "\n" or waited > 20:
                fail(f"probe of 2 devices x 75 s: first stderr line {first!r} after {waited:.1f} s")
            p = run(numastor, "-d", "0.3", "-b", "512", os.path.basename(big))
            if p.returncode != 3 or "block size" not in p.stderr:
                fail(f"probe -b 512 on a 4096-byte-sector device: exit {p.returncode}, stderr {p.stderr[:300]!r}")

            # /dev/NAME that is another device than sys/block/NAME/dev (another loop's node bound
            # over it in a private mount namespace): refused before any read
            p = subprocess.run(["unshare", "-m", "sh", "-c", f'mount --bind "{big}" "{dev}" && exec "$0" probe -d 0.3 {name}',
                                numastor], capture_output=True, text=True)
            if p.returncode != 3 or "another device than /sys/block says" not in p.stderr:
                fail(f"probe {name} whose /dev node is {big}'s: exit {p.returncode}, stderr {p.stderr[:300]!r}")

            for args, what in ((["-d", "0"], "--duration"), (["-b", "1k1"], "--block-size"), (["-q", "0"], "--iodepth"),
                               (["-J", "65"], "--jobs"), (["-N", "999"], "--nodes"), (["--bogus"], "--bogus")):
                p = run(numastor, *args, name)
                if p.returncode != 3 or what not in p.stderr or "Try 'numastor probe --help'" not in p.stderr:
                    fail(f"probe {' '.join(args)}: exit {p.returncode}, stderr {p.stderr[:300]!r}")
            p = run(numastor, "-d", "0.3", "nosuchdisk0")
            if p.returncode != 3:
                fail(f"probe nosuchdisk0: exit {p.returncode}")
        finally:
            for d in loops:
                subprocess.run(["losetup", "-d", d])
    print(f"probe: {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
