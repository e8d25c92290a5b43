"""Table cells for the kinds with real logic: pods, nodes, services, endpoints, events.

Kubernetes piece: printPod, printNode, printService (getServiceExternalIP, makePortString),
printEndpoints (formatEndpoints) and printEvent from pkg/printers/internalversion/printers.go.
These are what `kubectl get pods/nodes/svc/ep/events` show, so each follows upstream line by
line: the pod STATUS is the famous reason ladder (phase, status.reason, init containers as
`Init:0/1`, the earliest waiting/terminated container's reason, `Terminating`), RESTARTS carries
`(5m ago)` since 1.22. `tables.py` owns the column sets and the simpler kinds.

Also the tolerant accessors both modules use: stored JSON can hold anything, and a wrong type
must read as the zero value (as a missing field would in Go), never raise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, NamedTuple

from minikube_py.api import events_v1
from minikube_py.api.duration import age, human_duration, parse_timestamp

Obj = Mapping[str, Any]

_NONE: Obj = MappingProxyType({})
_NO_ITEMS: Sequence[Any] = ()
_NODE_ROLE_PREFIX = "node-role.kubernetes.io/"
_NODE_ROLE_LABEL = "kubernetes.io/role"
_NODE_LOST = "NodeLost"  # upstream node.NodeUnreachablePodReason
_MAX_ENDPOINTS = 3


def as_dict(value: Any) -> Obj:
    """`value` if it is an object, else a shared read-only empty mapping (never mutate it)."""
    return value if isinstance(value, dict) else _NONE


def as_list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list) else _NO_ITEMS


def as_str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_int(value: Any) -> int:
    """A JSON number as Go would decode it into an int field; anything else is 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    return 0


def object_name(obj: Obj) -> str:
    return as_str(as_dict(obj.get("metadata")).get("name"))


def object_age(obj: Obj, now: float) -> str:
    return age(as_dict(obj.get("metadata")).get("creationTimestamp"), now)


def format_labels(labels: Any) -> str:
    """Upstream labels.FormatLabels: `k=v,k2=v2` sorted by key, `<none>` when empty."""
    labels = as_dict(labels)
    if not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


# ---------------------------------------------------------------------------------------------
# Pods


class _PodSummary(NamedTuple):
    ready: int
    reason: str
    restarts: int
    last_restart: float | None  # latest lastState.terminated.finishedAt, epoch seconds


def pod_row(pod: Obj, now: float) -> list:
    """NAME READY STATUS RESTARTS AGE | IP NODE NOMINATED-NODE READINESS-GATES."""
    meta = as_dict(pod.get("metadata"))
    spec, status = as_dict(pod.get("spec")), as_dict(pod.get("status"))
    summary = _summarize_containers(spec, status, _pod_reason(status))
    reason = summary.reason
    if meta.get("deletionTimestamp") is not None:
        reason = "Unknown" if status.get("reason") == _NODE_LOST else "Terminating"
    restarts = str(summary.restarts)
    if summary.last_restart is not None:
        restarts = f"{summary.restarts} ({human_duration(now - summary.last_restart)} ago)"
    total = len(as_list(spec.get("containers")))
    pod_ips = as_list(status.get("podIPs"))
    pod_ip = as_str(as_dict(pod_ips[0]).get("ip")) if pod_ips else as_str(status.get("podIP"))
    return [
        as_str(meta.get("name")), f"{summary.ready}/{total}", reason, restarts,
        age(meta.get("creationTimestamp"), now),
        pod_ip or "<none>",
        as_str(spec.get("nodeName")) or "<none>",
        as_str(status.get("nominatedNodeName")) or "<none>",
        _readiness_gates(spec, status),
    ]


def _pod_reason(status: Obj) -> str:
    """The starting reason: phase, overridden by status.reason, then `SchedulingGated`."""
    reason = as_str(status.get("phase"))
    if as_str(status.get("reason")):
        reason = status["reason"]
    for condition in as_list(status.get("conditions")):
        condition = as_dict(condition)
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    return reason


def _summarize_containers(spec: Obj, status: Obj, reason: str) -> _PodSummary:
    """Walk init, then app container statuses, exactly like upstream printPod.

    The first init container that has not exited 0 decides the reason (`Init:Error`,
    `Init:CrashLoopBackOff`, `Init:0/2`); otherwise the app containers are walked last to
    first, so the first container's waiting/terminated reason wins."""
    restarts, ready, last_restart = 0, 0, None
    initializing = False
    init_count = len(as_list(spec.get("initContainers")))
    for index, container in enumerate(as_list(status.get("initContainerStatuses"))):
        container = as_dict(container)
        restarts += as_int(container.get("restartCount"))
        last_restart = _later(last_restart, container)
        state = as_dict(container.get("state"))
        terminated, waiting = state.get("terminated"), as_dict(state.get("waiting"))
        if isinstance(terminated, dict) and as_int(terminated.get("exitCode")) == 0:
            continue
        initializing = True
        if isinstance(terminated, dict):
            reason = "Init:" + _terminated_reason(terminated)
        elif as_str(waiting.get("reason")) and waiting["reason"] != "PodInitializing":
            reason = "Init:" + waiting["reason"]
        else:
            reason = f"Init:{index}/{init_count}"
        break
    if not initializing:
        restarts = 0
        has_running = False
        for container in reversed(as_list(status.get("containerStatuses"))):
            container = as_dict(container)
            restarts += as_int(container.get("restartCount"))
            last_restart = _later(last_restart, container)
            state = as_dict(container.get("state"))
            terminated, waiting = state.get("terminated"), as_dict(state.get("waiting"))
            if as_str(waiting.get("reason")):
                reason = waiting["reason"]
            elif isinstance(terminated, dict):
                reason = _terminated_reason(terminated)
            elif container.get("ready") is True and isinstance(state.get("running"), dict):
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _has_ready_condition(status) else "NotReady"
    return _PodSummary(ready, reason, restarts, last_restart)


def _terminated_reason(terminated: Obj) -> str:
    """`Error`/`Completed`/`OOMKilled`, else `Signal:9` or `ExitCode:1` (no `Init:` prefix)."""
    text = as_str(terminated.get("reason"))
    if text:
        return text
    signal = as_int(terminated.get("signal"))
    if signal != 0:
        return f"Signal:{signal}"
    return f"ExitCode:{as_int(terminated.get('exitCode'))}"


def _later(current: float | None, container: Obj) -> float | None:
    """The later of `current` and this container's lastState.terminated.finishedAt."""
    terminated = as_dict(as_dict(container.get("lastState")).get("terminated"))
    finished = parse_timestamp(terminated.get("finishedAt"))
    if finished is None:
        return current
    return finished if current is None or finished > current else current


def _has_ready_condition(status: Obj) -> bool:
    return any(as_dict(c).get("type") == "Ready" and as_dict(c).get("status") == "True"
               for c in as_list(status.get("conditions")))


def _readiness_gates(spec: Obj, status: Obj) -> str:
    """`1/2`: how many readiness-gate conditions are True; `<none>` without gates."""
    gates = as_list(spec.get("readinessGates"))
    if not gates:
        return "<none>"
    conditions = [as_dict(c) for c in as_list(status.get("conditions"))]
    true_count = 0
    for gate in gates:
        wanted = as_dict(gate).get("conditionType")
        for condition in conditions:
            if condition.get("type") == wanted:
                true_count += condition.get("status") == "True"
                break
    return f"{true_count}/{len(gates)}"


# ---------------------------------------------------------------------------------------------
# Nodes


def node_row(node: Obj, now: float) -> list:
    """NAME STATUS ROLES AGE VERSION | INTERNAL-IP EXTERNAL-IP OS-IMAGE KERNEL-VERSION
    CONTAINER-RUNTIME. STATUS looks only at the Ready condition, as upstream."""
    meta = as_dict(node.get("metadata"))
    spec, status = as_dict(node.get("spec")), as_dict(node.get("status"))
    states: list[str] = []
    ready = None
    for condition in as_list(status.get("conditions")):
        condition = as_dict(condition)
        if condition.get("type") == "Ready":
            ready = condition  # upstream keeps the last one per type
    if ready is not None:
        states.append("Ready" if ready.get("status") == "True" else "NotReady")
    else:
        states.append("Unknown")
    if spec.get("unschedulable") is True:
        states.append("SchedulingDisabled")
    info = as_dict(status.get("nodeInfo"))
    return [
        as_str(meta.get("name")), ",".join(states), _node_roles(meta.get("labels")),
        age(meta.get("creationTimestamp"), now), as_str(info.get("kubeletVersion")),
        _node_address(status, "InternalIP"), _node_address(status, "ExternalIP"),
        as_str(info.get("osImage")) or "<unknown>",
        as_str(info.get("kernelVersion")) or "<unknown>",
        as_str(info.get("containerRuntimeVersion")) or "<unknown>",
    ]


def _node_roles(labels: Any) -> str:
    """Roles from `node-role.kubernetes.io/<role>` keys and `kubernetes.io/role=<role>`."""
    roles: set[str] = set()
    for key, value in as_dict(labels).items():
        if key.startswith(_NODE_ROLE_PREFIX):
            role = key[len(_NODE_ROLE_PREFIX):]
            if role:
                roles.add(role)
        elif key == _NODE_ROLE_LABEL and isinstance(value, str) and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def _node_address(status: Obj, address_type: str) -> str:
    for address in as_list(status.get("addresses")):
        address = as_dict(address)
        if address.get("type") == address_type:
            return as_str(address.get("address"))
    return "<none>"


# ---------------------------------------------------------------------------------------------
# Services and endpoints


def service_row(service: Obj, now: float) -> list:
    """NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE | SELECTOR."""
    spec = as_dict(service.get("spec"))
    cluster_ips = as_list(spec.get("clusterIPs"))
    cluster_ip = as_str(cluster_ips[0]) if cluster_ips else as_str(spec.get("clusterIP"))
    ports = ",".join(_service_port(as_dict(p)) for p in as_list(spec.get("ports")))
    return [
        object_name(service), as_str(spec.get("type")), cluster_ip or "<none>",
        _external_ip(spec, as_dict(service.get("status"))), ports or "<none>",
        object_age(service, now), format_labels(spec.get("selector")),
    ]


def _service_port(port: Obj) -> str:
    """`80/TCP`, or `80:30080/TCP` with a node port (upstream makePortString)."""
    protocol = as_str(port.get("protocol")) or "TCP"
    node_port = as_int(port.get("nodePort"))
    if node_port > 0:
        return f"{as_int(port.get('port'))}:{node_port}/{protocol}"
    return f"{as_int(port.get('port'))}/{protocol}"


def _external_ip(spec: Obj, status: Obj) -> str:
    """Upstream getServiceExternalIP (wide, so the load-balancer list is not clipped)."""
    service_type = spec.get("type")
    external_ips = [as_str(ip) for ip in as_list(spec.get("externalIPs"))]
    if service_type in ("ClusterIP", "NodePort"):
        return ",".join(external_ips) if external_ips else "<none>"
    if service_type == "LoadBalancer":
        ingress = as_list(as_dict(status.get("loadBalancer")).get("ingress"))
        found = {as_str(i.get("ip")) or as_str(i.get("hostname"))
                 for i in map(as_dict, ingress)} - {""}
        results = sorted(found) + external_ips
        return ",".join(results) if results else "<pending>"
    if service_type == "ExternalName":
        return as_str(spec.get("externalName"))
    return "<unknown>"


def endpoints_row(endpoints: Obj, now: float) -> list:
    return [object_name(endpoints), format_endpoints(endpoints), object_age(endpoints, now)]


def format_endpoints(endpoints: Obj) -> str:
    """`10.0.0.1:80,10.0.0.2:80 + 3 more...` (upstream formatEndpoints, all ports)."""
    subsets = as_list(endpoints.get("subsets"))
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    more = False
    for subset in map(as_dict, subsets):
        addresses = [as_str(as_dict(a).get("ip")) for a in as_list(subset.get("addresses"))]
        ports = as_list(subset.get("ports"))
        # Headless services may have no ports: then the bare IPs are listed.
        for port in (ports or (None,)):
            count += len(addresses)
            for ip in addresses:
                if len(shown) == _MAX_ENDPOINTS:
                    more = True
                    break
                shown.append(ip if port is None else
                             _join_host_port(ip, as_int(as_dict(port).get("port"))))
    text = ",".join(shown)
    return f"{text} + {count - _MAX_ENDPOINTS} more..." if more else text


def _join_host_port(host: str, port: int) -> str:
    """Go net.JoinHostPort: IPv6 hosts are bracketed."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# ---------------------------------------------------------------------------------------------
# Events


def event_row(event: Obj, now: float) -> list:
    """LAST-SEEN TYPE REASON OBJECT | SUBOBJECT SOURCE | MESSAGE | FIRST-SEEN COUNT NAME.

    Upstream prints the internal Event, so events.k8s.io/v1 rows are core's columns too."""
    if events_v1.is_events_v1(event):
        event = events_v1.to_core(event)
    first_seen = age(event.get("firstTimestamp"), now)
    if parse_timestamp(event.get("firstTimestamp")) is None:
        first_seen = age(event.get("eventTime"), now)
    last_seen = first_seen
    if parse_timestamp(event.get("lastTimestamp")) is not None:
        last_seen = age(event.get("lastTimestamp"), now)
    count = as_int(event.get("count"))
    series = event.get("series")
    if isinstance(series, dict):
        last_seen = age(series.get("lastObservedTime"), now)
        count = as_int(series.get("count"))
    elif count == 0:
        count = 1  # singleton events from the events.k8s.io API carry no count
    involved = as_dict(event.get("involvedObject"))
    kind, name = as_str(involved.get("kind")).lower(), as_str(involved.get("name"))
    source = as_dict(event.get("source"))
    component = as_str(source.get("component")) or as_str(event.get("reportingComponent"))
    host = as_str(source.get("host")) or as_str(event.get("reportingInstance"))
    return [
        last_seen, as_str(event.get("type")), as_str(event.get("reason")),
        f"{kind}/{name}" if name else kind,
        as_str(involved.get("fieldPath")),
        f"{component}, {host}" if host else component,
        as_str(event.get("message")).strip(),
        first_seen, count, object_name(event),
    ]
