"""The namespace controller: empties a Terminating namespace, then finalizes it.

Kubernetes piece: pkg/controller/namespace (v1.0 NamespaceManager's syncNamespace, later the
NamespacedResourcesDeleter). Deleting a namespace only marks it Terminating (the registry's
namespaces.mark_terminating); this controller discovers every namespaced resource the server
serves, deletes the namespace's objects (DELETE on the collection, propagation Background,
or one by one where the collection verb is missing), and requeues the namespace until nothing
remains — pods on a node take their grace period, objects with finalizers wait for their
controllers. Then it removes the `kubernetes` finalizer through `namespaces/{name}/finalize`,
and the API server removes the namespace.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..api.errors import StatusError
from ..client.resources import NAMESPACES, PODS
from .base import Controller, ControllerContext
from .discovery import APIResource, server_preferred_resources, with_verbs

Obj = dict[str, Any]

FINALIZER = "kubernetes"
#: upstream finalizerEstimateSeconds: wait this long for objects held by finalizers
FINALIZER_ESTIMATE = 5


class ResourcesRemaining(Exception):
    """upstream ResourcesRemainingError: content is still going away; look again later."""

    def __init__(self, estimate: int) -> None:
        super().__init__(f"some content remains in the namespace (estimate {estimate}s)")
        self.estimate = estimate


def estimate_graceful_termination(pods: list[Obj]) -> int:
    """upstream estimateGracefulTerminationForPods: the longest grace period among the pods
    still running (finished pods are removed at once)."""
    estimate = 0
    for pod in pods:
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        grace = (pod.get("metadata") or {}).get("deletionGracePeriodSeconds")
        if grace is None:
            grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds") or 0
        estimate = max(estimate, int(grace))
    return estimate


def requeue_delay(estimate: int) -> float:
    """upstream: look again after half the estimate, plus a second."""
    return estimate / 2 + 1


class NamespaceController(Controller):
    name = "namespace"
    service_account = "namespace-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_namespace_syncs
        self.namespaces = ctx.informers.informer(NAMESPACES)
        self.namespaces.add_event_handler(on_add=self._enqueue,
                                          on_update=lambda old, new: self._enqueue(new))

    def _enqueue(self, ns: Obj) -> None:
        md = ns.get("metadata") or {}
        if md.get("deletionTimestamp"):
            self.queue.add(md["name"])

    async def background(self) -> None:
        """The informer resync of upstream (--namespace-sync-period): look at every
        terminating namespace again now and then."""
        while True:
            await asyncio.sleep(self.ctx.options.namespace_sync_period)
            for ns in self.namespaces.indexer.list():
                self._enqueue(ns)

    async def sync(self, key: str) -> None:
        try:
            await self.delete_namespace(key)
        except ResourcesRemaining as exc:
            self.log.info("namespace content remains; will look again", namespace=key,
                          estimate_seconds=exc.estimate)
            self.queue.add_after(key, requeue_delay(exc.estimate))

    async def delete_namespace(self, name: str) -> None:
        """upstream namespacedResourcesDeleter.Delete."""
        ns = await self._get(name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        if FINALIZER not in ((ns.get("spec") or {}).get("finalizers") or ()):
            return  # finalized by us already; the API server deletes it
        estimate = await self.delete_all_content(name)
        if estimate > 0:
            raise ResourcesRemaining(estimate)
        await self._finalize(name, ns)

    async def _get(self, name: str) -> Obj | None:
        return await self.client.get_or_none(NAMESPACES, name)

    async def delete_all_content(self, namespace: str) -> int:
        """Delete every namespaced object; the seconds to wait for what remains (0: empty)."""
        resources = with_verbs(await server_preferred_resources(self.client), "list", "delete",
                               namespaced=True)
        estimate = 0
        failures: list[str] = []
        for api_resource in resources:
            try:
                estimate = max(estimate, await self._delete_resource(api_resource, namespace))
            except StatusError as exc:
                failures.append(f"{api_resource.resource.plural}: {exc}")
        if failures:
            raise RuntimeError(f"failed to delete content of namespace {namespace}: "
                               + "; ".join(failures))
        return estimate

    async def _delete_resource(self, api_resource: APIResource, namespace: str) -> int:
        resource = api_resource.resource
        if "deletecollection" in api_resource.verbs:
            await self.client.delete_collection(resource, namespace,
                                                propagation_policy="Background")
        else:
            for item in (await self.client.list(resource, namespace)).get("items") or ():
                try:
                    await self.client.delete(resource, item["metadata"]["name"], namespace,
                                             propagation_policy="Background")
                except StatusError as exc:
                    if exc.code != 404:
                        raise
        remaining = (await self.client.list(resource, namespace)).get("items") or []
        if not remaining:
            return 0
        estimate = estimate_graceful_termination(remaining) if resource == PODS else 0
        if estimate:
            return estimate
        if any((item.get("metadata") or {}).get("finalizers") for item in remaining):
            return FINALIZER_ESTIMATE
        raise RuntimeError(f"unexpected items still remain in namespace {namespace} "
                           f"for {resource.plural}")

    async def _finalize(self, name: str, ns: Obj) -> None:
        """PUT namespaces/{name}/finalize without our finalizer (retried on conflict)."""
        while ns is not None:
            spec = ns.get("spec") or {}
            finalizers = [f for f in spec.get("finalizers") or () if f != FINALIZER]
            try:
                await self.client.update(NAMESPACES, {**ns, "spec": {**spec,
                                                                     "finalizers": finalizers}},
                                         subresource="finalize")
            except StatusError as exc:
                if exc.code == 404:
                    return
                if exc.code != 409:
                    raise
                ns = await self._get(name)
                continue
            self.log.info("namespace finalized", namespace=name)
            return
