"""How compare and report judge stored experiments: the analysis ``abstat run`` stored with them (baseline,
confidence, directions, threshold), the flags given overriding; and which stored sets report leaves out (split
from :mod:`abstat.cli.commands.compare` and :mod:`abstat.cli.commands.report`, whose 200-line limit they kept)."""

from __future__ import annotations

import sys
from typing import Any


def stored_refs(variants: Any) -> list[str]:
    """The stored references (``EXPERIMENT:VARIANT``) the variants were read from."""
    return [
        source[len("store:") :] for variant in variants for source in variant.sources if source.startswith("store:")
    ]


def compare_judging(args: Any, variants: Any) -> Any:
    """The confidence, directions and threshold compared by: the flags given, else what ``abstat run`` stored
    with the baseline's experiment (:func:`abstat.report.analysis.stored_judging`; the baseline is the first
    input, or --baseline's).  A candidate's stored analysis is not read: a fork's artifact compared against a
    trusted baseline must not choose how it is judged (attack22 A13)."""
    from abstat.report.analysis import Judging, stored_judging

    stored = Judging()
    base = variants.get(args.baseline) if args.baseline else next(iter(variants.values()))
    refs = stored_refs([base]) if base is not None else []
    if refs:
        from abstat.store import open_store, resolve_store_path, store_exists

        path = resolve_store_path(args.store)
        if store_exists(path):  # (as abstat.store.resolved_unit: a variant resolved elsewhere has none)
            with open_store(path, create=False) as store:
                stored = stored_judging(store, [refs[0].partition(":")[0]])
    return stored.over(
        confidence=args.confidence,
        higher_is_better=args.higher_is_better,
        lower_is_better=args.lower_is_better,
        threshold=args.threshold,
    )


def compare_higher_is_better(args: Any, variants: Any, unit: str | None, judging: Any) -> bool:
    """Whether higher is better for the one metric compared (:func:`abstat.report.analysis.higher_is_better`
    of its unit: the store's, or ``--unit``'s, as the values were aligned to): stored variants' metric is
    ``--metric``; files hold one unnamed metric, which any name given names (--lower-is-better's first; a name
    beats ``all``, as for named metrics: ``--lower-is-better all --higher-is-better t`` is higher)."""
    from abstat.report.analysis import higher_is_better, metric_names

    chosen, lower = judging.higher_is_better, judging.lower_is_better
    if stored_refs(variants):
        return higher_is_better(args.metric, unit, chosen, lower)
    lowered, higher = metric_names(args.lower_is_better), metric_names(args.higher_is_better)
    if lowered and not (lowered == ["all"] and any(name != "all" for name in higher)):
        return False
    return bool(higher) or higher_is_better(None, unit, chosen, lower)


def without_saved_baselines(args: Any, sets: Any) -> Any:
    """A store's sets without its saved baselines (``baseline@NAME``: copies of an experiment's runs, counted
    twice in Holm's family and the summary row beside the experiment itself: newcomer22 #5), unless --where
    names experiments; a note on standard error says what was left out and how to include it."""
    from abstat.store.baselines import PREFIX

    if any(item.split("=", 1)[0].strip() == "experiment" for item in args.where or []):
        return sets
    saved = sorted({s.labels["experiment"] for s in sets if s.labels.get("experiment", "").startswith(PREFIX)})
    kept = [s for s in sets if s.labels.get("experiment") not in saved]
    if not saved or not kept:
        return sets
    from abstat.render import escape

    names = ", ".join(saved)
    sys.stderr.write(
        escape.terminal(
            f"abstat report: note: left out the saved baseline(s) {names} (copies of stored runs); "
            f"--where experiment={saved[0]} includes one"
        )
        + "\n"
    )
    return kept


def judge_as_stored(args: Any, sets: Any) -> None:
    """Stored sets are judged as ``abstat run`` judged them (its baseline, confidence, higher-is-better
    metrics, threshold: :func:`abstat.report.analysis.judging_of_sets`), the flags given overriding; files at 95%."""
    from abstat.report.analysis import Judging, judging_of_sets
    from abstat.report.inputs import default_by

    # by the layout's own columns: without --by a store's sets are laid out by variant too (attack22 A1)
    stored = Judging() if args.inputs else judging_of_sets(args.store, sets, args.by or default_by(sets))
    judging = stored.over(
        baseline=args.baseline,
        confidence=args.confidence,
        higher_is_better=args.higher_is_better,
        lower_is_better=args.lower_is_better,
        threshold=args.threshold,
    )
    args.baseline, args.confidence, args.threshold = judging.baseline, judging.percent, judging.threshold
    args.higher_is_better, args.lower_is_better = list(judging.higher_is_better), list(judging.lower_is_better)
