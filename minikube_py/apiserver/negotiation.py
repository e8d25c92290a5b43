"""Content negotiation: which format a client accepts, and decoding request bodies.

Kubernetes piece: k8s.io/apiserver/pkg/endpoints/handlers/negotiation (NegotiateOutputMediaType,
with the `as=Table;g=meta.k8s.io;v=v1` parameters kubectl sends for human output) and the
request decoding in handlers/rest.go (body limit, JSON, YAML or protobuf, "the body of the
request was in an unknown format"). Protobuf is decoded (client-go components and kubectl 1.32+
send it) and served to clients that prefer it: client-go asks for
`application/vnd.kubernetes.protobuf, application/json`. As upstream's AllowsMediaTypeTransform,
a Table (`as=Table`) is served only as JSON or YAML, so a protobuf offer of it is passed over for
the client's next one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import orjson
import yaml
from aiohttp import web
from aiohttp.http_exceptions import ContentEncodingError
from aiohttp.web_protocol import RequestHandler, RequestPayloadError

from ..api import bounds, errors, yamljson
from ..api.protobuf import PROTOBUF_CONTENT_TYPE, decode_object

MAX_BODY_BYTES = bounds.MAX_BODY_BYTES  # upstream: "Request entity too large: limit is 3145728"


class Output(enum.Enum):
    JSON = "application/json"
    YAML = "application/yaml"
    TABLE = "table"
    PROTOBUF = PROTOBUF_CONTENT_TYPE


#: the conversions upstream's AllowsMediaTypeTransform grants in every format
PARTIAL_KINDS = frozenset({"PartialObjectMetadata", "PartialObjectMetadataList"})
_META_VERSIONS = ("v1", "v1beta1")


@dataclass(frozen=True, slots=True)
class Partial:
    """A response converted to metadata only, in a base format: the
    `as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1` offers of client-go's metadata client
    (the garbage collector's and quota's informers, kube-scheduler's). It is not an Output, so
    every `output is Output.X` fast path passes it by and the generic path converts
    (render.object_response, apiserver/transform.py)."""

    format: Output  # JSON, YAML or PROTOBUF
    kind: str  # PartialObjectMetadata or PartialObjectMetadataList
    api_version: str  # meta.k8s.io/v1 or meta.k8s.io/v1beta1


def base_format(output: Output | Partial) -> Output:
    """The wire format of a negotiated output (JSON for a Table)."""
    if isinstance(output, Partial):
        return output.format
    return Output.JSON if output is Output.TABLE else output


def _params(part: str) -> tuple[str, dict[str, str]]:
    media, *rest = [p.strip() for p in part.split(";")]
    params = {}
    for item in rest:
        key, _, value = item.partition("=")
        params[key.strip().lower()] = value.strip()
    return media.lower(), params


_CACHE: dict[str, Output | Partial] = {}


def _offers(accept: str) -> list[tuple[str, dict[str, str]]]:
    """The Accept header's offers, best first: by q-value (an offer of q=0 is refused), then
    concrete types before wildcards, otherwise in the client's order (goautoneg.ParseAccept)."""
    ranked = []
    for order, part in enumerate(accept.split(",")):
        media, params = _params(part)
        if not media:
            continue
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 1.0
        if q <= 0:
            continue
        kind, _, sub = media.partition("/")
        ranked.append((-q, kind == "*", sub == "*", order, media, params))
    ranked.sort()
    return [(media, params) for *_, media, params in ranked]


def _choose(media: str, params: dict[str, str]) -> Output | Partial | None:
    """What one offer gets us, None when we do not serve it."""
    kind = params.get("as")
    if media in ("application/json", "application/*", "*/*", "*"):
        base = Output.JSON
    elif media in ("application/yaml", "text/yaml"):
        base = Output.YAML
    elif media == PROTOBUF_CONTENT_TYPE:
        base = Output.PROTOBUF
    else:
        return None
    if kind is None:
        return base
    if params.get("g") != "meta.k8s.io" or params.get("v") not in _META_VERSIONS:
        return None  # a conversion we do not have: try the next offer
    if kind in PARTIAL_KINDS:
        return Partial(base, kind, f"meta.k8s.io/{params['v']}")
    if kind == "Table" and base is Output.JSON:  # Table: JSON (and YAML upstream) only
        return Output.TABLE
    return None


def output_format(accept: str | None) -> Output | Partial:
    """The best acceptable offer of the client's Accept header (upstream's
    NegotiateOutputMediaType); 406 when there is none."""
    if not accept:
        return Output.JSON
    cached = _CACHE.get(accept)
    if cached is not None:
        return cached
    result = None
    for media, params in _offers(accept):
        result = _choose(media, params)
        if result is not None:
            break
    if result is None:
        raise errors.not_acceptable(accept)
    if len(_CACHE) < 256:
        _CACHE[accept] = result
    return result


#: media types a request body may be in (upstream's serializers for built-in kinds)
_JSON_TYPES = frozenset({"application/json", ""})
_YAML_TYPES = frozenset({"application/yaml", "text/yaml", "application/apply-patch+yaml"})


def decode_body(data: bytes, content_type: str | None) -> Any:
    """JSON (the default), YAML or protobuf, as a bounded tree (api/bounds.py); 415 for any
    other media type — `text/plain` included, which a web page may send cross-site without a
    CORS preflight (upstream answers it 415 too) — and 400 for a malformed document."""
    media = (content_type or "application/json").split(";")[0].strip().lower()
    if media in _JSON_TYPES:
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise errors.bad_request(f"error decoding request body: invalid JSON: {exc}") from None
        bounds.check_json_body(data, doc)
        return doc
    if media in _YAML_TYPES:
        return yamljson.load(data)
    if media == PROTOBUF_CONTENT_TYPE:  # kubectl 1.32+ typed `create` subcommands
        doc = decode_object(data)
        if bounds.might_be_large(data):
            bounds.measure(doc)
        return doc
    raise errors.unsupported_media_type(content_type or "")


def body_type(request: web.Request) -> str:
    """The Content-Type a client sent ("" when it sent none). Not `request.content_type`:
    aiohttp reports a missing header as application/octet-stream, while a missing type means
    JSON to the API server (the official python client sends none on creates)."""
    return request.headers.get("Content-Type", "")


def decode_cost(data: bytes, content_type: str | None) -> int:
    """A weight for `offload`: bytes for JSON and protobuf; YAML costs about eight times more
    per byte to decode (libyaml composes, Python resolves every scalar) unless it is JSON."""
    media = (content_type or "").split(";")[0].strip().lower()
    if media in _YAML_TYPES and not yamljson.is_json(data):  # JSON in YAML reads as JSON
        return len(data) * 8
    return len(data)


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
    rather than trusting Content-Length, and so do we). A compressed body (Content-Encoding
    gzip/deflate) is inflated as it streams in, so the limit applies to what it inflates to —
    a "zip bomb" stops at 3 MiB — and a body that does not inflate is a 400."""
    data = bytearray()
    try:
        async for chunk in request.content.iter_chunked(65536):
            data += chunk
            if len(data) > MAX_BODY_BYTES:
                _stop_reading(request)
                raise errors.request_entity_too_large(MAX_BODY_BYTES)
    except (ContentEncodingError, RequestPayloadError) as exc:
        if isinstance(exc, RequestPayloadError) and not isinstance(
                exc.__cause__ or exc.__context__, ContentEncodingError):
            raise  # the body was cut short: the client went away (connection.py)
        _stop_reading(request)
        encoding = request.headers.get("Content-Encoding", "")
        raise errors.bad_request(
            f'error decoding request body: it is not valid "{encoding}" data (Content-Encoding)'
        ) from None
    return bytes(data)


def _stop_reading(request: web.Request) -> None:
    """Read nothing more of a refused body. Left alone, aiohttp would drain the rest after the
    answer ("lingering") and inflate it on the loop — a 64 MiB gzip bomb held the loop half a
    second after its 413. The connection stops parsing (and closes once answered) and the body
    is marked complete, so there is nothing to drain."""
    if isinstance(request.protocol, RequestHandler):  # not the in-process transport's
        request.protocol.close()
    if not request.content.is_eof():
        request.content.feed_eof()
