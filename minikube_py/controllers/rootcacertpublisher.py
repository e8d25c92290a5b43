"""The root CA certificate publisher: every namespace has a ConfigMap `kube-root-ca.crt`.

Kubernetes piece: pkg/controller/certificates/rootcacertpublisher (on by default since 1.20).
Pods reach the API server with the token and CA of the projected `kube-api-access-<x>` volume
the ServiceAccount admission plugin adds; its CA is this ConfigMap's `ca.crt`. A namespace that
is added, or whose ConfigMap is deleted or changed, is queued; a sync creates or restores the
ConfigMap in an Active namespace. The CA is --root-ca-file (the all-in-one start gives the CA
it generated for the secure port); without one `ca.crt` is empty, which still lets the
simulated kubelet mount the volume.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..api.errors import StatusError
from ..client.resources import CONFIGMAPS, NAMESPACES
from .base import Controller, ControllerContext
from .controller_utils import is_namespace_active

Obj = dict[str, Any]

NAME = "kube-root-ca.crt"
KEY = "ca.crt"
DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using "
               "internal endpoints such as the internal service IP or kubernetes.default.svc. "
               "No other usage is guaranteed across distributions of Kubernetes clusters.")


def desired(namespace: str, ca: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": NAME, "namespace": namespace,
                         "annotations": {"kubernetes.io/description": DESCRIPTION}},
            "data": {KEY: ca}}


class RootCACertPublisher(Controller):
    name = "root-ca-cert-publisher"
    service_account = "root-ca-cert-publisher"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        path = ctx.options.root_ca_file
        self.ca = Path(path).read_text() if path else ""
        self.namespaces = ctx.informers.informer(NAMESPACES)
        self.configmaps = ctx.informers.informer(CONFIGMAPS)
        self.namespaces.add_event_handler(on_add=self._namespace,
                                          on_update=lambda old, new: self._namespace(new))
        self.configmaps.add_event_handler(on_update=lambda old, new: self._configmap(new),
                                          on_delete=self._configmap)

    def _namespace(self, ns: Obj) -> None:
        self.queue.add(ns["metadata"]["name"])

    def _configmap(self, cm: Obj) -> None:
        md = cm.get("metadata") or {}
        if md.get("name") == NAME and md.get("namespace"):
            self.queue.add(md["namespace"])

    async def sync(self, key: str) -> None:
        ns = self.namespaces.indexer.get(key)
        if not is_namespace_active(ns):
            return
        current = self.configmaps.indexer.get(f"{key}/{NAME}")
        try:
            if current is None:
                await self.client.create(CONFIGMAPS, desired(key, self.ca), key)
                self.log.info("published the root CA", namespace=key)
            elif (current.get("data") or {}) != {KEY: self.ca}:
                await self.client.update(CONFIGMAPS, {**current, "data": {KEY: self.ca}})
        except StatusError as exc:
            if exc.reason == "AlreadyExists" or (exc.code == 403 and "being terminated" in
                                                  exc.message):
                return  # our cache is behind / the namespace is going away
            raise
