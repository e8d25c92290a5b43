"""Type checks on request bodies: apiVersion/kind, and unknown fields (`fieldValidation`).

Kubernetes piece: the decoding step of k8s.io/apiserver handlers (a body of the wrong kind or
version is 400 BadRequest) and server-side field validation (KEP-2885, v1.25+):
`fieldValidation=Strict` rejects unknown or duplicated fields with 400 `strict decoding error:
unknown field "spec.foo"`, `Warn` (the server default) answers with `Warning` headers, and
`Ignore` drops them silently. Unknown fields are found by walking the same OpenAPI schemas
`kubectl explain` reads (openapi_schemas.py), so the two can never disagree.
"""

from __future__ import annotations

from typing import Any

from ..api import errors
from ..registry.strategy import Strategy
from .openapi_schemas import REF_PREFIX, SCHEMAS, schema_name

_MODES = ("", "Ignore", "Warn", "Strict")
_MAX_REPORTED = 20


def check_type_meta(body: dict[str, Any], strategy: Strategy) -> None:
    """A body naming another kind or version is refused (upstream: decode into the wrong
    type fails before anything else)."""
    api_version = body.get("apiVersion")
    kind = body.get("kind")
    if api_version not in (None, "") and api_version != strategy.api_version:
        raise errors.bad_request(
            f'the API version in the data ({api_version}) does not match the expected API '
            f'version ({strategy.api_version})')
    if kind not in (None, "") and kind != strategy.kind:
        raise errors.bad_request(
            f'{kind} in version "{strategy.version}" cannot be handled as a {strategy.kind}: '
            f'the object provided is unrecognized (must be of type {strategy.kind})')


def check_patched_type_meta(obj: dict[str, Any], strategy: Strategy) -> None:
    """A patch may not turn an object into another kind."""
    check_type_meta(obj, strategy)


def check_fields(body: dict[str, Any], strategy: Strategy, mode: str) -> list[str]:
    """Unknown-field problems per `mode`: raise (Strict), return warnings (Warn, default),
    or nothing (Ignore)."""
    if mode not in _MODES:
        raise errors.bad_request(
            f'fieldValidation: Unsupported value: "{mode}": supported values: "Ignore", '
            '"Strict", "Warn"')
    if mode == "Ignore":
        return []
    root = SCHEMAS.get(schema_name(strategy.group, strategy.version, strategy.kind))
    if root is None:
        return []
    unknown: list[str] = []
    _walk(body, root, "", unknown)
    if not unknown:
        return []
    messages = [f'unknown field "{path}"' for path in unknown[:_MAX_REPORTED]]
    if mode == "Strict":
        raise errors.bad_request("strict decoding error: " + ", ".join(messages))
    return messages


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    for _ in range(8):
        ref = schema.get("$ref")
        if ref is None:
            all_of = schema.get("allOf")
            if all_of and len(all_of) == 1:
                schema = all_of[0]
                continue
            return schema
        schema = SCHEMAS.get(ref[len(REF_PREFIX):], {}) if ref.startswith(REF_PREFIX) else {}
    return schema


def _walk(value: Any, schema: dict[str, Any], path: str, unknown: list[str]) -> None:
    if len(unknown) >= _MAX_REPORTED:
        return
    schema = _resolve(schema)
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            sub_path = f"{path}.{key}" if path else key
            if props is not None and key in props:
                _walk(item, props[key], sub_path, unknown)
            elif isinstance(extra, dict):
                _walk(item, extra, sub_path, unknown)
            elif props is not None and extra is None:
                unknown.append(sub_path)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _walk(item, items, f"{path}[{i}]", unknown)
