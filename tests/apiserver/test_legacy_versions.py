"""Removed API versions for v1.20 components (registry/legacy.py), over a real socket.

With `--runtime-config legacy/v1.20=true` every (group, version, resource) v1.20's
kube-scheduler and kube-controller-manager list and watch (apiserver/informers_v1_20.yaml)
answers the informer's two calls with 200, in JSON and in the protobuf those components speak
by default; without it the removed versions are 404 and absent from discovery, as on 1.31.
Objects written in one version read back converted in the other (upstream's conversions).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest

from minikube_py.apiserver.legacy_clients import gvrs_v1_20
from minikube_py.registry.resources import DISABLED_BY_DEFAULT
from tests.apiserver.conftest import API, start_api
from tests.apiserver.test_protobuf_responses import PB, _google
from tests.protobuf_descriptors import google_envelope, message_class, read_frames

REMOVED = sorted(DISABLED_BY_DEFAULT)
MATCH_NONE = {"matchExpressions": [{
    "key": "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match", "operator": "Exists"}]}
MATCH_ALL = {"matchExpressions": [{
    "key": "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match",
    "operator": "DoesNotExist"}]}


def _path(group: str, version: str, resource: str, namespace: str = "") -> str:
    base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    return f"{base}/namespaces/{namespace}/{resource}" if namespace else f"{base}/{resource}"


async def _serve(tmp_path: Path, runtime_config: str) -> AsyncIterator[API]:
    api, runner, store, session = await start_api(tmp_path, runtime_config=runtime_config)
    try:
        yield api
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


@pytest.fixture
async def legacy(tmp_path: Path) -> AsyncIterator[API]:
    async for api in _serve(tmp_path, "legacy/v1.20=true"):
        yield api


@pytest.fixture
async def current(tmp_path: Path) -> AsyncIterator[API]:
    async for api in _serve(tmp_path, ""):
        yield api


async def _watch_status(api: API, path: str, accept: str = "application/json") -> int:
    """An informer's watch: the status it opens with (the stream itself is not waited for)."""
    url = f"{api.url}{path}?watch=true&timeoutSeconds=30&allowWatchBookmarks=true"
    async with api.session.get(url, headers={"Accept": accept}) as resp:
        status = resp.status
        resp.close()
        return status


#: triples of the v1.20 list another issue-19 branch serves (`lease`: coordination.k8s.io
#: Leases); until it is merged they are the only ones allowed to be missing
AWAITED = {("coordination.k8s.io", "v1", "leases")}


def test_the_v1_20_list_names_the_removed_versions() -> None:
    """The data file is what the flag serves: every removed triple it lists is one we have."""
    removed = {gvr for gvr in gvrs_v1_20() if gvr in DISABLED_BY_DEFAULT}
    assert removed == {("policy", "v1beta1", "poddisruptionbudgets"),
                       ("discovery.k8s.io", "v1beta1", "endpointslices"),
                       ("batch", "v1beta1", "cronjobs")}


async def test_every_v1_20_informer_lists_and_watches(legacy: API) -> None:
    missing = set()
    for group, version, resource in sorted(gvrs_v1_20()):
        path = _path(group, version, resource)
        status, body = await legacy.get(f"{path}?limit=500&resourceVersion=0")
        if status == 404 and (group, version, resource) in AWAITED:
            missing.add((group, version, resource))
            continue
        assert status == 200, (path, body)
        assert body["metadata"]["resourceVersion"], path
        assert await _watch_status(legacy, path) == 200, path
    assert len(missing) < len(gvrs_v1_20())
    # the scheduler's pod informer selects on phase
    status, _ = await legacy.get("/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2C"
                                 "status.phase%21%3DFailed")
    assert status == 200


async def test_removed_versions_answer_protobuf(legacy: API) -> None:
    """v1.20's components default to --kube-api-content-type application/vnd.kubernetes.protobuf."""
    messages = {"policy": "k8s.io.api.policy.v1beta1.PodDisruptionBudgetList",
                "discovery.k8s.io": "k8s.io.api.discovery.v1beta1.EndpointSliceList",
                "batch": "k8s.io.api.batch.v1beta1.CronJobList"}
    await legacy.post("/apis/policy/v1beta1/namespaces/default/poddisruptionbudgets",
                      {"metadata": {"name": "p"}, "spec": {"minAvailable": 1, "selector": {}}})
    for group, version, resource in REMOVED:
        async with legacy.session.get(legacy.url + _path(group, version, resource),
                                      headers={"Accept": f"{PB}, application/json"}) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"].startswith(PB), resource
            body = await resp.read()
        type_meta, message = _google(body, messages[group])
        assert (type_meta.apiVersion, type_meta.kind) == (f"{group}/{version}",
                                                          messages[group].rsplit(".", 1)[1])
        if resource == "poddisruptionbudgets":
            assert [i.metadata.name for i in message.items] == ["p"]
            assert message.items[0].spec.HasField("selector")
            assert not message.items[0].spec.selector.matchExpressions  # {} = match none
        assert await _watch_status(legacy, _path(group, version, resource),
                                   f"{PB}, application/json") == 200


async def test_without_the_flag_removed_versions_are_404(current: API) -> None:
    for group, version, resource in REMOVED:
        status, body = await current.get(_path(group, version, resource))
        assert status == 404, (resource, body)
        assert await _watch_status(current, _path(group, version, resource)) == 404
        status, body = await current.get(f"/apis/{group}")
        assert [v["version"] for v in body["versions"]] == ["v1"], body
        status, _ = await current.get(f"/apis/{group}/{version}")
        assert status == 404


async def test_discovery_lists_them_behind_the_current_version(legacy: API) -> None:
    for group, version, resource in REMOVED:
        status, body = await legacy.get(f"/apis/{group}")
        assert status == 200
        assert [v["version"] for v in body["versions"]] == ["v1", version]
        assert body["preferredVersion"]["version"] == "v1"
        status, body = await legacy.get(f"/apis/{group}/{version}")
        assert resource in [r["name"] for r in body["resources"]], body
    status, body = await legacy.get("/apis/policy/v1beta1")
    assert "poddisruptionbudgets/status" in [r["name"] for r in body["resources"]]


async def test_requests_to_removed_versions_carry_upstreams_warning(legacy: API) -> None:
    async with legacy.session.get(legacy.url + "/apis/batch/v1beta1/cronjobs") as resp:
        assert resp.status == 200
        assert "batch/v1beta1 CronJob is deprecated in v1.21+, unavailable in v1.25+; use " \
               "batch/v1 CronJob" in resp.headers["Warning"]


# -- round trips -----------------------------------------------------------------------------
PDBS_BETA = "/apis/policy/v1beta1/namespaces/default/poddisruptionbudgets"
PDBS_V1 = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"


async def test_pdb_empty_selector_means_none_in_v1beta1_all_in_v1(legacy: API) -> None:
    status, made = await legacy.post(PDBS_BETA, {"metadata": {"name": "none"},
                                                 "spec": {"minAvailable": 1, "selector": {}}})
    assert status == 201, made
    assert made["apiVersion"] == "policy/v1beta1" and made["spec"]["selector"] == {}
    _, in_v1 = await legacy.get(f"{PDBS_V1}/none")
    assert in_v1["apiVersion"] == "policy/v1" and in_v1["spec"]["selector"] == MATCH_NONE

    status, _ = await legacy.post(PDBS_V1, {"metadata": {"name": "all"},
                                            "spec": {"maxUnavailable": 1, "selector": {}}})
    assert status == 201
    _, in_beta = await legacy.get(f"{PDBS_BETA}/all")
    assert in_beta["spec"]["selector"] == MATCH_ALL
    # a v1beta1 client writing back what it read keeps the meaning (match all)
    in_beta["spec"]["maxUnavailable"] = 2
    status, put = await legacy.put(f"{PDBS_BETA}/all", in_beta)
    assert status == 200, put
    _, in_v1 = await legacy.get(f"{PDBS_V1}/all")
    assert in_v1["spec"] == {"maxUnavailable": 2, "selector": {}}


async def test_pdb_status_written_through_v1beta1(legacy: API) -> None:
    """The v1.20 disruption controller's UpdateStatus."""
    await legacy.post(PDBS_V1, {"metadata": {"name": "web"}, "spec": {
        "minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    _, obj = await legacy.get(f"{PDBS_BETA}/web")
    obj["status"] = {"observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": 2,
                     "desiredHealthy": 1, "expectedPods": 2}
    status, put = await legacy.put(f"{PDBS_BETA}/web/status", obj)
    assert status == 200, put
    assert put["apiVersion"] == "policy/v1beta1"
    _, in_v1 = await legacy.get(f"{PDBS_V1}/web")
    assert in_v1["status"]["disruptionsAllowed"] == 1
    assert in_v1["spec"]["selector"] == {"matchLabels": {"app": "web"}}


SLICES_BETA = "/apis/discovery.k8s.io/v1beta1/namespaces/default/endpointslices"
SLICES_V1 = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"


async def test_endpointslice_topology_round_trip(legacy: API) -> None:
    beta = {"metadata": {"name": "s1", "labels": {"kubernetes.io/service-name": "web"}},
            "addressType": "IPv4", "ports": [{"name": "http", "port": 80, "protocol": "TCP"}],
            "endpoints": [{"addresses": ["10.0.0.1"], "nodeName": "node-1", "topology": {
                "kubernetes.io/hostname": "node-1", "topology.kubernetes.io/zone": "z1",
                "rack": "r7"}}]}
    status, made = await legacy.post(SLICES_BETA, beta)
    assert status == 201, made
    assert made["endpoints"][0]["topology"] == beta["endpoints"][0]["topology"]
    _, in_v1 = await legacy.get(f"{SLICES_V1}/s1")
    endpoint = in_v1["endpoints"][0]
    assert endpoint["nodeName"] == "node-1" and endpoint["zone"] == "z1"
    assert endpoint["deprecatedTopology"] == {"rack": "r7"}
    assert "topology" not in endpoint

    status, _ = await legacy.post(SLICES_V1, {
        "metadata": {"name": "s2"}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.2"], "nodeName": "node-2", "zone": "z2"}]})
    assert status == 201
    _, in_beta = await legacy.get(f"{SLICES_BETA}/s2")
    assert in_beta["apiVersion"] == "discovery.k8s.io/v1beta1"
    assert in_beta["endpoints"][0]["topology"] == {
        "kubernetes.io/hostname": "node-2", "topology.kubernetes.io/zone": "z2"}
    # the v1beta1 watch (the EndpointSlice controllers' informer) sees v1 writes as v1beta1
    events = await legacy.watch_lines(f"{SLICES_BETA}?watch=true&timeoutSeconds=2", 2)
    assert {e["object"]["apiVersion"] for e in events} == {"discovery.k8s.io/v1beta1"}
    assert {e["object"]["metadata"]["name"] for e in events} == {"s1", "s2"}


async def test_endpointslice_v1beta1_validation_names_upstreams_paths(legacy: API) -> None:
    status, body = await legacy.post(SLICES_BETA, {
        "metadata": {"name": "bad"}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"], "topology": {"not a label!": "x"}}]})
    assert status == 422, body
    assert body["reason"] == "Invalid"
    assert "endpoints[0].deprecatedTopology" in orjson.dumps(body).decode()


CRONJOBS_BETA = "/apis/batch/v1beta1/namespaces/default/cronjobs"
CRONJOBS_V1 = "/apis/batch/v1/namespaces/default/cronjobs"


async def test_cronjob_round_trip(legacy: API) -> None:
    cron = {"metadata": {"name": "tick"}, "spec": {"schedule": "*/5 * * * *", "jobTemplate": {
        "spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [
            {"name": "c", "image": "busybox"}]}}}}}}
    status, made = await legacy.post(CRONJOBS_BETA, cron)
    assert status == 201, made
    assert made["apiVersion"] == "batch/v1beta1" and made["kind"] == "CronJob"
    assert made["spec"]["concurrencyPolicy"] == "Allow"  # defaulted as v1's
    _, in_v1 = await legacy.get(f"{CRONJOBS_V1}/tick")
    assert in_v1["apiVersion"] == "batch/v1"
    assert {k: v for k, v in in_v1.items() if k != "apiVersion"} == \
        {k: v for k, v in made.items() if k != "apiVersion"}
    # the v1.20 cronjob controller records lastScheduleTime through v1beta1 status
    made["status"] = {"lastScheduleTime": "2026-01-01T00:00:00Z"}
    status, put = await legacy.put(f"{CRONJOBS_BETA}/tick/status", made)
    assert status == 200, put
    _, in_v1 = await legacy.get(f"{CRONJOBS_V1}/tick")
    assert in_v1["status"] == {"lastScheduleTime": "2026-01-01T00:00:00Z"}


async def test_strict_field_validation_knows_the_removed_versions(legacy: API) -> None:
    """Unknown fields are checked against the removed version's own fields (its protobuf
    description): v1beta1's `topology` is known, a typo is not."""
    status, body = await legacy.post(f"{PDBS_BETA}?fieldValidation=Strict", {
        "metadata": {"name": "x"}, "spec": {"minAvailable": 1, "bogus": 1}})
    assert (status, body["message"]) == (400, 'strict decoding error: unknown field "spec.bogus"')
    status, body = await legacy.post(f"{SLICES_BETA}?fieldValidation=Strict", {
        "metadata": {"name": "t"}, "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"], "topology": {"rack": "r1"}}]})
    assert status == 201, body


async def test_v1_20_protobuf_writes(legacy: API) -> None:
    """client-go 1.20 writes protobuf: an EndpointSlice create in v1beta1 (the
    EndpointSlice controller) and a PDB status update in v1beta1 (the disruption controller),
    encoded by Google's runtime from upstream's descriptors."""
    slice_ = message_class("k8s.io.api.discovery.v1beta1.EndpointSlice")()
    slice_.metadata.name, slice_.addressType = "pb", "IPv4"
    endpoint = slice_.endpoints.add()
    endpoint.addresses.append("10.1.1.1")
    endpoint.nodeName = "n1"
    endpoint.topology["kubernetes.io/hostname"] = "n1"
    body = google_envelope("discovery.k8s.io/v1beta1", "EndpointSlice", slice_)
    async with legacy.session.post(legacy.url + SLICES_BETA, data=body,
                                   headers={"Content-Type": PB, "Accept": PB}) as resp:
        assert resp.status == 201
        type_meta, made = _google(await resp.read(), "k8s.io.api.discovery.v1beta1.EndpointSlice")
    assert type_meta.apiVersion == "discovery.k8s.io/v1beta1"
    assert dict(made.endpoints[0].topology) == {"kubernetes.io/hostname": "n1"}
    _, in_v1 = await legacy.get(f"{SLICES_V1}/pb")
    assert in_v1["endpoints"] == [{"addresses": ["10.1.1.1"], "nodeName": "n1"}]

    _, made_pdb = await legacy.post(PDBS_BETA, {"metadata": {"name": "p"}, "spec": {
        "minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}}})
    pdb = message_class("k8s.io.api.policy.v1beta1.PodDisruptionBudget")()
    pdb.metadata.name, pdb.metadata.namespace = "p", "default"
    pdb.metadata.resourceVersion = made_pdb["metadata"]["resourceVersion"]
    pdb.spec.minAvailable.intVal = 1
    pdb.spec.selector.matchLabels["a"] = "b"
    pdb.status.disruptionsAllowed, pdb.status.expectedPods = 3, 4
    pdb.status.currentHealthy, pdb.status.desiredHealthy = 4, 1
    body = google_envelope("policy/v1beta1", "PodDisruptionBudget", pdb)
    async with legacy.session.put(legacy.url + f"{PDBS_BETA}/p/status", data=body,
                                  headers={"Content-Type": PB, "Accept": PB}) as resp:
        assert resp.status == 200
    _, in_v1 = await legacy.get(f"{PDBS_V1}/p")
    assert in_v1["status"]["disruptionsAllowed"] == 3
    assert in_v1["spec"]["selector"] == {"matchLabels": {"a": "b"}}


async def test_v1beta1_protobuf_watch_sees_v1_writes_converted(legacy: API) -> None:
    """The disruption controller's informer: a protobuf watch of policy/v1beta1 delivers a PDB
    written through v1 as v1beta1 (a v1 empty selector as the match-all marker), and its
    deletion through v1beta1."""
    url = f"{legacy.url}{PDBS_BETA}?watch=true&timeoutSeconds=10"
    async with legacy.session.get(url, headers={"Accept": f"{PB}, application/json"}) as resp:
        assert resp.status == 200
        status, _ = await legacy.post(PDBS_V1, {"metadata": {"name": "all"},
                                                "spec": {"minAvailable": 1, "selector": {}}})
        assert status == 201
        status, _ = await legacy.delete(f"{PDBS_BETA}/all")
        assert status == 200
        events = await read_frames(resp, 2)
    assert [kind for kind, _ in events] == ["ADDED", "DELETED"]
    for _, obj in events:
        assert obj["apiVersion"] == "policy/v1beta1"
        assert obj["spec"]["selector"] == MATCH_ALL
    status, _ = await legacy.get(f"{PDBS_V1}/all")
    assert status == 404
