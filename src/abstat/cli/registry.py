"""The commands of ``abstat``: name -> (module, one-line help).

Data only (no imports): :mod:`abstat.cli` dispatches through it, importing a
command's module only when it is asked for, and ``abstat completion`` builds
every command's parser from it.  A new command is a module in
``abstat/cli/commands/`` (``main(argv)`` and ``build_parser()``) and one line here.
"""

COMMANDS: dict[str, tuple[str, str]] = {
    "ministat": ("abstat.ministat.cli", "byte-exact drop-in for ministat(1)"),
    "compare": ("abstat.cli.commands.compare", "compare variants with honest statistics (median, CI, verdict)"),
    "run": ("abstat.cli.commands.run", "measure variants (interleaved), store every run, compare them"),
    "demo": ("abstat.cli.commands.demo", "a built-in A/B experiment (a few seconds): run, store, compare"),
    "list": ("abstat.cli.commands.list", "list the experiments in the result store"),
    "show": ("abstat.cli.commands.show", "show a stored experiment: runs, machines, comparison"),
    "export": ("abstat.cli.commands.export", "export stored samples as CSV or JSON, one row per sample"),
    "audit": ("abstat.cli.commands.audit", "check ministat reports and averages pasted in e-mails or Markdown"),
    "plan": ("abstat.cli.commands.plan", "samples (runs x samples per run) needed to detect a change"),
    "report": ("abstat.cli.commands.report", "one table across machines and configurations (text, e-mail, HTML...)"),
    "doctor": ("abstat.cli.commands.doctor", "check this machine for noise sources (frequency, turbo, SMT...); --tune"),
    "noise": ("abstat.cli.commands.noise", "A/A runs of one command: this machine's noise floor and stability"),
    "completion": ("abstat.cli.commands.completion", "print the shell completion script (bash, zsh or fish)"),
    "import": (
        "abstat.cli.commands.import",
        "merge other stores (files or postgresql:// URLs) into this one, idempotently",
    ),
    "history": ("abstat.cli.commands.history", "a benchmark across git revisions: change points and their sizes"),
    "baseline": ("abstat.cli.commands.baseline", "save an experiment as a named baseline for compare baseline:NAME"),
    "publish": (
        "abstat.cli.commands.publish",
        "a static site from the store: experiments, history series, regressions",
    ),
    "bisect": ("abstat.cli.commands.bisect", "find the commit that changed a benchmark (Bayesian, noise-proof)"),
    "testbox": ("abstat.cli.commands.testbox", "local QEMU test boxes booting a real Debian kernel, for --host NAME"),
}
