"""Content negotiation: which format a client accepts, and decoding request bodies.

Kubernetes piece: k8s.io/apiserver/pkg/endpoints/handlers/negotiation (NegotiateOutputMediaType,
with the `as=Table;g=meta.k8s.io;v=v1` parameters kubectl sends for human output) and the
request decoding in handlers/rest.go (body limit, JSON, YAML or protobuf, "the body of the
request was in an unknown format"). Protobuf is decoded (kubectl 1.32+ sends it for typed
`create` subcommands) but never served: kubectl lists JSON after it in Accept and uses that.
"""

from __future__ import annotations

import enum
from typing import Any

import orjson
import yaml
from aiohttp import web

from ..api import errors
from ..api.protobuf import PROTOBUF_CONTENT_TYPE, decode_object

MAX_BODY_BYTES = 3 * 1024 * 1024  # upstream: "Request entity too large: limit is 3145728"


class Output(enum.Enum):
    JSON = "application/json"
    YAML = "application/yaml"
    TABLE = "table"


def _params(part: str) -> tuple[str, dict[str, str]]:
    media, *rest = [p.strip() for p in part.split(";")]
    params = {}
    for item in rest:
        key, _, value = item.partition("=")
        params[key.strip().lower()] = value.strip()
    return media.lower(), params


_CACHE: dict[str, Output] = {}


def output_format(accept: str | None) -> Output:
    """The first acceptable offer in the client's order (no q-values are used by kubectl)."""
    if not accept:
        return Output.JSON
    cached = _CACHE.get(accept)
    if cached is not None:
        return cached
    result = None
    for part in accept.split(","):
        media, params = _params(part)
        if media in ("application/json", "application/*", "*/*", "*"):
            kind = params.get("as")
            if kind is None:
                result = Output.JSON
            elif kind == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") in (
                "v1", "v1beta1"
            ):
                result = Output.TABLE
            else:
                continue  # PartialObjectMetadata etc.: try the next offer
            break
        if media in ("application/yaml", "text/yaml") and "as" not in params:
            result = Output.YAML
            break
    if result is None:
        raise errors.not_acceptable(accept)
    if len(_CACHE) < 256:
        _CACHE[accept] = result
    return result


def decode_body(data: bytes, content_type: str | None) -> Any:
    """JSON (the default) or YAML; 415 for anything else, 400 for a malformed document."""
    media = (content_type or "application/json").split(";")[0].strip().lower()
    if media in ("application/json", "", "text/plain", "application/octet-stream"):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise errors.bad_request(f"error decoding request body: invalid JSON: {exc}") from None
    if media in ("application/yaml", "text/yaml", "application/apply-patch+yaml"):
        return decode_yaml(data)
    if media == PROTOBUF_CONTENT_TYPE:  # kubectl 1.32+ typed `create` subcommands
        return decode_object(data)
    raise errors.unsupported_media_type(content_type or "")


def decode_yaml(data: bytes) -> Any:
    try:
        return _as_json_numbers(yaml.load(data, Loader=_SafeLoader))
    except yaml.YAMLError as exc:
        raise errors.bad_request(f"error decoding YAML: {exc}") from None


_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def _as_json_numbers(doc: Any) -> Any:
    """Integers beyond 64 bits become floats, as the JSON decoder (orjson) reads them: YAML
    gives Python's unbounded ints, which no later JSON encoding could write."""
    stack = [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            if isinstance(value, int) and not isinstance(value, bool) and not _INT_MIN <= value <= _INT_MAX:
                node[key] = float(value)
            elif isinstance(value, (dict, list)):
                stack.append(value)
    if isinstance(doc, int) and not isinstance(doc, bool) and not _INT_MIN <= doc <= _INT_MAX:
        return float(doc)
    return doc


class _SafeLoader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """YAML 1.1 SafeLoader; timestamps stay strings as in Kubernetes' YAML-to-JSON."""


_SafeLoader.yaml_implicit_resolvers = {
    k: [r for r in v if r[0] != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def decode_json_object(data: bytes, content_type: str | None) -> dict[str, Any]:
    body = decode_body(data, content_type)
    if not isinstance(body, dict):
        raise errors.bad_request(
            f"the body of the request must be a JSON object, got {type(body).__name__}"
        )
    return body


def dump_yaml(obj: Any) -> bytes:
    return yaml.dump(obj, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper),
                     default_flow_style=False, sort_keys=False).encode()


async def read_body(request: web.Request) -> bytes:
    """The request body, refused with 413 once it passes 3 MiB (upstream reads limit+1 bytes
    rather than trusting Content-Length, and so do we)."""
    data = bytearray()
    async for chunk in request.content.iter_chunked(65536):
        data += chunk
        if len(data) > MAX_BODY_BYTES:
            raise errors.request_entity_too_large(MAX_BODY_BYTES)
    return bytes(data)
