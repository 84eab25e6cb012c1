"""``dataclass`` as the standard library's, cheaper to define (start-up, issue 42).

The standard library compiles each method it makes from source text (~0.4 ms a class on Python 3.11;
``abstat compare`` defines about thirty) and classifies each annotation three times.  This decorator
makes ``__repr__``, ``__eq__`` and ``__hash__`` without compiling, with the standard library's behaviour
(the same text; equality of the same classes' compared fields, as tuples before 3.13, field by field
since; ``__hash__`` as its hash table says); a class without a doc string keeps none (the standard library
writes its signature there).  ``order`` and ``unsafe_hash`` go to the standard library whole.  On 3.10-3.12
a frozen class's ``__setattr__``/``__delattr__`` are closures (no slots nor dataclass bases), and
``__init__`` makes a class's first ``INTERPRETED_CALLS`` instances uncompiled (a code object of the standard
library's parameters: the same signature, defaults, annotations and call errors; the same assignments,
factories and ``__post_init__`` call), then is compiled by ``dataclasses._init_fn`` (also when
``cls.__init__`` is looked up).  On 3.10 and 3.11 a class of plain fields (:func:`_plain_fields`) gets its
``__dataclass_fields__`` (``dataclasses.Field``), ``__dataclass_params__`` and ``__match_args__`` here.
``tests/test_fastdataclass*.py`` hold the two side by side.
"""

from __future__ import annotations

import abc
import dataclasses
import sys
from dataclasses import field
from _thread import get_ident
from types import FunctionType, MemberDescriptorType
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

__all__ = ["dataclass", "field"]

# dataclasses._init_fn(fields, std_fields, kw_only_fields, frozen, has_post_init, self_name, globals, slots):
# this signature and one compilation per method from 3.10 to 3.12 (3.13 compiles a class's methods at once)
_DEFER = (3, 10) <= sys.version_info < (3, 13) and hasattr(dataclasses, "_init_fn")
# _collected: _DataclassParams(init, repr, eq, order, unsafe_hash, frozen) as on 3.10 and 3.11
_OWN_FIELDS = _DEFER and sys.version_info < (3, 12) and hasattr(dataclasses, "_MODULE_IDENTIFIER_RE")


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
    deferred = _deferred(cls, options)
    if not _collected(cls, options, deferred):
        cls = dataclasses.dataclass(cls, repr=False, eq=False, **{**options, **deferred})
    if undocumented:
        cls.__doc__ = None
    fields = dataclasses.fields(cls)
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    params.repr, params.eq = want_repr, want_eq  # as given, though this decorator makes those methods
    if deferred:
        _finish_deferred(cls, fields, deferred, bool(options.get("slots")))
    if want_repr:
        _set_new(cls, "__repr__", _repr_fn(tuple(f.name for f in fields if f.repr)))
    if want_eq:
        _set_new(cls, "__eq__", _eq_fn(tuple(f.name for f in fields if f.compare)))
        if not explicit_hash:
            _set_hash(cls, fields, bool(options.get("frozen")))
    return cls


def _collected(cls: type, options: dict[str, Any], deferred: dict[str, bool]) -> bool:
    """The standard library's ``_process_class`` for a class of plain fields (:func:`_plain_fields`), done
    without classifying each annotation three times (~2/3 of its time); False (nothing done) for others."""
    fields = _plain_fields(cls, options, deferred)
    if fields is None:
        return False
    for f in fields.values():  # a field(...) as class attribute: its default, or none
        if isinstance(getattr(cls, f.name, None), dataclasses.Field):
            if f.default is dataclasses.MISSING:
                delattr(cls, f.name)
            else:
                setattr(cls, f.name, f.default)
    init, frozen = options.get("init", True), options.get("frozen", False)  # repr, eq: set by _process
    cls.__dataclass_params__ = dataclasses._DataclassParams(init, True, True, False, False, frozen)  # type: ignore[attr-defined]
    cls.__dataclass_fields__ = fields  # type: ignore[attr-defined]
    if "__match_args__" not in cls.__dict__:
        cls.__match_args__ = tuple(name for name, f in fields.items() if f.init)  # type: ignore[attr-defined,misc]
    abc.update_abstractmethods(cls)
    return True


def _plain_fields(cls: type, options: dict[str, Any], deferred: dict[str, bool]) -> dict[str, Any] | None:
    """The fields ``dataclasses._get_field`` makes of a class whose options are ``init`` and ``frozen`` (done
    by this decorator: ``deferred``) and that has no dataclass bases, slots, ``ClassVar``, ``InitVar``,
    ``KW_ONLY``, keyword-only field nor mutable default; None for any other class."""
    module, annotations = sys.modules.get(cls.__module__), cls.__dict__.get("__annotations__", {})
    if not _OWN_FIELDS or module is None or "__slots__" in cls.__dict__ or _dataclass_bases(cls):
        return None
    wanted = {k for k in ("init", "frozen") if options.get(k, k == "init")}  # as deferred: no own __init__...
    class_var = getattr(sys.modules.get("typing"), "ClassVar", _NONE)  # none without typing imported
    if (
        set(options) - {"init", "frozen"}
        or wanted - set(deferred)
        or not all(_plain(a, vars(module), class_var) for a in annotations.values())
    ):
        return None
    fields = {name: _field(cls, name, a) for name, a in annotations.items()}
    unannotated = any(isinstance(v, dataclasses.Field) and n not in annotations for n, v in cls.__dict__.items())
    return None if unannotated or None in fields.values() else fields


def _dataclass_bases(cls: type) -> bool:
    return any(getattr(base, "__dataclass_fields__", None) is not None for base in cls.__mro__[1:])


def _plain(annotation: Any, module: dict[str, Any], class_var: Any) -> bool:
    """Whether the standard library can take ``annotation`` for nothing but a field's type: not (naming, as
    a string, in the class's module) ``ClassVar``, ``InitVar`` or ``KW_ONLY``, by its rules (``_is_type``)."""
    if isinstance(annotation, str):
        match = dataclasses._MODULE_IDENTIFIER_RE.match(annotation)  # type: ignore[attr-defined]
        if not match:
            return True
        qualifier, name = match.groups()
        if qualifier:  # typing.ClassVar, dataclasses.InitVar: looked up in the module named
            module = module.get(qualifier)  # type: ignore[assignment]
            if module not in (sys.modules.get("typing"), dataclasses):
                return True
            module = vars(module)
        annotation = module.get(name)
    if annotation is class_var or getattr(annotation, "__origin__", None) is class_var:
        return False
    init_var = dataclasses.InitVar
    return type(annotation) is not init_var and annotation is not init_var and annotation is not dataclasses.KW_ONLY


def _field(cls: type, name: str, annotation: Any) -> dataclasses.Field[Any] | None:
    """``dataclasses._get_field``'s field of a plain annotation; None where it would raise (a mutable default)
    or the field is keyword-only."""
    default: Any = getattr(cls, name, dataclasses.MISSING)
    if isinstance(default, dataclasses.Field):
        f = default
        if f.kw_only is True:
            return None
    elif isinstance(default, MemberDescriptorType):
        return None
    else:
        f = dataclasses.field(default=default)
    if f.default.__class__.__hash__ is None or isinstance(f.default, (list, dict, set)):
        return None
    f.name, f.type, f._field_type, f.kw_only = name, annotation, dataclasses._FIELD, False  # type: ignore[attr-defined]
    return f


def _deferred(cls: type, options: dict[str, Any]) -> dict[str, bool]:
    """The options this decorator does itself instead of the standard library (``init``, ``frozen``:
    given as False to it), as given."""
    if not _DEFER:
        return {}
    deferred = {}
    if options.get("init", True) and "__init__" not in cls.__dict__:
        deferred["init"] = False
    own_methods = "__setattr__" in cls.__dict__ or "__delattr__" in cls.__dict__  # the standard library refuses
    if options.get("frozen") and not (options.get("slots") or own_methods or _dataclass_bases(cls)):
        deferred["frozen"] = False  # its checks of frozen bases are void without dataclass bases
    return deferred


def _finish_deferred(cls: type, fields: tuple[Any, ...], deferred: dict[str, bool], slots: bool) -> None:
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    if "frozen" in deferred:
        params.frozen = True
        names = frozenset(f.name for f in fields)
        _set_new(cls, "__setattr__", _frozen_setattr(cls, names))
        _set_new(cls, "__delattr__", _frozen_delattr(cls, names))
    if "init" in deferred:
        params.init = True
        cls.__init__ = _LazyInit(cls, params.frozen, slots)  # type: ignore[misc]


def _frozen_setattr(cls: type[Any], names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _frozen_delattr(cls: type[Any], names: frozenset[str]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__


# A class's first instances are made by an __init__ that is not compiled (below); then the standard library's
INTERPRETED_CALLS = 16


class _LazyInit:
    """A dataclass's ``__init__`` until it is compiled: the standard library's, compiled by its own code from
    what it would have been given at the class's definition, once the class has made ``INTERPRETED_CALLS``
    instances or ``cls.__init__`` is looked up (``inspect.signature``); until then :func:`_interpreted`'s."""

    __slots__ = ("cls", "arguments", "interpreted", "calls")

    def __init__(self, cls: type, frozen: bool, slots: bool) -> None:
        fields = cls.__dataclass_fields__  # type: ignore[attr-defined]
        kinds = (dataclasses._FIELD, dataclasses._FIELD_INITVAR)  # type: ignore[attr-defined]
        in_init = [f for f in fields.values() if f._field_type in kinds]
        std, kw_only = dataclasses._fields_in_init_order(in_init)  # type: ignore[attr-defined]
        _check_order(std)  # the standard library's error at the class's definition, not at its first instance
        module = sys.modules.get(cls.__module__)
        self_name = "__dataclass_self__" if "self" in fields else "self"
        self.cls, self.calls = cls, 0
        self.interpreted: Any = None
        if any(f._field_type is dataclasses._FIELD_INITVAR and not f.init for f in in_init):  # type: ignore[attr-defined]
            self.calls = INTERPRETED_CALLS  # its __post_init__ call names a variable the parameters lack: compiled
        post_init = hasattr(cls, "__post_init__")
        self.arguments = (in_init, std, kw_only, frozen, post_init, self_name, vars(module) if module else {}, slots)

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        self.calls += 1
        if obj is not None and self.calls <= INTERPRETED_CALLS:
            if self.interpreted is None:
                self.interpreted = _interpreted(self.cls, self.arguments)
            return self.interpreted.__get__(obj, owner)
        init = dataclasses._init_fn(*self.arguments)  # type: ignore[attr-defined]
        init.__qualname__ = f"{self.cls.__qualname__}.__init__"
        self.cls.__init__ = init  # type: ignore[misc]
        return init.__get__(obj, owner)


def _template(self: Any) -> None:
    _assign(self, locals())  # type: ignore[name-defined] # noqa: F821 -- the function's own globals


def _interpreted(cls: type, arguments: tuple[Any, ...]) -> Any:
    """An ``__init__`` with the standard library's parameters (names, defaults, annotations: the same
    signature and the same errors for a wrong call, which Python words from the code object) whose body
    runs the assignments its would, in its order, without compiling: ``_template``'s code renamed.
    ``arguments``: ``dataclasses._init_fn``'s."""
    fields, std, kw_only, frozen, post_init, self_name, module, slots = arguments
    names = tuple(f.name for f in (*std, *kw_only))
    code = _template.__code__.replace(
        co_argcount=1 + len(std),
        co_kwonlyargcount=len(kw_only),
        co_nlocals=1 + len(names),
        co_varnames=(self_name, *names),
        co_name="__init__",
    )
    steps, setter = _steps(fields, slots), object.__setattr__ if frozen else setattr
    init_vars = tuple(f.name for f in fields if f._field_type is dataclasses._FIELD_INITVAR)  # type: ignore[attr-defined]

    def _assign(self: Any, values: dict[str, Any]) -> None:
        for name, kind, extra in steps:
            value = values[name] if kind <= _ARGUMENT_OR_FACTORY else extra
            if kind == _FACTORY or (kind == _ARGUMENT_OR_FACTORY and value is dataclasses._HAS_DEFAULT_FACTORY):  # type: ignore[attr-defined]
                value = extra()
            setter(self, name, value)
        if post_init:
            self.__post_init__(*[values[name] for name in init_vars])

    globals_ = {"__name__": module.get("__name__"), "__builtins__": __builtins__, "_assign": _assign}
    function = FunctionType(code, globals_, "__init__", _defaults(std))
    function.__kwdefaults__ = {f.name: _default(f) for f in kw_only if _default(f) is not _NONE} or None
    function.__annotations__ = {**{f.name: f.type for f in (*std, *kw_only)}, "return": None}
    function.__qualname__ = f"{cls.__qualname__}.__init__"
    return function


_ARGUMENT, _ARGUMENT_OR_FACTORY, _FACTORY, _VALUE = range(4)
_NONE = object()


def _steps(fields: list[Any], slots: bool) -> list[tuple[str, int, Any]]:
    """(field, how its value is had, the factory or value) for each assignment of the standard library's
    ``__init__`` (``dataclasses._field_init``), in its order."""
    steps = []
    for f in fields:
        if f.default_factory is not dataclasses.MISSING:
            step = (f.name, _ARGUMENT_OR_FACTORY if f.init else _FACTORY, f.default_factory)
        elif f.init:
            step = (f.name, _ARGUMENT, None)
        elif slots and f.default is not dataclasses.MISSING:
            step = (f.name, _VALUE, f.default)
        else:
            continue
        if f._field_type is not dataclasses._FIELD_INITVAR:  # type: ignore[attr-defined]
            steps.append(step)
    return steps


def _default(f: Any) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    return dataclasses._HAS_DEFAULT_FACTORY if f.default_factory is not dataclasses.MISSING else _NONE  # type: ignore[attr-defined]


def _defaults(std: tuple[Any, ...]) -> tuple[Any, ...] | None:
    defaults = tuple(d for d in map(_default, std) if d is not _NONE)  # trailing: the order was checked
    return defaults or None


def _check_order(std: tuple[dataclasses.Field[Any], ...]) -> None:
    seen_default = False
    for f in std:
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


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
