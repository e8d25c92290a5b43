"""NamespaceLifecycle: no new content in a namespace that is missing or being deleted.

Kubernetes v1.0 piece: plugin/pkg/admission/namespace/lifecycle (and NamespaceExists). Creating
in a namespace that does not exist is 404 `namespaces "x" not found`; creating in a Terminating
one is 403 Forbidden with upstream's message, so that the namespace controller can finish.
A LocalSubjectAccessReview is exempt (upstream's accessReviewResources): asking what someone
may do in a namespace creates nothing there.

Reads go through the admission namespace informer (listers.py), as upstream's lister: a
namespace not in the cache yet (created a moment ago) is read live, and so is one deleted
through this server in the last 30 s while the cache still says Active (upstream's
forceLiveLookupCache). A refusal is always decided on a live read: a cached Terminating phase
is confirmed with a GET, so a namespace that is gone by now answers 404 as before.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Awaitable, Callable

from ...api import errors
from .chain import Attributes

#: lifecycle.go's accessReviewResources: never stored, so never refused
ACCESS_REVIEW_RESOURCES = frozenset({("authorization.k8s.io", "localsubjectaccessreviews")})
#: lifecycle.go forceLiveLookupTTL, and the size of its LRU of deleted namespaces
FORCE_LIVE_TTL = 30.0
FORCE_LIVE_ENTRIES = 100


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(self, get_namespace: Callable[[str], Awaitable[dict]],
                 cached_namespace: Callable[[str], dict | None] = lambda name: None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._get_namespace = get_namespace
        self._cached = cached_namespace
        self._clock = clock
        #: namespace name -> until when creates in it read the namespace live
        self._force_live: collections.OrderedDict[str, float] = collections.OrderedDict()

    async def admit(self, attrs: Attributes) -> None:
        if attrs.operation == "DELETE" and not attrs.subresource \
                and (attrs.strategy.group, attrs.strategy.resource) == ("", "namespaces"):
            self._remember_deleted(attrs.name)
            return
        if attrs.operation != "CREATE" or not attrs.strategy.namespaced or not attrs.namespace:
            return
        if attrs.subresource:  # bindings and other subresource creates act on existing objects
            return
        if (attrs.strategy.group, attrs.strategy.resource) in ACCESS_REVIEW_RESOURCES:
            return
        namespace = self._cached(attrs.namespace)
        if namespace is None or _terminating(namespace) or self._live_wanted(attrs.namespace):
            try:
                namespace = await self._get_namespace(attrs.namespace)
            except errors.StatusError as exc:
                if exc.code == 404:
                    raise errors.not_found("namespaces", attrs.namespace) from None
                raise
        if _terminating(namespace):
            raise errors.StatusError(
                403, "Forbidden",
                f'{attrs.strategy.resource} "{attrs.name}" is forbidden: unable to create new '
                f"content in namespace {attrs.namespace} because it is being terminated",
                {"name": attrs.name, "kind": attrs.strategy.resource,
                 "causes": [{"reason": "NamespaceTerminating",
                             "message": f"namespace {attrs.namespace} is being terminated",
                             "field": "metadata.namespace"}]},
            )

    def _remember_deleted(self, name: str) -> None:
        self._force_live[name] = self._clock() + FORCE_LIVE_TTL
        self._force_live.move_to_end(name)
        while len(self._force_live) > FORCE_LIVE_ENTRIES:
            self._force_live.popitem(last=False)

    def _live_wanted(self, name: str) -> bool:
        """Deleted through this server lately: the cache may not show it Terminating yet."""
        until = self._force_live.get(name)
        if until is None:
            return False
        if until <= self._clock():
            del self._force_live[name]
            return False
        return True


def _terminating(namespace: dict) -> bool:
    return (namespace.get("status") or {}).get("phase") == "Terminating"
