"""NamespaceLifecycle: no new content in a namespace that is missing or being deleted.

Kubernetes v1.0 piece: plugin/pkg/admission/namespace/lifecycle (and NamespaceExists). Creating
in a namespace that does not exist is 404 `namespaces "x" not found`; creating in a Terminating
one is 403 Forbidden with upstream's message, so that the namespace controller can finish.
A LocalSubjectAccessReview is exempt (upstream's accessReviewResources): asking what someone
may do in a namespace creates nothing there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ...api import errors
from .chain import Attributes

#: lifecycle.go's accessReviewResources: never stored, so never refused
ACCESS_REVIEW_RESOURCES = frozenset({("authorization.k8s.io", "localsubjectaccessreviews")})


class NamespaceLifecycle:
    name = "NamespaceLifecycle"

    def __init__(self, get_namespace: Callable[[str], Awaitable[dict]]) -> None:
        self._get_namespace = get_namespace

    async def admit(self, attrs: Attributes) -> None:
        if attrs.operation != "CREATE" or not attrs.strategy.namespaced or not attrs.namespace:
            return
        if attrs.subresource:  # bindings and other subresource creates act on existing objects
            return
        if (attrs.strategy.group, attrs.strategy.resource) in ACCESS_REVIEW_RESOURCES:
            return
        try:
            namespace = await self._get_namespace(attrs.namespace)
        except errors.StatusError as exc:
            if exc.code == 404:
                raise errors.not_found("namespaces", attrs.namespace) from None
            raise
        if (namespace.get("status") or {}).get("phase") == "Terminating":
            raise errors.StatusError(
                403, "Forbidden",
                f'{attrs.strategy.resource} "{attrs.name}" is forbidden: unable to create new '
                f"content in namespace {attrs.namespace} because it is being terminated",
                {"name": attrs.name, "kind": attrs.strategy.resource,
                 "causes": [{"reason": "NamespaceTerminating",
                             "message": f"namespace {attrs.namespace} is being terminated",
                             "field": "metadata.namespace"}]},
            )
