"""Protobuf response bodies: objects, lists, Status errors and watch frames.

Kubernetes piece: the protobuf half of k8s.io/apiserver/pkg/endpoints/handlers/responsewriters
(WriteObjectNegotiated with `application/vnd.kubernetes.protobuf`) and of the watch server (the
`;stream=watch` stream serializer). Why a module of its own: stored objects are JSON bytes, so a
protobuf GET must decode and re-encode, which costs Python work a JSON GET never pays (it splices
the stored bytes). The encoded message of a stored object is therefore cached by its key and
resourceVersion -- the same revision always encodes to the same bytes -- so a hot object is
encoded once, and a list re-uses the messages of items it has seen (bench/protobuf.py measures
both paths).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import orjson
from aiohttp import web

from ..api.errors import StatusError
from ..api.kinds import proto
from ..api.protobuf import PROTOBUF_CONTENT_TYPE
from ..api.protobuf_encode import (
    NoMessage, encode_object, envelope, list_body, object_message, watch_frame,
)
from ..registry import codec
from ..storage import KeyValue

WATCH_CONTENT_TYPE = PROTOBUF_CONTENT_TYPE + ";stream=watch"


class MessageCache:
    """Encoded messages of stored objects by (key, revision, stored bytes), least recently
    used out first. The bytes are part of the key because the cache is per process and a
    process may hold several stores (tests): two stores' `/registry/minions/node-1` at the
    same revision must not share an encoding. The bytes are the very object the store keeps,
    so a hit compares by identity and the key retains nothing new.

    Bounded in entries and bytes; entries are immutable bytes, so a hit is shared, never
    copied. Big lists are encoded on the offload worker, hence the lock."""

    def __init__(self, max_entries: int = 20_000, max_bytes: int = 64 << 20) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.size = 0
        #: (key, revision, value) -> (apiVersion, kind, message, the GET body around it)
        self._entries: OrderedDict[tuple[str, int, bytes], tuple[str, str, bytes, bytes]] = \
            OrderedDict()
        self._lock = threading.Lock()

    def get(self, kv: KeyValue) -> tuple[str, str, bytes, bytes]:
        """(apiVersion, kind, message, envelope) of a stored object; NoMessage when it has
        none. The envelope is kept too: building it per GET cost as much as the rest of the
        request."""
        key = (kv.key, kv.mod_revision, kv.value)
        hit = self._entries.get(key)  # a hit takes no lock: each OrderedDict call is atomic
        if hit is not None:
            try:
                self._entries.move_to_end(key)
            except KeyError:  # evicted by a worker thread meanwhile: still a valid answer
                pass
            return hit
        api_version, kind, raw = object_message(codec.decode(kv))
        value = (api_version, kind, raw, envelope(api_version, kind, raw))
        with self._lock:
            if key not in self._entries:
                self._entries[key] = value
                self.size += len(raw) + len(value[3])
            while len(self._entries) > self.max_entries or self.size > self.max_bytes:
                _, old = self._entries.popitem(last=False)
                self.size -= len(old[2]) + len(old[3])
        return value


CACHE = MessageCache()


def response(body: bytes, status: int = 200,
             headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=body, status=status, content_type=PROTOBUF_CONTENT_TYPE,
                        headers=headers)


def object_body(obj: Any) -> bytes | None:
    """An object in protobuf, None when it has no message (the caller answers JSON, which
    every protobuf client also accepts)."""
    try:
        return encode_object(obj)
    except NoMessage:
        return None


def stored_object_response(kv: KeyValue) -> web.Response:
    """GET of a stored object, from the message cache."""
    try:
        return response(CACHE.get(kv)[3])
    except NoMessage:
        return web.Response(body=codec.raw(kv), content_type="application/json")


def list_response(api_version: str, kind: str, md: dict[str, Any],
                  kvs: list[KeyValue]) -> web.Response:
    """A `<Kind>List` in protobuf from the stored items' cached messages; JSON for a kind
    without a message — checked up front, as an empty list has no item to find out with."""
    try:
        if proto.kind_message(api_version, kind) is None:
            raise NoMessage(f"{api_version} {kind}")
        items = [CACHE.get(kv)[2] for kv in kvs]
    except NoMessage:
        body = b'{"kind":"%sList","apiVersion":"%s","metadata":%s,"items":[%s]}' % (
            kind.encode(), api_version.encode(), orjson.dumps(md),
            b",".join(codec.raw(kv) for kv in kvs))
        return web.Response(body=body, content_type="application/json")
    return response(list_body(api_version, f"{kind}List", md, items))


def status_body(error: StatusError) -> bytes:
    return encode_object(error.status())


def watch_event(event_type: str, obj: dict[str, Any]) -> bytes:
    """A watch encoder (registry/cacher.py: called once per event, shared by every protobuf
    watcher of the resource): one length-prefixed WatchEvent frame."""
    return watch_frame(event_type, encode_object(obj))
