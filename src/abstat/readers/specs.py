"""Command-line variant specifications for ``abstat compare`` (and friends).

Each argument names one variant:

``before.txt``                    a sample file (the name is the file name)
``base=a.txt``                    a labelled sample file
``'before=runs/before-*.txt'``    several files, each one independent run
                                  (boot, process): nested data
``before=98:438.97959:6.6564899`` summary statistics ``n:mean:stddev``
``EXPERIMENT:VARIANT``            a variant recorded by ``abstat run`` in the
                                  store (``--store``, metric ``--metric``)
``-``                             standard input

The first variant is the baseline; every other one is compared with it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from abstat.errors import InputError, UsageError
from abstat.fastdataclass import dataclass, field

if TYPE_CHECKING:  # readers.summary is imported for an input shaped like one (a plain file's name is not)
    from abstat.readers.summary import Summary

# Patterns compiled on first use (re's cache): a plain file that exists needs none of them (start-up)
_LABEL = r"\A[^=/\\]+\Z"
_GLOB_CHARS = r"[*?\[]"
# EXPERIMENT:VARIANT, with an experiment name as abstat run accepts it (anything but ':'; spaces, brackets...)
_STORE_REF = r"\A[^:]+:[A-Za-z0-9_.+@-]+\Z"


@dataclass
class VariantData:
    """One variant's data: runs of samples, or a summary.

    ``runs`` has one list per independent run; a plain file is one run.
    """

    name: str
    runs: list[Any] | None = None  # runs of floats: lists, or float64 arrays (parse_variant_spec's arrays)
    summary: Summary | None = None
    sources: list[str] = field(default_factory=list)
    warnings: list[Any] = field(default_factory=list)  # about the data (a stored variant's mixed commands)
    unit: str | None = None  # a stored variant's (its metric's unit in the store)
    invocations: list[int] = field(default_factory=list)  # a stored variant's: the invocation of each run

    @property
    def nested(self) -> bool:
        return self.runs is not None and len(self.runs) > 1

    @property
    def data(self) -> Summary | list[float] | list[list[float]]:
        """What :func:`abstat.compare` takes: a summary, samples or runs."""
        if self.summary is not None:
            return self.summary
        assert self.runs is not None
        return self.runs if self.nested else self.runs[0]


def _read(path: str, column: int, delimiters: str | None, arrays: bool = False) -> Any:
    if arrays:  # the values read_samples gives, as a float64 array (numpy's parser where it agrees)
        from abstat.readers.decimals import read_sample_array

        return read_sample_array(path, column=column, delimiters=delimiters)
    from abstat.readers.text import read_samples

    return read_samples(path, column=column, delimiters=delimiters)


def _stored(
    ref: str, store: str | None, metric: str, where: Mapping[str, Any] | None = None
) -> list[list[float]] | None:
    if not re.match(_STORE_REF, ref) or os.path.exists(ref):
        return None
    try:
        from abstat.store import resolve_store_path, resolve_variant
    except ImportError:
        return None
    runs = resolve_variant(ref, resolve_store_path(store), metric=metric, where=where)
    if runs is None:
        return None
    runs = [list(map(float, run)) for run in runs if len(run)]
    return runs or None


def _from_store(
    name: str, ref: str, runs: list[list[float]], store: str | None, metric: str, where: Mapping[str, Any] | None
) -> VariantData:
    from abstat.store import resolve_store_path, resolved_invocations, resolved_unit, stored_variant_warnings

    unit = resolved_unit(ref, resolve_store_path(store), metric=metric, where=where)
    invocations = resolved_invocations(ref, resolve_store_path(store), metric=metric, where=where)
    warnings = stored_variant_warnings(ref, resolve_store_path(store), metric=metric, where=where, name=name)
    if len(invocations) != len(runs):  # a group held nothing that reads as a number
        invocations = []
    return VariantData(name, runs=runs, sources=[f"store:{ref}"], warnings=warnings, unit=unit, invocations=invocations)


def parse_variant_spec(
    arg: str,
    *,
    column: int = 1,
    delimiters: str | None = None,
    store: str | None = None,
    metric: str = "wall",
    where: Mapping[str, Any] | None = None,
    arrays: bool = False,
) -> VariantData:
    """One input; with ``arrays``, a plain file's values come as a float64 array."""
    name, value = _name_and_value(arg)
    # readers.summary.looks_like_summary's; baseline:NAME:VARIANT (the form its own error asks for) is no summary
    summary = _summary(value, arg) if value.count(":") == 2 and not value.startswith("baseline:") else None
    if summary is not None:
        return VariantData(name, summary=summary, sources=[value])
    if value != "-" and not os.path.exists(value) and re.search(_GLOB_CHARS, value):
        return _from_pattern(name, value, column, delimiters, store, metric, where)
    value = _saved_baseline(value, store)
    runs = _stored(value, store, metric, where)
    if runs is not None:
        return _from_store(name, value, runs, store, metric, where)
    _refuse_missing_reference(value, store)
    values = _read(value, column, delimiters, arrays)
    return VariantData(name, runs=[values], sources=[value], warnings=_index_column(name, value, values, column))


def _index_column(name: str, path: str, values: Any, column: int) -> list[Any]:
    """A warning when the column read holds 1, 2, ..., n (or 0, 1, ...) and the lines have another column:
    a run number, most likely, read as the samples (ministat's default column 1 is compare's too)."""
    n = len(values)
    if column != 1 or n < 3 or path == "-" or values[0] not in (0, 1) or values[-1] != values[0] + n - 1:
        return []
    if any(float(v) != values[0] + i for i, v in enumerate(values)):
        return []
    try:
        _read(path, 2, None)
    except InputError:
        return []
    from abstat.stats.warnings import StatWarning

    first = int(values[0])
    message = (
        f"{name}: column 1 of the file holds {first}, {first + 1}, ..., {first + n - 1}: a run number? "
        "{column} 2 reads the next column"
    )
    return [StatWarning("index-column", message, name, fields=("column",))]


def _summary(value: str, arg: str) -> Summary | None:
    """The summary ``n:mean:stddev`` of an input shaped like one that is not a file's name, else None."""
    from abstat.readers.summary import looks_like_summary, parse_summary

    if not looks_like_summary(value) or os.path.exists(value):
        return None
    return parse_summary(value, source=arg)


def _saved_baseline(value: str, store: str | None) -> str:
    """The stored reference of a saved baseline (``baseline:NAME``, abstat baseline save); else ``value``."""
    if not value.startswith("baseline:") or os.path.exists(value):
        return value
    from abstat.store import resolve_store_path
    from abstat.store.baselines import baseline_ref

    return baseline_ref(value, resolve_store_path(store)) or value


def _refuse_missing_reference(value: str, store: str | None) -> None:
    """InputError for what is neither a file nor a stored variant, though it is shaped like a reference."""
    if value == "-" or os.path.exists(value) or not re.match(_STORE_REF, value):
        return
    from abstat.store import display_name, resolve_store_path

    store_path = display_name(resolve_store_path(store))
    numbers = re.fullmatch(r"[0-9.eE+-]*(:[0-9.eE+-]*)+", value) is not None  # e.g. 5:66.51, a field short
    hint = " (summary statistics are NAME=n:mean:stddev, three numbers)" if numbers else ""
    raise InputError(f"no such file, and no stored variant {value!r} in {store_path}{hint}", path=value)


def _name_and_value(arg: str) -> tuple[str, str]:
    """``NAME=VALUE`` split (when ``arg`` is not a file's name), else ``arg`` as both."""
    if not os.path.exists(arg) and "=" in arg:
        label, _, rest = arg.partition("=")
        if re.match(_LABEL, label) and rest:
            return label, rest
        if not rest:
            raise UsageError(f"{arg!r}: nothing after '='")
    return arg, arg


def _from_pattern(
    name: str,
    value: str,
    column: int,
    delimiters: str | None,
    store: str | None,
    metric: str,
    where: Mapping[str, Any] | None,
) -> VariantData:
    """The files a glob pattern matches, one run each; else a stored experiment named like a pattern."""
    import glob  # here: plain file names, the usual case, do not need it (start-up)

    paths = sorted(glob.glob(value))
    if not paths:
        runs = _stored(value, store, metric, where)  # an experiment named like a pattern: 'bench[v2]:a'
        if runs is not None:
            return _from_store(name, value, runs, store, metric, where)
        raise InputError("no file matches this pattern", path=value)
    runs = [_read(p, column, delimiters) for p in paths]
    return VariantData(name, runs=runs, sources=paths)


def parse_variant_specs(
    args: list[str],
    *,
    column: int = 1,
    delimiters: str | None = None,
    store: str | None = None,
    metric: str = "wall",
    where: Mapping[str, Any] | None = None,
    arrays: bool = False,
) -> dict[str, VariantData]:
    """Parse every argument; the order is kept (the first is the baseline).

    ``where`` chooses among the labelled configurations of stored variants
    (see :func:`abstat.store.resolve_variant`)."""
    variants: dict[str, VariantData] = {}
    if sum(1 for arg in args if arg == "-" or arg.endswith("=-")) > 1:
        raise UsageError("standard input ('-') can be read only once")
    for arg in args:
        variant = parse_variant_spec(
            arg, column=column, delimiters=delimiters, store=store, metric=metric, where=where, arrays=arrays
        )
        if variant.name in variants:
            raise UsageError(f"variant name {variant.name!r} given twice; label them: name=FILE")
        variants[variant.name] = variant
    _files_once(variants)
    _baseline_machines(variants, store)
    return variants


def _files_once(variants: dict[str, VariantData]) -> None:
    """A UsageError naming a file read into two variants (``old='rr/*.txt' new='rr/new*.txt'``: the old pattern
    matches the new files too): its runs would count on both sides, hiding the change."""
    owner: dict[str, tuple[str, str]] = {}
    for name, variant in variants.items():
        for source in variant.sources if variant.summary is None else ():
            if source == "-" or source.startswith("store:") or not os.path.exists(source):
                continue
            first = owner.setdefault(os.path.realpath(source), (name, source))
            if first[0] != name:
                raise UsageError(
                    f"{source}: read into two variants, {first[0]} and {name}; "
                    "give each file to one variant (make the patterns disjoint)"
                )


def _baseline_machines(variants: dict[str, VariantData], store: str | None) -> None:
    """A warning on a saved baseline whose machine records differ from the candidates'."""
    refs = _stored_refs(variants)
    based = [name for name, ref in refs.items() if ref.startswith("baseline@")]
    if not based:
        return
    from abstat.stats.warnings import StatWarning
    from abstat.store import resolve_store_path
    from abstat.store.baselines import machine_note

    for name in based:
        note = machine_note(resolve_store_path(store), refs[name], [r for n, r in refs.items() if n != name])
        if note:
            variants[name].warnings.append(StatWarning("baseline-machine", note, variant=name))


def _stored_refs(variants: dict[str, VariantData]) -> dict[str, str]:
    """The stored reference of each variant read from the store (one source, ``store:REF``)."""
    return {
        name: v.sources[0][len("store:") :]
        for name, v in variants.items()
        if len(v.sources) == 1 and v.sources[0].startswith("store:")
    }


# Peers' formats but the kernel tools' (readers.kernel_formats: imported with the peers' readers, only for a
# file that is not numbers alone)
PEER_FORMATS = (
    "go",
    "hyperfine",
    "pyperf",
    "csv",
    "gbench",
    "pytest-benchmark",
    "bmf",
    "criterion",
    "criterion-csv",
    "asv",
)


def peer_files(args: list[str]) -> list[tuple[str | None, str]]:
    """``[(NAME or None, FILE), ...]`` when an argument is a file of a peer
    tool (Go benchmark text, hyperfine or pyperf JSON), which holds labelled
    sample sets rather than one column of numbers; ``[]`` when none is."""
    named: list[tuple[str | None, str]] = []
    any_peer = False
    for arg in args:
        name, path = _named_file(arg)
        named.append((name, path))
        if path != "-" and os.path.isdir(path):
            any_peer = True  # criterion's or asv's results directory
        elif path != "-" and os.path.isfile(path) and not any_peer:
            any_peer = _is_peer_format(_peer_format(path))
    return named if any_peer else []


def inputs_apart(loaded: list[tuple[str | None, str, list[Any]]]) -> list[Any]:
    """The sets of compare's inputs (``(NAME or None, FILE, sets)`` each), every input its own variant: an unnamed
    input whose one variant another input holds too (criterion's ``new`` of two checkouts, files named alike in
    two directories) becomes the variant named by its path as given, as a plain file is; a UsageError when such
    an input holds several variants (a criterion directory's ``base`` and ``new``)."""
    from abstat.readers import display_text

    for index in sorted(_sharing(loaded)):
        name, path, sets = loaded[index]
        variants = sorted({s.labels.get("variant", "") for s in sets})
        if name is None and len(variants) > 1:
            raise UsageError(
                f"{path}: its variants ({', '.join(variants)}) are another input's too: give one file of each "
                "variant to compare (NAME=FILE names it)"
            )
        for sample_set in sets if name is None else ():
            sample_set.labels["variant"] = display_text(path)
    return [sample_set for _, _, sets in loaded for sample_set in sets]


def _sharing(loaded: list[tuple[str | None, str, list[Any]]]) -> set[int]:
    """The inputs that hold a variant another input holds too."""
    holders: dict[str, set[int]] = {}
    for index, (_, _, sets) in enumerate(loaded):
        for sample_set in sets:
            holders.setdefault(sample_set.labels.get("variant", ""), set()).add(index)
    return {index for indexes in holders.values() if len(indexes) > 1 for index in indexes}


def _is_peer_format(name: str | None) -> bool:
    if name is None:
        return False
    from abstat.readers.kernel_formats import FORMATS

    return name in PEER_FORMATS or name in FORMATS


def _named_file(arg: str) -> tuple[str | None, str]:
    """``NAME=FILE`` split (when ``arg`` is not a file's name), else no name and ``arg``."""
    if not os.path.exists(arg) and "=" in arg:
        label, _, rest = arg.partition("=")
        if re.match(_LABEL, label) and rest:
            return label, rest
    return None, arg


_NUMBERS_ALONE = re.compile(rb"[0-9.eE+\-\s]*")  # a plain sample file: decimals, exponents, white space


def _peer_format(path: str, head_bytes: int = 1 << 16) -> str | None:
    """The peer format of ``path``, judged from its first 64 KiB unless it is
    JSON or gzip (a long sample file is not scanned twice)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(head_bytes)
    except OSError:
        return None  # the sample reader names the problem
    if _NUMBERS_ALONE.fullmatch(head):
        return None  # no peer format is numbers alone (nor are their readers imported: start-up)
    from abstat.readers.peers import detect_format, read_text

    if head[:2] == b"\x1f\x8b" or head.lstrip()[:1] in (b"{", b"["):
        return detect_format(path, read_text(path))
    text = head.decode("utf-8", errors="replace")
    if len(head) == head_bytes:
        text = text[: text.rfind("\n") + 1]
    return detect_format(path, text)
