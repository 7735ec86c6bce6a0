"""nonroot: check --json as uid 1000 still checks (exit 0..2, not 3), still lists every
disk, says it was not privileged and notes what it could not read. What it does report
must still agree with ground truth; it may leave unreadable fields null (STRICT off)."""

STRICT = False


def check(ctx):
    ctx.expect(ctx.doc.get("privileged") is False,
               f"privileged: numastor={ctx.doc.get('privileged')} ground-truth=false (uid 1000)")
    ctx.expect(ctx.doc.get("devices"), "devices: numastor lists none as uid 1000")
    ctx.expect(ctx.doc.get("notes"), "notes: numastor has none as uid 1000 (it could not read root-only files)")
