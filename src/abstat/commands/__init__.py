"""Sub-command modules: each exposes ``main(argv) -> int`` (see abstat.cli)."""
import argparse

from abstat.errors import UsageError


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit status 2, through the CLI."""

    def error(self, message: str) -> None:
        raise UsageError(message)
