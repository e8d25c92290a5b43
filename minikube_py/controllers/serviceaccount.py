"""The service accounts controller: every active namespace has a ServiceAccount `default`.

Kubernetes piece: pkg/controller/serviceaccount (v1.0 ServiceAccountsController, started by
kube-controller-manager): namespaces and service accounts come from the shared informers; a
new or updated namespace, or a deleted `default` account, queues the namespace; a sync
creates the account if the namespace is Active and the account is missing. Nothing is created
in a Terminating namespace (the API server would refuse it anyway).
"""

from __future__ import annotations

from typing import Any

from ..api.errors import StatusError
from ..client.resources import NAMESPACES, SERVICEACCOUNTS
from .base import Controller, ControllerContext
from .controller_utils import is_namespace_active

Obj = dict[str, Any]

#: upstream DefaultServiceAccountsControllerOptions: ServiceAccounts = [{Name: "default"}]
MANAGED_ACCOUNTS = ("default",)


class ServiceAccountsController(Controller):
    name = "serviceaccount"
    service_account = "service-account-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_serviceaccount_syncs
        self.namespaces = ctx.informers.informer(NAMESPACES)
        self.accounts = ctx.informers.informer(SERVICEACCOUNTS)
        self.namespaces.add_event_handler(on_add=self._namespace_changed,
                                          on_update=lambda old, new: self._namespace_changed(new))
        self.accounts.add_event_handler(on_delete=self._account_deleted)

    def _namespace_changed(self, ns: Obj) -> None:
        self.queue.add(ns["metadata"]["name"])

    def _account_deleted(self, account: Obj) -> None:
        md = account.get("metadata") or {}
        if md.get("name") in MANAGED_ACCOUNTS and md.get("namespace"):
            self.queue.add(md["namespace"])

    async def sync(self, key: str) -> None:
        ns = self.namespaces.indexer.get(key)
        if not is_namespace_active(ns):
            return
        for name in MANAGED_ACCOUNTS:
            if self.accounts.indexer.get(f"{key}/{name}") is not None:
                continue
            body = {"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": {"name": name, "namespace": key}}
            try:
                await self.client.create(SERVICEACCOUNTS, body, key)
            except StatusError as exc:
                if exc.reason == "AlreadyExists":
                    continue  # our cache is behind; it is there
                if exc.code == 403 and "being terminated" in exc.message:
                    return
                raise
            self.log.info("created service account", namespace=key, name=name)
