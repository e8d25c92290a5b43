"""Protobuf on the wire: negotiation, bodies in, objects/lists/errors/watch out, over a socket.

The official python client cannot speak protobuf, so these are raw aiohttp requests with the
headers client-go sends (`Accept: application/vnd.kubernetes.protobuf, application/json`), and
request bodies built by Google's protobuf runtime from upstream's descriptors -- an encoder that
is not ours (tests/protobuf_descriptors.py).
"""

from __future__ import annotations

import asyncio
import struct

from pathlib import Path

import aiohttp
import orjson
import pytest

from minikube_py.api.errors import not_found
from minikube_py.api.protobuf import decode_object
from minikube_py.apiserver import protobuf_render, watch
from minikube_py.apiserver.negotiation import Output, output_format
from minikube_py.registry.cacher import Watcher
from tests.apiserver.conftest import API, pod, start_api
from tests.protobuf_descriptors import google_envelope, message_class, read_frames

PB = "application/vnd.kubernetes.protobuf"
CLIENT_GO = {"Accept": f"{PB}, application/json"}


def _google_pod(name: str):
    p = message_class("k8s.io.api.core.v1.Pod")()
    p.metadata.name = name
    p.metadata.labels["app"] = name
    p.metadata.creationTimestamp.SetInParent()
    c = p.spec.containers.add()
    c.name, c.image = "c", "nginx"
    port = c.ports.add()
    port.containerPort = 80
    return p


async def _request(api: API, method: str, path: str, *, body: bytes | None = None,
                   content_type: str = PB, accept: str = f"{PB}, application/json"
                   ) -> tuple[int, str, bytes]:
    headers = {"Accept": accept}
    if body is not None:
        headers["Content-Type"] = content_type
    async with api.session.request(method, api.url + path, data=body, headers=headers) as resp:
        return resp.status, resp.headers.get("Content-Type", ""), await resp.read()


# -- negotiation -----------------------------------------------------------------------------

@pytest.mark.parametrize(("accept", "output"), [
    (f"{PB}, application/json", Output.PROTOBUF),  # client-go's default
    (f"application/json, {PB}", Output.JSON),
    (f"application/json;q=0.5, {PB}", Output.PROTOBUF),  # q-values rank the offers
    (f"{PB};q=0, application/json", Output.JSON),  # q=0: not acceptable
    (f"{PB};as=Table;v=v1;g=meta.k8s.io, application/json;as=Table;v=v1;g=meta.k8s.io, "
     "application/json", Output.TABLE),  # a Table is never protobuf (upstream)
    (f"*/*, {PB}", Output.PROTOBUF),  # concrete types before wildcards
    (f"{PB};stream=watch", Output.PROTOBUF),
])
def test_negotiation_follows_upstream(accept: str, output: Output) -> None:
    assert output_format(accept) is output


# -- objects ---------------------------------------------------------------------------------

async def test_create_from_google_bytes_and_get_in_protobuf(api: API) -> None:
    status, ctype, body = await _request(
        api, "POST", "/api/v1/namespaces/default/pods",
        body=google_envelope("v1", "Pod", _google_pod("pb")))
    assert (status, ctype) == (201, PB)
    created = decode_object(body)
    assert created["metadata"]["name"] == "pb"
    assert created["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    status, ctype, body = await _request(api, "GET", "/api/v1/namespaces/default/pods/pb")
    assert (status, ctype) == (200, PB)
    _, as_json = await api.get("/api/v1/namespaces/default/pods/pb")
    assert decode_object(body) == as_json
    # Google's runtime reads what we answered
    unknown = message_class("k8s.io.apimachinery.pkg.runtime.Unknown").FromString(body[4:])
    got = message_class("k8s.io.api.core.v1.Pod").FromString(unknown.raw)
    assert got.metadata.resourceVersion == as_json["metadata"]["resourceVersion"]


async def test_list_in_protobuf_matches_json(api: API) -> None:
    for name in ("a", "b"):
        assert (await api.post("/api/v1/namespaces/default/pods", pod(name)))[0] == 201
    status, ctype, body = await _request(api, "GET", "/api/v1/namespaces/default/pods")
    assert (status, ctype) == (200, PB)
    _, as_json = await api.get("/api/v1/namespaces/default/pods")
    listed = decode_object(body)
    assert listed["kind"] == "PodList" and listed["metadata"] == as_json["metadata"]
    assert listed["items"] == [{k: v for k, v in item.items() if k not in ("apiVersion", "kind")}
                               for item in as_json["items"]]
    # a label-selected list (decoded page) and a second read from the message cache agree
    status, _, body = await _request(api, "GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Db")
    assert [i["metadata"]["name"] for i in decode_object(body)["items"]] == ["b"]


async def test_updates_deletes_and_bindings_take_protobuf_bodies(api: API) -> None:
    assert (await api.post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                              "metadata": {"name": "n1"}}))[0] == 201
    assert (await api.post("/api/v1/namespaces/default/pods", pod("web")))[0] == 201
    binding = message_class("k8s.io.api.core.v1.Binding")()
    binding.metadata.name = "web"
    binding.target.kind, binding.target.name = "Node", "n1"
    status, _, body = await _request(api, "POST", "/api/v1/namespaces/default/pods/web/binding",
                                     body=google_envelope("v1", "Binding", binding))
    assert status == 201, body
    _, bound = await api.get("/api/v1/namespaces/default/pods/web")
    assert bound["spec"]["nodeName"] == "n1"
    # a status update in protobuf, as a kubelet sends it: read, change, write back
    _, _, body = await _request(api, "GET", "/api/v1/namespaces/default/pods/web")
    unknown = message_class("k8s.io.apimachinery.pkg.runtime.Unknown").FromString(body[4:])
    p = message_class("k8s.io.api.core.v1.Pod").FromString(unknown.raw)
    p.status.phase = "Running"
    status, _, body = await _request(api, "PUT", "/api/v1/namespaces/default/pods/web/status",
                                     body=google_envelope("v1", "Pod", p))
    assert status == 200, body
    assert decode_object(body)["status"]["phase"] == "Running"
    # DeleteOptions in protobuf (client-go's delete), registered in every group version
    options = message_class("k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions")()
    options.gracePeriodSeconds = 0
    options.preconditions.uid = "not-the-uid"
    status, ctype, body = await _request(api, "DELETE", "/api/v1/namespaces/default/pods/web",
                                         body=google_envelope("v1", "DeleteOptions", options))
    assert (status, ctype) == (409, PB)  # the precondition was read from the protobuf body
    assert decode_object(body)["reason"] == "Conflict"


async def test_errors_are_protobuf_status_for_protobuf_clients(api: API) -> None:
    status, ctype, body = await _request(api, "GET", "/api/v1/namespaces/default/pods/missing")
    assert (status, ctype) == (404, PB)
    _, as_json = await api.get("/api/v1/namespaces/default/pods/missing")
    assert decode_object(body) == as_json
    status, ctype, body = await _request(api, "POST", "/api/v1/namespaces/default/pods",
                                         body=b"k8s\x00\x0a\x05")
    assert (status, ctype) == (400, PB)
    assert decode_object(body)["message"] == "the object provided is unrecognized: unexpected EOF"


async def test_tables_stay_json_for_kubectl_accept(api: API) -> None:
    assert (await api.post("/api/v1/namespaces/default/pods", pod("t")))[0] == 201
    accept = (f"{PB};as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io,"
              "application/json")
    status, ctype, body = await _request(api, "GET", "/api/v1/namespaces/default/pods",
                                         accept=accept)
    assert (status, ctype.split(";")[0]) == (200, "application/json")
    assert orjson.loads(body)["kind"] == "Table"


# -- watch -----------------------------------------------------------------------------------

async def test_watch_streams_length_prefixed_watch_events(api: API) -> None:
    assert (await api.post("/api/v1/namespaces/default/pods", pod("w1")))[0] == 201
    url = api.url + "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=10"
    async with api.session.get(url, headers=CLIENT_GO,
                               timeout=aiohttp.ClientTimeout(total=10)) as resp:
        assert resp.headers["Content-Type"] == f"{PB};stream=watch"
        first = await read_frames(resp, 1)
        assert first[0][0] == "ADDED" and first[0][1]["metadata"]["name"] == "w1"
        assert (await api.post("/api/v1/namespaces/default/pods", pod("w2")))[0] == 201
        assert (await api.delete("/api/v1/namespaces/default/pods/w1?gracePeriodSeconds=0"))[0] \
            == 200
        events = await asyncio.wait_for(read_frames(resp, 2), 5)
    assert [(t, o["metadata"]["name"]) for t, o in events][:1] == [("ADDED", "w2")]
    assert events[1][0] in ("MODIFIED", "DELETED") and events[1][1]["kind"] == "Pod"


async def test_watch_bookmarks_and_errors_are_protobuf_frames(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path, bookmark_interval=0.2)
    try:
        assert (await api.post("/api/v1/namespaces/default/pods", pod("b")))[0] == 201
        url = api.url + ("/api/v1/namespaces/default/pods?watch=true&resourceVersion=0"
                         "&allowWatchBookmarks=true&timeoutSeconds=1")
        async with session.get(url, headers=CLIENT_GO) as resp:
            data = await asyncio.wait_for(resp.read(), 5)
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()
    event_cls = message_class("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent")
    events = []
    while data:
        (length,) = struct.unpack(">I", data[:4])
        event = event_cls.FromString(data[4:4 + length])
        events.append((event.type, decode_object(event.object.raw)))
        data = data[4 + length:]
    assert events[0][0] == "ADDED"
    bookmark = next(obj for kind, obj in events if kind == "BOOKMARK")
    assert bookmark["kind"] == "Pod" and bookmark["metadata"]["resourceVersion"].isdigit()
    # the closing ERROR event of an expired watch is the same frame around a Status
    watcher = Watcher(namespace=None, labels=None, fields=None,
                      encoder=protobuf_render.watch_event)
    error = not_found("pods", "x").status()
    frame = watch._event(watcher, "ERROR", error)
    event = event_cls.FromString(frame[4:])
    assert (event.type, decode_object(event.object.raw)) == ("ERROR", error)
