"""The OpenAPI documents this server publishes, built once from its resource table.

Kubernetes piece: the apiserver's /openapi/v3 discovery (`{"paths": {"api/v1":
{"serverRelativeURL": "/openapi/v3/api/v1?hash=..."}}}`) and per-group-version documents,
which kubectl 1.29+ fetch before create/apply and for `kubectl explain`, and kube-openapi's
/openapi/v2 handler: one Swagger document in JSON or, for `Accept: application/com.github.
proto-openapi.spec.v2[@.]v1.0+protobuf` (what kubectl up to 1.26 sends), gnostic protobuf,
with a quoted ETag (the upper-case hex SHA-512 of the bytes), `Vary: Accept`, a 304 for a
matching If-None-Match and a 406 for a media type it does not serve.

The documents themselves are pure data (openapi.py, openapi_v2.py, openapi_v2_proto.py); this
module encodes them and serves the bytes. v3 is encoded at start; v2 (a few tens of ms of
work) on its first request, on the offload worker, once.
"""

from __future__ import annotations

import asyncio
import email.utils
import gzip
import hashlib
import time
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from .. import offload
from ..api import errors
from ..registry.strategy import Strategy
from .negotiation import _offers  # goautoneg.ParseAccept, shared with the API's
from .openapi import (
    ResourceSpec,
    document_hash,
    openapi_v3_document,
    openapi_v3_index,
)
from .openapi_v2 import swagger_document
from .openapi_v2_proto import encode_document

__all__ = ["OpenAPIDocuments", "V2_PROTOBUF"]

#: the protobuf media type kube-openapi answers with (the `@` form kubectl <= 1.26 asks for
#: does not parse as a MIME type in Go, so it is never sent back)
V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_V2_ACCEPTED = (("application", "json", "application/json", False),
                ("application", "com.github.proto-openapi.spec.v2@v1.0+protobuf", V2_PROTOBUF,
                 True),
                ("application", "com.github.proto-openapi.spec.v2.v1.0+protobuf", V2_PROTOBUF,
                 True))


@dataclass(frozen=True)
class _Encoded:
    body: bytes
    gzipped: bytes  # what a client that accepts gzip gets (upstream wraps the handler in gzip)
    etag: str  # quoted
    last_modified: str  # HTTP date of the build

    @classmethod
    def of(cls, body: bytes, built: float) -> _Encoded:
        return cls(body, gzip.compress(body, 6), f'"{document_hash(body)}"',
                   email.utils.formatdate(built, usegmt=True))

    def not_modified(self, headers: Any) -> bool:
        """http.ServeContent's checks: If-None-Match, else If-Modified-Since."""
        if "If-None-Match" in headers:
            tags = [t.strip() for t in headers["If-None-Match"].split(",")]
            return self.etag in tags or "*" in tags
        return headers.get("If-Modified-Since") == self.last_modified


def choose_v2_format(accept: str) -> tuple[str, bool] | None:
    """(content type to answer with, protobuf?) for an Accept header, or None: 406."""
    for media, _ in _offers(accept or "*/*"):
        kind, _, sub = media.partition("/")
        for want_kind, want_sub, returned, protobuf in _V2_ACCEPTED:
            if kind in (want_kind, "*") and sub in (want_sub, "*"):
                return returned, protobuf
    return None


def _spec(strategy: Strategy) -> ResourceSpec:
    return ResourceSpec(
        plural=strategy.resource, kind=strategy.kind, namespaced=strategy.namespaced,
        verbs=tuple(strategy.verbs), subresources=tuple(s.name for s in strategy.subresources))


class OpenAPIDocuments:
    def __init__(self, groups: dict[str, dict[str, list[Strategy]]]) -> None:
        self._documents: dict[str, bytes] = {}
        hashes: dict[str, str] = {}
        for group, versions in groups.items():
            for version, strategies in versions.items():
                path = f"api/{version}" if not group else f"apis/{group}/{version}"
                doc: dict[str, Any] = openapi_v3_document(group, version,
                                                          [_spec(s) for s in strategies])
                data = orjson.dumps(doc)
                self._documents[path] = data
                hashes[path] = hashlib.sha512(data).hexdigest()[:32].upper()
        self.index_bytes = orjson.dumps(openapi_v3_index(hashes))
        self._v2: asyncio.Future[tuple[_Encoded, _Encoded]] | None = None

    def document_bytes(self, path: str) -> bytes | None:
        return self._documents.get(path.strip("/"))

    def _build_v2(self) -> tuple[_Encoded, _Encoded]:
        document = swagger_document(orjson.loads(b) for b in self._documents.values())
        built = time.time()
        return (_Encoded.of(orjson.dumps(document), built),
                _Encoded.of(encode_document(document), built))

    async def v2_documents(self) -> tuple[_Encoded, _Encoded]:
        """(JSON, protobuf) /openapi/v2, built on first use off the event loop."""
        built = self._v2
        if built is None or built.done() and (built.cancelled() or built.exception()):
            # first use, or the last build failed: (re)build
            self._v2 = asyncio.ensure_future(
                offload.run(self._build_v2, weight=offload.HEAVY_BYTES + 1))
        return await asyncio.shield(self._v2)

    async def serve_v2(self, request: web.Request) -> web.Response:
        """GET /openapi/v2 as kube-openapi's handler answers it."""
        chosen = choose_v2_format(request.headers.get("Accept", ""))
        if chosen is None:
            raise errors.StatusError(406, "NotAcceptable", "only the following media types are "
                                     f"accepted: application/json, {V2_PROTOBUF}")
        content_type, protobuf = chosen
        json_doc, proto_doc = await self.v2_documents()
        encoded = proto_doc if protobuf else json_doc
        headers = {"ETag": encoded.etag, "Vary": "Accept", "Last-Modified": encoded.last_modified}
        if encoded.not_modified(request.headers):
            return web.Response(status=304, headers=headers)
        headers["Content-Type"] = content_type
        if "gzip" in request.headers.get("Accept-Encoding", ""):
            headers["Content-Encoding"] = "gzip"
            return web.Response(body=encoded.gzipped, headers=headers)
        return web.Response(body=encoded.body, headers=headers)
