"""``--metric NAME=REGEX[:UNIT]``: the regex metric source, and what the metric sources share.

Part of :mod:`abstat.box.runner.sources` (which re-exports :class:`RegexMetric`); ships to the box,
standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from abstat.box.runner import jsonpath
from abstat.box.runner.backtracking import MESSAGE as BACKTRACKING, exponential
from abstat.box.runner.model import BUILTIN_METRICS, MetricPattern, check_metric_name, parse_metric_pattern

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import Any

MAX_PATTERN_CHARS = 4096
MAX_EVENTS = 64
_EVENT = re.compile(r"[A-Za-z0-9_.:/=,\-]{1,200}|\{[A-Za-z0-9_.:/=,\-]{1,200}\}[A-Za-z:]{0,8}")
_UNIT = re.compile(r"[A-Za-z%/_][A-Za-z0-9%/_.\-]{0,31}")


def _keys(data: Any, kind: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError(f"a metric source must be an object, not {type(data).__name__}")
    unknown = sorted(set(data) - allowed - {"source"})
    if unknown:
        raise ValueError(f"metric source {kind!r}: unknown field {unknown[0]!r}")
    return data


def _items(data: dict[str, Any], kind: str, key: str, what: str) -> list[Any]:
    items = data.get(key)
    if not isinstance(items, list) or not items or len(items) > MAX_EVENTS:
        raise ValueError(f"metric source {kind!r}: {key} must be a list of 1 to {MAX_EVENTS} {what}")
    return items


@dataclass(frozen=True)
class RegexMetric:
    """``--metric NAME=REGEX[:UNIT]``: each match of group 1 in the run's output is one value."""

    kind = "regex"
    name: str
    pattern: str
    unit: str | None = None

    @classmethod
    def parse(cls, text: str) -> RegexMetric:
        """From the command-line form ``NAME=REGEX[:UNIT]`` (ValueError with the user's message);
        ``[NAME=]json:PATH[:UNIT]`` is a JSON path (:mod:`abstat.box.runner.jsonpath`), kept as the pattern
        ``json:PATH``: no regular expression of that form has the capture group a regex metric needs."""
        if jsonpath.is_json_metric(text):
            parsed = jsonpath.parse_json_metric(text)
            return cls(parsed.name, "json:" + parsed.text, parsed.unit)
        compiled = parse_metric_pattern(text)
        return cls(compiled.name, compiled.regex.pattern, compiled.unit)

    @classmethod
    def from_json(cls, data: Any) -> RegexMetric:
        data = _keys(data, cls.kind, {"name", "pattern", "unit"})
        name, pattern, unit = data.get("name"), data.get("pattern"), data.get("unit")
        if not isinstance(name, str) or not isinstance(pattern, str) or not (unit is None or isinstance(unit, str)):
            raise ValueError("metric source 'regex': name and pattern must be strings, unit a string or null")
        source = cls(name, pattern, unit)
        source.compiled()
        return source

    def compiled(self) -> MetricPattern:
        """The checked, compiled pattern (ValueError naming the problem)."""
        if self.pattern.startswith("json:") and "(" not in self.pattern:
            parsed = jsonpath.parse_json_metric(f"{self.name}={self.pattern}" + (f":{self.unit}" if self.unit else ""))
            if self.name in BUILTIN_METRICS:
                raise ValueError(f"metric {self.name!r}: a built-in metric name")
            return parsed
        check_metric_name(self.name)
        if self.name in BUILTIN_METRICS:
            raise ValueError(f"metric {self.name!r}: a built-in metric name")
        if len(self.pattern) > MAX_PATTERN_CHARS:
            raise ValueError(f"metric {self.name!r}: the regular expression is longer than {MAX_PATTERN_CHARS}")
        if self.unit is not None and not _UNIT.fullmatch(self.unit):
            raise ValueError(f"metric {self.name!r}: bad unit {self.unit!r}")
        try:
            regex = re.compile(self.pattern, re.MULTILINE)
        except re.error as err:
            raise ValueError(f"metric {self.name!r}: bad regular expression {self.pattern!r}: {err}") from None
        if regex.groups < 1:
            raise ValueError(
                f"metric {self.name!r}: regular expression {self.pattern!r} has no capture group (the value is group 1)"
            )
        if exponential(self.pattern, re.MULTILINE):
            raise ValueError(f"metric {self.name!r}: regular expression {self.pattern!r}: {BACKTRACKING}")
        return MetricPattern(self.name, regex, self.unit)

    @property
    def text(self) -> str:
        """The command-line form, as ``settings["metrics"]`` records it."""
        return f"{self.name}={self.pattern}" + (f":{self.unit}" if self.unit else "")

    def to_json(self) -> dict[str, Any]:
        return {"source": self.kind, "name": self.name, "pattern": self.pattern, "unit": self.unit}
