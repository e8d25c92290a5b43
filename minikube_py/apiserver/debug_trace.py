"""`GET /debug/trace`: the trace ring as Server-Sent Events of JSON records.

Kubernetes piece: a debug endpoint beside `/debug/pprof` (upstream's apiserver mounts its
debug handlers on the same mux, behind the same authentication and authorization filters —
here authz/guard.py covers every path but the health checks). Upstream has no trace stream;
the wire format is the W3C EventSource one so a browser (the console) reads it with
`new EventSource(...)` and a terminal with `curl -N`.

Query: `kind=request,store,...`, `uid=`, `object=ns/name` (or `namespace=`, `name=`),
`resource=pods`, `detail=full|summary` (a scheduling attempt's per-node explanation, or
only its outcome; full by default when one object is followed), `since=SEQ` (or the
`Last-Event-ID` header an EventSource sends when it reconnects), `follow=false` to get what
the ring holds and end. Each record is one event with
`id: <seq>` and `data: <json>`; `event: lost` says how many records after `since` the ring
no longer held. While a follower is attached the ring records (`TraceRing.viewer`); a client
that goes away just ends its stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from ..api import errors
from ..trace.filters import TraceFilter, from_query, full_detail, parse_since
from ..trace.records import to_json
from ..trace.ring import TraceRing
from .connection import APIRequestHandler
from .runtime_config import parse_bool

#: request key: the metadata of the object a create made (set by the create handler while the
#: trace records, read by the filter chain's request record, whose path has no name)
CREATED: web.RequestKey[dict] | str = (
    web.RequestKey("trace_created", dict) if hasattr(web, "RequestKey") else "trace_created")
#: a comment line this often keeps proxies from closing an idle stream
KEEPALIVE_SECONDS = 15.0
#: records encoded per write before yielding the loop (a replay of a full ring)
BATCH = 256


#: what a record's JSON becomes on the wire, or None to leave it out
Shape = Callable[[dict[str, Any]], "dict[str, Any] | None"]


def request_since(request: web.Request) -> int:
    """`since=SEQ`, or the `Last-Event-ID` an EventSource sends when it reconnects; 0 by
    default. ValueError (the caller's 400) when it is not a sequence number."""
    return parse_since(request.query.get("since") or request.headers.get("Last-Event-ID")
                       or "0")


def _shaped(data: dict[str, Any], shape: Shape | None) -> dict[str, Any] | None:
    return data if shape is None else shape(data)


def frame(seq: int, data: bytes) -> bytes:
    return b"id: %d\ndata: %s\n\n" % (seq, data)


class TraceEndpoint:
    """The handler of `/debug/trace` over one ring."""

    def __init__(self, ring: TraceRing, *, keepalive: float = KEEPALIVE_SECONDS) -> None:
        self.ring = ring
        self.keepalive = keepalive
        self._followers: set[asyncio.Task] = set()

    def install(self, router: web.UrlDispatcher) -> None:
        router.add_get("/debug/trace", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        query = request.query
        try:
            selected = from_query(query)
            full = full_detail(query, selected)
            since = request_since(request)
            follow = parse_bool("follow", query.get("follow", ""))
        except ValueError as exc:
            raise errors.bad_request(str(exc)) from None
        return await self.serve(request, selected, since, follow=follow, full=full)

    async def serve(self, request: web.Request, selected: TraceFilter, since: int, *,
                    follow: bool, full: bool, shape: Shape | None = None) -> web.StreamResponse:
        """Stream the records `selected` picks after `since`. `shape`: what each record's
        JSON becomes on the wire (None skips it) — the console's journey sends hops
        (console/routes_journey.py), this endpoint the records themselves."""
        response = web.StreamResponse(status=200, headers={
            "Content-Type": "text/event-stream", "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no"})
        task = asyncio.current_task()
        assert task is not None
        # a client that leaves, or the server shutting down, ends the stream at once (not at
        # the next record or keepalive): the follower's task is cancelled
        protocol = request.protocol
        forget_lost = protocol.on_lost(task.cancel) \
            if isinstance(protocol, APIRequestHandler) else None
        self._followers.add(task)
        try:
            if follow:
                with self.ring.viewer():
                    await response.prepare(request)
                    await self._stream(response, selected, since, follow=True, full=full,
                                       shape=shape)
            else:
                await response.prepare(request)
                await self._stream(response, selected, since, follow=False, full=full,
                                   shape=shape)
            await response.write_eof()
        except (ConnectionResetError, ConnectionError, asyncio.CancelledError):
            pass  # the client went away or the server stops: not an error
        finally:
            self._followers.discard(task)
            if forget_lost is not None:
                forget_lost()
        return response

    def close(self) -> None:
        """End every open stream (the server is shutting down)."""
        for task in list(self._followers):
            task.cancel()

    async def _stream(self, response: web.StreamResponse, selected: TraceFilter, seq: int,
                      *, follow: bool, full: bool, shape: Shape | None) -> None:
        ring = self.ring
        while True:
            records, missed = ring.since(seq)
            if missed:
                await response.write(b"event: lost\ndata: %d\n\n" % missed)
            for start in range(0, len(records), BATCH):
                chunk = [frame(r.seq, orjson.dumps(data)) for r in records[start:start + BATCH]
                         if selected.matches(r)
                         and (data := _shaped(to_json(r, full=full), shape)) is not None]
                if chunk:
                    await response.write(b"".join(chunk))
                if len(records) > BATCH:
                    await asyncio.sleep(0)  # a long replay shares the loop
            # resume after what was looked at. With nothing returned, past what the ring
            # no longer holds: an emptied ring whose numbering went on (Cluster.trace_recording
            # clears it after a test) would otherwise answer `wait(seq)` at once and this loop
            # would write "lost" without ever yielding the event loop
            seq = records[-1].seq if records else seq + missed
            if not follow:
                return
            if not await ring.wait(seq, self.keepalive):
                await response.write(b": keepalive\n\n")
