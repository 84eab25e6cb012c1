"""The shape of src/abstat, read from its source with ``ast`` (no third-party tool).

- no import circle between modules;
- no module outside ``abstat.cli.commands`` (and ``abstat.cli``, ``abstat.__main__``) imports it;
- no import from a lower layer up to a higher one (:data:`LAYERS`, docs/architecture.md);
- no library function takes an ``argparse.Namespace``;
- no module over 400 lines, no command module over 200;
- ``abstat.box.runner`` imports only the standard library and what ships with it to a test box.

An import is an edge wherever it is written (at the top, in a function, under
``try``), except under ``if TYPE_CHECKING:``.  ``from P import name`` is an
edge to ``P.name`` when that is a module, else to ``P``; a package whose
``__init__`` loads names lazily (a dict literal of name -> module, read by
its ``__getattr__``) gives an edge to the module the name maps to.  A module's
dotted name given as a string to a call (``__import__("abstat.x")``,
``importlib.import_module``, a helper that imports it) is an edge too; a table
of names that another module imports from (``abstat.cli.registry``) is data.
"""

from __future__ import annotations

import ast
import os
import sys
from dataclasses import dataclass, field

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
PACKAGE = os.path.join(SRC, "abstat")
MAX_LINES = 400
MAX_COMMAND_LINES = 200
COMMAND_LAYER = ("abstat.cli.commands", "abstat.cli.args", "abstat.cli", "abstat.__main__")
# The layers, lowest first; a module is in the layer of the longest prefix listed for it.  An import may go
# down or stay in its layer, never up (docs/architecture.md draws these).
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "abstat",
        "abstat.errors",
        "abstat.cli.outfile",
        "abstat.cli.registry",
        "abstat.cli.flags",
    ),  # leaves (the root: version, lazy names)
    ("abstat.box.machine", "abstat.box.isolate", "abstat.box.isolate_record"),
    ("abstat.box.doctor",),
    ("abstat.box.runner",),  # ships to the box with machine and doctor
    ("abstat.lab",),  # ssh, the bundle, host workers
    ("abstat.stats",),
    ("abstat.readers",),
    ("abstat.ministat",),
    ("abstat.store",),
    ("abstat.comparison",),
    ("abstat.report",),
    ("abstat.render",),
    ("abstat.noise", "abstat.audit", "abstat.history"),
    ("abstat.engine",),
    ("abstat.history.bisect",),
    ("abstat.api", "abstat.report.api", "abstat.render.site"),  # the public API (report.api: load, build, render
    # a report; publish: the static site of a whole store)
    ("abstat.cli.progress",),  # the progress views: the engine's events drawn on standard error
    ("abstat.cli.args",),  # the grammar the commands parse with
    ("abstat.cli.commands",),
    ("abstat.cli", "abstat.__main__"),
)
# Upward imports that are known and owned elsewhere: (importer, imported) -> why.  A new one fails the test.
KNOWN_UPWARD = {
    ("abstat.readers.specs", "abstat.store"): "VariantData and its loader from the store share readers/specs.py",
    ("abstat.readers.specs", "abstat.store.baselines"): "a saved baseline (baseline:NAME) is resolved where "
    "stored variants are, in readers/specs.py",
    ("abstat.store", "abstat.comparison.commands"): "stored_variant_warnings builds comparison warnings in store/",
}
# What the shipped runner may import of abstat besides itself (lab/bundle.py ships these).
RUNNER_SHIPS_WITH = ("abstat.box",)
# Box-side modules that run only on the controller (lab/bundle.py does not ship them).
CONTROLLER_ONLY = ("abstat.box.doctor.tune",)


@dataclass
class Module:
    name: str
    path: str
    is_package: bool
    tree: ast.Module
    lines: int
    imports: set[str] = field(default_factory=set)
    lazy: dict[str, str] = field(default_factory=dict)  # name -> module, for a lazy package


def _modules(root: str = PACKAGE) -> dict[str, Module]:
    found: dict[str, Module] = {}
    for directory, _, files in os.walk(root):
        for file in files:
            if not file.endswith(".py"):
                continue
            path = os.path.join(directory, file)
            name = os.path.relpath(path, os.path.dirname(root))[:-3].replace(os.sep, ".")
            package = name.endswith(".__init__")
            name = name[: -len(".__init__")] if package else name
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            found[name] = Module(name, path, package, ast.parse(text, path), text.count("\n"))
    return found


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return skipped


def _lazy_map(module: Module, modules: dict[str, Module]) -> dict[str, str]:
    """name -> module of a package ``__init__`` that loads names on first use (``__getattr__``)."""
    if not module.is_package or not any(
        isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in module.tree.body
    ):
        return {}
    lazy: dict[str, str] = {}
    for node in module.tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if not isinstance(value, ast.Dict):
            continue
        for key, target in zip(value.keys, value.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                continue
            home = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
            if isinstance(home, ast.Constant) and isinstance(home.value, str):
                for candidate in (home.value, f"{module.name}.{home.value}"):
                    if candidate in modules:
                        lazy[key.value] = candidate
    return lazy


def _resolve_from(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph(root: str = PACKAGE) -> dict[str, Module]:
    modules = _modules(root)
    for module in modules.values():
        module.lazy = _lazy_map(module, modules)
    for module in modules.values():
        skipped = _type_checking_nodes(module.tree)
        for node in ast.walk(module.tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                module.imports.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom):
                source = _resolve_from(module, node)
                if source not in modules:
                    continue
                for alias in node.names:
                    target = f"{source}.{alias.name}"
                    if target in modules:
                        module.imports.add(target)
                    else:
                        module.imports.add(modules[source].lazy.get(alias.name, source))
            elif isinstance(node, ast.Call):
                module.imports.update(
                    arg.value
                    for arg in node.args
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value in modules
                )
        module.imports.discard(module.name)
    return modules


def circles(modules: dict[str, Module]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(modules):
        if start in index:
            continue
        work = [(start, iter(sorted(modules[start].imports)))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(modules[target].imports))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return sorted(found)


def _in(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


GRAPH = import_graph()


def test_the_graph_sees_what_is_imported():
    # a direct import, a relative-free from-import of a module, a lazy package name, a function-level import
    assert "abstat.engine.parts" in GRAPH["abstat.engine.spec"].imports
    assert "abstat.box.runner.executor" in GRAPH["abstat.engine.session"].imports  # abstat.box.runner's lazy map
    assert "abstat.render.email" in GRAPH["abstat.render.registry"].imports  # a name given to a call
    assert "abstat.engine" in GRAPH["abstat.cli.commands.run"].imports  # inside a function
    assert len(GRAPH) > 100


def test_the_checks_fail_on_what_they_look_for(tmp_path):
    root = tmp_path / "abstat"
    (root / "cli" / "commands").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "cli" / "__init__.py").write_text("")
    (root / "cli" / "commands" / "__init__.py").write_text("")
    (root / "cli" / "commands" / "run.py").write_text("from abstat import lib\n")
    (root / "lib.py").write_text("def f():\n    __import__('abstat.cli.commands.run')\n" + "x = 1\n" * 401)
    modules = import_graph(str(root))
    assert circles(modules) == [["abstat.cli.commands.run", "abstat.lib"]]
    assert _commands_imported_from_outside(modules) == ["abstat.lib imports abstat.cli.commands.run"]
    assert _too_long(modules) == ["abstat.lib: 403 lines (at most 400)"]
    assert upward_imports(modules) == ["abstat.lib imports abstat.cli.commands.run (layer 0 -> 18)"]


def test_no_import_circles():
    found = circles(GRAPH)
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def _commands_imported_from_outside(modules: dict[str, Module]) -> list[str]:
    return sorted(
        f"{m.name} imports {target}"
        for m in modules.values()
        if not _in(m.name, COMMAND_LAYER)
        for target in m.imports
        if _in(target, ("abstat.cli.commands",))
    )


def test_only_the_command_layer_imports_commands():
    found = _commands_imported_from_outside(GRAPH)
    assert not found, "; ".join(found)


def _too_long(modules: dict[str, Module]) -> list[str]:
    found = []
    for module in modules.values():
        limit = MAX_COMMAND_LINES if _in(module.name, ("abstat.cli.commands",)) else MAX_LINES
        if module.lines > limit:
            found.append(f"{module.name}: {module.lines} lines (at most {limit})")
    return sorted(found)


def layer_of(name: str) -> int:
    best, found = -1, -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if _in(name, (prefix,)) and len(prefix) > best:
                best, found = len(prefix), index
    return found


def upward_imports(modules: dict[str, Module]) -> list[str]:
    found = []
    for module in modules.values():
        for target in module.imports:
            if layer_of(target) > layer_of(module.name) and (module.name, target) not in KNOWN_UPWARD:
                found.append(f"{module.name} imports {target} (layer {layer_of(module.name)} -> {layer_of(target)})")
    return sorted(found)


def test_every_module_has_a_layer():
    assert [name for name in GRAPH if layer_of(name) < 0] == []


def test_no_upward_imports():
    found = upward_imports(GRAPH)
    assert not found, "; ".join(found)


def test_modules_are_at_most_400_lines_and_commands_200():
    found = _too_long(GRAPH)
    assert not found, "; ".join(found)


def test_no_library_function_takes_an_argparse_namespace():
    found = []
    for module in GRAPH.values():
        if _in(module.name, COMMAND_LAYER):
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                    if arg.annotation is not None and "Namespace" in ast.unparse(arg.annotation):
                        found.append(f"{module.name}.{node.name}({arg.arg})")
        if (
            any(isinstance(n, ast.Import) and any(a.name == "argparse" for a in n.names) for n in ast.walk(module.tree))
            and module.name != "abstat.ministat.cli"
        ):  # ministat(1)'s own getopt-style front end
            found.append(f"{module.name} imports argparse")
    assert not found, "; ".join(found)


def test_the_box_package_imports_only_the_standard_library_and_itself():
    # abstat.box (runner, doctor, machine record) is one boundary: what ships to a bare test box
    stdlib = set(sys.stdlib_module_names)
    siblings = {name.rsplit(".", 1)[-1] for name in GRAPH if name.startswith("abstat.box.runner.")}
    found = []
    for module in GRAPH.values():
        if not _in(module.name, ("abstat.box",)) or _in(module.name, CONTROLLER_ONLY):
            continue
        for target in module.imports:
            if not _in(target, RUNNER_SHIPS_WITH):
                found.append(f"{module.name} imports {target}")
        for node in ast.walk(module.tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            for name in names:
                top = name.split(".")[0]
                if (
                    top not in stdlib and top != "abstat" and top not in siblings
                ):  # run as a script: runner/ on sys.path
                    found.append(f"{module.name} imports {name}")
    assert not found, "; ".join(found)


@pytest.mark.parametrize("package", ["abstat.engine", "abstat.lab", "abstat.box.runner"])
def test_the_engine_and_its_transport_never_print(package):
    found = []
    for module in GRAPH.values():
        if not _in(module.name, (package,)) or module.name == "abstat.box.runner.remote":  # the box's protocol channel
            continue
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                found.append(f"{module.name}:{node.lineno} print()")
            if (
                isinstance(node, ast.Attribute)
                and node.attr in ("stdout", "stderr")
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            ):
                found.append(f"{module.name}:{node.lineno} sys.{node.attr}")
    assert not found, "; ".join(found)
