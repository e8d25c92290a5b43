"""NamespaceExists and NamespaceAutoProvision: what to do about a request's missing namespace.

Kubernetes piece: plugin/pkg/admission/namespace/exists and namespace/autoprovision (v1.0 and
later). NamespaceExists refuses any create, update or delete in a namespace that does not exist
with upstream's 404 `namespaces "x" not found`; NamespaceAutoProvision instead creates the
namespace on the first create into it (losing a race to another creator is fine).
Namespaces themselves and cluster-scoped resources are never checked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...api import errors
from .chain import Attributes

GetNamespace = Callable[[str], Awaitable[dict[str, Any]]]
CreateNamespace = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def applies(attrs: Attributes, operations: tuple[str, ...]) -> bool:
    """True when `attrs` is an operation in `operations` on a namespaced, non-Namespace object."""
    return (attrs.operation in operations and bool(attrs.namespace)
            and attrs.strategy.namespaced and attrs.strategy.kind != "Namespace")


async def namespace_exists(get_namespace: GetNamespace, namespace: str) -> bool:
    try:
        await get_namespace(namespace)
    except errors.StatusError as exc:
        if exc.code == 404:
            return False
        raise
    return True


class NamespaceExists:
    name = "NamespaceExists"

    def __init__(self, get_namespace: GetNamespace) -> None:
        self._get_namespace = get_namespace

    async def admit(self, attrs: Attributes) -> None:
        if not applies(attrs, ("CREATE", "UPDATE", "DELETE")):
            return
        if not await namespace_exists(self._get_namespace, attrs.namespace):
            raise errors.not_found("namespaces", attrs.namespace)


class NamespaceAutoProvision:
    name = "NamespaceAutoProvision"

    def __init__(self, get_namespace: GetNamespace, create_namespace: CreateNamespace) -> None:
        self._get_namespace = get_namespace
        self._create_namespace = create_namespace

    async def admit(self, attrs: Attributes) -> None:
        if not applies(attrs, ("CREATE",)):
            return
        if await namespace_exists(self._get_namespace, attrs.namespace):
            return
        try:
            await self._create_namespace({"apiVersion": "v1", "kind": "Namespace",
                                          "metadata": {"name": attrs.namespace}})
        except errors.StatusError as exc:
            if exc.reason != "AlreadyExists":
                raise
