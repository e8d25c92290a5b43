"""Responses converted to metadata only: PartialObjectMetadata and PartialObjectMetadataList.

Kubernetes piece: k8s.io/apiserver/pkg/endpoints/handlers/response.go (doTransformObject,
asPartialObjectMetadata, asPartialObjectMetadataList). Why it exists: client-go's metadata client
-- the garbage collector's and the quota controller's informers, kube-scheduler's -- asks for
`as=PartialObjectMetadata;g=meta.k8s.io;v=v1` (one object, watch events) and
`as=PartialObjectMetadataList` (lists), in protobuf or JSON, and decodes exactly that kind; the
full object is refused. Pure functions over JSON-shaped dicts; the formats are render.py's.

As upstream: a Status is never converted (errors, a delete's Status); asking for the list kind
of one object or the object kind of a list is 406 NotAcceptable, after the request ran.
"""

from __future__ import annotations

from typing import Any

from ..api.errors import StatusError

Obj = dict[str, Any]


def is_list(obj: Obj) -> bool:
    """Whether an object is a list kind (meta.IsListType: it has `items`)."""
    return "items" in obj and str(obj.get("kind", "")).endswith("List")


def partial_object(obj: Obj, api_version: str = "meta.k8s.io/v1") -> Obj:
    """meta.AsPartialObjectMetadata: the whole ObjectMeta, under the meta.k8s.io kind."""
    return {"kind": "PartialObjectMetadata", "apiVersion": api_version,
            "metadata": obj.get("metadata") or {}}


def partial_list(obj: Obj, api_version: str = "meta.k8s.io/v1") -> Obj:
    """A list's items as PartialObjectMetadata, its ListMeta kept. Go's list is built by
    appending, so an empty one is `items: null`, as upstream prints it."""
    items = [partial_object(item, api_version) for item in obj.get("items") or ()]
    return {"kind": "PartialObjectMetadataList", "apiVersion": api_version,
            "metadata": obj.get("metadata") or {}, "items": items or None}


def _go_type(obj: Obj) -> str:
    """How upstream's message names the object's internal Go type (`*core.PodList`)."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return f"*{group.split('.')[0] if group else 'core'}.{obj.get('kind', '')}"


def to_partial(obj: Obj, kind: str, api_version: str) -> Obj:
    """The conversion the client asked for (doTransformObject); 406 when it does not fit."""
    if obj.get("kind") == "Status":
        return obj
    if kind == "PartialObjectMetadata":
        if is_list(obj):
            raise StatusError(406, "NotAcceptable",
                              "you requested PartialObjectMetadata, but the requested object is "
                              f"a list ({_go_type(obj)})")
        return partial_object(obj, api_version)
    if not is_list(obj):
        raise StatusError(406, "NotAcceptable",
                          "you requested PartialObjectMetadataList, but the requested object is "
                          f"not a list ({_go_type(obj)})")
    return partial_list(obj, api_version)
