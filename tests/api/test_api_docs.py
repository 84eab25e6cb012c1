"""docs/api.md's examples, run: every ```python block, in order, in one namespace, in an empty directory.

The lab example's host is this machine through tests/support/local_ssh.py (``ABSTAT_SSH_COMMAND``), so the
shipped runner, the protocol and the store run for real without an sshd.  Every public name has a
docstring and is shown in the document.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import sys

import pytest
from support import paths

ROOT = str(paths.ROOT)
DOC = os.path.join(ROOT, "docs", "api.md")
SHIM = os.path.join(ROOT, "tests", "support", "local_ssh.py")
# Names of the API that are exceptions, version strings or helpers documented with their parent.
NOT_SHOWN = {
    "__version__",
    "InputError",
    "UsageError",
    "ExperimentPlan",
    "run_experiment",
    "Summary",
    "Comparison",
    "compare_many",
    "resolve_variant",
    "iter_sample_sets",
    "machine_record",
    "read_samples",
    "read_ministat",
    "describe",
    "t_critical",
    "pooled_t",
    "ministat_report",
    "audit_file",
    "NoiseReport",
    "HostFindings",
    "ExperimentResult",
    "Perf",
    "Analysis",
    "Engine",
    "open_store",
    "AbstatError",
}


def blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_the_document_has_examples():
    assert len(blocks(open(DOC).read())) >= 10


@pytest.mark.skipif(shutil.which("git") is None, reason="the bisect example needs git")
def test_every_example_in_docs_api_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ABSTAT_STORE", raising=False)
    monkeypatch.setenv("ABSTAT_SSH_COMMAND", f"{sys.executable} {SHIM}")
    namespace: dict = {"__name__": "docs_api"}
    for number, code in enumerate(blocks(open(DOC).read()), 1):
        try:
            exec(compile(code, f"docs/api.md example {number}", "exec"), namespace)
        except Exception as err:  # name the example that failed
            raise AssertionError(f"docs/api.md example {number} failed: {type(err).__name__}: {err}\n{code}") from err


def test_every_public_name_has_a_docstring_and_typed_functions():
    import abstat

    for name in abstat.__all__:
        value = getattr(abstat, name)
        if name == "__version__":
            continue
        assert inspect.getdoc(value), f"abstat.{name} has no docstring"
        if inspect.isfunction(value):
            signature = inspect.signature(value)
            untyped = [
                p
                for p in signature.parameters.values()
                if p.annotation is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
            ]
            assert not untyped and signature.return_annotation is not inspect.Signature.empty, name


def test_the_document_shows_every_capability():
    import abstat

    text = open(DOC).read()
    missing = [name for name in abstat.__all__ if name not in NOT_SHOWN and f"abstat.{name}" not in text]
    assert not missing, f"docs/api.md does not show: {', '.join(missing)}"


def test_no_public_name_is_also_a_subpackage():
    # importing abstat.noise (the package) would replace a function abstat.noise on first use
    import abstat

    package = os.path.dirname(abstat.__file__)
    clashes = [
        name
        for name in abstat.__all__
        if os.path.exists(os.path.join(package, name)) or os.path.exists(os.path.join(package, f"{name}.py"))
    ]
    assert not clashes, clashes
