"""The small JSONPath a CRD's printer columns and selectable fields are written in.

Kubernetes piece: k8s.io/client-go/util/jsonpath as apiextensions-apiserver uses it
(tableconvertor.New parses `{<jsonPath>}` with AllowMissingKeys; selectable fields and the
scale subresource use simple dotted paths). We accept the subset CRD authors write:
`.a.b`, `.a['b.c']`, `.a[0]`, `.a[-1]`, `.a[*].b`, `.a.*` and one-level filters
`.a[?(@.type=="Ready")].status` (`==`/`!=` against a quoted string or a number). A path
outside that subset is a parse error, reported when the CRD is turned into a strategy
(upstream: `unrecognized column definition`).

Evaluation is bounded by the object (no recursion, one pass per step), so it is safe on the
loop for any stored object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_FIELD = re.compile(r"\.([A-Za-z0-9_\-$]+|\*)")
_QUOTED = re.compile(r"""\[\s*(?:'([^']*)'|"([^"]*)")\s*\]""")
_INDEX = re.compile(r"\[\s*(-?\d+|\*)\s*\]")
_FILTER = re.compile(
    r"""\[\s*\?\(\s*@((?:\.[A-Za-z0-9_\-]+)+)\s*(==|!=)\s*(?:'([^']*)'|"([^"]*)"|(-?\d+(?:\.\d+)?))\s*\)\s*\]""")


class JSONPathError(ValueError):
    """A path outside the supported subset."""


@dataclass(frozen=True)
class _Step:
    kind: str  # "field", "index", "all", "filter"
    name: str = ""
    index: int = 0
    sub: tuple[str, ...] = ()
    op: str = ""
    value: Any = None


@dataclass(frozen=True)
class JSONPath:
    """A parsed path; `find(obj)` is every value it selects (empty when a key is missing)."""

    text: str
    steps: tuple[_Step, ...]

    def find(self, obj: Any) -> list[Any]:
        current = [obj]
        for step in self.steps:
            current = [out for value in current for out in _apply(step, value)]
            if not current:
                break
        return current


def parse(text: str) -> JSONPath:
    """Parse a CRD jsonPath (`.spec.replicas`; an enclosing `{...}` is accepted)."""
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    body = body.removeprefix("$")
    if not body.startswith((".", "[")):
        raise JSONPathError(f"unrecognized column definition {text!r}")
    steps: list[_Step] = []
    pos = 0
    while pos < len(body):
        if m := _FIELD.match(body, pos):
            name = m.group(1)
            steps.append(_Step("all") if name == "*" else _Step("field", name))
        elif m := _QUOTED.match(body, pos):
            steps.append(_Step("field", m.group(1) if m.group(1) is not None else m.group(2)))
        elif m := _INDEX.match(body, pos):
            token = m.group(1)
            steps.append(_Step("all") if token == "*" else _Step("index", index=int(token)))
        elif m := _FILTER.match(body, pos):
            literal: Any
            if m.group(3) is not None or m.group(4) is not None:
                literal = m.group(3) if m.group(3) is not None else m.group(4)
            else:
                number = m.group(5)
                literal = float(number) if "." in number else int(number)
            steps.append(_Step("filter", sub=tuple(m.group(1)[1:].split(".")), op=m.group(2),
                               value=literal))
        else:
            raise JSONPathError(f"unrecognized column definition {text!r}")
        pos = m.end()
    return JSONPath(text, tuple(steps))


def _apply(step: _Step, value: Any) -> list[Any]:
    if step.kind == "field":
        if isinstance(value, dict) and step.name in value:
            return [value[step.name]]
        return []
    if step.kind == "index":
        if isinstance(value, list) and -len(value) <= step.index < len(value):
            return [value[step.index]]
        return []
    if step.kind == "all":
        if isinstance(value, list):
            return list(value)
        if isinstance(value, dict):
            return [value[k] for k in sorted(value)]
        return []
    if not isinstance(value, list):  # filter
        return []
    return [item for item in value if _matches(item, step)]


def _matches(item: Any, step: _Step) -> bool:
    current = item
    for part in step.sub:
        if not isinstance(current, dict) or part not in current:
            return False
        current = current[part]
    equal = current == step.value and type(current) is not bool
    return equal if step.op == "==" else not equal


def simple_path(text: str) -> tuple[str, ...]:
    """A dotted path without array notation (`.spec.replicas` -> ("spec", "replicas")), as
    the scale subresource's paths are split upstream (splitReplicasPath)."""
    return tuple(text[1:].split(".")) if text.startswith(".") else tuple(text.split("."))
