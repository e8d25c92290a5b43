"""What a failed test's report shows about the cluster: the namespace's recent Events and
every write its objects saw.

Kubernetes piece: what one reads on a real cluster after a failure — `kubectl get events -n
NS` and the API server's audit log (one entry per write, with the user/field manager). The
writes come from the store's own history (the MVCC revisions the API server keeps for watch
resumption; nothing is recorded while tests pass, so it costs nothing until a report is made):
each PUT/DELETE of a key in the namespace, with its revision and the field manager that made
the change. The seam: `ObjectTrace` is the shape a report reads; issue 21's trace ring (the
requests, watch deliveries and reconciles of an object) is a second implementation of it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Protocol

from ..client import Client
from ..client.resources import EVENTS
from ..registry.codec import decode
from ..storage import Store
from ..storage.errors import CompactedError
from ..storage.kv import EventType

Obj = dict[str, Any]


@dataclass(frozen=True)
class Write:
    revision: int
    verb: str        # create | update | delete
    key: str
    manager: str     # the field manager(s) whose managedFields entry the write changed

    def line(self) -> str:
        return f"rv={self.revision:<8} {self.verb:<7} {self.key}" + (
            f"  ({self.manager})" if self.manager else "")


class ObjectTrace(Protocol):
    """Where a report reads what happened to a namespace's objects since a revision."""

    async def writes(self, namespace: str, since_revision: int, limit: int) -> list[Write]: ...


def in_namespace(key: str, prefix: str, namespace: str) -> bool:
    """`/registry/pods/<ns>/<name>`, `/registry/services/specs/<ns>/<name>`, and the
    namespace object itself (`/registry/namespaces/<ns>`)."""
    parts = key[len(prefix):].strip("/").split("/")
    return (len(parts) >= 3 and parts[-2] == namespace) or \
        (parts[:1] == ["namespaces"] and parts[-1] == namespace and len(parts) == 2)


def managed(kv: Any) -> dict[tuple[str, str, str], str]:
    """(manager, operation, subresource) -> that entry as text, from a stored object."""
    try:
        obj = decode(kv)
    except Exception:  # noqa: BLE001 - an undecodable value still gets its line
        return {}
    out = {}
    for entry in (obj.get("metadata") or {}).get("managedFields") or ():
        key = (str(entry.get("manager", "")), str(entry.get("operation", "")),
               str(entry.get("subresource", "")))
        out[key] = repr(sorted(entry.items()))
    return out


def writers(kv: Any, prev_kv: Any | None) -> str:
    """Who made this write: the field managers whose managedFields entry it added or changed
    (the entries are not kept in time order, so the difference is what tells)."""
    now = managed(kv)
    before = managed(prev_kv) if prev_kv is not None else {}
    changed = sorted({key[0] for key, text in now.items() if before.get(key) != text})
    return ",".join(changed)


class StoreHistory:
    """ObjectTrace over the store's revision history (a watch from a past revision replays it)."""

    def __init__(self, store: Store, prefix: str = "/registry") -> None:
        self.store = store
        self.prefix = prefix

    async def writes(self, namespace: str, since_revision: int, limit: int = 200) -> list[Write]:
        page = await self.store.range(self.prefix + "/", limit=1)
        current = page.revision
        if since_revision > current:
            return []
        out: list[Write] = []
        watch = await self.store.watch(self.prefix + "/", start_revision=max(since_revision, 1))
        try:
            seen = since_revision - 1
            while seen < current:
                async with asyncio.timeout(2):
                    batch = await watch.next_batch()
                if not batch:
                    break
                for event in batch:
                    seen = event.revision
                    if seen > current:
                        break
                    if not in_namespace(event.kv.key, self.prefix, namespace):
                        continue
                    if event.type is EventType.DELETE:
                        out.append(Write(seen, "delete", event.kv.key, ""))
                    else:
                        verb = "create" if event.kv.version == 1 else "update"
                        out.append(Write(seen, verb, event.kv.key,
                                         writers(event.kv, event.prev_kv)))
        except (CompactedError, TimeoutError):
            pass  # history gone or quiet: report what was read
        finally:
            await watch.cancel()
        return out[-limit:]


async def recent_events(client: Client, namespace: str, limit: int = 50) -> list[str]:
    """The namespace's Events, oldest first, as `kubectl get events` prints them."""
    items = (await client.list(EVENTS, namespace)).get("items") or []
    items.sort(key=lambda e: (e.get("lastTimestamp") or e.get("eventTime") or "",
                              e["metadata"].get("resourceVersion", "")))
    lines = []
    for e in items[-limit:]:
        involved = e.get("involvedObject") or {}
        lines.append(f"{e.get('type', ''):<8} {e.get('reason', ''):<20} "
                     f"{involved.get('kind', '')}/{involved.get('name', '')}: "
                     f"{e.get('message', '')}" + (f" (x{e['count']})" if e.get("count", 1) > 1
                                                   else ""))
    return lines


async def events_section(client: Client, namespace: str) -> list[str]:
    """The report's first section: the namespace's Events."""
    events = await recent_events(client, namespace)
    lines = [f"namespace {namespace}: {len(events)} event(s)"]
    return lines + ([f"  {line}" for line in events] or ["  (none)"])


async def report(client: Client, trace: ObjectTrace, namespace: str,
                 since_revision: int) -> str:
    """The text of a failure report section for `namespace` (when the trace ring did not
    record the test: trace_history.trace_report is the one with the timeline)."""
    lines = await events_section(client, namespace)
    writes = await trace.writes(namespace, since_revision, 200)
    lines.append(f"writes to objects in {namespace} since revision {since_revision} "
                 "(store history):")
    lines += [f"  {w.line()}" for w in writes] or ["  (none)"]
    return "\n".join(lines)
