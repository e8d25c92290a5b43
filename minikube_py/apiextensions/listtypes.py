"""Server-side apply's merge rules for a custom resource, read from its CRD schema.

Kubernetes piece: structured-merge-diff's schema as apiextensions-apiserver builds it from a
structural schema (pkg/controller/openapi/builder + managedfields' type converter): a list is
`atomic` unless it says `x-kubernetes-list-type: set` (scalars merged as a set) or `map`
(objects merged by `x-kubernetes-list-map-keys`); an object is granular unless
`x-kubernetes-map-type: atomic`. Built-in kinds get the same information from hand-kept
tables (api/patch_strategies.py); this module turns a CRD's schema into that same `Struct`,
so server_side_apply and the managedFields bookkeeping run one code path for both.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from ..api.patch_strategies import MERGE, UNKNOWN_KIND, Field, Struct

_MAX_DEPTH = 64  # a CRD schema is bounded by the CRD's size; this bounds the recursion too


class _EveryKey(Mapping[str, Field]):
    """The Struct of a map (`additionalProperties`): the same Field under every key."""

    def __init__(self, value: Field) -> None:
        self._value = value

    def __getitem__(self, key: str) -> Field:
        return self._value

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def apply_struct(raw: Any) -> Struct:
    """The top-level Struct of a custom resource whose openAPIV3Schema is `raw`: ObjectMeta's
    keyed lists as every kind has them, the rest from the schema."""
    fields = dict(UNKNOWN_KIND)
    props = raw.get("properties") if isinstance(raw, dict) else None
    if isinstance(props, dict):
        for name, sub in props.items():
            if name not in ("metadata", "apiVersion", "kind"):
                fields[name] = _field(sub, 0)
    return MappingProxyType(fields)


def _struct(schema: dict[str, Any], depth: int) -> Struct | None:
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        return MappingProxyType({k: _field(v, depth + 1) for k, v in props.items()})
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return _EveryKey(_field(extra, depth + 1))
    return None


def _field(schema: Any, depth: int) -> Field:
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return Field()
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        list_type = schema.get("x-kubernetes-list-type", "atomic")
        if list_type == "set":
            return Field(strategy=MERGE)
        if list_type == "map":
            keys = tuple(k for k in schema.get("x-kubernetes-list-map-keys") or ()
                         if isinstance(k, str))
            item_props = items.get("properties") if isinstance(items.get("properties"), dict) else {}
            defaults = {k: item_props[k]["default"] for k in keys
                        if isinstance(item_props.get(k), dict) and "default" in item_props[k]}
            return Field(strategy=MERGE, merge_key=keys[0] if keys else "",
                         list_keys=keys, fields=_struct(items, depth),
                         key_defaults=MappingProxyType(defaults))
        return Field()
    if schema.get("x-kubernetes-map-type") == "atomic":
        return Field(atomic=True)
    if kind == "object" or "properties" in schema or "additionalProperties" in schema:
        return Field(fields=_struct(schema, depth))
    return Field()
