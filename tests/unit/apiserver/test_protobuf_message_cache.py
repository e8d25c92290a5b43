"""The API server's protobuf message cache never hands one store's encoding to another: two
stores in one process (the test suite does this all the time) can hold the same key at the
same revision with different contents."""

from __future__ import annotations

import orjson

from minikube_py.api.protobuf import decode_object
from minikube_py.apiserver.protobuf_render import MessageCache
from minikube_py.storage import KeyValue

KEY = "/registry/minions/node-1"


def node(**status: object) -> bytes:
    return orjson.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
                         "status": status})


def test_same_key_and_revision_with_other_bytes_is_encoded_afresh():
    cache = MessageCache()
    bare = KeyValue(KEY, node(), 5, 5, 1)
    full = KeyValue(KEY, node(allocatable={"pods": "10"}), 5, 5, 1)
    assert not decode_object(cache.get(bare)[3]).get("status")
    assert decode_object(cache.get(full)[3])["status"] == {"allocatable": {"pods": "10"}}
    again = cache.get(KeyValue(KEY, full.value, 5, 5, 1))  # the same stored bytes: a hit
    assert again is cache.get(full)
