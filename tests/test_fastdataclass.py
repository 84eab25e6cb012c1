"""abstat.fastdataclass against the standard library's dataclass: the same class bodies decorated by
each behave the same (repr, equality, hashing, frozen, slots, inheritance, replace, pickling)."""

from __future__ import annotations

import dataclasses
import math
import pickle
from typing import Any

import pytest

from abstat import fastdataclass

STDLIB = dataclasses.dataclass
OURS = fastdataclass.dataclass
OPTIONS = [{}, {"frozen": True}, {"slots": True}, {"frozen": True, "slots": True}, {"eq": False}, {"repr": False}]


def make(decorate: Any, **options: Any) -> Any:
    @decorate(**options)
    class Point:
        x: float
        y: float = 0.0
        tags: list[str] = dataclasses.field(default_factory=list)
        note: str = dataclasses.field(default="", repr=False, compare=False)
        weight: int = dataclasses.field(default=1, hash=False)

    return Point


# Module level: pickle finds them by name.
@STDLIB(frozen=True, slots=True)
class PickledStd:
    a: int
    b: tuple[int, ...] = ()


@OURS(frozen=True, slots=True)
class PickledOurs:
    a: int
    b: tuple[int, ...] = ()


def behaviour(cls: Any) -> dict[str, Any]:
    nan = math.nan
    one, same, other = cls(1.5, 2, ["a"], note="n1"), cls(1.5, 2, ["a"], note="n2"), cls(1.5, 3)
    default_repr, default_hash = cls.__repr__ is object.__repr__, cls.__hash__ is object.__hash__
    seen: dict[str, Any] = {
        "repr": "object's" if default_repr else repr(one),
        "match_args": getattr(cls, "__match_args__", None),
        "fields": [(f.name, f.repr, f.compare, f.hash) for f in dataclasses.fields(cls)],
        "eq": (one == same, one == other, one != other, one == (1.5, 2), one.__eq__(object())),
        "nan": (cls(nan) == cls(nan), (lambda p: p == p)(cls(nan))),
        "replace": dataclasses.astuple(dataclasses.replace(one, y=7)),
        "slots": hasattr(cls, "__slots__"),
    }
    try:
        seen["hash"] = "object's" if default_hash else (hash(one) == hash(same), hash(cls(1, 2)))
        seen["hash weight"] = hash(cls(1, 2, weight=5)) == hash(cls(1, 2))  # weight: hash=False
    except TypeError as err:
        seen["hash"] = str(err)
    try:
        one.x = 9
        seen["assign"] = one.x
    except dataclasses.FrozenInstanceError as err:
        seen["assign"] = f"frozen: {err}"
    return seen


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "plain")
def test_same_behaviour_as_the_standard_library(options):
    ours, theirs = behaviour(make(OURS, **options)), behaviour(make(STDLIB, **options))
    assert ours == theirs
    if options.get("eq", True):
        assert ours["eq"][:4] == (True, False, True, False)  # the comparison ran (notes differ: not compared)


def test_methods_the_class_defines_are_kept():
    for decorate in (OURS, STDLIB):

        @decorate(frozen=True)
        class Own:
            a: int

            def __repr__(self) -> str:
                return "own"

            def __eq__(self, other: object) -> bool:
                return True

            def __hash__(self) -> int:
                return 7

        assert (repr(Own(1)), Own(1) == Own(2), hash(Own(3))) == ("own", True, 7)

        @decorate
        class Hashed:
            a: int

            def __hash__(self) -> int:
                return 5

        assert (hash(Hashed(1)), Hashed(1) == Hashed(1), Hashed(1) == Hashed(2)) == (5, True, False)


def test_inheritance_and_recursive_repr():
    results = []
    for decorate in (OURS, STDLIB):

        @decorate
        class Base:
            a: int
            children: list[Any] = dataclasses.field(default_factory=list)

        @decorate
        class Child(Base):
            b: str = "b"

        node = Child(1)
        node.children.append(node)
        results.append((repr(node), node == Child(1, [node]), Child(1) == Base(1), Base(1) == Base(1)))
    assert results[0] == results[1]
    assert results[0][0] == "test_inheritance_and_recursive_repr.<locals>.Child(a=1, children=[...], b='b')"


def test_init_false_order_and_pickling():
    for decorate in (OURS, STDLIB):

        @decorate(frozen=True, init=False)
        class Message:
            code: str
            text: str

            def __init__(self, code: str) -> None:
                object.__setattr__(self, "code", code)
                object.__setattr__(self, "text", code.upper())

        assert (repr(Message("x")), Message("x") == Message("x"), hash(Message("y"))) == (
            "test_init_false_order_and_pickling.<locals>.Message(code='x', text='X')",
            True,
            hash(("y", "Y")),
        )

        @decorate(order=True)
        class Ordered:
            a: int

        assert sorted([Ordered(2), Ordered(1)]) == [Ordered(1), Ordered(2)]
    for cls in (PickledOurs, PickledStd):
        value = cls(3, (1, 2))
        assert pickle.loads(pickle.dumps(value)) == value


def test_doc_strings():
    """A class's own doc string is kept; without one the standard library writes the signature, this
    decorator leaves none (the one difference, documented)."""
    assert make(STDLIB).__doc__.startswith("Point(x: 'float', y: 'float' = 0.0")
    assert make(OURS).__doc__ is None
    for decorate in (OURS, STDLIB):

        @decorate(slots=True)
        class Documented:
            """Its own words."""

            a: int

        assert Documented.__doc__ == "Its own words."
