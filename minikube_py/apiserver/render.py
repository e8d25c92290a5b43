"""Response bodies: objects, lists, Tables and Status, as bytes.

Kubernetes piece: k8s.io/apiserver/pkg/endpoints/handlers/responsewriters (WriteObject,
ErrorNegotiated) and the server-side printing of `meta.k8s.io/v1` Tables (v1.10+, which is
the only way kubectl shows READY/STATUS columns for built-in types). Lists of stored objects
are assembled from stored bytes without decoding (registry/codec.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Protocol

import orjson
from aiohttp import web

from ..api import tables
from ..api.errors import StatusError
from ..registry.strategy import Obj, Strategy
from . import protobuf_render, transform
from .negotiation import Output, Partial, dump_yaml, output_format

JSON = "application/json"


def json_response(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=body, status=status, content_type=JSON, headers=headers)


def object_response(obj: Any, output: Output | Partial, status: int = 200) -> web.Response:
    """An object (or list) in the negotiated output; a metadata-only output converts it first
    (transform.py: a Status stays itself, a kind that does not fit is 406)."""
    if isinstance(output, Partial):
        obj = transform.to_partial(obj, output.kind, output.api_version)
        output = output.format
    if output is Output.YAML:
        return web.Response(body=dump_yaml(obj), status=status, content_type="application/yaml")
    if output is Output.PROTOBUF:
        body = protobuf_render.object_body(obj)
        if body is not None:  # else JSON: an object without a message (client-go accepts it)
            return protobuf_render.response(body, status)
    return json_response(orjson.dumps(obj), status)


def status_response(error: StatusError, accept: str | None = None) -> web.Response:
    """A Status error in the client's preferred format: protobuf when it asks for that first
    (client-go decodes a protobuf Status), else JSON."""
    if accept and "protobuf" in accept and _prefers_protobuf(accept):
        return protobuf_render.response(protobuf_render.status_body(error), error.code,
                                        error.headers or None)
    # Go's json.Encoder ends what it writes with a newline, and upstream's Status bodies too
    return json_response(orjson.dumps(error.status()) + b"\n", error.code, error.headers or None)


def _prefers_protobuf(accept: str) -> bool:
    """Errors are negotiated without conversions (upstream's DefaultEndpointRestrictions): a
    metadata client's `...protobuf;as=PartialObjectMetadata` offer does not count."""
    try:
        return output_format(accept) is Output.PROTOBUF
    except StatusError:  # nothing acceptable: the error itself is written as JSON
        return False


def success_status(code: int = 200, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {},
                            "status": "Success", "code": code}
    if details:
        body["details"] = details
    return body


def list_metadata(revision: int, continue_token: str | None, remaining: int | None) -> dict[str, Any]:
    md: dict[str, Any] = {"resourceVersion": str(revision)}
    if continue_token:
        md["continue"] = continue_token
        if remaining:
            md["remainingItemCount"] = remaining
    return md


def list_bytes(strategy: Strategy, md: dict[str, Any], items: Iterable[bytes]) -> bytes:
    """`{"kind":"PodList","apiVersion":"v1","metadata":{..},"items":[..]}` from item bytes."""
    return b'{"kind":"%sList","apiVersion":"%s","metadata":%s,"items":[%s]}' % (
        strategy.kind.encode(), strategy.api_version.encode(), orjson.dumps(md),
        b",".join(items),
    )


def list_object(strategy: Strategy, md: dict[str, Any], items: list[Obj]) -> dict[str, Any]:
    return {"kind": f"{strategy.kind}List", "apiVersion": strategy.api_version, "metadata": md,
            "items": items}


def _row_object(obj: Obj, include: str) -> Any:
    if include == "None":
        return None
    if include == "Object":
        return obj
    return transform.partial_object(obj)


class TableConvertor(Protocol):
    """A resource's own Table printer (upstream rest.TableConvertor): custom resources print
    their CRD's columns (apiextensions/printer.py); built-in kinds use api/tables.py."""

    def column_definitions(self) -> list[dict[str, Any]]: ...

    def row_cells(self, obj: Obj, now: float | None = None) -> list[Any]: ...


def table(kind: str, objects: Iterable[Obj], md: dict[str, Any], include: str = "Metadata",
          now: float | None = None, convertor: TableConvertor | None = None) -> dict[str, Any]:
    now = time.time() if now is None else now
    rows = []
    if convertor is None:
        objects = tables.list_order(kind, objects)
    for obj in objects:
        cells = (convertor.row_cells(obj, now) if convertor is not None
                 else tables.row_cells(kind, obj, now))
        row: dict[str, Any] = {"cells": cells}
        embedded = _row_object(obj, include)
        if embedded is not None:
            row["object"] = embedded
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": md,
            "columnDefinitions": (convertor.column_definitions() if convertor is not None
                                  else tables.column_definitions(kind)), "rows": rows}


@lru_cache(maxsize=None)
def table_event_encoder(kind: str, include: str = "Metadata",
                        convertor: TableConvertor | None = None):
    """A watch encoder that wraps each event's object as a one-row Table (kubectl get -w).
    One encoder per (kind, include), so the fan-out's per-encoder cache shares its output
    between every Table watcher of a resource."""

    def encode(event_type: str, obj: Obj) -> bytes:
        rv = (obj.get("metadata") or {}).get("resourceVersion", "")
        body = table(kind, [obj], {"resourceVersion": rv}, include, convertor=convertor)
        return b'{"type":"%s","object":%s}\n' % (event_type.encode(), orjson.dumps(body))

    return encode

