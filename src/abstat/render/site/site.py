"""Build the site: one experiment at a time, only where its runs changed (see the package docstring)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field, replace
from typing import Any

from abstat.errors import AbstatError, InputError
from abstat.render.site.pages import change_links, index_page, regressions_page, wrap, wrap_parts

MANIFEST = ".abstat-publish.json"
SITE_VERSION = 3  # bump when pages change shape: every page is rewritten once


@dataclass
class Published:
    directory: str
    written: list[str] = field(default_factory=list)  # pages written (relative paths)
    unchanged: list[str] = field(default_factory=list)  # experiments whose pages were kept
    removed: list[str] = field(default_factory=list)  # pages of experiments no longer in the store
    warnings: list[str] = field(default_factory=list)


def slug(name: str) -> str:
    """A file name for any experiment or series name: safe characters, and a hash that keeps names apart."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:40] or "x"
    return f"{safe}-{hashlib.sha1(name.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


def _fingerprint(summary: Any, plots: str, related: str = "") -> str:
    """What an experiment's pages depend on; ``related``: the confirmations and bisections in the store,
    for an experiment with history series (its change points link to them)."""
    parts = [
        SITE_VERSION,
        plots,
        summary.invocations,
        summary.boots,
        summary.runs_ok,
        summary.runs_failed,
        summary.last_run_at,
        list(summary.variants),
        list(summary.hosts),
        related,
    ]
    return hashlib.sha1(json.dumps(parts, default=str).encode()).hexdigest()


# the experiments ``history --confirm`` and ``bisect`` (and ``history --bisect``) store by default:
# confirm-BEFORE-AFTER and bisect-GOOD-BAD, both revisions as 12-digit hashes
FOLLOW_UPS = (("confirmation", "confirm-"), ("bisection", "bisect-"))


def _related(summaries: Any) -> dict[str, Any]:
    return {s.name: s for s in summaries if s.name.startswith(tuple(prefix for _, prefix in FOLLOW_UPS))}


def _related_key(related: dict[str, Any]) -> str:
    return json.dumps([(name, s.runs_ok, s.last_run_at) for name, s in sorted(related.items())], default=str)


MAX_MANIFEST_BYTES = 64 << 20
PAGE = re.compile(r"\A(?:experiments|series)/[A-Za-z0-9._-]+\.html\Z")  # the pages a site holds (slug)


def _read_manifest(directory: str) -> dict[str, Any]:
    """The previous publish's record, read as untrusted: a regular file (not a link, a FIFO or a
    device), bounded in size and depth; anything else is no record (every page is written again)."""
    try:
        fd = os.open(os.path.join(directory, MANIFEST), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return {}
    try:
        with open(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return {}
            raw = handle.read(MAX_MANIFEST_BYTES + 1)
        data = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_MANIFEST_BYTES else None
    except (OSError, ValueError, RecursionError):
        return {}
    entries = data.get("experiments") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        return {}
    return {
        k: v
        for k, v in entries.items()
        if isinstance(k, str)
        and isinstance(v, dict)
        and isinstance(v.get("fingerprint"), str)
        and isinstance(v.get("entry"), dict)
    }


def _own_directory(directory: str, relative: str) -> str:
    """The directory of page ``relative`` in the site, made if missing; never a link (a planted
    ``experiments`` -> elsewhere would have pages written, and removed, outside the site)."""
    if not os.path.dirname(relative):
        return directory
    parent = os.path.join(directory, os.path.dirname(relative))
    try:
        os.mkdir(parent, 0o777)
    except FileExistsError:
        pass
    except OSError as err:
        raise InputError(f"cannot write the site: {err.strerror}", path=parent) from None
    if not stat.S_ISDIR(os.lstat(parent).st_mode):
        raise InputError(
            "not a directory of the site's (a link, or a file): publish follows no link; remove it", path=parent
        )
    return parent


def _write(directory: str, relative: str, text: str | list[str]) -> None:
    """Write a page through a new file in the same directory (``mkstemp``: no name to plant a link at,
    and two publishes at once do not share one) renamed over it: a link at the page is replaced, not
    followed."""
    parent = _own_directory(directory, relative)
    try:
        fd, temporary = tempfile.mkstemp(prefix=".abstat-", suffix=".tmp", dir=parent)
    except OSError as err:
        raise InputError(f"cannot write the site: {err.strerror}", path=parent) from None
    try:
        with open(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~_umask())  # readable as a page written by open() would be
            for piece in [text] if isinstance(text, str) else text:
                handle.write(piece)
        os.replace(temporary, os.path.join(directory, relative))
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise InputError(f"cannot write the site: {err.strerror}", path=os.path.join(directory, relative)) from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _verdict(report: Any) -> tuple[str, str]:
    """(filter class, words) of a report's comparisons."""
    compared = [c for c in report.comparisons if c.comparison is not None]
    if not compared:
        return "same", "nothing compared (one variant: see its history series, if any)"
    verdicts = [c.comparison.verdict for c in compared if c.significant]
    slower, faster = verdicts.count("slower"), verdicts.count("faster")
    other = len(verdicts) - slower - faster
    said = [f"{n} {w}" for n, w in ((slower, "slower"), (faster, "faster"), (other, "changed")) if n]
    words = (
        (", ".join(said) + f" of {len(compared)} compared")
        if said
        else f"no difference proven ({len(compared)} compared)"
    )
    return ("slower" if slower else "faster" if faster else "same"), words


def _experiment(
    store_path: str, summary: Any, plots: str, related: dict[str, Any] | None = None, repo: str | None = None
) -> tuple[dict[str, str | list[str]], dict[str, Any]]:
    """The experiment's pages (relative path -> HTML, or pieces of it to write in turn) and its index
    entry; ``repo`` orders its history
    series as ``abstat history --repo`` does."""
    name = summary.name
    page = f"experiments/{slug(name)}.html"
    entry: dict[str, Any] = {
        "name": name,
        "page": page,
        "variants": list(summary.variants),
        "hosts": list(summary.hosts),
        "runs": summary.runs_ok,
        "failed": summary.runs_failed,
        "last_run": summary.last_run_at,
        "verdict": "same",
        "words": "",
        "series": [],
    }
    pages: dict[str, str | list[str]] = {}
    body, sets, judging = _report_body(store_path, name, plots, entry)
    if not body:
        body = [f"<h1>{_esc(name)}</h1><p>{_esc(entry['words'] or 'no runs with samples')}</p>"]
    pages[page] = wrap_parts(f"experiment {name}", body, depth=1)
    if sets:
        series_pages, entry["series"] = _history(store_path, name, sets, related or {}, repo, judging)
        pages.update(series_pages)
    return pages, entry


def _report_body(store_path: str, name: str, plots: str, entry: dict[str, Any]) -> tuple[list[str], list[Any], Any]:
    """(the experiment's report as HTML, parts to join with newlines; its sets when they have
    revisions, else none; its directions, the run's --higher/--lower-is-better); the verdict into ``entry``.
    The report judges as ``abstat run`` did (:func:`abstat.report.analysis.judging_of_sets`) and is let go
    of before the history series are made (from the same sets: :mod:`abstat.render.site.series`)."""
    from abstat.report.analysis import Judging, judging_of_sets

    from abstat.render.html import body_parts
    from abstat.report import api

    try:
        sets = api.load([], store=store_path, where={"experiment": {name}}, machines=False)
        api.add_machines(sets, store_path)  # the records the page shows, not every revision's
    except AbstatError as err:
        sets, entry["words"] = [], f"not read: {err}"
    body: list[str] = []
    judging = Judging()
    if sets:
        try:
            judging = judging_of_sets(store_path, sets)
            report = api.build(
                sets,
                baseline=judging.baseline,
                confidence=judging.percent / 100,
                higher_is_better=judging.higher_is_better,
                lower_is_better=judging.lower_is_better,
                threshold=judging.threshold,
            )
            body = body_parts(report, plots)
            entry["verdict"], entry["words"] = _verdict(report)
        except AbstatError as err:
            entry["words"] = f"not compared: {err}"
    return body, sets if any("rev" in s.labels for s in sets) else [], judging


def _history(
    store_path: str,
    name: str,
    sets: list[Any],
    related: dict[str, Any],
    repo: str | None = None,
    judging: Any = None,
) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The series pages and their index entries of every metric of the experiment (a regression
    found on `user` must reach the regressions page), from its sets (emptied: let go of); a change is
    worse by :func:`abstat.report.analysis.higher_is_better` (``judging``: the run's --higher-is-better and
    --lower-is-better, a :class:`abstat.report.analysis.Judging`)."""
    from abstat.history.analysis import Settings, analyse
    from abstat.history.render import render_html
    from abstat.render.site.series import history_from_sets
    from abstat.report.analysis import Judging, higher_is_better

    try:
        history = history_from_sets(sets, store_path, name, repo)
    except AbstatError:
        history = None
    sets.clear()
    if history is None:
        return {}, []
    report, _ = analyse(history, Settings())
    judged, pages, entries = judging if judging is not None else Judging(), {}, []
    for result in report.results:
        series = result.series
        page = f"series/{slug(name + chr(0) + series.title)}.html"
        text = render_html(replace(report, results=[result], warnings=[]))
        body = text[text.index("<body>") + len("<body>") : text.rindex("</body>")]
        back = f'<p>experiment: <a href="../experiments/{slug(name)}.html">{_esc(name)}</a></p>'
        higher_better = higher_is_better(series.metric, series.unit, judged.higher_is_better, judged.lower_is_better)
        changes = []
        for change in result.detection.change_points:
            pct = None if change.baseline_issue() else (change.after / change.before - 1) * 100
            worse = pct is not None and (pct < 0 if higher_better else pct > 0)
            rev, previous = series.points[change.index].rev, series.points[max(change.index - 1, 0)].rev
            changes.append(
                {
                    "rev": rev,
                    "previous": previous,
                    "pct": pct,
                    "p": change.p_value,
                    "before": change.before,
                    "after": change.after,
                    "worse": worse,
                    "provisional": change.provisional,
                    "links": _follow_ups(previous, rev, related),
                }
            )
        pages[page] = wrap(f"history {series.title}", back + body + change_links(name, changes), depth=1)
        entries.append(
            {
                "title": series.title,
                "page": page,
                "metric": series.metric,
                "unit": series.unit,
                "revisions": len(series.points),
                "changes": changes,
                "experiment": name,
            }
        )
    return pages, entries


def _follow_ups(before: str, after: str, related: dict[str, Any]) -> list[dict[str, Any]]:
    """The confirmation and bisection of the change from ``before`` to ``after`` stored, if any."""
    found = []
    for kind, prefix in FOLLOW_UPS:
        name = f"{prefix}{before[:12]}-{after[:12]}"
        if name in related:
            found.append(
                {
                    "kind": kind,
                    "experiment": name,
                    "page": f"experiments/{slug(name)}.html",
                    "runs": related[name].runs_ok,
                    "last_run": related[name].last_run_at,
                }
            )
    return found


def _esc(text: str) -> str:
    from abstat.render.escape import html

    return html(text)


def publish(
    store_path: str, directory: str, *, plots: str = "auto", full: bool = False, repo: str | None = None
) -> Published:
    """Write (or bring up to date) the site for ``store_path`` in ``directory``; ``repo`` (a git
    repository) orders the history series in its topological order, as ``abstat history`` does, and the
    pages name the order as the CLI does (without it: commit time, then first seen)."""
    from abstat.store import open_store

    with open_store(store_path, create=False, read_only=True) as store:
        summaries = store.experiments()
    os.makedirs(directory, exist_ok=True)
    previous = {} if full else _read_manifest(directory)
    done = Published(directory)
    entries: dict[str, Any] = {}
    related = _related(summaries)
    related_key = _related_key(related)
    for summary in summaries:
        entries[summary.name] = _publish_experiment(
            store_path, directory, summary, plots, previous.get(summary.name), related, related_key, done, repo
        )
    for name, known in previous.items():
        if name not in entries:
            _remove(directory, {p for p in known.get("pages", []) if isinstance(p, str)}, done)
    listed = [entries[s.name]["entry"] for s in summaries]
    for relative, text in (("index.html", index_page(listed)), ("regressions.html", regressions_page(listed))):
        _write(directory, relative, text)
        done.written.append(relative)
    _write(
        directory, MANIFEST, json.dumps({"abstat_publish": SITE_VERSION, "experiments": entries}, indent=1, default=str)
    )
    return done


def _publish_experiment(
    store_path: str,
    directory: str,
    summary: Any,
    plots: str,
    known: Any,
    related: dict[str, Any],
    related_key: str,
    done: Published,
    repo: str | None = None,
) -> Any:
    """The manifest entry of one experiment: the one ``known`` when its pages are up to date, else its
    pages written (the stale ones removed) and a new entry."""
    with_series = bool(known and known["entry"].get("series"))
    depends = plots + ("\0" + os.path.abspath(repo) if repo else "")  # another order: other series pages
    fingerprint = _fingerprint(summary, depends, related_key if with_series else "")
    pages_known = known.get("pages", []) if known else []
    if (
        known
        and known["fingerprint"] == fingerprint
        and all(isinstance(p, str) and os.path.exists(os.path.join(directory, p)) for p in pages_known)
    ):
        done.unchanged.append(summary.name)
        return known
    pages, entry = _experiment(store_path, summary, plots, related, repo)
    if entry["series"] and not with_series:
        fingerprint = _fingerprint(summary, depends, related_key)
    for relative, text in pages.items():
        _write(directory, relative, text)
        done.written.append(relative)
    stale = set(p for p in pages_known if isinstance(p, str)) - set(pages)
    _remove(directory, stale, done)
    return {"fingerprint": fingerprint, "entry": entry, "pages": sorted(pages)}


def _remove(directory: str, pages: set[str], done: Published) -> None:
    """Remove pages the site wrote: a page's name (``experiments/SLUG.html``), a regular file, in a
    directory of the site's that is no link (the manifest naming them is data: it may be forged)."""
    for relative in sorted(pages):
        if not PAGE.match(relative):
            continue
        parent = os.path.join(directory, os.path.dirname(relative))
        path = os.path.join(directory, relative)
        try:
            if stat.S_ISDIR(os.lstat(parent).st_mode) and stat.S_ISREG(os.lstat(path).st_mode):
                os.remove(path)
                done.removed.append(relative)
        except OSError:
            pass
