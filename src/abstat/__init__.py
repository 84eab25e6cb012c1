"""abstat: prove or refute performance claims.

The public API is imported lazily so that ``import abstat`` stays cheap;
numpy and scipy load only when a statistic is computed.
"""
from __future__ import annotations

__version__ = "0.1.0"

# public name -> (module, attribute); filled in as features land.
_LAZY: dict[str, tuple[str, str]] = {
    "InputError": ("abstat.errors", "InputError"),
    "UsageError": ("abstat.errors", "UsageError"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'abstat' has no attribute {name!r}") from None
    module = __import__(module_name, fromlist=[attr])
    value = getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
