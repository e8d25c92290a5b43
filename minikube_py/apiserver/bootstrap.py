"""The API server's bootstrap controller: system namespaces and the `kubernetes` service.

Kubernetes v1.0 piece: pkg/master/controller.go (`Controller.Start` → `RunKubernetesService`
every EndpointReconcilerInterval, 10 s): `CreateNamespaceIfNeeded(default)`,
`CreateOrUpdateMasterServiceIfNeeded("kubernetes", serviceIP, ...)` and
`ReconcileEndpoints("kubernetes", publicIP, ...)`; later versions (1.6+) also keep
kube-system, kube-public (and kube-node-lease) in existence. It runs *inside* the API server
process and writes through the registries directly — the master was the one component allowed
to, because it is the API server.

- The service: `default/kubernetes`, labels `component: apiserver`, `provider: kubernetes`, no
  selector (its endpoints are maintained here, so the endpoints controller leaves them alone),
  ClusterIP = the first address of --service-cluster-ip-range (created with that explicit IP,
  which reserves it in the service-IP allocator's bitmap), port `https` 443/TCP → targetPort
  the port clients use (the secure port, or the insecure one when --secure-port is 0),
  sessionAffinity ClientIP as v1.0–1.9 had (upstream has used None since 1.10). Its ports and
  type are reset on the first pass after start only, as upstream (`reconcile` true once).
- The endpoints: `default/kubernetes` = the advertised address and that port, port name
  `https`: --advertise-address, else the secure port's --bind-address, where 0.0.0.0 means the
  host's default-route interface (upstream ChooseHostInterface). Checked on every pass and
  rewritten when they differ (v1.0's single-master reconciler: the last API server to write
  wins). A loopback address gets no endpoints — validation forbids loopback endpoints (since
  1.2; upstream then logs an error every 10 s, here one warning at start).
- Deleted objects come back within one interval.

The desired objects are pure functions, unit-testable without a server.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any

import structlog

from ..api import errors
from ..registry.generic import Registry

log = structlog.get_logger(component="apiserver")

SERVICE_NAME = "kubernetes"
NAMESPACE = "default"
SERVICE_PORT = 443
PORT_NAME = "https"
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

Obj = dict[str, Any]


def first_service_ip(cidr: str) -> str:
    """The `kubernetes` service's address: the first usable IP of the service range
    (upstream GetIndexedIP(serviceClusterIPRange, 1))."""
    network = ipaddress.ip_network(cidr, strict=False)
    return str(network.network_address + 1)


def host_interface_address() -> str | None:
    """upstream ChooseHostInterface: the address of the interface holding the default route
    (a UDP connect picks the route and sends nothing), or None without one."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: routed by default, never reached
            address = probe.getsockname()[0]
    except OSError:
        return None
    ip = ipaddress.ip_address(address)
    return None if ip.is_loopback or ip.is_unspecified else address


def resolve_public_address(address: str) -> str:
    """The address as configured, or for "", 0.0.0.0 and :: the host's interface address
    (127.0.0.1 on a host without a default route)."""
    if address in ("", "0.0.0.0", "::"):
        return host_interface_address() or "127.0.0.1"
    return address


def service_ports(target_port: int) -> list[Obj]:
    return [{"name": PORT_NAME, "protocol": "TCP", "port": SERVICE_PORT,
             "targetPort": target_port}]


def kubernetes_service(service_ip: str, target_port: int) -> Obj:
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": SERVICE_NAME, "namespace": NAMESPACE,
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"ports": service_ports(target_port), "clusterIP": service_ip,
                 "sessionAffinity": "ClientIP", "type": "ClusterIP"},
    }


def endpoint_subsets(address: str, port: int) -> list[Obj]:
    return [{"addresses": [{"ip": address}],
             "ports": [{"name": PORT_NAME, "port": port, "protocol": "TCP"}]}]


def kubernetes_endpoints(address: str, port: int) -> Obj:
    return {"apiVersion": "v1", "kind": "Endpoints",
            "metadata": {"name": SERVICE_NAME, "namespace": NAMESPACE},
            "subsets": endpoint_subsets(address, port)}


def service_update(existing: Obj, target_port: int) -> Obj | None:
    """upstream getMasterServiceUpdateIfNeeded: the service with its ports and type reset,
    or None when they are already right."""
    spec = existing.get("spec") or {}
    wanted = service_ports(target_port)
    ports = [{k: p.get(k) for k in ("name", "protocol", "port", "targetPort")}
             for p in spec.get("ports") or ()]
    if ports == wanted and spec.get("type", "ClusterIP") == "ClusterIP":
        return None
    return {**existing, "spec": {**spec, "ports": wanted, "type": "ClusterIP"}}


class BootstrapController:
    """Keeps the system namespaces and the `kubernetes` service + endpoints in existence."""

    def __init__(self, registries: dict[tuple[str, str, str], Registry], *, service_ip: str,
                 public_address: str, public_port: int, interval: float = 10.0) -> None:
        self.namespaces = registries["", "v1", "namespaces"]
        self.services = registries["", "v1", "services"]
        self.endpoints = registries["", "v1", "endpoints"]
        self.service_ip = service_ip
        self.public_address = resolve_public_address(public_address)
        #: endpoints may not be loopback (API validation, as upstream since 1.2 — v1.0 allowed
        #: it); upstream then logs an error every pass, here once at start
        self.writes_endpoints = not ipaddress.ip_address(self.public_address).is_loopback
        self.public_port = public_port
        self.interval = interval
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        """One pass now (the server is not serving yet, so the first IP is still free), then
        one every `interval` in the background."""
        await self.ensure_namespaces()
        if not self.writes_endpoints:
            log.warning("the kubernetes service gets no endpoints: its address is loopback, which "
                        "endpoints may not be; set --advertise-address (or --bind-address)",
                        address=self.public_address)
        try:
            await self.reconcile(reconcile_service=True)
        except errors.StatusError as exc:  # e.g. its IP taken by another service meanwhile
            log.error("unable to sync kubernetes service", error=exc.message)
        self._task = asyncio.create_task(self._loop(), name="apiserver-bootstrap")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.ensure_namespaces()
                await self.reconcile(reconcile_service=False)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a failed pass is retried next interval
                log.warning("unable to sync kubernetes service", error=repr(exc))

    async def ensure_namespaces(self) -> None:
        for name in SYSTEM_NAMESPACES:
            await self._create_if_missing(self.namespaces, "", name, {
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    async def reconcile(self, *, reconcile_service: bool) -> None:
        """upstream UpdateKubernetesService(reconcile)."""
        try:
            namespace = await self.namespaces.get("", NAMESPACE)
        except errors.StatusError as exc:
            if exc.code == 404:
                return  # being recreated by ensure_namespaces next pass
            raise
        if (namespace.get("metadata") or {}).get("deletionTimestamp"):
            return  # terminating: wait until it is gone and recreated
        await self._ensure_service(reconcile_service)
        if self.writes_endpoints:
            await self._ensure_endpoints()

    async def _ensure_service(self, reconcile_service: bool) -> None:
        desired = kubernetes_service(self.service_ip, self.public_port)
        existing = await self._create_if_missing(self.services, NAMESPACE, SERVICE_NAME, desired)
        if existing is None or not reconcile_service:
            return
        updated = service_update(existing, self.public_port)
        if updated is not None:
            log.warning("resetting master service", service=SERVICE_NAME,
                        ports=updated["spec"]["ports"])
            await self.services.update(NAMESPACE, SERVICE_NAME, lambda _old: updated)

    async def _ensure_endpoints(self) -> None:
        subsets = endpoint_subsets(self.public_address, self.public_port)
        existing = await self._create_if_missing(
            self.endpoints, NAMESPACE, SERVICE_NAME,
            kubernetes_endpoints(self.public_address, self.public_port))
        if existing is None or existing.get("subsets") == subsets:
            return
        log.info("resetting kubernetes endpoints", address=self.public_address,
                 port=self.public_port)
        await self.endpoints.update(NAMESPACE, SERVICE_NAME,
                                    lambda old: {**(old or {}), "subsets": subsets})

    @staticmethod
    async def _create_if_missing(registry: Registry, namespace: str, name: str,
                                 body: Obj) -> Obj | None:
        """The existing object, or None after creating `body` (a lost race counts as
        existing: the next pass looks again)."""
        try:
            return await registry.get(namespace, name)
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
        try:
            await registry.create(namespace, body)
            log.debug("created", kind=body["kind"], namespace=namespace or None, name=name)
        except errors.StatusError as exc:
            if exc.reason != "AlreadyExists":
                raise
        return None
