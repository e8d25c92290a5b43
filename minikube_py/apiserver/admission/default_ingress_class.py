"""DefaultIngressClass: an Ingress created without a class gets the cluster's default one.

Kubernetes piece: plugin/pkg/admission/network/defaultingressclass (on by default). On create of
an Ingress (not a subresource) that has neither `spec.ingressClassName` nor the legacy
`kubernetes.io/ingress.class` annotation, the IngressClass annotated
`ingressclass.kubernetes.io/is-default-class: "true"` names the class; with several annotated,
the newest wins, ties by name (1.31; older releases refused the Ingress with 403). No default: nothing changes.
Which class is the default is api/networking.py's `default_class`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...api.networking import default_class
from ...api.validation.networking import INGRESS_CLASS_ANNOTATION
from .chain import Attributes

ListClasses = Callable[[], Awaitable[list[dict[str, Any]]]]


class DefaultIngressClass:
    name = "DefaultIngressClass"

    def __init__(self, list_classes: ListClasses) -> None:
        self._list = list_classes

    async def admit(self, attrs: Attributes) -> None:
        if attrs.operation != "CREATE" or attrs.subresource or not isinstance(attrs.obj, dict):
            return
        if (attrs.strategy.group, attrs.strategy.resource) != ("networking.k8s.io",
                                                               "ingresses"):
            return
        spec = attrs.obj.get("spec")
        if not isinstance(spec, dict) or spec.get("ingressClassName") is not None:
            return
        annotations = (attrs.obj.get("metadata") or {}).get("annotations")
        if isinstance(annotations, dict) and INGRESS_CLASS_ANNOTATION in annotations:
            return
        chosen = default_class(await self._list())
        if chosen is not None:
            spec["ingressClassName"] = chosen["metadata"]["name"]
