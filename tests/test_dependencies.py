"""What pyproject.toml installs is what src/ imports (issue 42): every required dependency is
imported somewhere under src/abstat, and every module src/ imports is the standard library's,
abstat's own, or a declared dependency (required, or an extra for an optional feature)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# distribution -> the module it installs, where the names differ
MODULES = {"psycopg[binary]": "psycopg"}


def _declared() -> tuple[set[str], dict[str, set[str]]]:
    """(required modules, extra -> its modules), read from pyproject.toml."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import pytest

        pytest.skip("tomllib needs Python 3.11")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def module(requirement: str) -> str:
        name = re.split(r"[<>=!~;\s]", requirement, maxsplit=1)[0]
        return MODULES.get(name, re.sub(r"\[.*\]", "", name).replace("-", "_").lower())

    extras = {extra: {module(r) for r in found} for extra, found in project.get("optional-dependencies", {}).items()}
    return {module(r) for r in project["dependencies"]}, extras


def _imported() -> dict[str, str]:
    """Top-level module -> a file under src/abstat importing it (at any depth: function-level
    imports count, as the commands import lazily)."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "src" / "abstat").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                if (path.parent / f"{name.split('.')[0]}.py").exists():
                    continue  # a sibling module, for a file also run by path (runner/supervisor.py)
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def test_every_required_dependency_is_imported_by_src() -> None:
    required, _ = _declared()
    imported = _imported()
    unused = sorted(required - set(imported))
    assert not unused, f"pyproject.toml requires {unused}, which nothing under src/abstat imports"


def test_every_third_party_import_of_src_is_declared() -> None:
    required, extras = _declared()
    declared = required | {m for modules in extras.values() for m in modules}
    third_party = {
        name: path for name, path in _imported().items() if name not in sys.stdlib_module_names and name != "abstat"
    }
    undeclared = {name: path for name, path in third_party.items() if name not in declared}
    assert not undeclared, f"imported under src/ but not declared in pyproject.toml: {undeclared}"
    assert {"numpy", "scipy"} <= set(third_party)  # the walk sees imports at all


def test_the_test_only_and_benchmark_only_packages_stay_out_of_the_install() -> None:
    required, extras = _declared()
    assert "matplotlib" not in required and "matplotlib" in extras["test"]
    assert "ruptures" not in required
