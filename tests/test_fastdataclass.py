"""abstat.fastdataclass against the standard library's dataclass: the same class bodies decorated by
each behave the same (repr, equality, hashing, frozen, slots, inheritance, replace, pickling)."""

from __future__ import annotations

import dataclasses
import math
import pickle
import subprocess
import sys
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


def shapes(decorate: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Classes whose ``__init__`` differs: defaults, factories, keyword-only and init-only fields, a
    field named self, fields left out of ``__init__``, ``__post_init__``."""

    @decorate(frozen=True)
    class Frozen:
        a: int
        b: list[int] = dataclasses.field(default_factory=list)
        c: str = dataclasses.field(default="c", init=False)

    @decorate(kw_only=True)
    class KeywordOnly:
        a: int
        b: int = 2

    @decorate
    class Mixed:
        a: int
        _: dataclasses.KW_ONLY
        b: int
        c: int = 3

    @decorate(frozen=True)
    class PostInit:
        a: int
        scale: dataclasses.InitVar[int] = 2  # type: ignore[assignment]
        scaled: int = dataclasses.field(init=False, default=0)

        def __post_init__(self, scale: int) -> None:
            object.__setattr__(self, "scaled", self.a * scale)

    @decorate(slots=True)
    class Slotted:
        self: int
        b: float = dataclasses.field(default=1.5, init=False)

    @decorate
    class Empty:
        pass

    wide = {f"f{i}": i for i in range(15, 30)}  # 30 fields, the last 15 with defaults
    Wide = decorate(type("Wide", (), {"__annotations__": {f"f{i}": "int" for i in range(30)}, **wide}))
    return {"Frozen": Frozen, "KeywordOnly": KeywordOnly, "Mixed": Mixed, "PostInit": PostInit, "Wide": Wide}, {
        "Slotted": Slotted,
        "Empty": Empty,
    }


CALLS: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
    ("Frozen", (1,), {}),
    ("Frozen", (1, [2]), {}),
    ("Frozen", (), {}),
    ("Frozen", (1, [2], "c"), {}),
    ("Frozen", (1,), {"c": "x"}),
    ("KeywordOnly", (), {"a": 1}),
    ("KeywordOnly", (1,), {}),
    ("Mixed", (1,), {"b": 2}),
    ("Mixed", (1, 2), {}),
    ("Mixed", (1,), {"b": 2, "d": 4}),
    ("PostInit", (3,), {}),
    ("PostInit", (3, 5), {}),
    ("PostInit", (3,), {"scaled": 1}),
    ("Slotted", (7,), {}),
    ("Slotted", (), {"self": 7}),
    ("Empty", (), {}),
    ("Empty", (1,), {}),
    ("Wide", tuple(range(100, 115)), {}),
    ("Wide", tuple(range(100, 131)), {}),
    ("Wide", tuple(range(100, 120)), {"f29": -1, "f25": -2}),
]


def made(classes: dict[str, Any], name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        value = classes[name](*args, **kwargs)
    except TypeError as err:
        return f"TypeError: {err}"
    return (repr(value), dataclasses.astuple(value))


@pytest.mark.parametrize("interpreted", [16, 0], ids=["interpreted", "compiled"])
def test_init_as_the_standard_library_s(interpreted, monkeypatch):
    """Signatures, annotations, defaults, errors and values of ``__init__`` as the standard library's, interpreted
    (a class's first instances) or compiled (after them, or when ``cls.__init__`` is looked up)."""
    import inspect

    monkeypatch.setattr(fastdataclass, "INTERPRETED_CALLS", interpreted)

    seen = []
    for decorate in (OURS, STDLIB):
        classes = {k: v for part in shapes(decorate) for k, v in part.items()}
        calls = [made(classes, *call) for call in CALLS]
        held = {name: vars(cls)["__init__"] for name, cls in classes.items()}
        if decorate is OURS and fastdataclass._DEFER:  # the interpreted ones made those instances
            assert all(isinstance(h, fastdataclass._LazyInit) == (interpreted > 0) for h in held.values())
        inits = {name: getattr(h, "interpreted", h) for name, h in held.items()}
        signatures = {
            name: (f.__qualname__, str(inspect.signature(f)), f.__annotations__, f.__defaults__, f.__kwdefaults__)
            for name, f in inits.items()
        }
        signatures["classes"] = {name: str(inspect.signature(cls)) for name, cls in classes.items()}
        params = {name: repr(cls.__dataclass_params__) for name, cls in classes.items()}
        seen.append((signatures, calls, params))
    assert seen[0] == seen[1]
    assert "TypeError: " in seen[0][1][2]  # the cases reach the errors they are for
    assert seen[0][1][11][1] == (3, 15)


@pytest.mark.parametrize("calls", [16, 0], ids=["interpreted", "compiled"])
def test_frozen_as_the_standard_library_s(calls, monkeypatch):
    monkeypatch.setattr(fastdataclass, "INTERPRETED_CALLS", calls)
    seen = []
    for decorate in (OURS, STDLIB):
        frozen = shapes(decorate)[0]["Frozen"]
        value, outcomes = frozen(1), []
        for action, name in ((setattr, "a"), (setattr, "other"), (delattr, "b"), (delattr, "other")):
            try:
                action(value, name, 2) if action is setattr else action(value, name)
                outcomes.append("done")
            except dataclasses.FrozenInstanceError as err:
                outcomes.append(f"{type(err).__name__}: {err}")

        class Plain(frozen):  # not a dataclass: its own attributes may be set, the fields not
            pass

        child = Plain(1)
        child.other = 3
        try:
            child.a = 2
        except dataclasses.FrozenInstanceError as err:
            outcomes.append(str(err))
        outcomes += [child.other, repr(child), frozen.__setattr__.__qualname__, frozen.__delattr__.__qualname__]
        seen.append(outcomes)
    assert seen[0] == seen[1]
    assert seen[0][0] == "FrozenInstanceError: cannot assign to field 'a'"


@pytest.mark.parametrize("calls", [16, 0], ids=["interpreted", "compiled"])
def test_inheritance_of_init_and_frozen(calls, monkeypatch):
    """Subclasses (dataclasses or not) of a class whose ``__init__`` was not yet looked up, and the
    standard library's errors on mixing frozen and mutable dataclasses, at definition."""
    monkeypatch.setattr(fastdataclass, "INTERPRETED_CALLS", calls)
    seen = []
    for decorate in (OURS, STDLIB):
        outcomes: list[Any] = []

        @decorate
        class Base:
            a: int
            b: int = 2

        class Plain(Base):
            def __init__(self) -> None:
                super().__init__(5)  # type: ignore[call-arg]

        outcomes.append(repr(Plain()))

        @decorate
        class Child(Base):
            c: int = 3

        outcomes += [repr(Child(1)), repr(Base(4))]

        @decorate(frozen=True)
        class FrozenBase:
            a: int

        @decorate(frozen=True)
        class FrozenChild(FrozenBase):
            b: int = 0

        outcomes.append(repr(FrozenChild(1, 2)))
        for base, frozen in ((Base, True), (FrozenBase, False)):
            try:
                decorate(type("Bad", (base,), {"__annotations__": {"z": int}, "z": 0}), frozen=frozen)
            except TypeError as err:
                outcomes.append(str(err))
        try:

            @decorate
            class Order:
                a: int = 1
                b: int

        except TypeError as err:
            outcomes.append(str(err))
        seen.append(outcomes)
    assert seen[0] == seen[1]
    assert "non-default argument 'b' follows default argument" in seen[0][-1]


@pytest.mark.skipif(not fastdataclass._DEFER, reason="Python 3.13 compiles a class's methods in one go")
def test_a_class_defined_compiles_nothing_until_made():
    """The start-up saving itself: defining a frozen and a plain class compiles no source, nor do their first
    instances; the one after ``INTERPRETED_CALLS`` compiles its ``__init__`` (audit events, in a fresh
    interpreter)."""
    code = """if True:
        import sys
        from abstat.fastdataclass import INTERPRETED_CALLS, dataclass
        seen = []
        sys.addaudithook(lambda event, args: seen.append(event) if event == "compile" else None)
        @dataclass(frozen=True)
        class A:
            a: int
            b: str = "b"
        @dataclass
        class B:
            a: int
        defined = len(seen)
        values = [A(n) for n in range(INTERPRETED_CALLS)] + [B(3)]
        made = len(seen)
        A(-1)
        print(defined, made, len(seen), values[-2] == A(INTERPRETED_CALLS - 1))
    """
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0", "0", "1", "True"]
