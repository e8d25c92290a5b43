"""Read what a container's environment and volumes need, and build its simulated picture.

Kubernetes piece: the I/O half of pkg/kubelet/kubelet_pods.go makeEnvironmentVariables and
of the configMap / secret volume plugins — the kubelet reads the ConfigMaps, Secrets and
Services a container refers to (through its informers and the API server) before it starts
the container. sandbox.py is the pure half; this module does the GETs and the one LIST of the
namespace's Services (service links), then calls `sandbox.build`. Both users share it: the
container's own process (process.py, at container start) and `kubectl exec` (streaming.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api.errors import StatusError
from ..client.resources import CONFIGMAPS, SECRETS, SERVICES
from . import sandbox as sandboxes
from .reads import ClusterReads
from .token_manager import TokenManager

Obj = dict[str, Any]


async def _get_or_none(reads: ClusterReads, resource: Any, name: str,
                       namespace: str) -> Obj | None:
    try:
        return await reads.get(resource, name, namespace)
    except StatusError as exc:
        if exc.code in (403, 404):
            return None
        raise


async def service_links(reads: ClusterReads, pod: Obj) -> list[Obj]:
    """The Services whose variables the container gets: the namespace's (unless
    `enableServiceLinks: false`) and the master service `kubernetes`, sorted by name."""
    namespace = pod["metadata"].get("namespace", "default")
    services: list[Obj] = []
    if (pod.get("spec") or {}).get("enableServiceLinks", True) is not False:
        try:
            services = await reads.list(SERVICES, namespace)
        except StatusError:
            services = []
    if namespace != "default" or not services:
        master = await _get_or_none(reads, SERVICES, "kubernetes", "default")
        if master is not None and not any(s["metadata"]["name"] == "kubernetes"
                                          for s in services):
            services.append(master)
    services.sort(key=lambda s: s["metadata"]["name"])
    return services


async def load_sandbox(reads: ClusterReads, pod: Obj, container: Obj, *, pod_ip: str, host_ip: str,
                       allocatable: Mapping[str, str], tty: bool = False,
                       written: dict[str, bytes] | None = None,
                       tokens: TokenManager | None = None) -> sandboxes.Sandbox:
    """The container's Sandbox: env, /etc files, its volumes' files (service-account tokens
    from `tokens`, when given), and `written` (the container's writable layer, shared by its
    process and later execs)."""
    namespace = pod["metadata"].get("namespace", "default")
    names_cm, names_secret = sandboxes.references(pod, container)
    configmaps = {n: o for n in names_cm
                  if (o := await _get_or_none(reads, CONFIGMAPS, n, namespace)) is not None}
    secrets = {n: o for n in names_secret
               if (o := await _get_or_none(reads, SECRETS, n, namespace)) is not None}
    services = await service_links(reads, pod)
    issued = await tokens.tokens_for(pod) if tokens is not None else None
    return sandboxes.build(pod, container, configmaps=configmaps, secrets=secrets,
                           services=services, pod_ip=pod_ip, host_ip=host_ip, tty=tty,
                           allocatable=allocatable, written=written, tokens=issued)
