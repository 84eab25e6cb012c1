"""A store shaped like a team's (for the publish tests): an A/B experiment on two hosts (TSC-like
cycles), a nightly series over 30 revisions with a +10% step at r15 and far outliers, and an
experiment whose name and labels carry markup."""

from __future__ import annotations

import random

from abstat.store import open_store

EVIL = '<script>document.title="PWNED"</script>'


def fill(path: str, *, nightly_revs: int = 30) -> None:
    rng = random.Random(1)
    with open_store(path) as store:
        for host, centre in (("milan", 440), ("naples", 1280)):
            invocation = store.start_invocation(
                "hcall", {"hostname": host, "boot_id": f"b-{host}"}, variants=["before", "after"]
            )
            for i in range(60):
                variant = ("before", "after")[i % 2]
                value = round(rng.gauss(centre * (0.9 if variant == "after" else 1.0), 9) / 20) * 20
                if i in (7, 31):
                    value = centre * 40
                store.add_run(
                    invocation,
                    variant=variant,
                    command=f"./{variant}",
                    iteration=i // 2,
                    position=i,
                    status="ok",
                    exit_code=0,
                    started_at=1000.0 + i,
                    wall=0.01,
                    values={"cycles": [value]},
                    units={"cycles": "cycles"},
                )
            store.finish_invocation(invocation, "complete")
        add_nightly(store, range(nightly_revs), rng)
        invocation = store.start_invocation(
            f"x{EVIL}", {"hostname": "h"}, labels={"kernel": EVIL}, variants=["a", EVIL]
        )
        for i in range(20):
            variant = ("a", EVIL)[i % 2]
            store.add_run(
                invocation,
                variant=variant,
                command="true",
                iteration=i // 2,
                position=i,
                status="ok",
                exit_code=0,
                started_at=3000.0 + i,
                wall=0.01,
                values={"wall": [0.01 + 0.001 * (i % 5)]},
                units={"wall": "s"},
            )
        store.finish_invocation(invocation, "complete")


def add_nightly(store, revs, rng=None) -> None:
    rng = rng or random.Random(2)
    for r in revs:
        invocation = store.start_invocation(
            "nightly", {"hostname": "ci"}, labels={"rev": f"r{r:02d}"}, variants=["build"]
        )
        for i in range(5):
            value = 12.0 * (1.10 if r >= 15 else 1.0) * (1 + rng.gauss(0, 0.01))
            if rng.random() < 0.03:
                value *= 8
            store.add_run(
                invocation,
                variant="build",
                command="make",
                iteration=i,
                position=i,
                status="ok",
                exit_code=0,
                started_at=5000.0 + 10 * r + i,
                wall=value,
                values={"wall": [value]},
                units={"wall": "s"},
            )
        store.finish_invocation(invocation, "complete")
