"""The OpenAPI documents this server publishes, built once from its resource table.

Kubernetes piece: the apiserver's /openapi/v3 discovery (`{"paths": {"api/v1":
{"serverRelativeURL": "/openapi/v3/api/v1?hash=..."}}}`) and per-group-version documents,
which kubectl 1.29+ fetch before create/apply and for `kubectl explain`. The documents
themselves are pure data (openapi.py); this module encodes them once and serves the bytes.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from ..registry.strategy import Strategy
from .openapi import (
    OPENAPI_V2_BODY,
    ResourceSpec,
    openapi_v3_document,
    openapi_v3_index,
)

__all__ = ["OPENAPI_V2_BODY", "OpenAPIDocuments"]


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

    def document_bytes(self, path: str) -> bytes | None:
        return self._documents.get(path.strip("/"))
