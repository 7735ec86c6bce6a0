"""modswap-vendor: a vendor or DKMS driver is never replaced by the in-tree one.

megaraid_sas is installed under updates/dkms (a copy of the in-tree build stands in for the
vendor's, as dkms installs it: depmod then resolves the name there, which the guest reads
from modules.dep) and loaded from there. `fix --modules` with the midlayer's patched
scsi_mod/sd_mod would remove megaraid_sas (it holds scsi_mod) and load the in-tree file in its
place: the dry run fails one check, naming megaraid_sas and the updates/dkms path; the swap is
refused (exit 3) with nothing changed, megaraid_sas running as before. With the copy removed
the same dry run passes that check (the twin: the running module is the in-tree code and
modprobe resolves to the in-tree file).
"""

import modswaplib as ms

OWN = "is the kernel's own module"


def check(ctx):
    f = lambda key: ms.fact(ctx, key)  # noqa: E731
    dkms_file, dep = f("dkms.file"), f("dkms.dep")
    if not ctx.expect(dkms_file and dep, "test bed: no dkms.file / dkms.dep fact"):
        return
    ctx.expect(dep.startswith("updates/dkms/"),
               f"test bed: depmod does not resolve megaraid_sas to the dkms copy: {dep!r}")
    ctx.expect((f("twin.dep") or "").startswith("kernel/"),
               f"test bed: without the copy megaraid_sas does not resolve in-tree: {f('twin.dep')!r}")

    plan = ms.swap_plan(ctx, "dkms-dry", rc=1)
    if plan:
        failed = ms.failed_checks(plan)
        ctx.equal("dkms-dry", "failed checks", [c["check"] for c in failed], ["megaraid_sas " + OWN])
        detail = failed[0]["detail"] if failed else ""
        ctx.expect(dkms_file in detail, f"dkms-dry: the refusal does not name {dkms_file}: {detail!r}")
        ctx.equal("dkms-dry", "safe", plan.get("safe"), False)
    ms.unchanged(ctx, "the dry run", "dkms-dry-before", "dkms-before")

    ms.refused(ctx, "dkms", checks=[("megaraid_sas " + OWN, "updates/dkms/megaraid_sas")])
    ms.module_stock(ctx, "megaraid_sas", "dkms")

    twin = ms.swap_plan(ctx, "twin-dry", rc=0)
    if twin:
        ctx.equal("twin-dry", "failed checks", ms.failed_checks(twin), [])
        own = [c for c in twin.get("checks", []) if c["check"] == "the modules the swap removes are the kernel's own"]
        ctx.expect(own and own[0]["ok"] and "megaraid_sas" in own[0]["detail"],
                   f"twin-dry: no passed check that megaraid_sas is the kernel's own: {own!r}")
