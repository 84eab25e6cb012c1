"""Sub-command modules: each exposes ``main(argv) -> int`` (see abstat.cli) and ``build_parser()``,
its argparse parser (read by ``abstat completion`` and by the tests that hold every command to one
grammar), built from the shared options of :mod:`abstat.cli.args`.
"""
