"""``abstat run``: measure variants, store every run, compare at the end.

    abstat run -n 30 --warmup 3 -v before='./bench-old' -v after='./bench-new'

This command parses its options into an experiment's specification
(:mod:`abstat.cli.args.experiment_args`), hands it to the engine
(:mod:`abstat.engine`) with a display of its events
(:mod:`abstat.cli.progress.display`), and renders the comparison the store then
holds (:mod:`abstat.render.run_report`, one per host for a lab run, per point for a grid).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from typing import Any

from abstat.cli.args.experiment_args import one_variant, spec_from_args
from abstat.cli.args.lab_args import lease_hooks, stored_commands
from abstat.cli.args.run_parser import OUTPUT_OPTIONS, REPORT_FORMATS, alone, build_parser
from abstat.errors import InputError, UsageError
from abstat.render import escape
from abstat.render.run_report import comparison_report  # noqa: F401 -- tests take it from here


def execute(
    spec: Any,
    *,
    fmt: str,
    verbose: bool,
    progress: bool,
    argv: Sequence[str],
    resuming: bool = False,
    report: bool = True,
    host_hooks: Any = None,
    store_kept: bool = True,
) -> tuple[int, Any]:
    """Run ``spec`` through the engine, showing its events, then print its comparison (unless not
    ``report``); (exit status, the engine's result).  Shared with ``demo`` and ``noise``; ``store_kept``
    False: ``spec``'s store is temporary (no advice names it)."""
    from abstat.engine import Engine
    from abstat.cli.progress.display import RunDisplay

    with RunDisplay(sys.stderr, progress=progress, store_kept=store_kept) as display:
        # how the comparison is rendered goes with each invocation: a resume renders it alike
        engine = Engine(
            on_event=display, argv=argv, caller={"report": {"format": fmt, "verbose": verbose}}, host_hooks=host_hooks
        )
        shown = (lambda store, done: _report_or_say_where(store, done, fmt, verbose)) if report else None
        result = engine.run(spec, resuming=resuming, before_close=shown)
    if result.spec.lab is not None:
        if result.hosts_failed:
            raise InputError(
                f"{len(result.hosts_failed)} of {len(result.spec.lab.hosts)} host(s) stopped "
                f"({', '.join(result.hosts_failed)}); every completed run is stored; continue with: "
                f"abstat run --resume {shlex.quote(result.experiment)} --store "
                f"{shlex.quote(result.store)}"
            )
        if result.interrupted:
            sys.stderr.write(
                f"abstat run: interrupted; continue with: abstat run --resume {shlex.quote(result.experiment)}\n"
            )
    elif result.error:
        raise InputError(
            f"{result.error}; the runs so far are stored in {result.store} (experiment {result.experiment!r})"
        )
    return (130 if result.interrupted else 0), result


def _report_or_say_where(store: Any, result: Any, fmt: str, verbose: bool) -> None:
    """The report; a second signal while an interrupted run prints its partial report cuts the report
    short, not the advice: the line says where the runs are and how to see them."""
    try:
        _print_report(store, result, fmt, verbose)
    except KeyboardInterrupt:
        if result.interrupted:
            how = f"abstat show {shlex.quote(result.experiment)} --store {shlex.quote(str(result.store))}"
            sys.stderr.write(f"abstat run: the partial report was cut; its runs are stored: {escape.terminal(how)}\n")
        raise


def _print_report(store: Any, result: Any, fmt: str, verbose: bool) -> None:
    from abstat.render import terminal
    from abstat.render.grid import grid_report
    from abstat.render.lab_report import lab_report

    spec, analysis = result.spec, result.spec.analysis
    options = {
        "baseline": analysis.baseline,
        "confidence": analysis.confidence,
        "fmt": fmt,
        "seed": spec.seed,
        "higher_is_better": list(analysis.higher_is_better),
        "lower_is_better": list(analysis.lower_is_better),
        "threshold": analysis.threshold,  # --until-decided's: the end's verdicts are the looks' words
        "color": terminal.color_wanted(sys.stdout),
        "verbose": verbose,
    }
    if spec.lab is not None:
        text = lab_report(
            store, result.experiment, [h.label for h in spec.lab.hosts], labels=dict(spec.labels), **options
        )
    else:  # a parameter scan: a comparison per grid point, then the grid's analysis
        text = (grid_report if spec.parameters else comparison_report)(
            store, result.experiment, labels=dict(spec.labels), **options
        )
    terminal.write(sys.stdout, text)
    sys.stdout.flush()


def _resume(args: argparse.Namespace, store_path: str) -> tuple[Any, str, bool]:
    """The stored specification of ``--resume``'s experiment, and how its comparison is rendered."""
    from abstat.engine.stored import stored_experiment, with_resume_options
    from abstat.store import check_experiment_name

    alone(args, "resume", "the experiment's stored options", ("boot_timeout", "yes", "no_wait", *OUTPUT_OPTIONS))
    check_experiment_name(args.resume)
    stored = stored_experiment(store_path, args.resume)
    if stored.spec is not None:
        spec, shown = stored.spec, stored.caller.get("report")
        shown = shown if isinstance(shown, dict) else {}
    else:  # stored by an abstat from before the engine: its options, converted and validated
        spec, shown = _from_legacy(stored, store_path)
    fmt = str(shown.get("format")) if shown.get("format") in REPORT_FORMATS else "text"
    verbose = shown.get("verbose") is True
    fmt, verbose = (args.format if args.format != "text" else fmt), (args.verbose or verbose)
    if not args.yes:  # nothing read from a store runs unseen
        sys.stderr.writelines(escape.terminal(line) + "\n" for line in stored_commands(spec))
        raise UsageError(f"--resume {args.resume!r} runs the stored commands above; check them, then add --yes")
    return with_resume_options(spec, boot_timeout=args.boot_timeout, store=store_path), fmt, verbose


def _from_file(args: argparse.Namespace) -> Any:
    """The specification in ``--spec FILE``: untrusted, shown first and run only with ``--yes``."""
    from abstat.cli.args.spec_file import read_spec_file

    alone(args, "spec", "the experiment from its file", ("print_spec", "yes", *OUTPUT_OPTIONS))
    return read_spec_file(args)


def _from_legacy(stored: Any, store_path: str) -> tuple[Any, dict[str, Any]]:
    import contextlib
    import io

    where = f"--resume {stored.experiment!r}: the stored options (invocation {stored.invocation})"
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # a stored --help prints nothing
            args = build_parser().parse_args(list(stored.legacy_argv))
        if args.resume is not None or not args.host:
            raise UsageError("not a --host experiment")
        args.experiment, args.seed = stored.experiment, stored.legacy_seed
        spec = spec_from_args(args, store_path)
    except (UsageError, InputError, SystemExit) as err:
        why, fields = (err.template(), err.fields) if isinstance(err, (UsageError, InputError)) else (err, ())
        raise InputError(f"{where} cannot be resumed: {why}", path=stored.store, fields=fields) from None
    return spec, {"format": args.format, "verbose": args.verbose}


def main(argv: list[str]) -> int:
    from abstat.store import resolve_store_path

    args = build_parser().parse_args(argv)
    store_path = resolve_store_path(args.store)
    if args.resume is not None:
        spec, fmt, verbose = _resume(args, store_path)
        return execute(
            spec,
            fmt=fmt,
            verbose=verbose,
            progress=not args.no_progress,
            argv=["abstat", "run", *argv],
            resuming=True,
            host_hooks=lease_hooks(args),
        )[0]
    if args.command and args.spec is None:  # abstat run -- ./bench: one variant, as hyperfine's positional command
        args.variant = [*args.variant, one_variant(args.command, args.shell, given=bool(args.variant))]
    spec = _from_file(args) if args.spec is not None else spec_from_args(args, store_path)
    if args.print_spec:
        from abstat.engine.spec import dumps
        from abstat.store import display_name  # a password is never printed: it shows as ***

        shown = args.store or getattr(args, "named_store", None)  # --store, else the one --spec FILE names
        sys.stdout.write(dumps(spec.replace(store=display_name(shown) if shown else None)))
        return 0
    return execute(
        spec,
        fmt=args.format,
        verbose=args.verbose,
        progress=not args.no_progress,
        argv=["abstat", "run", *argv],
        host_hooks=lease_hooks(args),
    )[0]
