"""Which records a viewer wants: by object (uid, or namespace/name and resource) and kind.

Kubernetes piece: the shape of a field selector on `metadata.uid` / `metadata.namespace` /
`metadata.name` applied to the trace, plus the audit policy's choice of what to record.
Pure: parsing the query of `/debug/trace` (ValueError with the message the caller returns
as a 400 Status) and matching a record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .records import KINDS, Record


@dataclass(frozen=True)
class TraceFilter:
    """Every set field must match; an empty filter matches everything."""

    kinds: frozenset[str] | None = None
    uid: str = ""
    namespace: str | None = None
    name: str = ""
    resource: str = ""

    def matches(self, record: Record) -> bool:
        if self.kinds is not None and record.kind not in self.kinds:
            return False
        if self.uid and record.uid != self.uid:
            return False
        if self.namespace is not None and record.namespace != self.namespace:
            return False
        if self.name and record.name != self.name:
            return False
        return not self.resource or record.resource == self.resource


def parse_kinds(text: str) -> frozenset[str] | None:
    """`request,store` -> those kinds; empty -> all. ValueError on an unknown kind."""
    names = [k.strip() for k in text.split(",") if k.strip()]
    if not names:
        return None
    unknown = [k for k in names if k not in KINDS]
    if unknown:
        raise ValueError(f"kind: unknown trace record kind {unknown[0]!r} "
                         f"(known: {', '.join(KINDS)})")
    return frozenset(names)


def parse_object(text: str) -> tuple[str | None, str]:
    """`namespace/name` or `name` (cluster-scoped) -> (namespace, name)."""
    namespace, slash, name = text.partition("/")
    if not slash:
        return "", namespace
    if not name or "/" in name:
        raise ValueError(f"object: want namespace/name or name, got {text!r}")
    return namespace, name


def parse_since(text: str) -> int:
    """`since=N` (a sequence number, >= 0)."""
    try:
        seq = int(text)
    except ValueError:
        seq = -1
    if seq < 0:
        raise ValueError(f"since: must be a non-negative sequence number, got {text!r}")
    return seq


def full_detail(query: Mapping[str, str], selected: TraceFilter) -> bool:
    """`detail=full|summary`; by default full when the viewer follows one object (a journey
    wants the scheduler's per-node explanation), a summary when it follows everything."""
    detail = query.get("detail", "")
    if detail not in ("", "full", "summary"):
        raise ValueError(f"detail: must be full or summary, got {detail!r}")
    if detail:
        return detail == "full"
    return bool(selected.uid or selected.name)


def from_query(query: Mapping[str, str]) -> TraceFilter:
    """The filter of `/debug/trace?kind=..&uid=..&object=ns/name&namespace=..&name=..&resource=..`."""
    namespace: str | None = query.get("namespace")
    name = query.get("name", "")
    if "object" in query:
        namespace, name = parse_object(query["object"])
    return TraceFilter(kinds=parse_kinds(query.get("kind", "")), uid=query.get("uid", ""),
                       namespace=namespace, name=name, resource=query.get("resource", ""))
