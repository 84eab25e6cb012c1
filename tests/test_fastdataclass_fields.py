"""abstat.fastdataclass's own field collection (``_collected``: the standard library's ``_process_class`` work for
classes of plain fields) against the standard library's: the same ``__dataclass_fields__`` (every attribute of
every field), ``__dataclass_params__``, ``__match_args__``, class attributes and errors, for class bodies that
take the own path and for those that must not (ClassVar, InitVar, KW_ONLY by name, alias or module, a
keyword-only field, slots, a dataclass base, a mutable default, a field without annotation)."""

from __future__ import annotations

import abc
import dataclasses
import typing
from dataclasses import KW_ONLY, InitVar, field
from typing import Any, ClassVar

import pytest

from abstat import fastdataclass

CV = ClassVar  # an alias the standard library resolves in the module (its _is_type)
IV = InitVar

needs_own = pytest.mark.skipif(not fastdataclass._OWN_FIELDS, reason="the standard library's collection only")


def bodies() -> dict[str, tuple[bool, Any]]:
    """name -> (whether the own path takes it, a function making the undecorated class)."""
    return {**own_bodies(), **other_bodies()}


def own_bodies() -> dict[str, tuple[bool, Any]]:
    """Classes of plain fields."""

    def plain() -> type:
        class Plain:
            """Doc."""

            a: int
            b: list[str] | None = None
            c: float = field(default=1.5, repr=False, compare=False, metadata={"unit": "s"})
            d: list[int] = field(default_factory=list, hash=True)
            e: str = field(default="x", init=False)
            f: typing.Optional[int] = 3  # noqa: UP045 -- a typing form, not ClassVar

        return Plain

    def undocumented() -> type:
        class Undocumented:
            a: int
            b: tuple[int, ...] = ()

        return Undocumented

    def abstract() -> type:
        class Abstract(abc.ABC):
            a: int

            @abc.abstractmethod
            def size(self) -> int: ...

        return Abstract

    return {"plain": (True, plain), "undocumented": (True, undocumented), "abstract": (True, abstract)}


def other_bodies() -> dict[str, tuple[bool, Any]]:
    """Classes the own path must leave to the standard library."""

    def classvar() -> type:
        class WithClassVar:
            a: int
            b: ClassVar[int] = 2

        return WithClassVar

    def classvar_alias() -> type:
        class WithAlias:
            a: int
            b: CV[int] = 2

        return WithAlias

    def classvar_module() -> type:
        class WithModule:
            a: int
            b: typing.ClassVar[int] = 2

        return WithModule

    def initvar() -> type:
        class WithInitVar:
            a: int
            b: IV[int] = 0

            def __post_init__(self, b: int) -> None:
                self.a += b

        return WithInitVar

    def initvar_module() -> type:
        class WithInitVarModule:
            a: int
            b: dataclasses.InitVar[int] = 0

            def __post_init__(self, b: int) -> None:
                self.a += b

        return WithInitVarModule

    def kw_only_marker() -> type:
        class WithMarker:
            a: int
            _: KW_ONLY
            b: int = 2

        return WithMarker

    def kw_only_field() -> type:
        class WithKeyword:
            a: int
            b: int = field(default=2, kw_only=True)

        return WithKeyword

    def mutable() -> type:
        class Mutable:
            a: list[int] = []  # noqa: RUF012 -- the standard library's error

        return Mutable

    def unannotated() -> type:
        class Unannotated:
            a: int
            b = field(default=1)

        return Unannotated

    return {
        "classvar": (False, classvar),
        "classvar alias": (False, classvar_alias),
        "classvar module": (False, classvar_module),
        "initvar": (False, initvar),
        "initvar module": (False, initvar_module),
        "kw_only marker": (False, kw_only_marker),
        "kw_only field": (False, kw_only_field),
        "mutable": (False, mutable),
        "unannotated": (False, unannotated),
    }


FIELD_ATTRIBUTES = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare", "metadata")


def described(decorate: Any, make: Any, options: dict[str, Any]) -> Any:
    try:
        cls = decorate(**options)(make())
    except (TypeError, ValueError) as err:
        return f"{type(err).__name__}: {err}"
    fields = {
        name: (*(getattr(f, a) for a in FIELD_ATTRIBUTES), f.kw_only, f._field_type)
        for name, f in cls.__dataclass_fields__.items()
    }
    attributes = {n: v for n, v in vars(cls).items() if n in cls.__dataclass_fields__ or n == "b"}
    return {
        "fields": fields,
        "public fields": [f.name for f in dataclasses.fields(cls)],
        "params": repr(cls.__dataclass_params__),
        "match_args": cls.__dict__.get("__match_args__"),
        "attributes": attributes,
        "abstract": sorted(getattr(cls, "__abstractmethods__", ())),
        "doc": cls.__doc__ if cls.__doc__ and not cls.__doc__.startswith(cls.__name__ + "(") else None,
    }


@pytest.mark.parametrize("options", [{}, {"frozen": True}, {"init": False}, {"eq": False, "repr": False}], ids=str)
@pytest.mark.parametrize("name", list(bodies()))
def test_fields_params_and_errors_as_the_standard_library_s(name, options, monkeypatch):
    own, make = bodies()[name]
    called = []
    process = dataclasses._process_class
    monkeypatch.setattr(dataclasses, "_process_class", lambda *a: called.append(1) or process(*a))
    ours = described(fastdataclass.dataclass, make, options)
    ours_called = bool(called)
    theirs = described(dataclasses.dataclass, make, options)
    assert ours == theirs
    if fastdataclass._OWN_FIELDS:
        assert ours_called is not own, "the own collection took a class it must leave, or left a plain one"
    if own:
        assert isinstance(ours, dict) and ours["fields"], ours  # there was something to compare


@needs_own
def test_instances_of_own_collected_classes():
    """The classes the own path makes behave as the standard library's: construction with defaults and
    factories, equality, repr, replace, asdict, frozen assignment, pattern matching."""
    for options in ({}, {"frozen": True}):
        made = []
        for decorate in (fastdataclass.dataclass, dataclasses.dataclass):
            cls = decorate(**options)(bodies()["plain"][1]())
            one = cls(1, ["s"], 2.5, [4], f=None)
            seen = [repr(one), one == cls(1, ["s"], 9.0, [4], f=None), dataclasses.asdict(one)]
            seen.append(dataclasses.astuple(dataclasses.replace(one, a=7)))
            match one:
                case cls(a, b):  # type: ignore[misc]
                    seen.append((a, b))
            try:
                one.a = 3
                seen.append(one.a)
            except dataclasses.FrozenInstanceError as err:
                seen.append(str(err))
            made.append(seen)
        assert made[0] == made[1]
        assert made[0][1] is True  # c is not compared
