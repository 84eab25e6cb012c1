"""``abstat demo``: a real, built-in A/B experiment (a few seconds).

Two variants of the same job -- read an 8 MiB file and checksum it -- one
with 128-byte read(2) calls (system-call bound), one with 256 KiB calls.
Both are the shipped script ``abstat/cli/examples/read_chunks.py`` run with
this Python.  The runs go to a temporary store (or ``--store PATH``), and
the comparison of every metric is printed, exactly as ``abstat run`` does.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from importlib import resources

from abstat.cli.args import ArgumentParser, add_format, add_no_progress, add_runs, add_seed, add_store, add_warmup
from abstat.errors import UsageError

FILE_BYTES = 8 * 1024 * 1024
SMALL_CHUNK = 128
LARGE_CHUNK = 256 * 1024


DESCRIPTION = (
    f"A real, built-in A/B experiment (a few seconds): an 8 MiB file read and checksummed with "
    f"{SMALL_CHUNK}-byte read(2) calls (before) and {LARGE_CHUNK // 1024} KiB calls (after), "
    "measured, stored and compared as abstat run does."
)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="abstat demo", description=DESCRIPTION, examples=("abstat demo -n 20",))
    add_runs(parser, default=30)
    add_warmup(parser, default=2)
    add_store(parser, help="keep the results in this store (default: a temporary one)")
    add_seed(parser, default=None, help="seed of the run order (default: random, stored)")
    add_format(parser, ("text", "markdown", "json", "csv"), default="text", help="format of the final comparison")
    add_no_progress(parser)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    # Check what can be checked before the banner and the 8 MiB file, so
    # that bad options give one line on stderr.
    if args.runs < 1:
        raise UsageError("-n must be at least 1")
    if args.warmup < 0:
        raise UsageError("--warmup cannot be negative")
    if args.store:
        from abstat.store import open_store

        with open_store(args.store) as store:
            store.experiment_names()

    from abstat.cli.args.experiment_args import quote_command
    from abstat.cli.commands.run import execute
    from abstat.engine import Analysis, ExperimentSpec, Variant

    with tempfile.TemporaryDirectory(prefix="abstat-demo-") as workdir:
        data_path = os.path.join(workdir, "data.bin")
        with open(data_path, "wb") as handle:
            handle.write(os.urandom(FILE_BYTES))
        with resources.as_file(resources.files("abstat") / "cli" / "examples" / "read_chunks.py") as script:
            python = [sys.executable, "-I", "-S", str(script), data_path]
            spec = ExperimentSpec(
                (
                    Variant("before", quote_command([*python, str(SMALL_CHUNK)])),
                    Variant("after", quote_command([*python, str(LARGE_CHUNK)])),
                ),
                runs=args.runs,
                warmup=args.warmup,
                seed=args.seed,
                experiment="demo",
                analysis=Analysis(),
                store=args.store or os.path.join(workdir, "demo.db"),
            )
            sys.stderr.write(
                f"abstat demo: reading an 8 MiB file with {SMALL_CHUNK}-byte read(2) calls (before) "
                f"against {LARGE_CHUNK // 1024} KiB calls (after)\n"
            )
            return execute(
                spec,
                fmt=args.format,
                verbose=False,
                progress=not args.no_progress,
                argv=["abstat", "demo", *argv],
                store_kept=bool(args.store),
            )[0]
