"""Compiled schemas by CRD version, keyed by the CRD's uid and resourceVersion.

Kubernetes piece: apiextensions-apiserver's crdHandler keeps one crdInfo (structural schemas,
validators) per CRD UID and rebuilds it only when the CRD changes; here the same: a create of
a custom resource costs a walk over it, never a compile.
"""

from __future__ import annotations

from typing import Any

from .schema import Node, compile_schema

_MAX = 512
_compiled: dict[tuple[str, str, str], Node] = {}


def schema_for(crd: dict[str, Any], version: dict[str, Any]) -> Node:
    """The compiled openAPIV3Schema of one version of `crd` (cached until the CRD changes)."""
    md = crd.get("metadata") or {}
    key = (str(md.get("uid") or md.get("name")), str(md.get("resourceVersion", "")),
           str(version.get("name")))
    node = _compiled.get(key)
    if node is None:
        raw = (version.get("schema") or {}).get("openAPIV3Schema")
        node = compile_schema(raw)
        if len(_compiled) >= _MAX:
            _compiled.pop(next(iter(_compiled)))
        _compiled[key] = node
    return node
