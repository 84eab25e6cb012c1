"""ministat/pooled.py types abstat.stats.student.pooled_t for mypy only: its protocol must name real fields
and the real signature, or mypy would check the readers against a fiction."""

import ast
import inspect
import pathlib

from abstat.ministat import pooled as pooled_module
from abstat.stats.student import PooledT, pooled_t


def _protocols() -> dict[str, ast.ClassDef]:
    tree = ast.parse(pathlib.Path(pooled_module.__file__ or "").read_text(encoding="utf-8"))
    return {node.name: node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


def test_the_protocol_names_fields_pooled_t_sets() -> None:
    fields = {
        node.target.id: ast.unparse(node.annotation)
        for node in _protocols()["PooledResult"].body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    }
    assert len(fields) == 8
    result = pooled_t(5, 10.0, 1.0, 500, 11.0, 2.0, 95)
    for name, annotation in fields.items():
        assert name in PooledT.__slots__
        assert type(getattr(result, name)).__name__ == annotation, name


def test_the_protocol_has_pooled_t_s_signature() -> None:
    call = next(node for node in _protocols()["_Pooled"].body if isinstance(node, ast.FunctionDef))
    args = call.args
    declared = [(a.arg, "positional") for a in args.args[1:]] + [(a.arg, "keyword") for a in args.kwonlyargs]
    defaults = [ast.literal_eval(d) for d in args.defaults] + [ast.literal_eval(d) for d in args.kw_defaults if d]
    real = inspect.signature(pooled_t).parameters.values()
    kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional", inspect.Parameter.KEYWORD_ONLY: "keyword"}
    assert declared == [(p.name, kinds[p.kind]) for p in real]
    assert defaults == [p.default for p in real if p.default is not inspect.Parameter.empty]


def test_at_run_time_pooled_is_pooled_t() -> None:
    assert pooled_module.pooled is pooled_t
