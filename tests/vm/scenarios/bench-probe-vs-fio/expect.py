"""bench-probe-vs-fio: a benchmark, not a test of figures. It holds only that both programs
ran on both disks and the script printed its summary line; the ratios are for the reader
(bench-*.out in the kept result directory, and printed here)."""

import modswaplib as ms


def check(ctx):
    disks = (ms.fact(ctx, "bench.disks") or "").split()
    ctx.expect(len(disks) == 2, f"test bed: bench.disks {disks}")
    for disk in disks:
        text = (ctx.read(f"bench-{disk}.out") or "").strip()
        ctx.expect("probe/fio: min" in text, f"bench on {disk}: no summary: {text[-400:]!r}")
        print(f"    {disk}: {text.splitlines()[-1] if text else '(nothing)'}")
