"""One trace record: what happened, when, to which object, and the kind-specific detail.

Kubernetes piece: none upstream has one stream for all of this. The pieces it spreads over
several places are the API server's audit log and httplog (requests), etcd's revision history
(store writes), the watch cache's dispatch (deliveries), the scheduler's framework events and
`FitError` (decisions), the kubelet's status manager (pod state) and the controllers'
`controller_sync` logs (reconciles). Here they share one record shape so one viewer can show a
pod's whole journey in order.

A record is built on the hot path only when someone is reading (`TraceRing.active`), and then
as cheaply as possible: a slotted object holding a tuple (or, for a scheduling attempt, a
reference to the explanation the scheduler already built). Turning it into JSON (`to_json`)
is the reader's cost, paid when the record is read.
"""

from __future__ import annotations

from typing import Any

#: an API request as the filter chain saw it: (verb, path, subresource, status, latency_ms)
REQUEST = "request"
#: a write the store made, seen by the API server's watch of it: (type, key, revision, prev)
STORE = "store"
#: one watch stream (a component's informer, kubectl -w) handed one event: (revision, type)
WATCH = "watch"
#: a scheduling attempt: the scheduler's Attempt (to_dict() explains it per node and plugin)
SCHEDULE = "schedule"
#: the kubelet wrote a pod's new status: (node, phase, reason, pod_ip)
KUBELET = "kubelet"
#: one controller sync: (controller, key, seconds, cpu_seconds, error)
RECONCILE = "reconcile"
#: a component was paused or resumed (minikube_py/pausing.py): (kind, action)
PAUSE = "pause"

#: the field names of each kind's detail tuple, in order (SCHEDULE's detail is an object)
FIELDS: dict[str, tuple[str, ...]] = {
    REQUEST: ("verb", "path", "subresource", "status", "latency_ms"),
    STORE: ("type", "key", "revision", "prev_revision"),
    WATCH: ("revision", "type"),
    KUBELET: ("node", "phase", "reason", "pod_ip"),
    RECONCILE: ("controller", "key", "seconds", "cpu_seconds", "error"),
    PAUSE: ("component_kind", "action"),
}
KINDS: tuple[str, ...] = (REQUEST, STORE, WATCH, SCHEDULE, KUBELET, RECONCILE, PAUSE)


class Record:
    """One thing that happened. `detail` is a tuple named by FIELDS[kind], or for SCHEDULE
    the scheduler's attempt object (anything with `to_dict()`)."""

    __slots__ = (
        "component",
        "detail",
        "kind",
        "name",
        "namespace",
        "resource",
        "seq",
        "time",
        "uid",
    )

    def __init__(self, seq: int, time: float, kind: str, component: str, resource: str,
                 namespace: str, name: str, uid: str, detail: Any) -> None:
        self.seq = seq
        self.time = time
        self.kind = kind
        self.component = component
        self.resource = resource
        self.namespace = namespace
        self.name = name
        self.uid = uid
        self.detail = detail

    def __repr__(self) -> str:
        return (f"Record(seq={self.seq}, kind={self.kind!r}, component={self.component!r}, "
                f"object={self.resource}/{self.namespace}/{self.name})")


#: what a scheduling attempt's summary keeps (the per-node explanation is ~14 KB at 50 nodes)
SUMMARY_FIELDS = ("result", "node", "message", "feasible", "total", "seconds")


def to_json(record: Record, *, full: bool = True) -> dict[str, Any]:
    """The record as the endpoint serves it (plain JSON types). `full=False`: a scheduling
    attempt as its summary (outcome, node, how many fit), without the per-node explanation —
    what a follower of every record wants, where one pod's journey wants it all."""
    out: dict[str, Any] = {
        "seq": record.seq, "time": record.time, "kind": record.kind,
        "component": record.component, "resource": record.resource,
        "namespace": record.namespace, "name": record.name, "uid": record.uid}
    detail = record.detail
    names = FIELDS.get(record.kind)
    if names is not None and isinstance(detail, tuple):
        out.update(zip(names, detail))
    elif hasattr(detail, "to_dict"):
        out["detail"] = detail.to_dict() if full else {
            name: getattr(detail, name) for name in SUMMARY_FIELDS if hasattr(detail, name)}
    elif detail is not None:
        out["detail"] = detail
    return out
