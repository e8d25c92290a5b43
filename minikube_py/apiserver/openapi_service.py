"""The OpenAPI documents this server publishes, built once from its resource table.

Kubernetes piece: the apiserver's /openapi/v3 discovery (`{"paths": {"api/v1":
{"serverRelativeURL": "/openapi/v3/api/v1?hash=..."}}}`) and per-group-version documents,
which kubectl 1.29+ fetch before create/apply and for `kubectl explain`, and kube-openapi's
/openapi/v2 handler: one Swagger document in JSON or, for `Accept: application/com.github.
proto-openapi.spec.v2[@.]v1.0+protobuf` (what kubectl up to 1.26 sends), gnostic protobuf,
with a quoted ETag (the upper-case hex SHA-512 of the bytes), `Vary: Accept`, a 304 for a
matching If-None-Match and a 406 for a media type it does not serve.

The documents themselves are pure data (openapi.py, openapi_v2.py, openapi_v2_proto.py,
openapi_crd.py for custom resources); this module encodes them and serves the bytes. The
built-in v3 documents are encoded at start; v2 (a few tens of ms of work) on its first
request, on the offload worker, once; a CRD change makes the next request rebuild what has
custom resources in it (apiextensions-apiserver's openapi and openapiv3 controllers).
"""

from __future__ import annotations

import asyncio
import email.utils
import gzip
import time
from dataclasses import dataclass
from typing import Any

import orjson
import structlog
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
from .openapi_crd import CustomVersionOpenAPI, Served, crd_openapi
from .openapi_v2 import swagger_document
from .openapi_v2_proto import encode_document

__all__ = ["OpenAPIDocuments", "V2_PROTOBUF"]

log = structlog.get_logger(component="openapi")

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


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _index_hash(data: bytes) -> str:
    """kube-openapi's computeETag: the upper-case hex SHA-512 of the document; it is both the
    `hash` of the index's serverRelativeURL and the document's ETag."""
    return document_hash(data)


def _spec(strategy: Strategy) -> ResourceSpec:
    return ResourceSpec(
        plural=strategy.resource, kind=strategy.kind, namespaced=strategy.namespaced,
        verbs=tuple(strategy.verbs), subresources=tuple(s.name for s in strategy.subresources))


@dataclass(frozen=True)
class _V3View:
    """The /openapi/v3 documents of one generation: built-in and custom paths, and the index."""

    documents: dict[str, bytes]
    hashes: dict[str, str]  # path -> the document's ETag (upstream computeETag)
    index: bytes
    custom: tuple[CustomVersionOpenAPI, ...]
    custom_documents: dict[str, dict[str, Any]]  # the documents above with custom resources


class OpenAPIDocuments:
    """The documents, with custom resources coming and going.

    The built-in documents are encoded once, on the offload worker at the first request that
    needs them (not at start: ~0.3 s of a start's second, for documents only kubectl's
    explain/apply/validation ask for). A CRD change (`set_custom`,
    `remove_custom`) only bumps a generation: the next request rebuilds the group-version
    documents that have custom resources, the index and (on its first request) /openapi/v2 on
    the offload worker, once per generation however many requests wait for it — so a burst
    of CRD writes costs one rebuild and never holds the event loop (upstream's openapi
    controllers likewise rebuild the merged spec off the request path)."""

    def __init__(self, groups: dict[str, dict[str, list[Strategy]]]) -> None:
        self._groups = groups
        #: filled by _ensure_builtin (the built-in documents, their specs and hashes)
        self._builtin: dict[str, bytes] = {}
        self._builtin_specs: dict[str, list[ResourceSpec]] = {}
        self._hashes: dict[str, str] = {}
        self._builtin_built: asyncio.Future[_V3View] | None = None
        #: CRD name -> (the CRD, what each served version offers)
        self._custom: dict[str, tuple[dict[str, Any], Served]] = {}
        #: each CRD's pieces by (name, uid, resourceVersion, served), from the last build
        self._pieces: dict[tuple, list[CustomVersionOpenAPI]] = {}
        #: the built-in paths and definitions in v2 form, converted on the first v2 build
        self._builtin_v2: dict[str, Any] | None = None
        #: encoded definitions and paths of the last protobuf build (openapi_v2_proto.Memo)
        self._proto_memo: dict[int, tuple[Any, str, bytes]] = {}
        self.generation = 0
        self._v3: tuple[int, asyncio.Future[_V3View]] | None = None
        self._v2: tuple[int, asyncio.Future[tuple[_Encoded, _Encoded]]] | None = None

    def _build_builtin(self) -> _V3View:
        """The built-in documents (pure over the groups; on the offload worker)."""
        documents: dict[str, bytes] = {}
        hashes: dict[str, str] = {}
        for group, versions in self._groups.items():
            for version, strategies in versions.items():
                path = _gv_path(group, version)
                specs = [_spec(s) for s in strategies]
                data = orjson.dumps(openapi_v3_document(group, version, specs))
                documents[path] = data
                self._builtin_specs[path] = specs
                hashes[path] = _index_hash(data)
        return _V3View(documents, hashes, orjson.dumps(openapi_v3_index(hashes)), (), {})

    async def _ensure_builtin(self) -> _V3View:
        """The view of the built-in documents alone, built once (retried after a failure)."""
        held = self._builtin_built
        if held is None or (held.done() and (held.cancelled() or held.exception())):
            held = self._builtin_built = asyncio.ensure_future(
                offload.run(self._build_builtin, weight=offload.HEAVY_BYTES + 1))
        view = await asyncio.shield(held)
        if not self._builtin:
            self._builtin.update(view.documents)
            self._hashes.update(view.hashes)
        return view

    # -- custom resources (server.serve_custom / unserve_custom) ---------------------------
    def set_custom(self, name: str, crd: dict[str, Any], strategies: list[Strategy]) -> None:
        """Publish (or republish) CRD `name`'s served versions (`strategies`, one per version,
        as served) from the next request on."""
        served = {s.version: (tuple(s.verbs), tuple(sub.name for sub in s.subresources))
                  for s in strategies}
        self._custom[name] = (crd, served)
        self.generation += 1

    def remove_custom(self, name: str) -> None:
        if self._custom.pop(name, None) is not None:
            self.generation += 1

    # -- building -------------------------------------------------------------------------
    async def _current(self, slot: str, build: Any) -> Any:
        """The build of this generation in `slot` (`_v3`/`_v2`), started once, retried after
        a failure, shared by every request that waits for it."""
        held = getattr(self, slot)
        if held is None or held[0] != self.generation or (
                held[1].done() and (held[1].cancelled() or held[1].exception())):
            future = asyncio.ensure_future(build(self.generation))
            held = (self.generation, future)
            setattr(self, slot, held)
        return await asyncio.shield(held[1])

    async def v3_view(self) -> _V3View:
        empty = await self._ensure_builtin()
        if not self._custom:
            return empty
        return await self._current("_v3", self._start_v3)

    async def _start_v3(self, generation: int) -> _V3View:
        custom = dict(self._custom)  # a snapshot: the worker never sees later changes
        return await offload.run(self._build_v3, custom, weight=offload.HEAVY_BYTES + 1)

    def _build_v3(self, custom: dict[str, tuple[dict[str, Any], Served]]) -> _V3View:
        by_path: dict[str, list[CustomVersionOpenAPI]] = {}
        pieces: list[CustomVersionOpenAPI] = []
        cache: dict[tuple, list[CustomVersionOpenAPI]] = {}
        for name, (crd, served) in sorted(custom.items()):
            md = crd.get("metadata") or {}
            key = (name, md.get("uid"), md.get("resourceVersion"), tuple(sorted(served.items())))
            built = self._pieces.get(key)
            if built is None:
                try:
                    built = crd_openapi(crd, served)
                except (TypeError, ValueError, AttributeError, KeyError) as exc:
                    log.warning("crd openapi skipped", crd=name, error=str(exc))
                    continue
            cache[key] = built
            for piece in built:
                by_path.setdefault(_gv_path(piece.group, piece.version), []).append(piece)
                pieces.append(piece)
        self._pieces = cache  # only the CRDs of this build: one change recomputes one CRD
        documents = dict(self._builtin)
        hashes = dict(self._hashes)
        custom_documents: dict[str, dict[str, Any]] = {}
        for path, parts in by_path.items():
            group, version = parts[0].group, parts[0].version
            specs = [*self._builtin_specs.get(path, ()), *(p.spec for p in parts)]
            schemas = {k: v for p in parts for k, v in p.v3_schemas.items()}
            document = openapi_v3_document(group, version, specs, schemas)
            try:
                data = orjson.dumps(document)
            except orjson.JSONEncodeError as exc:  # a schema nested past orjson's limit
                log.warning("crd openapi skipped", path=path, error=str(exc))
                continue
            documents[path] = data
            hashes[path] = _index_hash(data)
            custom_documents[path] = document
        return _V3View(documents, hashes, orjson.dumps(openapi_v3_index(hashes)),
                       tuple(pieces), custom_documents)

    async def document_bytes(self, path: str) -> bytes | None:
        return (await self.v3_view()).documents.get(path.strip("/"))

    async def serve_v3(self, request: web.Request, path: str) -> web.Response:
        """GET /openapi/v3/<group-version> as kube-openapi's handler3 answers it: the ETag is
        the hash; a request for another `hash` (an index read before a CRD changed) is
        redirected (301) to the current one; the right hash makes the answer immutable."""
        view = await self.v3_view()
        path = path.strip("/")
        body = view.documents.get(path)
        if body is None:
            raise errors.not_found_path()
        etag = view.hashes[path]
        headers = {"ETag": f'"{etag}"', "Vary": "Accept"}
        asked = request.query.get("hash")
        if asked and asked != etag:
            headers["Location"] = f"/openapi/v3/{path}?hash={etag}"
            return web.Response(status=301, headers=headers)
        if asked:
            headers["Cache-Control"] = "public, immutable"
            headers["Expires"] = email.utils.formatdate(time.time() + 365 * 86400, usegmt=True)
        tags = [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]
        if headers["ETag"] in tags:
            return web.Response(status=304, headers=headers)
        headers["Content-Type"] = "application/json"
        return web.Response(body=body, headers=headers)

    async def v2_documents(self) -> tuple[_Encoded, _Encoded]:
        """(JSON, protobuf) /openapi/v2, built on first use (per generation) off the loop."""
        return await self._current("_v2", self._start_v2)

    async def _start_v2(self, generation: int) -> tuple[_Encoded, _Encoded]:
        view = await self.v3_view()
        return await offload.run(self._build_v2, view, weight=offload.HEAVY_BYTES + 1)

    def _build_v2(self, view: _V3View) -> tuple[_Encoded, _Encoded]:
        builtin = self._builtin_v2
        if builtin is None:  # once: the built-in part never changes
            builtin = swagger_document(orjson.loads(b) for b in self._builtin.values())
            self._builtin_v2 = builtin
        # the few definitions the documents with custom resources reach that neither the
        # built-in documents nor the CRDs' own v2 forms have (the paths come with the CRDs)
        known = builtin["definitions"].keys() | {
            name for piece in view.custom for name in piece.v2_definitions}
        extra = swagger_document({"components": {"schemas": {
            k: v for k, v in doc["components"]["schemas"].items() if k not in known}}}
            for doc in view.custom_documents.values())
        definitions = {**builtin["definitions"], **extra["definitions"]}
        paths = dict(builtin["paths"])
        for piece in view.custom:
            paths.update(piece.v2_paths)
        # custom kinds' definitions in their v2 form (stripped as upstream's builder does)
        for piece in view.custom:
            definitions.update(piece.v2_definitions)
        document = {**builtin, "paths": dict(sorted(paths.items())),
                    "definitions": dict(sorted(definitions.items()))}
        built = time.time()
        return (_Encoded.of(orjson.dumps(document), built),
                _Encoded.of(encode_document(document, self._proto_memo), built))

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
