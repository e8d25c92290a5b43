"""Readiness probes and lifecycle hooks of simulated containers: when and against what.

Kubernetes pieces: pkg/kubelet/prober (a worker per probe: the first probe after
`initialDelaySeconds`, then every `periodSeconds` (10); `successThreshold` (1) successes in a
row make a container ready; until then it is not ready) and pkg/kubelet/lifecycle
(handlers.go: postStart / preStop `exec`, `httpGet`, `tcpSocket`, `sleep`).

What a check "hits": an `httpGet` or `tcpSocket` succeeds when a running container of the pod
declares the TCP port (by number, or a name the container's ports give) — the simulated HTTP
server answers there (http_sim.py) — and fails as `connection refused` otherwise; an `exec`
runs its command through the simulated shell on the container's picture (process.py);
`grpc` succeeds. Pure: the pod worker turns these answers into timers and events.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from . import http_sim

Obj = dict[str, Any]
DEFAULT_PERIOD = 10.0


class ProbeTiming(NamedTuple):
    """When the first probe runs, how often after, how many successes make ready."""

    initial_delay: float
    period: float
    success_threshold: int


def timing(probe: Mapping[str, Any]) -> ProbeTiming:
    def number(key: str, default: float, low: float) -> float:
        value = probe.get(key)
        return max(float(value), low) if isinstance(value, (int, float)) and \
            not isinstance(value, bool) else default
    return ProbeTiming(number("initialDelaySeconds", 0.0, 0.0),
                       number("periodSeconds", DEFAULT_PERIOD, 1.0),
                       int(number("successThreshold", 1, 1)))


def _port(container: Mapping[str, Any], port: Any) -> int | None:
    if isinstance(port, int) and not isinstance(port, bool):
        return port
    if isinstance(port, str):
        if port.isdigit():
            return int(port)
        for declared in container.get("ports") or ():
            if (declared or {}).get("name") == port:
                return declared.get("containerPort")
    return None


def network_error(pod: Obj, container: Mapping[str, Any], handler: Mapping[str, Any],
                  running: set[str], pod_ip: str) -> str | None:
    """An httpGet/tcpSocket handler's failure against the pod (None: it answered)."""
    kind = "httpGet" if "httpGet" in handler else "tcpSocket"
    target = handler.get(kind) or {}
    port = _port(container, target.get("port"))
    host = target.get("host") or pod_ip
    if port is not None and http_sim.serves(pod, port, running) is not None:
        return None
    if kind == "httpGet":
        scheme = str(target.get("scheme") or "HTTP").lower()
        return (f'Get "{scheme}://{host}:{port}{target.get("path") or "/"}": dial tcp '
                f"{host}:{port}: connect: connection refused")
    return f"dial tcp {host}:{port}: connect: connection refused"


def exec_argv(handler: Mapping[str, Any]) -> list[str] | None:
    """The command of an `exec` handler, None for other kinds."""
    if "exec" not in handler:
        return None
    return [str(a) for a in (handler.get("exec") or {}).get("command") or ()]


def sleep_seconds(handler: Mapping[str, Any]) -> float | None:
    """A `sleep` lifecycle handler's duration (1.29+), None for other kinds."""
    seconds = (handler.get("sleep") or {}).get("seconds") if "sleep" in handler else None
    return float(seconds) if isinstance(seconds, (int, float)) else None


def exec_hook_error(argv: list[str], container: str, pod_ref: str, code: int,
                    output: str) -> str:
    """lifecycle/handlers.go's message for a failed exec hook (the FailedPostStartHook /
    FailedPreStopHook event)."""
    return (f"Exec lifecycle hook ([{' '.join(argv)}]) for Container \"{container}\" in Pod "
            f"\"{pod_ref}\" failed - error: command '{' '.join(argv)}' exited with {code}: "
            f"{output}, message: \"{output}\"")


def http_hook_error(handler: Mapping[str, Any], container: str, pod_ref: str,
                    error: str) -> str:
    """handlers.go's message for a failed httpGet hook (the path in parentheses)."""
    path = (handler.get("httpGet") or {}).get("path") or ""
    return (f"HTTP lifecycle hook ({path}) for Container \"{container}\" in Pod "
            f"\"{pod_ref}\" failed - error: {error}")
