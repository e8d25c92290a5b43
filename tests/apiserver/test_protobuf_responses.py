"""Every response negotiated as upstream's: subresources, deletecollection, metadata-only
(PartialObjectMetadata) objects, lists and watches, and an expired watch -- over a socket.

Requests carry the Accept headers client-go sends: components ask for
`application/vnd.kubernetes.protobuf, application/json`; its metadata client (the garbage
collector's, the quota controller's, kube-scheduler's informers) asks for
`...;as=PartialObjectMetadata;g=meta.k8s.io;v=v1` (objects and watches) and
`...;as=PartialObjectMetadataList;...` (lists). Protobuf answers are read back with Google's
protobuf runtime on upstream's descriptors (tests/protobuf_descriptors.py), an implementation
that is not ours.
"""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path

import aiohttp
import orjson
import pytest

from minikube_py.api.protobuf import decode_object
from tests.apiserver.conftest import API, pod, start_api
from tests.protobuf_descriptors import google_envelope, message_class, read_frames

PB = "application/vnd.kubernetes.protobuf"
CLIENT_GO = f"{PB}, application/json"
META = ";g=meta.k8s.io;v=v1"
#: client-go's metadata client (k8s.io/client-go/metadata): Get and Watch, then List
METADATA = (f"{PB};as=PartialObjectMetadata{META},application/json;as=PartialObjectMetadata{META},"
            "application/json")
METADATA_LIST = (f"{PB};as=PartialObjectMetadataList{META},"
                 f"application/json;as=PartialObjectMetadataList{META},application/json")
METADATA_JSON = f"application/json;as=PartialObjectMetadata{META},application/json"
METADATA_LIST_JSON = f"application/json;as=PartialObjectMetadataList{META},application/json"
PODS = "/api/v1/namespaces/default/pods"


async def _request(api: API, method: str, path: str, accept: str, body: bytes | None = None,
                   content_type: str = "application/json") -> tuple[int, str, bytes]:
    headers = {"Accept": accept}
    if body is not None:
        headers["Content-Type"] = content_type
    async with api.session.request(method, api.url + path, data=body, headers=headers) as resp:
        return resp.status, resp.headers.get("Content-Type", ""), await resp.read()


def _google(body: bytes, message: str):
    """Our protobuf answer parsed by Google's runtime: (typeMeta, the message)."""
    unknown = message_class("k8s.io.apimachinery.pkg.runtime.Unknown").FromString(body[4:])
    assert body[:4] == b"k8s\x00"
    return unknown.typeMeta, message_class(message).FromString(unknown.raw)


async def _deployment(api: API, name: str = "web", replicas: int = 2) -> None:
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    status, created = await api.post("/apis/apps/v1/namespaces/default/deployments", body)
    assert status == 201, created


# -- subresources and deletecollection -------------------------------------------------------

async def test_binding_answers_a_protobuf_status(api: API) -> None:
    assert (await api.post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node",
                                              "metadata": {"name": "n1"}}))[0] == 201
    assert (await api.post(PODS, pod("web")))[0] == 201
    binding = message_class("k8s.io.api.core.v1.Binding")()
    binding.metadata.name = "web"
    binding.target.kind, binding.target.name = "Node", "n1"
    status, ctype, body = await _request(api, "POST", f"{PODS}/web/binding", CLIENT_GO,
                                         google_envelope("v1", "Binding", binding), PB)
    assert (status, ctype) == (201, PB), body
    type_meta, answer = _google(body, "k8s.io.apimachinery.pkg.apis.meta.v1.Status")
    assert (type_meta.kind, answer.status, answer.code) == ("Status", "Success", 201)


async def test_scale_get_and_put_in_protobuf(api: API) -> None:
    await _deployment(api)
    path = "/apis/apps/v1/namespaces/default/deployments/web/scale"
    status, ctype, body = await _request(api, "GET", path, CLIENT_GO)
    assert (status, ctype) == (200, PB)
    type_meta, scale = _google(body, "k8s.io.api.autoscaling.v1.Scale")
    assert (type_meta.apiVersion, type_meta.kind) == ("autoscaling/v1", "Scale")
    assert (scale.metadata.name, scale.spec.replicas) == ("web", 2)
    scale.spec.replicas = 5
    status, ctype, body = await _request(api, "PUT", path, CLIENT_GO,
                                         google_envelope("autoscaling/v1", "Scale", scale), PB)
    assert (status, ctype) == (200, PB), body
    assert decode_object(body)["spec"] == {"replicas": 5}
    _, deployment = await api.get("/apis/apps/v1/namespaces/default/deployments/web")
    assert deployment["spec"]["replicas"] == 5


async def test_status_subresource_get_in_protobuf(api: API) -> None:
    assert (await api.post(PODS, pod("s")))[0] == 201
    status, ctype, body = await _request(api, "GET", f"{PODS}/s/status", CLIENT_GO)
    assert (status, ctype) == (200, PB)
    assert decode_object(body)["metadata"]["name"] == "s"


async def test_componentstatuses_in_protobuf(api: API) -> None:
    status, ctype, body = await _request(api, "GET", "/api/v1/componentstatuses", CLIENT_GO)
    assert (status, ctype) == (200, PB)
    type_meta, listed = _google(body, "k8s.io.api.core.v1.ComponentStatusList")
    assert type_meta.kind == "ComponentStatusList"
    assert {item.metadata.name for item in listed.items} >= {"scheduler", "controller-manager"}


async def test_deletecollection_answers_the_deleted_list_negotiated(api: API) -> None:
    for name in ("a", "b"):
        assert (await api.post(PODS, pod(name)))[0] == 201
    status, ctype, body = await _request(api, "DELETE", f"{PODS}?gracePeriodSeconds=0",
                                         CLIENT_GO)
    assert (status, ctype) == (200, PB), body
    type_meta, listed = _google(body, "k8s.io.api.core.v1.PodList")
    assert type_meta.kind == "PodList"
    assert sorted(item.metadata.name for item in listed.items) == ["a", "b"]


# -- PartialObjectMetadata -------------------------------------------------------------------

async def test_metadata_client_get_is_partial_object_metadata(api: API) -> None:
    assert (await api.post(PODS, pod("m", app="m")))[0] == 201
    _, full = await api.get(f"{PODS}/m")
    status, ctype, body = await _request(api, "GET", f"{PODS}/m", METADATA)
    assert (status, ctype) == (200, PB)
    type_meta, partial = _google(body, "k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata")
    assert (type_meta.apiVersion, type_meta.kind) == ("meta.k8s.io/v1", "PartialObjectMetadata")
    assert (partial.metadata.name, partial.metadata.uid) == ("m", full["metadata"]["uid"])
    assert dict(partial.metadata.labels) == {"app": "m"}
    status, ctype, body = await _request(api, "GET", f"{PODS}/m", METADATA_JSON)
    assert (status, ctype.split(";")[0]) == (200, "application/json")
    assert orjson.loads(body) == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                  "metadata": full["metadata"]}


async def test_metadata_client_list_is_partial_object_metadata_list(api: API) -> None:
    for name in ("a", "b"):
        assert (await api.post(PODS, pod(name)))[0] == 201
    _, full = await api.get(PODS)
    status, ctype, body = await _request(api, "GET", PODS, METADATA_LIST)
    assert (status, ctype) == (200, PB)
    type_meta, listed = _google(
        body, "k8s.io.apimachinery.pkg.apis.meta.v1.PartialObjectMetadataList")
    assert type_meta.kind == "PartialObjectMetadataList"
    assert listed.metadata.resourceVersion == full["metadata"]["resourceVersion"]
    assert [item.metadata.name for item in listed.items] == ["a", "b"]
    status, _, body = await _request(api, "GET", PODS, METADATA_LIST_JSON)
    assert orjson.loads(body) == {
        "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
        "metadata": full["metadata"],
        "items": [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                   "metadata": item["metadata"]} for item in full["items"]]}


async def test_metadata_kind_that_does_not_fit_is_406_after_the_request(api: API) -> None:
    status, _, body = await _request(api, "GET", PODS, METADATA)
    assert status == 406
    assert orjson.loads(body)["message"] == ("you requested PartialObjectMetadata, but the "
                                             "requested object is a list (*core.PodList)")
    status, _, body = await _request(api, "GET", f"{PODS}/missing", METADATA_LIST)
    assert status == 404  # the request runs first; errors are never converted, and JSON
    assert orjson.loads(body)["reason"] == "NotFound"
    assert (await api.post(PODS, pod("x")))[0] == 201
    status, _, body = await _request(api, "GET", f"{PODS}/x", METADATA_LIST_JSON)
    assert (status, orjson.loads(body)["reason"]) == (406, "NotAcceptable")


async def test_metadata_client_patch_answers_metadata(api: API) -> None:
    """The garbage collector patches owner references through the metadata client."""
    assert (await api.post(PODS, pod("p")))[0] == 201
    status, ctype, body = await _request(
        api, "PATCH", f"{PODS}/p", METADATA,
        orjson.dumps({"metadata": {"labels": {"patched": "yes"}}}),
        "application/merge-patch+json")
    assert (status, ctype) == (200, PB), body
    partial = decode_object(body)
    assert partial["kind"] == "PartialObjectMetadata"
    assert partial["metadata"]["labels"]["patched"] == "yes" and "spec" not in partial


async def test_metadata_watch_streams_partial_objects(api: API) -> None:
    assert (await api.post(PODS, pod("w1")))[0] == 201
    async with api.session.get(api.url + PODS + "?watch=true&timeoutSeconds=10",
                               headers={"Accept": METADATA},
                               timeout=aiohttp.ClientTimeout(total=10)) as resp:
        assert resp.headers["Content-Type"] == f"{PB};stream=watch"
        first = await read_frames(resp, 1)
        assert (await api.post(PODS, pod("w2")))[0] == 201
        second = await asyncio.wait_for(read_frames(resp, 1), 5)
    for event_type, obj in first + second:
        assert event_type == "ADDED"
        assert (obj["kind"], obj["apiVersion"]) == ("PartialObjectMetadata", "meta.k8s.io/v1")
        assert set(obj) == {"kind", "apiVersion", "metadata"}
    assert [obj["metadata"]["name"] for _, obj in first + second] == ["w1", "w2"]
    async with api.session.get(api.url + PODS + "?watch=true&timeoutSeconds=10",
                               headers={"Accept": METADATA_JSON},
                               timeout=aiohttp.ClientTimeout(total=10)) as resp:
        events = [orjson.loads(await resp.content.readline()) for _ in range(2)]
    assert [(e["type"], e["object"]["kind"], e["object"]["metadata"]["name"]) for e in events] \
        == [("ADDED", "PartialObjectMetadata", "w1"), ("ADDED", "PartialObjectMetadata", "w2")]


# -- an expired watch ------------------------------------------------------------------------

async def test_expired_watch_is_one_protobuf_error_frame_with_a_410_status(
        tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path, watch_cache_size=1)
    try:
        for name in ("a", "b"):
            assert (await api.post(PODS, pod(name)))[0] == 201
        await store.compact(await store.current_revision())
        # revision 1 is older than the watch cache's window and compacted in the store
        url = api.url + f"{PODS}?watch=true&resourceVersion=1&timeoutSeconds=5"
        async with session.get(url, headers={"Accept": CLIENT_GO}) as resp:
            assert (resp.status, resp.headers["Content-Type"]) == (200, f"{PB};stream=watch")
            data = await asyncio.wait_for(resp.read(), 10)
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()
    (length,) = struct.unpack(">I", data[:4])
    assert len(data) == 4 + length  # one frame, then the stream ends
    event = message_class("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent").FromString(data[4:])
    assert event.type == "ERROR"
    unknown = message_class("k8s.io.apimachinery.pkg.runtime.Unknown").FromString(
        event.object.raw[4:])
    assert (unknown.typeMeta.apiVersion, unknown.typeMeta.kind) == ("v1", "Status")
    status = message_class("k8s.io.apimachinery.pkg.apis.meta.v1.Status").FromString(unknown.raw)
    assert (status.status, status.reason, status.code) == ("Failure", "Expired", 410)
    assert status.message.startswith("too old resource version")


@pytest.mark.parametrize("accept", [METADATA, METADATA_JSON])
async def test_errors_for_metadata_clients_are_json(api: API, accept: str) -> None:
    """Upstream negotiates errors without conversions: the `as=` offers do not count."""
    status, ctype, body = await _request(api, "GET", f"{PODS}/nope", accept)
    assert (status, ctype.split(";")[0]) == (404, "application/json")
    assert orjson.loads(body)["reason"] == "NotFound"
