"""Where a history comes from: the store, CSV files, peers' result files."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack
from itertools import chain
from typing import Any, NoReturn

from abstat.errors import InputError, UsageError, named
from abstat.history.revision import REV_LABEL, commit_subject
from abstat.history.series import POSITION_LABELS, History, Series, build_series, order_revisions
from abstat.readers.bulk import drained, gc_paused
from abstat.stats.warnings import StatWarning


def _store_sets(
    stack: ExitStack,
    store_path: str,
    experiment: str,
    metrics: Sequence[str] | None,
    where: Mapping[str, Any],
    notes: list[Any],
    columns: str | None,
) -> tuple[Iterator[Any], Mapping[int, int], Callable[[], None], Any]:
    """The experiment's sets, each made as build_series takes it (the store stays open in ``stack``
    while they are taken; read before this returns: a damaged store fails here), the first-seen order
    of their invocations (filled as they are taken), what adds the load advice once they are, and
    (``columns``: the revision label, when the store is the only input) the series made of the store's
    columns (:mod:`abstat.history.stored`; then no set: None when they are made of sets)."""
    from abstat.history.load_advice import LATEST
    from abstat.store import open_store

    store = stack.enter_context(open_store(store_path, create=False))
    if not store.has_experiment(experiment):
        known = ", ".join(store.experiment_names()[-10:]) or "none"
        raise InputError(f"no experiment {experiment!r} (recent: {known})", path=_shown(store_path))
    available = _available(store, experiment, metrics)
    chosen = _chosen(experiment, available, metrics, store_path, notes)
    walls: set[int] = set()  # the latest invocations of the sets of ``wall`` (a bounded number)

    def advice() -> None:
        if "wall" in chosen:
            add_load_advice(store, experiment, sorted(walls), available, notes)

    wanted = {**where, "experiment": experiment, "metric": chosen}
    read = store.column_read(wanted) if columns is not None else None
    if read is not None and columns is not None:
        from abstat.history.stored import latest_walls, stored_series

        made = stored_series(read, columns)
        if made is not None:
            walls.update(latest_walls(read, LATEST))
            return iter(()), INVOCATION_ORDER, advice, made
    del read

    def taken(found: Iterator[Any]) -> Iterator[Any]:
        for sample_set in found:
            if sample_set.labels.get("metric") == "wall":
                walls.update(sample_set.invocations)
                if len(walls) > 4 * LATEST:
                    walls.difference_update(sorted(walls)[:-LATEST])
            yield sample_set

    found = store.light_sets(wanted)
    first = next(found, None)  # the whole read: its errors before any file's
    sets = taken(chain(() if first is None else (first,), found))
    return sets, INVOCATION_ORDER, advice, None


def _available(store: Any, experiment: str, metrics: Sequence[str] | None) -> list[str]:
    """The experiment's metrics as :func:`_chosen` and the load advice ask for them: every one
    (``store.metrics``, which reads every sample) unless the metrics asked for are all stored, then
    those and the CPU times stored (a lookup each)."""
    if not metrics or not all(store.lists_metric(experiment, m) for m in metrics):
        return list(store.metrics(experiment))
    return [*metrics, *(m for m in ("user", "sys") if m not in metrics and store.lists_metric(experiment, m))]


class _InvocationOrder(Mapping[int, int]):
    """build_series' first-seen order of the store's sets: their invocations' ids (which grow with
    time; the sets of files have no invocations), without a dict of every invocation."""

    def __getitem__(self, invocation: int) -> int:
        return invocation

    def __iter__(self) -> Iterator[int]:
        return iter(())

    def __len__(self) -> int:
        return 0


INVOCATION_ORDER = _InvocationOrder()


def _chosen(
    experiment: str, available: Sequence[str], metrics: Sequence[str] | None, store_path: str, notes: list[Any]
) -> list[str]:
    """The metrics to analyse: those asked for, else every metric the benchmark reported (``wall`` when it
    reported none); the others named in a note."""
    if metrics:
        missing = [m for m in metrics if m not in available]
        if missing:
            raise UsageError(
                f"experiment {experiment!r} has no metric {missing[0]!r} (it has: {', '.join(available) or 'none'})"
            )
        return list(metrics)
    from abstat.box.runner.model import BUILTIN_METRICS

    chosen = [m for m in available if m not in BUILTIN_METRICS] or [m for m in available if m == "wall"]
    if not chosen:  # no successful run recorded a metric: nothing to ask the database for
        raise InputError(f"experiment {experiment!r} has no successful runs", path=_shown(store_path))
    skipped = [m for m in available if m not in chosen]
    if skipped:
        notes.append(named(f"not analysed: {', '.join(skipped)} ({{metrics}} names any metric)", "metrics"))
    return chosen


def add_load_advice(
    store: Any, experiment: str, walls: Sequence[int], available: Sequence[str], notes: list[Any]
) -> None:
    """The CPU-time advice when the doctor warned about load in the latest invocations of ``wall``
    (``walls``: the invocations of its sets, in order)."""
    from abstat.history.load_advice import LATEST, from_records

    latest = list(walls[-LATEST:])
    if not latest:
        return
    by_variant = store.machine_records_by_variant(experiment, invocations=latest)
    records = list({id(r): r for found in by_variant.values() for r in found}.values())
    advice = from_records(records, available)
    if advice is not None:
        notes.append(advice)


def _json_document(text: str) -> Any:
    """The text as JSON when it looks like an object and parses, else None."""
    import json

    if not text.lstrip().startswith("{"):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _read_file(
    path: str, metrics: Sequence[str] | None, label_columns: Sequence[str] | None, rev_label: str, text: str | None
) -> tuple[list[Any], list[str]]:
    """One input's sample sets and notes: asv results (a directory or file), CSV, or a peer's file (``text``: its
    text when already read)."""
    import os

    from abstat.history.files import read_history_csv, revision_from_metadata
    from abstat.readers.asv import is_asv_results, read_asv
    from abstat.readers.peers import detect_format, read_peer, read_text

    if os.path.isdir(path):
        return read_asv(path)
    text = read_text(path) if text is None else text
    name = _named(path)
    fmt = detect_format(path, text)
    document = _json_document(text)
    if is_asv_results(document):
        return read_asv(path)
    if fmt == "csv" or (fmt is None and document is None and any(d in text.lstrip().split("\n", 1)[0] for d in ",;\t")):
        return read_history_csv(name, text, metrics=metrics, label_columns=label_columns, rev_label=rev_label)
    if fmt is None:
        raise InputError("not a CSV, asv, hyperfine, pyperf or Go benchmark file" if text else "empty input", path=name)
    found = [revision_from_metadata(s, rev_label) for s in read_peer(path, fmt, text=text)]
    return found, [note for s in found for note in s.notes]


def _columnar(
    inputs: Sequence[str],
    metrics: Sequence[str] | None,
    label_columns: Sequence[str] | None,
    rev_label: str,
    texts: dict[str, str],
) -> tuple[list[Series], list[str]] | None:
    """One CSV's series as arrays (``history.columnar``), with its note; None when it is not one CSV that
    ``history.columns`` reads (the sets' path then reads it, and names what is wrong with it: from ``texts``,
    where the text read here is left)."""
    import os

    from abstat.history.columnar import grouped
    from abstat.history.columns import looks_csv, read_columns
    from abstat.readers.peers import read_text

    if len(inputs) != 1 or os.path.isdir(inputs[0]):
        return None
    text = read_text(inputs[0])
    first = text.lstrip().partition("\n")[0]
    fmt = None if first.startswith("{") else looks_csv(inputs[0], text)  # JSON: maybe asv's
    if fmt != "csv" and not (fmt is None and not first.startswith("{") and any(d in first for d in ",;\t")):
        texts[inputs[0]] = text
        return None
    reserved = POSITION_LABELS | {"metric"}
    table = read_columns(text, metrics=metrics, label_columns=label_columns, rev_label=rev_label, reserved=reserved)
    if table is None:
        texts[inputs[0]] = text
        return None
    del text
    series, missing = grouped(table)
    return series, [f"{_named(inputs[0])}: {missing} empty cell(s) left out"] if missing else []


def _file_sets(
    paths: Sequence[str],
    metrics: Sequence[str] | None,
    where: Mapping[str, Any],
    label_columns: Sequence[str] | None,
    rev_label: str,
    notes: list[str],
    texts: dict[str, str],
) -> list[Any]:
    sets: list[Any] = []
    for path in paths:
        found, read_notes = _read_file(path, metrics, label_columns, rev_label, texts.pop(path, None))
        notes += read_notes
        if not metrics and not where:
            sets.extend(found)
            continue
        for sample_set in found:
            labels = sample_set.labels
            if metrics and labels.get("metric") not in metrics:
                continue
            if all(labels.get(k) in ({v} if isinstance(v, str) else set(v)) for k, v in where.items()):
                sets.append(sample_set)
    return sets


def load_history(
    *,
    store_path: str | None,
    experiment: str | None,
    inputs: Sequence[str] = (),
    metrics: Sequence[str] | None = None,
    where: Mapping[str, Any] | None = None,
    repo: str | None = ".",
    rev_label: str = REV_LABEL,
    label_columns: Sequence[str] | None = None,
) -> History:
    with gc_paused():  # a point per revision, none in a cycle (see readers.bulk)
        return _load(store_path, experiment, inputs, metrics, dict(where or {}), repo, rev_label, label_columns)


def _load(
    store_path: str | None,
    experiment: str | None,
    inputs: Sequence[str],
    metrics: Sequence[str] | None,
    where: dict[str, Any],
    repo: str | None,
    rev_label: str,
    label_columns: Sequence[str] | None,
) -> History:
    if list(inputs).count("-") > 1:
        raise UsageError("standard input ({input} -) can be given once", fields=["input"])
    store_notes: list[Any] = []
    file_notes: list[str] = []
    with ExitStack() as stack:
        sets: Iterator[Any] = iter(())
        first_seen: Mapping[int, int] | None = None
        advice, stored = None, None
        if experiment is not None:
            assert store_path is not None
            sets, first_seen, advice, stored = _store_sets(
                stack, store_path, experiment, metrics, where, store_notes, None if inputs else rev_label
            )
        texts: dict[str, str] = {}  # an input's text read by the columnar path, which did not take it
        columnar = (
            None if experiment is not None or where else _columnar(inputs, metrics, label_columns, rev_label, texts)
        )
        if columnar is not None:
            series, skipped = columnar[0], 0
            file_notes += columnar[1]
        elif stored is not None:
            series, skipped = stored
        else:
            file_sets = _file_sets(inputs, metrics, where, label_columns, rev_label, file_notes, texts)
            series, skipped = build_series(chain(sets, drained(file_sets)), rev_label=rev_label, first_seen=first_seen)
            del file_sets
        if advice is not None:
            advice()
    if not series:
        _nothing_found(store_path, experiment, inputs, metrics, where, rev_label)
    return finish_history(series, skipped, [*store_notes, *file_notes], rev_label, repo)


def finish_history(series: Any, skipped: int, notes: Sequence[Any], rev_label: str, repo: str | None) -> History:
    """The History of ``series``: the input's ``notes`` and the ``skipped`` sets without ``rev_label`` as
    warnings, the revisions in ``repo``'s order (or their own), the commits' subjects (2000 at most)."""
    warnings = _input_warnings(list(notes))
    if skipped:
        warnings.append(
            StatWarning(
                "no-revision-label",
                f"{skipped} sample set(s) without a {rev_label!r} label left "
                f"out (record revisions with abstat run --rev or --label {rev_label}=...)",
            )
        )
    how, order_warnings, full = order_revisions(series, repo)
    subjects: dict[str, str] = {}
    if full and repo is not None:
        revs = {p.rev for s in series for p in s.points}
        if len(revs) <= 2000:
            subjects = {rev: commit_subject(full[rev], repo) for rev in revs}
    return History(series, how, subjects, warnings + order_warnings)


def _nothing_found(
    store_path: str | None,
    experiment: str | None,
    inputs: Sequence[str],
    metrics: Sequence[str] | None,
    where: dict[str, Any],
    rev_label: str,
) -> NoReturn:
    """No series: the one-line error naming what held nothing to analyse."""
    if experiment is None:  # only files, and nothing in them to analyse: bad input
        wanted = f" of metric {', '.join(metrics)}" if metrics else ""
        raise InputError(
            f"no values{wanted} with a {rev_label!r} label (a CSV needs a {rev_label!r}, 'commit' "
            "or 'time' column; {rev_label} names another)",
            path=", ".join(_named(p) for p in inputs),
            fields=["rev_label"],
        )
    matching = " matching {where}" if where else ""  # a stored experiment that was never given revisions
    raise InputError(
        f"experiment {experiment!r} has no runs{matching} with a {rev_label!r} label "
        f"(record revisions with abstat run --rev or --label {rev_label}=...; "
        "{rev_label} names another)",
        path=_shown(store_path),
        fields=["where", "rev_label"],
    )


def _input_warnings(notes: Sequence[Any]) -> list[StatWarning]:
    """The readers' and the store's notes on the inputs, as warning values (those that are one already kept)."""
    return [note if isinstance(note, StatWarning) else StatWarning("input", note) for note in notes]


def _named(path: str) -> str:
    """An input as messages name it: standard input ``<stdin>``."""
    from abstat.readers.text import STDIN_NAME

    return STDIN_NAME if path == "-" else path


def _shown(store_path: str | None) -> str | None:
    """The store as errors name it: a PostgreSQL URL's password masked."""
    from abstat.store import display_name

    return None if store_path is None else display_name(store_path)
