"""``dataclass`` as the standard library's, cheaper to define (start-up, issue 42).

The standard library compiles every method it generates from source text: three
compilations for a plain class (``__init__``, ``__repr__``, ``__eq__``), five for a frozen
one, ~0.4 ms a class on Python 3.11; ``abstat compare`` defines about thirty.  This
decorator lets the standard library make ``__init__`` (and a frozen class's
``__setattr__``/``__delattr__``) and the class's bookkeeping (``__dataclass_fields__``,
``__match_args__``, slots, the doc string), and gives the class ``__repr__``,
``__eq__`` and ``__hash__`` built without compiling, with the standard library's
behaviour: the same text, equality when the classes are the same and the compared fields
are equal (as tuples before Python 3.13, field by field since), ``__hash__`` set as its hash table says.
One difference: a class without a doc string keeps none (the standard library writes its
signature there, which ``help()`` shows anyway).  Options it does not speed up (``order``,
``unsafe_hash``) go to the standard library whole.
``tests/test_fastdataclass.py`` holds the two side by side.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import field
from _thread import get_ident
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

__all__ = ["dataclass", "field"]


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of the named attributes of an object, as the generated methods build it."""
    if not names:
        return lambda obj: ()
    if len(names) == 1:
        name = names[0]
        return lambda obj: (getattr(obj, name),)
    from operator import attrgetter

    return attrgetter(*names)


def _repr_fn(names: tuple[str, ...]) -> Callable[[Any], str]:
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        key = (id(self), get_ident())
        if key in running:  # a field that holds the object itself (the standard library's reprlib guard)
            return "..."
        running.add(key)
        try:
            return self.__class__.__qualname__ + "(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"
        finally:
            running.discard(key)

    return __repr__


def _eq_fn(names: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    if sys.version_info >= (3, 13):  # field by field, as ``a == b and c == d`` (3.13: an object equals itself first)

        def __eq__(self: Any, other: Any) -> Any:
            if self is other:
                return True
            if other.__class__ is not self.__class__:
                return NotImplemented
            result: Any = True
            for name in names:
                result = getattr(self, name) == getattr(other, name)
                if not result:
                    return result
            return result

        return __eq__
    values = _values(names)

    def __eq__(self: Any, other: Any) -> Any:  # the tuples' comparison (3.10-3.12)
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash_fn(values: Callable[[Any], tuple[Any, ...]]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _set_new(cls: type, name: str, value: Any) -> None:
    """As the standard library: a method the class body defines is kept."""
    if name not in cls.__dict__:
        value.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, value)


def _process(cls: type, options: dict[str, Any]) -> type:
    options = dict(options)
    if options.get("order") or options.get("unsafe_hash"):
        return dataclasses.dataclass(cls, **options)
    want_repr = options.pop("repr", True)
    want_eq = options.pop("eq", True)
    class_hash = cls.__dict__.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in cls.__dict__))
    undocumented = not cls.__doc__
    if undocumented:  # else the standard library writes the signature there (inspect.signature: 0.05-0.2 ms)
        cls.__doc__ = "-"
    cls = dataclasses.dataclass(cls, repr=False, eq=False, **options)
    if undocumented:
        cls.__doc__ = None
    fields = dataclasses.fields(cls)
    if want_repr:
        _set_new(cls, "__repr__", _repr_fn(tuple(f.name for f in fields if f.repr)))
    if want_eq:
        _set_new(cls, "__eq__", _eq_fn(tuple(f.name for f in fields if f.compare)))
        if not explicit_hash:
            _set_hash(cls, fields, bool(options.get("frozen")))
    return cls


def _set_hash(cls: type, fields: tuple[dataclasses.Field[Any], ...], frozen: bool) -> None:
    """The standard library's hash table without ``unsafe_hash`` nor a ``__hash__`` of the class's own: a
    frozen class hashes its hashed fields, a mutable one compared by value is unhashable."""
    if not frozen:
        cls.__hash__ = None  # type: ignore[assignment]
        return
    function = _hash_fn(_values(tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))))
    function.__qualname__ = f"{cls.__qualname__}.__hash__"
    cls.__hash__ = function  # type: ignore[assignment]


if TYPE_CHECKING:
    from dataclasses import dataclass
else:

    def dataclass(cls=None, /, **options):
        """``dataclasses.dataclass``, with or without options."""
        if cls is None:
            return lambda cls: _process(cls, options)
        return _process(cls, options)
