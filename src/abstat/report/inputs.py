"""Turn the report's inputs (files or the store) into labelled sample sets.

Labels of a set read from a file, later sources winning:
``variant=<file name without extension>`` (only without ``--pattern``),
then what the file's content says (hyperfine command, pyperf benchmark, Go
configuration lines...), then the ``--pattern`` fields, then ``--label k=v``.

An input that is not a file but ``NAME=n:mean:stddev`` (summary statistics,
as ministat prints N, Avg and Stddev) is a set without samples: NAME gives
``variant=NAME``, or, with ``--pattern``, the labels the pattern reads from
NAME as if it were a file name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from abstat.errors import InputError, UsageError
from abstat.report.analysis import higher_is_better  # noqa: F401 -- its old place (render/run_report.py)
from abstat.readers.sampleset import SampleSet, from_store_set

if TYPE_CHECKING:  # a type only: abstat compare does not read patterns
    from abstat.readers.pattern import FilePattern

# --input-format's choices: these and the kernel tools' (input_formats(); abstat compare, which comes here for
# higher_is_better, needs neither)
_FORMATS = (
    "auto",
    "samples",
    "hyperfine",
    "pyperf",
    "go",
    "csv",
    "gbench",
    "pytest-benchmark",
    "bmf",
    "criterion",
    "criterion-csv",
    "asv",
)


def input_formats() -> tuple[str, ...]:
    """``--input-format``'s choices: abstat's, peers' and the kernel tools' formats."""
    from abstat.readers.kernel_formats import FORMATS

    return (*_FORMATS, *FORMATS)


def _key_value(item: str, field: str, form: str) -> tuple[str, str]:
    key, eq, value = item.partition("=")
    key = key.strip()
    if not eq or not key:
        raise UsageError(f"{{{field}}} {item!r}: expected {form}", fields=[field])
    return key, value


def parse_label_args(items: Iterable[str], field: str) -> dict[str, str]:
    """``['host=milan', 'mode=pv64']`` -> dict; UsageError on ``foo`` (naming ``field``)."""
    return dict(_key_value(item, field, "KEY=VALUE") for item in items)


def parse_where_args(items: Iterable[str]) -> dict[str, set[str]]:
    """``--where host=milan --where host=rome,naples`` -> {host: {...}}."""
    where: dict[str, set[str]] = {}
    for item in items:
        key, value = _key_value(item, "where", "KEY=VALUE[,VALUE...]")
        where.setdefault(key, set()).update(value.split(","))
    return where


def default_by(sets: Iterable[SampleSet]) -> str:
    """The label whose values are the columns when ``--by`` is not given:
    ``variant``, unless every set has the same variant and the sets differ
    by ``command`` (the commands of one hyperfine export)."""
    sets = list(sets)
    if len({s.labels.get("variant") for s in sets}) <= 1 and len({s.labels.get("command") for s in sets}) > 1:
        return "command"
    return "variant"


def _stem(path: str) -> str:
    base = os.path.basename(path.rstrip("/")) or path
    for ext in (".json.gz", ".json", ".txt", ".csv", ".dat", ".out"):
        if base.endswith(ext) and len(base) > len(ext):
            return base[: -len(ext)]
    return base


def load_files(
    paths: list[str],
    *,
    pattern: FilePattern | None = None,
    labels: dict[str, str] | None = None,
    input_format: str = "auto",
    column: int = 1,
    delimiters: str | None = None,
    csv_values: list[str] | None = None,
    csv_labels: list[str] | None = None,
) -> list[SampleSet]:
    """Read every file in ``paths`` into labelled sample sets."""
    if input_format not in input_formats():
        raise UsageError(
            f"{{input_format}} {input_format!r}: choose from {', '.join(input_formats())}", fields=["input_format"]
        )
    sets: list[SampleSet] = []
    files: list[tuple[str | None, str, list[Any]]] = []  # each file input and its sets
    for path in _once_each(paths):
        summary_set = _summary_set(path, pattern, labels)
        if summary_set is not None:
            sets.append(summary_set)
            continue
        file_labels = pattern.labels(path) if pattern is not None else {}
        fmt, text = _format_of(path, input_format)
        found = _read_sets(path, fmt, text, column, delimiters, csv_values, csv_labels)
        for sample_set in found:
            _label(sample_set, path, pattern, file_labels, labels)
            sets.append(sample_set)
        files.append((None, path, found))
    if pattern is None and "variant" not in (labels or {}) and _one_variant_of_several(sets, files):
        from abstat.readers.specs import inputs_apart

        inputs_apart(files)  # d1/x.txt d2/x.txt: each file its variant, named by its path (as compare names them)
    return sets


def _once_each(paths: list[str]) -> list[str]:
    """``paths``; a UsageError naming a file given twice (its runs would be pooled with themselves)."""
    seen: dict[str, str] = {}
    for path in paths:
        if path == "-" or not os.path.exists(path):
            continue
        first = seen.get(os.path.realpath(path))
        if first is not None:
            same = "" if first == path else f" (as {first} and {path})"
            raise UsageError(f"{path}: given twice{same}; its runs would be counted twice")
        seen[os.path.realpath(path)] = path
    return paths


def _one_variant_of_several(sets: list[SampleSet], files: list[tuple[str | None, str, list[Any]]]) -> bool:
    """Whether every set holds one variant though several files were given: pooled, they would leave
    nothing to compare (two directories' ``x.txt``, criterion's ``new`` of two checkouts)."""
    return len(files) > 1 and len({s.labels.get("variant") for s in sets}) == 1


def _format_of(path: str, input_format: str) -> tuple[str, str | None]:
    """The format to read ``path`` in (``directory`` for a directory of results) and the file's text when
    it was read to tell (or the format needs it)."""
    from abstat.readers import peers

    fmt = input_format
    if path != "-" and os.path.isdir(path) and fmt in ("auto", "criterion", "asv"):
        return "directory", ""
    if fmt == "samples" or (fmt == "auto" and path == "-"):
        return "samples", None
    text = peers.read_text(path)
    if fmt != "auto":
        return fmt, text
    fmt = peers.detect_format(path, text) or "samples"
    if fmt == "samples" and text.lstrip().startswith(("{", "[")):
        peers.load_json(path, text)  # names the line of broken JSON
        raise InputError(
            "JSON in no format abstat knows (hyperfine, pyperf, Google Benchmark, "
            "pytest-benchmark, criterion, asv, BMF); choose one with {input_format}",
            path=path,
            fields=["input_format"],
        )
    return fmt, text


def _read_sets(
    path: str,
    fmt: str,
    text: str | None,
    column: int,
    delimiters: str | None,
    csv_values: list[str] | None,
    csv_labels: list[str] | None,
) -> list[SampleSet]:
    """The sample sets of ``path`` read in format ``fmt``."""
    from abstat.readers import peers

    if fmt == "directory":
        return peers.read_directory(path)
    if fmt == "samples":
        from abstat.readers.text import read_samples

        values = read_samples(path, column=column, delimiters=delimiters)
        return [SampleSet(labels={}, runs=[list(values)], source=path)]
    return peers.read_peer(
        "<stdin>" if path == "-" else path, fmt, text=text, value_columns=csv_values, label_columns=csv_labels
    )


def _label(
    sample_set: SampleSet,
    path: str,
    pattern: FilePattern | None,
    file_labels: dict[str, str],
    labels: dict[str, str] | None,
) -> None:
    """The set's labels, later sources winning: the file's name (without ``--pattern``), what the file says,
    the pattern's fields, ``--label``; every label and the source made displayable."""
    from abstat.readers import display_text

    merged: dict[str, str] = {}
    if pattern is None:
        merged["variant"] = "stdin" if path == "-" else _stem(path)
    merged.update(sample_set.labels)
    merged.update(file_labels)
    merged.update(labels or {})
    sample_set.labels = {key: display_text(value) for key, value in merged.items()}
    sample_set.source = display_text(sample_set.source) if sample_set.source else sample_set.source


def _summary_set(arg: str, pattern: FilePattern | None, labels: dict[str, str] | None) -> SampleSet | None:
    """``NAME=n:mean:stddev`` (not an existing file) as a set; None otherwise."""
    from abstat.readers.summary import looks_like_summary, parse_summary

    if arg == "-" or os.path.exists(arg):
        return None
    name, eq, value = arg.partition("=")
    if not eq:
        if looks_like_summary(arg):
            raise UsageError(f"{arg!r}: name the summary statistics: NAME={arg.strip()}")
        return None
    if value.count(":") != 2:
        return None
    name = name.strip()
    if not name:
        raise UsageError(f"{arg!r}: name the summary statistics: NAME=n:mean:stddev")
    summary = parse_summary(value, source=arg)
    if pattern is None:
        merged = {"variant": name}
    else:
        try:
            merged = pattern.labels(name)
        except InputError:
            raise InputError(
                f"summary name {name!r} does not match {{pattern}} {pattern.text!r}", path=arg, fields=["pattern"]
            ) from None
    merged.update(labels or {})
    return SampleSet(labels=merged, runs=[], source=arg, summary=summary)


def load_store(
    store_path: str,
    where: dict[str, set[str]] | None = None,
    labels: dict[str, str] | None = None,
    *,
    exit_codes: bool = False,
    machines: bool = True,
) -> list[SampleSet]:
    """Every sample set in the store at ``store_path`` (``abstat run`` results);
    ``exit_codes``: with their runs' exit codes, failed runs included (see
    :mod:`abstat.report.stored_runs`), for the hyperfine export; ``machines`` False: without
    their machine records (:func:`abstat.report.stored_runs.add_machines` adds a report's)."""
    try:
        from abstat.store import display_name, iter_sample_sets, store_exists
    except ImportError:
        raise UsageError("this abstat has no store support (abstat.store.iter_sample_sets)") from None
    if not store_exists(store_path):  # a postgresql:// URL is opened, not looked for
        raise InputError("no such store (run `abstat run` first, or name input files)", path=display_name(store_path))
    from abstat.report.stored_runs import add_run_details

    from abstat.readers.bulk import gc_paused

    pairs = []
    chosen = {k: sorted(v) for k, v in (where or {}).items()} or None
    with gc_paused():  # a set per revision and metric, none in a cycle (see readers.bulk)
        for stored in iter_sample_sets(store_path, chosen, machines=machines):
            sample_set = from_store_set(stored, own=True)  # the store's fresh set: kept, not copied
            if labels:  # a new dict: the run details below read the stored labels
                sample_set.labels = {**sample_set.labels, **labels}
            pairs.append((stored, sample_set))
    if not pairs:
        raise InputError("the store holds no matching samples", path=display_name(store_path))
    add_run_details(store_path, pairs, exit_codes=exit_codes)
    return [sample_set for _, sample_set in pairs]


def beside_peers(sets: list[SampleSet], metric: str | None, unit: str | None = None) -> list[SampleSet]:
    """Plain sample files given beside peers' files (``compare hf.json ms.txt``): each joins the
    peers' table with the labels every peer set shares (and ``metric`` when the peers' metrics
    differ), its values in ``unit`` (``--unit``), so that it has a cell; when the peers' sets differ
    in other labels (several commands), a plain file cannot be placed and is refused in one line
    naming it, never dropped in silence."""
    plain = [s for s in sets if set(s.labels) <= {"variant"} and s.summary is None]
    peers = [s for s in sets if s not in plain]
    if not plain or not peers:
        return sets
    keys = {k for s in peers for k in s.labels} - {"variant"}
    shared = _shared_labels(peers, keys, metric)
    varying = sorted(keys - set(shared))
    if varying:
        name = plain[0].source or plain[0].labels.get("variant")
        raise UsageError(
            f"{name}: a plain file beside files whose sets differ in {', '.join(varying)}: which "
            "one it compares with is unknown (choose with {where}, or {metrics})",
            fields=["where", "metrics"],
        )
    for sample_set in plain:
        sample_set.labels.update(shared)
        sample_set.unit = sample_set.unit or unit
    return sets


def _shared_labels(peers: list[SampleSet], keys: set[str], metric: str | None) -> dict[str, str]:
    """The labels every peer set has alike (and ``metric`` when it is one of theirs)."""
    shared = {k: peers[0].labels.get(k, "") for k in keys if len({s.labels.get(k, "") for s in peers}) == 1}
    if "metric" in keys and "metric" not in shared and metric in {s.labels.get("metric") for s in peers}:
        shared["metric"] = str(metric)
    return shared
