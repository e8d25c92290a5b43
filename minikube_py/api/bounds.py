"""Bounds on untrusted documents: nesting depth, expanded size, and the work they may cause.

Kubernetes piece: the limits upstream's request decoding carries — the 3 MiB body limit
(k8s.io/apiserver `MaxRequestBodyBytes`), the maximum nesting depth of sigs.k8s.io/json and
go-yaml (10000 there), go-yaml's alias-expansion limit ("document contains excessive
aliasing") and evanphx/json-patch's `AccumulatedCopySizeLimit` (the API server's
`JSONPatchMaxCopyBytes`, also 3 MiB).

Why it matters more here than upstream: every component of the cluster shares one event loop,
so one document whose walk never ends (a YAML alias that contains itself), or grows
exponentially (an alias fan-out, a JSON patch copying a list into itself), freezes the whole
cluster. The rule is therefore structural: every document that enters through a decoder is a
*tree* (no shared or cyclic references), no deeper than MAX_DEPTH and no larger than MAX_NODES
values, so every later walk (patches, apply, validation, defaulting, printing) is bounded by the
size of what the client sent. Operations that create values (JSON patch `copy`, merges) are
bounded again on their result.

MAX_DEPTH is far below upstream's 10000 because our walks are recursive Python and orjson
refuses to encode objects nested deeper than 254 levels: 100 levels leave room for the
metadata.managedFields that mirror an object's structure, and no built-in kind or realistic
custom resource comes near it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from typing import Any

from .errors import StatusError

#: upstream's MaxRequestBodyBytes: "Request entity too large: limit is 3145728"
MAX_BODY_BYTES = 3 * 1024 * 1024
#: nesting levels a request document may have (objects and arrays)
MAX_DEPTH = 100
#: values a document may hold, or expand to through YAML aliases: 2^18. Upstream has no such
#: limit (a 3 MiB JSON body can hold 1.5 million values), but every value costs our Python walks
#: (unknown fields, validation, managedFields) microseconds: 262,144 keep the worst body to a
#: second or two of work on the worker thread, and no realistic object comes near (a ConfigMap
#: or Secret is at most 1 MiB of data anyway)
MAX_NODES = 1 << 18
#: upstream JSONPatchMaxCopyBytes: JSON bytes all `copy` operations of one patch may add
MAX_COPY_BYTES = MAX_BODY_BYTES
#: values all `copy` operations of one patch may add: our cost is per value (~0.6 µs each to
#: build), not per byte, so 3 MiB of one-character strings would be 800k values and a second
MAX_COPY_VALUES = 50_000
#: requirements a label or field selector query may have: each is checked against every object
#: a list reads and every event a watch sees (upstream has no limit; the URL's 1 MiB allows
#: ~60,000, which would make every event of that watch cost milliseconds)
MAX_SELECTOR_REQUIREMENTS = 1000


def too_many_requirements(kind: str, count: int) -> StatusError:
    return StatusError(400, "BadRequest",
                       f"{kind}: too many requirements ({count}; at most "
                       f"{MAX_SELECTOR_REQUIREMENTS})")


def too_deep(what: str, limit: int = MAX_DEPTH) -> StatusError:
    return StatusError(400, "BadRequest",
                       f"{what}: exceeded max depth of {limit} (the nesting limit for request "
                       "documents)")


def too_large(what: str, nodes: int, limit: int = MAX_NODES) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge",
                       f"{what}: the document holds more than {limit} values (found at "
                       f"least {nodes}; the limit on values in one request document)")


def might_be_deep(data: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether a JSON text can nest deeper than `limit`: not when it opens at most `limit`
    objects and arrays in all. Two C-speed counts, so the usual small body needs no walk."""
    return data.count(b"{") + data.count(b"[") > limit


def measure(doc: Any, what: str = "request body", *, max_depth: int = MAX_DEPTH,
            max_nodes: int = MAX_NODES) -> int:
    """The number of values in `doc` (a JSON-shaped tree); raises a 400 past `max_depth`
    levels and a 413 past `max_nodes` values. Iterative, so depth costs no Python stack, and it
    stops as soon as a bound is passed: its own work is bounded by the bounds it checks."""
    if type(doc) is not dict and type(doc) is not list:
        return 1
    nodes = 1
    stack: list[tuple[Any, int]] = [(doc, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth > max_depth:
            raise too_deep(what, max_depth)
        nodes += len(node)
        if nodes > max_nodes:
            raise too_large(what, nodes, max_nodes)
        deeper = depth + 1
        for value in (node.values() if type(node) is dict else node):
            kind = type(value)
            if kind is dict or kind is list:
                push((value, deeper))
    return nodes


def might_be_large(data: bytes, limit: int = MAX_NODES) -> bool:
    """Whether an encoded body (JSON, or protobuf: two bytes at least per field) can hold more
    than `limit` values: not when it is shorter than two bytes per value."""
    return len(data) > 2 * limit


def check_json_body(data: bytes, doc: Any, what: str = "request body") -> None:
    """A decoded body within the depth and size bounds; the walk runs only for the bodies that
    could break one (small bodies, almost all of them, pay two byte counts)."""
    if might_be_deep(data) or might_be_large(data):
        measure(doc, what)


#: items one C-level sort may take: CPython's sort never releases the GIL, so sorting the
#: 200,000 keys of one map is a single ~0.5 s hold of every thread — the event loop included,
#: even when the sort runs on the worker thread
SORT_RUN = 8192


def sorted_in_runs(items: Iterable[Any], key: Callable[[Any], Any] | None = None) -> list[Any]:
    """`sorted(items, key=key)`, but no single sort longer than SORT_RUN items: bigger inputs
    are sorted in runs and merged by heapq.merge, whose Python loop lets the GIL go every few
    milliseconds (about twice the work, and only for inputs that big)."""
    values = items if isinstance(items, list) else list(items)
    if len(values) <= SORT_RUN:
        return sorted(values, key=key)
    runs = [sorted(values[start:start + SORT_RUN], key=key)
            for start in range(0, len(values), SORT_RUN)]
    return list(heapq.merge(*runs, key=key))
