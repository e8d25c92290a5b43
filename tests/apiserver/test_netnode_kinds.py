"""networking.k8s.io, node.k8s.io and flowcontrol.apiserver.k8s.io over HTTP: the
DefaultIngressClass and RuntimeClass admission plugins, upstream's 422/403 bodies, Table
columns and discovery, and the API Priority and Fairness bootstrap objects (present at start,
a deleted mandatory one restored by the config producer, FlowSchema `Dangling` conditions)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.apiserver.conftest import API, pod, start_api
from tests.polling import eventually

NET = "/apis/networking.k8s.io/v1"
INGRESSES = f"{NET}/namespaces/default/ingresses"
CLASSES = f"{NET}/ingressclasses"
RUNTIME_CLASSES = "/apis/node.k8s.io/v1/runtimeclasses"
APF = "/apis/flowcontrol.apiserver.k8s.io/v1"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
DEFAULT = "ingressclass.kubernetes.io/is-default-class"


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[API]:
    client, runner, store, session = await start_api(
        tmp_path, admission_control=("DefaultIngressClass", "RuntimeClass"),
        apf_config_interval=0.2)
    try:
        yield client
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


def ingress(name: str, **spec: object) -> dict:
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": name},
            "spec": {"rules": [{"host": f"{name}.example.com", "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": backend}]}}], **spec}}


def ingress_class(name: str, default: bool) -> dict:
    annotations = {DEFAULT: "true"} if default else {}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
            "metadata": {"name": name, "annotations": annotations},
            "spec": {"controller": "example.com/ingress"}}


async def test_default_ingress_class_admission(api: API) -> None:
    code, created = await api.post(INGRESSES, ingress("none"))
    assert code == 201 and "ingressClassName" not in created["spec"]
    assert created["status"] == {"loadBalancer": {}}
    for name, default in (("plain", False), ("first", True)):
        code, body = await api.post(CLASSES, ingress_class(name, default))
        assert code == 201, body
    code, created = await api.post(INGRESSES, ingress("a"))
    assert created["spec"]["ingressClassName"] == "first"
    await asyncio.sleep(1.05)  # creationTimestamp has second precision
    await api.post(CLASSES, ingress_class("second", True))
    code, created = await api.post(INGRESSES, ingress("b"))
    assert created["spec"]["ingressClassName"] == "second"  # the newest default wins
    code, created = await api.post(INGRESSES, ingress("c", ingressClassName="plain"))
    assert created["spec"]["ingressClassName"] == "plain"
    legacy = ingress("d")
    legacy["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "nginx"}
    code, created = await api.post(INGRESSES, legacy)
    assert "ingressClassName" not in created["spec"]
    code, table = await api.get(INGRESSES, headers={"Accept": TABLE})
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Class", "Hosts", "Address", "Ports", "Age"]
    assert [r["cells"][:5] for r in table["rows"]][:2] == [
        ["a", "first", "a.example.com", "", "80"], ["b", "second", "b.example.com", "", "80"]]
    code, table = await api.get(CLASSES, headers={"Accept": TABLE})
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Controller", "Parameters", "Age"]
    assert table["rows"][0]["cells"][:3] == ["first", "example.com/ingress", "<none>"]


async def test_ingress_status_and_invalid_bodies(api: API) -> None:
    code, created = await api.post(INGRESSES, ingress("web"))
    assert code == 201
    created["status"] = {"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}}
    code, written = await api.put(f"{INGRESSES}/web/status", created)
    assert code == 200 and written["status"]["loadBalancer"]["ingress"] == [{"ip": "192.0.2.10"}]
    code, table = await api.get(INGRESSES, headers={"Accept": TABLE})
    assert table["rows"][0]["cells"][3] == "192.0.2.10"
    bad = ingress("bad")
    bad["spec"]["rules"][0]["http"]["paths"][0]["pathType"] = "Regex"
    code, body = await api.post(INGRESSES, bad)
    assert code == 422 and body["reason"] == "Invalid"
    assert body["message"] == (
        'Ingress.networking.k8s.io "bad" is invalid: spec.rules[0].http.paths[0].pathType: '
        'Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", '
        '"Prefix"')
    code, body = await api.post(f"{NET}/namespaces/default/networkpolicies", {
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": "np"}, "spec": {"podSelector": {"matchLabels": {"app": "db"}},
                                             "egress": [{"ports": [{"port": 53}]}]}})
    assert code == 201, body
    assert body["spec"]["policyTypes"] == ["Ingress", "Egress"]
    code, table = await api.get(f"{NET}/namespaces/default/networkpolicies",
                                headers={"Accept": TABLE})
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Pod-Selector", "Age"]
    assert table["rows"][0]["cells"][:2] == ["np", "app=db"]
    _, resources = await api.get(NET)
    by_name = {r["name"]: r for r in resources["resources"]}
    assert by_name["ingresses"]["shortNames"] == ["ing"]
    assert by_name["networkpolicies"]["shortNames"] == ["netpol"]
    assert by_name["ingressclasses"]["namespaced"] is False
    assert "ingresses/status" in by_name and "networkpolicies/status" not in by_name


async def test_runtime_class_admission(api: API) -> None:
    code, body = await api.post(RUNTIME_CLASSES, {
        "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"},
        "handler": "kata", "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        "scheduling": {"nodeSelector": {"runtime": "kata"},
                       "tolerations": [{"key": "kata", "operator": "Exists"}]}})
    assert code == 201, body
    p = pod("sandboxed")
    p["spec"]["runtimeClassName"] = "kata"
    code, created = await api.post("/api/v1/namespaces/default/pods", p)
    assert code == 201, created
    assert created["spec"]["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert created["spec"]["nodeSelector"] == {"runtime": "kata"}
    assert {"key": "kata", "operator": "Exists"} in created["spec"]["tolerations"]
    p = pod("missing")
    p["spec"]["runtimeClassName"] = "gvisor"
    code, body = await api.post("/api/v1/namespaces/default/pods", p)
    assert code == 403
    assert body["message"] == ('pods "missing" is forbidden: pod rejected: RuntimeClass '
                               '"gvisor" not found')
    p = pod("greedy")
    p["spec"]["runtimeClassName"] = "kata"
    p["spec"]["overhead"] = {"cpu": "1"}
    code, body = await api.post("/api/v1/namespaces/default/pods", p)
    assert code == 403 and body["message"].endswith(
        "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
    p = pod("no-class")
    p["spec"]["overhead"] = {"cpu": "1"}
    code, body = await api.post("/api/v1/namespaces/default/pods", p)
    assert code == 403 and body["message"].endswith(
        "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead")
    code, table = await api.get(RUNTIME_CLASSES, headers={"Accept": TABLE})
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Handler", "Age"]
    assert table["rows"][0]["cells"][:2] == ["kata", "kata"]




async def test_flowcontrol_bootstrap_objects(api: API) -> None:
    code, levels = await api.get(f"{APF}/prioritylevelconfigurations", headers={"Accept": TABLE})
    assert code == 200
    assert [c["name"] for c in levels["columnDefinitions"]] == [
        "Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit",
        "Age"]
    rows = {r["cells"][0]: r["cells"][1:6] for r in levels["rows"]}
    assert rows["exempt"] == ["Exempt", "<none>", "<none>", "<none>", "<none>"]
    assert rows["catch-all"] == ["Limited", 5, "<none>", "<none>", "<none>"]
    assert rows["workload-low"] == ["Limited", 100, 128, 6, 50]
    code, schemas = await api.get(f"{APF}/flowschemas", headers={"Accept": TABLE})
    assert [c["name"] for c in schemas["columnDefinitions"]] == [
        "Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", "Age",
        "MissingPL"]
    rows = {r["cells"][0]: r["cells"] for r in schemas["rows"]}
    assert len(rows) == 13
    assert rows["kube-scheduler"][1:4] == ["workload-high", 800, "ByNamespace"]
    assert rows["probes"][1:4] == ["exempt", 2, "<none>"]
    assert rows["catch-all"][5] == "False"
    # a deleted mandatory object comes back; a user's edit of it is undone
    code, _ = await api.delete(f"{APF}/flowschemas/exempt")
    assert code == 200

    async def restored() -> bool:
        code, _ = await api.get(f"{APF}/flowschemas/exempt")
        return code == 200
    assert await eventually(restored)
    code, _ = await api.patch(f"{APF}/prioritylevelconfigurations/catch-all",
                              {"spec": {"limited": {"nominalConcurrencyShares": 1}}})
    assert code == 200

    async def undone() -> bool:
        _, plc = await api.get(f"{APF}/prioritylevelconfigurations/catch-all")
        return plc["spec"]["limited"]["nominalConcurrencyShares"] == 5
    assert await eventually(undone)


async def test_flow_schema_dangling_condition(api: API) -> None:
    code, body = await api.post(f"{APF}/flowschemas", {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "mine"},
        "spec": {"priorityLevelConfiguration": {"name": "mine"},
                 "rules": [{"subjects": [{"kind": "Group", "group": {"name": "devs"}}],
                            "nonResourceRules": [{"verbs": ["get"],
                                                  "nonResourceURLs": ["/metrics"]}]}]}})
    assert code == 201, body
    assert body["spec"]["matchingPrecedence"] == 1000  # v1 default

    async def dangling(status: str):  # type: ignore[no-untyped-def]
        async def check() -> bool:
            _, fs = await api.get(f"{APF}/flowschemas/mine")
            conditions = (fs.get("status") or {}).get("conditions") or []
            return any(c["type"] == "Dangling" and c["status"] == status for c in conditions)
        return await eventually(check)

    assert await dangling("True")
    code, body = await api.post(f"{APF}/prioritylevelconfigurations", {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "mine"},
        "spec": {"type": "Limited", "limited": {"limitResponse": {
            "type": "Queue", "queuing": {}}}}})
    assert code == 201, body
    assert body["spec"]["limited"]["nominalConcurrencyShares"] == 30
    assert body["spec"]["limited"]["limitResponse"]["queuing"] == {
        "queues": 64, "handSize": 8, "queueLengthLimit": 50}
    assert await dangling("False")
    code, body = await api.post(f"{APF}/prioritylevelconfigurations", {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": "bad"},
        "spec": {"type": "Limited", "limited": {"limitResponse": {
            "type": "Queue", "queuing": {"queues": 4, "handSize": 8}}}}})
    assert code == 422
    assert body["message"].endswith(
        "spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater "
        "than queues (4)")


async def test_protobuf_round_trip_with_googles_runtime(api: API) -> None:
    """client-go speaks protobuf for built-in kinds: an Ingress written by Google's runtime from
    upstream's descriptors is created, and our protobuf answers (an Ingress, the FlowSchema
    list) parse back with the same descriptors."""
    from tests.protobuf_descriptors import google_envelope, message_class

    pb = "application/vnd.kubernetes.protobuf"
    message = message_class("k8s.io.api.networking.v1.Ingress")()
    message.metadata.name = "proto"
    rule = message.spec.rules.add(host="proto.example.com")
    path = rule.ingressRuleValue.http.paths.add(
        path="/", pathType="Prefix")
    path.backend.service.name = "web"
    path.backend.service.port.number = 8080
    body = google_envelope("networking.k8s.io/v1", "Ingress", message)
    async with api.session.post(api.url + INGRESSES, data=body, headers={
            "Content-Type": pb, "Accept": "application/json"}) as resp:
        assert resp.status == 201, await resp.text()
        created = await resp.json()
    assert created["spec"]["rules"][0]["http"]["paths"][0]["backend"] == {
        "service": {"name": "web", "port": {"number": 8080}}}
    for path_, name in ((f"{INGRESSES}/proto", "k8s.io.api.networking.v1.Ingress"),
                        (f"{APF}/flowschemas", "k8s.io.api.flowcontrol.v1.FlowSchemaList")):
        async with api.session.get(api.url + path_, headers={"Accept": pb}) as resp:
            assert resp.status == 200 and resp.headers["Content-Type"] == pb
            raw = await resp.read()
        unknown = message_class("k8s.io.apimachinery.pkg.runtime.Unknown").FromString(raw[4:])
        decoded = message_class(name).FromString(unknown.raw)
        if name.endswith("List"):
            assert len(decoded.items) == 13
            catch_all = next(i for i in decoded.items if i.metadata.name == "catch-all")
            assert catch_all.spec.matchingPrecedence == 10000
        else:
            assert decoded.spec.rules[0].host == "proto.example.com"
