"""ministat's Student's t comparison, typed for its readers.

:class:`abstat.stats.student.PooledT` sets its fields from ``__slots__``,
which mypy cannot see.  At run time :func:`pooled` is
:func:`abstat.stats.student.pooled_t` itself; for mypy it returns the
:class:`PooledResult` protocol (the fields :mod:`abstat.ministat.report` and
:mod:`abstat.audit.recompute` read).  Nothing is imported from ``typing`` at
run time: this module is on ministat's fast start-up path.
"""

TYPE_CHECKING = False  # mypy treats the name as true; no typing import at run time
if TYPE_CHECKING:
    from typing import Protocol

    class PooledResult(Protocol):
        confidence: float
        difference: float
        half_width: float
        pooled_sd: float
        significant: bool
        relative_pct: float
        relative_half_width_pct: float
        relative_half_width_pct_freebsd: float

    class _Pooled(Protocol):
        def __call__(
            self,
            n1: int,
            mean1: float,
            sd1: float,
            n2: int,
            mean2: float,
            sd2: float,
            confidence: float = 95.0,
            *,
            var1: float | None = None,
            var2: float | None = None,
        ) -> PooledResult: ...

    pooled: _Pooled
else:
    from abstat.stats.student import pooled_t as pooled

__all__ = ["pooled"]
