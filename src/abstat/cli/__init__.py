"""The ``abstat`` command line: a thin dispatcher over the public API.

Each sub-command lives in its own module exposing ``main(argv) -> int``
and is imported only when asked for, so ``abstat ministat`` starts as fast
as Python itself (no numpy on that path).
"""

import os
import sys

from abstat.cli import exiting
from abstat.cli.registry import COMMANDS  # name -> (module, one-line help)

USAGE = "usage: abstat COMMAND [ARGS...]   (abstat --help lists the commands)"


def _help() -> str:
    lines = [USAGE, "", "commands:"]
    for name, (_, text) in COMMANDS.items():
        lines.append(f"  {name:<10} {text}")
    lines.append("")
    lines.append("options:")
    lines.append(f"  {'-h, --help':<18} show this help and exit")
    lines.append(f"  {'--version':<18} show abstat's version and exit")
    lines.append("")
    lines.append("abstat COMMAND --help shows a command's options.")
    lines += ["", "example:", "  abstat run -n 20 -v old=./bench-old -v new=./bench-new"]
    return "\n".join(lines)


# The collector's youngest generation is collected after this many new container objects instead of 700:
# start-up (numpy's and abstat's modules: ~50,000 objects that live as long as the process) then costs
# about one collection instead of ~70 and their older-generation passes; cyclic garbage waiting for a
# collection stays bounded by it.
GC_YOUNG_THRESHOLD = 50_000


# Commands that leave nothing for the collector to finalize once they return (their files and stores closed,
# their output flushed).  After one of them the program's own process moves every object to the collector's
# permanent generation: the interpreter's exit then neither traverses the ~35,000 tracked objects of numpy's
# and abstat's start-up in each of its collections nor frees the cyclic ones (classes, functions, module
# dicts) one by one, while exit functions, flushing and clearing the modules run as before.  ~20 ms of CPU of
# `compare A B`'s ~165 (docs/performance.md, wave 19); a caller of main(argv) keeps its collector as it was.
FROZEN_AT_EXIT = ("compare", "ministat")


def main(argv: list[str] | None = None) -> int:
    """``abstat ARGS``; without ``argv`` (sys.argv's), as the program itself: then how its exit ends
    after an interruption is watched too (:mod:`abstat.cli.exiting`)."""
    args = sys.argv[1:] if argv is None else list(argv)
    status = _top_level(args)
    if status is not None:
        return status
    if argv is None:  # the program's own process: a caller's (a test's) collector is left as it is
        import gc

        gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    name, rest = args[0], args[1:]
    _prepare(name)
    if argv is None:  # the program (abstat/__main__.py, scripts/abstat), not a caller's or a test's process
        exiting.watch()  # before the command registers exit functions of its own: it runs after them
    status = _run(name, COMMANDS[name][0], rest)
    exiting.forget_caught_interrupts()  # else `python -m abstat` may end by SIGINT, not with the status
    if argv is None and name in FROZEN_AT_EXIT:
        import gc

        gc.freeze()
    return status


def _top_level(args: list[str]) -> int | None:
    """--help, --version, an unknown command: abstat's own answer and exit status (None: a command)."""
    if not args or args[0] in ("-h", "--help", "help"):
        print(_help())
        return 0 if args else 2
    if args[0] == "--version":
        from abstat import __version__

        print(f"abstat {__version__}")
        return 0
    if args[0] not in COMMANDS:
        sys.stderr.write(f"abstat: unknown command {args[0]!r} (abstat --help lists the commands)\n")
        return 2
    return None


# Commands that import argparse themselves when they need it (abstat.cli.args): not on every start-up
ARGPARSE_WHEN_NEEDED = ("ministat", "compare")


def _prepare(name: str) -> None:
    if name not in ARGPARSE_WHEN_NEEDED:
        import abstat.cli.args  # noqa: F401 -- argparse, without gettext when it would find no catalogue
    if name != "ministat" and not os.environ.get("ABSTAT_DEBUG"):
        # numpy's floating-point RuntimeWarnings (overflow in extreme data)
        # would print two lines of source code; results carry their own
        # warnings as values.  (ministat's numpy path handles its own, and
        # its small-input path must not pay for importing `warnings`.)
        import warnings

        warnings.simplefilter("ignore", RuntimeWarning)
    if sys.stdout is None:  # started with standard output closed (>&-)
        sys.stdout = open(os.devnull, "w")
    if sys.stderr is None:  # closed (2>&-): messages go nowhere, but errors still exit 2 and runs still count
        sys.stderr = open(os.devnull, "w")


def _run(name: str, module_name: str, rest: list[str]) -> int:
    from abstat.cli.flags import namer
    from abstat.errors import AbstatError, naming

    try:
        module = __import__(module_name, fromlist=["main"])
        with naming(namer(name, advice=True)):  # the warnings and notes it shows name its flags
            status = int(module.main(rest) or 0)
        if status == 130:  # interrupted, and it said so: a second signal while exiting ends it with 130
            exiting.arm()
        sys.stdout.flush()  # a full disk shows here, as one line, not at interpreter exit
        return status
    except AbstatError as err:
        _flush_quietly()
        from abstat.render.escape import terminal

        # one line, whatever a file name holds; no escape sequence from a name in the store reaches the terminal
        message = terminal(err.named(namer(name)).replace("\r", "\\r").replace("\n", "\\n"))
        sys.stderr.write(f"abstat {name}: {message}\n")
        return err.exit_status
    except KeyboardInterrupt:
        return _interrupted(name)
    except BrokenPipeError:
        # The reader went away (abstat ... | head): not an error of ours.
        _discard_stdout()
        return 0
    except OSError as err:  # the output cannot be written (disk full...), or a file error not named earlier
        return _os_error(name, err)
    except Exception as err:  # never a traceback for the user
        if exiting.caused_by_interrupt(err):  # e.g. an extension module's import cut by Ctrl-C
            return _interrupted(name)
        return _internal_error(name, err)


def _interrupted(name: str) -> int:
    line = f"abstat {name}: interrupted\n"
    exiting.arm(line)  # from here a second Ctrl-C or SIGTERM ends abstat at once, with 130
    _flush_quietly()
    sys.stderr.write(line)
    exiting.said()
    return 130


def _os_error(name: str, err: OSError) -> int:
    if os.environ.get("ABSTAT_DEBUG"):
        raise err
    _discard_stdout()
    from abstat.render.escape import terminal

    where = f"{err.filename}: " if err.filename else "write error: "
    sys.stderr.write(terminal(f"abstat {name}: {where}{err.strerror or err}") + "\n")
    return 2


def _internal_error(name: str, err: Exception) -> int:
    if os.environ.get("ABSTAT_DEBUG"):
        raise err
    _flush_quietly()
    sys.stderr.write(
        f"abstat {name}: internal error: {type(err).__name__}: {' '.join(str(err).split())} "
        "(set ABSTAT_DEBUG=1 for a traceback)\n"
    )
    return 2


def _discard_stdout() -> None:
    """Point standard output at /dev/null: what is still buffered goes nowhere
    instead of failing again, with a message, when Python exits."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _flush_quietly() -> None:
    try:
        sys.stdout.flush()
    except Exception:
        pass
