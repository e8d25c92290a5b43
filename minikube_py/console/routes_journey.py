"""`/console-api/journey/{namespace}/{name}`: a pod's journey, live, and the scheduler's
decision for it.

Kubernetes piece: none upstream (see console/journey.py). Three routes:
- `GET .../journey/NS/NAME`: the hops the trace ring holds for the pod, its current state
  (from the API server, through the in-process client) and its key's retained revisions in
  the store; 404 Status when neither the API server nor the ring knows the pod.
- `GET .../journey/NS/NAME/stream?since=SEQ&start=T`: the hops after SEQ as Server-Sent
  Events, as they happen — the `/debug/trace` handler's own streaming (apiserver/debug_trace.py,
  `TraceEndpoint.serve`) with each record shaped into a hop, so the ring records while the view
  is open.
- `GET .../journey/NS/NAME/decision?seq=SEQ`: the decision table of the scheduling attempt
  recorded as SEQ (default: the latest in the ring, else the scheduler's last attempt for
  the pod, which it keeps whether or not anyone traced).
Reading the ring (up to 50,000 records) is offloaded (minikube_py/offload.py) when it is large.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .. import offload
from ..api import errors
from ..apiserver.debug_trace import TraceEndpoint, request_since
from ..client.resources import PODS
from ..trace.journey import Timeline
from ..trace.ring import TraceRing
from .context import ConsoleContext
from .journey import decision_table, find_schedule, journey, pod_filter, ring_records
from .store_browser import key_history

Obj = dict[str, Any]
USER_AGENT = "minikube-py-console"
#: a live journey's keepalive: a browser that left is noticed within this (the ring stays on
#: while a follower is attached)
KEEPALIVE_SECONDS = 5.0
#: bytes of work one ring record stands for, when deciding to offload a scan
RECORD_WEIGHT = 64


def _scan_weight(ring: TraceRing) -> int:
    return len(ring.records) * RECORD_WEIGHT


def _float(text: str | None, name: str) -> float | None:
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise errors.bad_request(f"{name}: must be a number, got {text!r}") from None


class JourneyRoutes:
    def __init__(self, ctx: ConsoleContext) -> None:
        self.ctx = ctx
        self.endpoint = TraceEndpoint(ctx.ring, keepalive=KEEPALIVE_SECONDS)

    def _pod_key(self, namespace: str, name: str, records: list[Obj]) -> str:
        """The pod's key in the store: from a store record, else the API server's registry."""
        for rec in records:
            if rec.get("kind") == "store" and rec.get("key"):
                return str(rec["key"])
        cluster = self.ctx.cluster
        if cluster is not None:
            return cluster.apiserver.registry_for("", "v1", "pods").key(namespace, name)
        return ""

    async def journey(self, request: web.Request) -> web.Response:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        ring = self.ctx.ring
        records, lost, last = await offload.run(ring_records, ring, pod_filter(namespace, name),
                                                weight=_scan_weight(ring))
        pod = await self.ctx.client(USER_AGENT).get_or_none(PODS, name, namespace)
        if pod is None and not records:
            raise errors.not_found("pods", name)
        key = self._pod_key(namespace, name, records)
        history: list[Obj] = []
        if key:
            try:
                history = [{k: row[k] for k in ("type", "revision", "version", "size")}
                           for row in (await key_history(self.ctx.store, key,
                                                         diffs=False))["rows"]]
            except errors.StatusError:
                history = []
        body = await offload.run(journey, namespace, name, records, lost, last, pod, key,
                                 history, weight=len(records) * RECORD_WEIGHT)
        return web.json_response(body)

    async def stream(self, request: web.Request) -> web.StreamResponse:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        try:
            since = request_since(request)
        except ValueError as exc:
            raise errors.bad_request(str(exc)) from None
        timeline = Timeline(watches=True, reads=False, start=_float(request.query.get("start"), "start"))

        def shape(rec: Obj) -> Obj | None:
            hop = timeline.hop(rec)
            return hop.to_json() if hop is not None else None

        return await self.endpoint.serve(request, pod_filter(namespace, name), since,
                                         follow=True, full=True, shape=shape)

    async def decision(self, request: web.Request) -> web.Response:
        namespace, name = request.match_info["namespace"], request.match_info["name"]
        text = request.query.get("seq", "")
        seq: int | None = None
        if text:
            seq = int(text) if text.isdigit() else -1
            if seq < 0:
                raise errors.bad_request(f"seq: must be a non-negative sequence number, "
                                         f"got {text!r}")
        ring = self.ctx.ring
        records, _, _ = await offload.run(ring_records, ring, pod_filter(namespace, name),
                                          weight=_scan_weight(ring))
        detail = find_schedule(records, seq)
        if detail is None and seq is None:
            scheduler = self.ctx.component("scheduler")
            attempt = getattr(scheduler, "attempts", {}).get(f"{namespace}/{name}")
            detail = attempt.to_dict() if attempt is not None else None
        if detail is None:
            which = f"scheduling attempt {seq}" if seq is not None else "scheduling attempt"
            raise errors.StatusError(
                404, "NotFound", f'no {which} of pod "{namespace}/{name}" is known (the '
                "trace ring keeps attempts while someone watches; the scheduler its last "
                "256)", {"name": name, "kind": "pods"})
        table = await offload.run(decision_table, detail,
                                  weight=len(detail.get("scores") or {}) * 256)
        return web.json_response(table)


def routes(ctx: ConsoleContext) -> list[web.RouteDef]:
    handlers = JourneyRoutes(ctx)
    base = "/console-api/journey/{namespace}/{name}"
    return [web.get(base, handlers.journey), web.get(base + "/stream", handlers.stream),
            web.get(base + "/decision", handlers.decision)]
