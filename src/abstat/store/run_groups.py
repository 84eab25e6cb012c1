"""The replicated unit of a stored sample set: what its run groups are.

The store keeps every sample with its process run, and every run with its ``abstat run``
invocation.  A set's run groups are the highest level that is replicated:

- its invocations (boots), when it has several: one group per invocation, as always;
- else its process runs, when it has at least MIN_RUNS of them and some run holds several
  samples of the metric (a benchmark printing 49 TSC samples per run): one group per run, so
  that 20 runs x 49 samples are 20 replicates of a per-process effect (address-space layout,
  page placement), not 980 independent samples;
- else the one invocation's samples: one group, as always (one sample per run; or two runs that
  agree, whose run-to-run variation cannot be estimated: compared as runs they could never show a
  change, so their samples are pooled; two runs that differ stay runs: docs/statistics.md, "Two runs a
  variant").

Readers gather the samples of each (variant, metric, invocation, unit) key with
:func:`run_groups`, which also marks where each process run starts in the key's list; the
values the store cannot read as numbers are dropped run by run (:func:`numbers_by_run`), so
the marks stay on the runs' boundaries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

# (here before; the reader of abstat export's CSV, readers/csvexport.py, groups alike)
from abstat.readers.run_units import MIN_RUNS as MIN_RUNS, replicates as replicates


def refuse_unreadable_keys(store: Any, groups: Mapping[tuple[Any, ...], Any]) -> None:
    """A sample whose run, variant or metric the store cannot read (a damaged page hands out NULLs or
    other types) belongs to no set: the store is damaged, and a report of the rest would silently
    leave samples out (``abstat export`` exports the readable ones and says what it left)."""
    bad = sum(
        1
        for variant, metric, invocation, _ in groups
        if not isinstance(metric, str) or not isinstance(variant, int) or not isinstance(invocation, int)
    )
    if bad:
        from abstat.errors import InputError

        damage = store.check_damage() if hasattr(store, "check_damage") else []
        found = "; ".join(damage[:3]) or f"unreadable run, variant or metric in {bad} of {len(groups)} sample groups"
        raise InputError(
            f"damaged store ({found}); `abstat export` writes the readable samples",
            path=getattr(store, "display", None),
        )


def run_groups(
    rows: Iterable[tuple[Any, ...]],
) -> tuple[dict[tuple[Any, ...], list[Any]], dict[tuple[Any, ...], list[int]]]:
    """(variant id, metric, invocation id, unit) -> values, in the order of ``rows``, and, for the keys
    some run of which held several samples, the offset in those values at which each of its process
    runs starts (a key absent: every run held one sample, run i is value i: most stores, which then
    carry no object more per key).  Rows are ``(variant id, metric, invocation id, value, unit, run
    id)``, a run's samples of one metric together (the store's orders)."""
    groups: dict[tuple[Any, ...], list[Any]] = {}
    starts: dict[tuple[Any, ...], list[int]] = {}
    values: list[Any] = []
    key: tuple[Any, ...] = ()
    several = False  # the current run of ``key`` has held more than one sample
    last_run = last_metric = last_unit = None  # of the row before
    at: tuple[Any, Any] = (None, None)  # the (variant, invocation) of ``current``
    current: dict[Any, tuple[Any, list[Any], tuple[Any, ...]]] = {}  # metric -> (unit, values, key) in ``at``
    for variant, metric, invocation, value, unit, run in rows:
        if run == last_run and metric == last_metric and unit == last_unit:  # the same run's next sample
            if not several:
                several = True
                if key not in starts:  # runs of one sample each so far: run i starts at i
                    starts[key] = list(range(len(values)))
            values.append(value)
            continue
        last_run, last_metric, last_unit, several = run, metric, unit, False
        if variant != at[0] or invocation != at[1]:  # (a dict of the few metrics: no key made per row)
            at, current = (variant, invocation), {}
        found = current.get(metric)
        if found is not None and found[0] == unit:
            _, values, key = found
        else:
            key = (variant, metric, invocation, unit)
            values = groups.setdefault(key, [])
            current[metric] = (unit, values, key)
        if starts:
            begun = starts.get(key)
            if begun is not None:
                begun.append(len(values))
        values.append(value)
    return groups, starts


def numbers_by_run(
    values: list[Any], starts: list[int] | None, numbers: Callable[..., list[float]], *args: Any
) -> tuple[list[float], list[int] | None]:
    """``values`` as ``numbers(run, *args)`` keeps them (those that are not numbers left out) and the
    number kept of each run (``starts``: :func:`run_groups`' entry); a run left with none is no run.
    None for the numbers when every run held one sample (``starts`` None): no run groups to make."""
    if starts is None:
        return numbers(values, *args), None
    ends = starts[1:] + [len(values)]
    if set(map(type, values)) <= {float}:  # the common case: nothing dropped, the runs as stored
        return values, [end - start for start, end in zip(starts, ends, strict=True)]
    kept: list[float] = []
    sizes: list[int] = []
    for start, end in zip(starts, ends, strict=True):
        run = numbers(values[start:end], *args)
        if run:
            kept.extend(run)
            sizes.append(len(run))
    return kept, sizes


def level(groups: Sequence[Sequence[float]], invocations: Sequence[int]) -> str:
    """The replicated unit of a set's run groups, from the invocation of each: ``invocations`` (several),
    ``runs`` (one invocation's process runs), ``one`` (one group); ``unknown`` without invocations (files)."""
    if not invocations or len(invocations) != len(groups):
        return "unknown"
    if len(set(invocations)) > 1:
        return "invocations"
    return "runs" if len(groups) > 1 else "one"


def common_unit(
    sides: Sequence[tuple[str, list[list[float]], list[int]]],
) -> tuple[list[list[list[float]]], list[tuple[str, str]]]:
    """The run groups of sets compared with each other (``(name, groups, invocation of each group)``,
    the baseline first), at one replicated unit, and what was changed or cannot be helped: (name, sentence)
    per side concerned.  When some set's groups are invocations (boots), a set of one invocation is
    compared as that one invocation: its process runs share the invocation's offset, so they cannot
    stand for boots (compared as runs against boots, a boot-to-boot difference would read as a
    change); its runs are merged into one group, whose spread the comparison takes from the sets of
    several invocations.  Sets of files (no invocations) and sets alike in level are left as they are."""
    levels = [level(groups, invocations) for _, groups, invocations in sides]
    found = [list(groups) for _, groups, _ in sides]
    if "invocations" not in levels:
        return found, []
    boots = max(len(set(inv)) for (_, _, inv), lv in zip(sides, levels, strict=True) if lv == "invocations")
    notes = []
    for index, ((name, groups, _), lv) in enumerate(zip(sides, levels, strict=True)):
        if lv not in ("runs", "one"):
            continue
        merged = "" if lv == "one" else f" (its {len(groups)} process runs as one group)"
        if lv == "runs":
            found[index] = [[v for group in groups for v in group]]
        notes.append(
            (
                name,
                f"{name}: one invocation against {boots} invocations: compared as one invocation{merged}, since a "
                "boot's runs share its offset and cannot stand for boots; its boot-to-boot spread is taken "
                f"from the other side: run {name} in several invocations (boots) to judge it by its own",
            )
        )
    return found, notes
