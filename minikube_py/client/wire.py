"""The body format a component's client speaks to the API server: JSON or Kubernetes protobuf.

Kubernetes piece: client-go's rest.Config.ContentType / AcceptContentTypes (the components'
--kube-api-content-type flag, 1.31's ClientConnectionConfiguration.contentType) and the
serializer negotiation in rest/request.go. With protobuf, objects the API has a protobuf message
for are sent as `application/vnd.kubernetes.protobuf` (the `k8s\\x00` envelope), and responses
are asked for as `application/vnd.kubernetes.protobuf, application/json`, so kinds without a
message (custom resources) come back as JSON, as client-go's fallback does. Patches keep their
own JSON patch types. Over HTTP, watches stream protobuf WatchEvent frames (`;stream=watch`,
length-prefixed) too; the in-process transport keeps JSON lines.

Why a module: the REST client stays format-agnostic; encoding and decoding live here, with
the upstream codecs of api/protobuf*.py. Large protobuf bodies are decoded off the event loop
(offload.py): decoding them in Python costs far more than orjson does for the same list.
"""

from __future__ import annotations

from typing import Any

import orjson

from .. import offload
from ..api.errors import StatusError
from ..api.protobuf import PROTOBUF_CONTENT_TYPE, decode_object, decode_watch_event
from ..api.protobuf_encode import NoMessage, encode_object
from .errors import error_from_response, error_from_status
from .transport import RawResponse

JSON = "application/json"
PROTOBUF = PROTOBUF_CONTENT_TYPE
SUPPORTED = (JSON, PROTOBUF)

Obj = dict[str, Any]


class UnsupportedContentType(ValueError):
    """client-go: `serializer for <type> doesn't exist`."""


class WireFormat:
    """How request bodies are encoded and responses asked for and decoded."""

    def __init__(self, content_type: str = JSON) -> None:
        media = content_type.split(";", 1)[0].strip().lower()
        if media not in SUPPORTED:
            raise UnsupportedContentType(
                f"serializer for {content_type} doesn't exist (supported: "
                f"{', '.join(SUPPORTED)})")
        self.content_type = media
        self.protobuf = media == PROTOBUF
        self.accept = f"{PROTOBUF}, {JSON}" if self.protobuf else JSON

    def encode(self, body: Any) -> tuple[bytes, str]:
        """(bytes, content type) of a request body: protobuf when chosen and the object's
        kind has a message, else JSON."""
        if self.protobuf and isinstance(body, dict) and body.get("kind") and \
                body.get("apiVersion"):
            try:
                return encode_object(body), PROTOBUF
            except NoMessage:
                pass
        return orjson.dumps(body), JSON

    async def watch_event(self, framed: bool, payload: bytes) -> tuple[str, Obj] | None:
        """(type, object) of one item of a watch stream: a protobuf frame or a JSON line
        (None for a blank line)."""
        if framed:
            return await offload.run(decode_watch_event, payload, weight=len(payload))
        if not payload.strip():
            return None
        event = orjson.loads(payload)
        return event["type"], event["object"]

    async def decode(self, resp: RawResponse) -> Obj:
        if not resp.body:
            return {}
        if resp.content_type == PROTOBUF:
            return await offload.run(decode_object, resp.body, weight=len(resp.body))
        return orjson.loads(resp.body)

    async def error(self, resp: RawResponse) -> StatusError:
        """The Status of a failed request, whichever format it came in."""
        if resp.content_type == PROTOBUF:
            try:
                doc = await offload.run(decode_object, resp.body, weight=len(resp.body))
            except StatusError:  # not a decodable Status: say what came back
                doc = {}
            if doc.get("kind") == "Status":
                return error_from_status(doc, resp.status)
        return error_from_response(resp.status, resp.body)
