"""coordination.k8s.io/v1 Lease through HTTP: CRUD, upstream's 422s for a non-positive
leaseDurationSeconds and a negative leaseTransitions, the gated strategy/preferredHolder
fields dropped (CoordinatedLeaderElection is off in 1.31), MicroTime normalisation, the Table
columns kubectl prints (NAME HOLDER AGE), discovery, OpenAPI and the kube-node-lease namespace."""

from __future__ import annotations

from tests.apiserver.conftest import API

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def lease(name: str, **spec: object) -> dict:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name}, "spec": spec}


async def test_crud_and_micro_times(api: API) -> None:
    code, body = await api.post(LEASES, lease(
        "l1", holderIdentity="a", leaseDurationSeconds=15,
        renewTime="2024-05-01T12:00:00.123456+02:00", leaseTransitions=0))
    assert code == 201, body
    assert body["spec"]["renewTime"] == "2024-05-01T10:00:00.123456Z"
    body["spec"]["holderIdentity"] = "b"
    body["spec"]["leaseTransitions"] = 1
    code, updated = await api.put(f"{LEASES}/l1", body)
    assert code == 200, updated
    assert updated["spec"]["holderIdentity"] == "b"
    code, bad_time = await api.post(LEASES, lease("l2", renewTime="2024-05-01T12:00:00Z"))
    assert code == 400, bad_time  # a MicroTime needs six fraction digits (Go's parse error)
    code, gone = await api.delete(f"{LEASES}/l1")
    assert code == 200 and gone["kind"] == "Status" and gone["status"] == "Success", gone


async def test_validation_matches_upstream(api: API) -> None:
    code, body = await api.post(LEASES, lease("bad", leaseDurationSeconds=0,
                                               leaseTransitions=-1))
    assert code == 422, body
    assert body["message"] == (
        'Lease.coordination.k8s.io "bad" is invalid: [spec.leaseDurationSeconds: Invalid '
        "value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be "
        "greater than or equal to 0]")
    code, body = await api.post(LEASES, lease("ok", leaseDurationSeconds=1))
    assert code == 201
    body["spec"]["leaseDurationSeconds"] = -5
    code, body = await api.put(f"{LEASES}/ok", body)
    assert code == 422 and body["details"]["causes"][0]["field"] == "spec.leaseDurationSeconds"


async def test_gated_fields_are_dropped(api: API) -> None:
    code, body = await api.post(LEASES, lease("g", holderIdentity="x",
                                               strategy="OldestEmulationVersion",
                                               preferredHolder="y"))
    assert code == 201, body
    assert body["spec"] == {"holderIdentity": "x"}


async def test_table_discovery_and_node_lease_namespace(api: API) -> None:
    for name, spec in (("a", {"holderIdentity": "node-1"}), ("b", {})):
        code, body = await api.post(LEASES, lease(name, **spec))
        assert code == 201, body
    code, table = await api.get(LEASES, headers={"Accept": TABLE})
    assert code == 200
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Holder", "Age"]
    assert [r["cells"][:2] for r in table["rows"]] == [["a", "node-1"], ["b", ""]]
    code, group = await api.get("/apis/coordination.k8s.io/v1")
    assert code == 200
    [res] = [r for r in group["resources"] if r["name"] == "leases"]
    assert res["namespaced"] is True and res["kind"] == "Lease"
    code, ns = await api.get("/api/v1/namespaces/kube-node-lease")
    assert code == 200, ns
    code, doc = await api.get("/openapi/v3/apis/coordination.k8s.io/v1")
    assert code == 200
    spec = doc["components"]["schemas"]["io.k8s.api.coordination.v1.LeaseSpec"]
    assert {"holderIdentity", "leaseDurationSeconds", "renewTime", "acquireTime",
            "leaseTransitions"} <= set(spec["properties"])
    assert spec["properties"]["leaseDurationSeconds"]["description"].startswith(
        "leaseDurationSeconds is a duration that candidates for a lease need to wait")


async def test_protobuf_as_client_go_asks(api: API) -> None:
    """kubelets and leader electors of upstream ask client-go's protobuf: Google's runtime
    parses our answer as a coordination.k8s.io/v1 Lease, MicroTime included."""
    from tests.protobuf_descriptors import message_class

    code, body = await api.post(LEASES, lease("pb", holderIdentity="n",
                                               leaseDurationSeconds=40,
                                               renewTime="2024-05-01T10:00:00.123456Z"))
    assert code == 201, body
    async with api.session.get(f"{api.url}{LEASES}/pb", headers={
            "Accept": "application/vnd.kubernetes.protobuf, application/json"}) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"] == "application/vnd.kubernetes.protobuf"
        raw = await resp.read()
    unknown = message_class("k8s.io.apimachinery.pkg.runtime.Unknown").FromString(raw[4:])
    assert (unknown.typeMeta.apiVersion, unknown.typeMeta.kind) == (
        "coordination.k8s.io/v1", "Lease")
    parsed = message_class("k8s.io.api.coordination.v1.Lease").FromString(unknown.raw)
    assert parsed.spec.holderIdentity == "n" and parsed.spec.leaseDurationSeconds == 40
    assert (parsed.spec.renewTime.seconds, parsed.spec.renewTime.nanos) == (1714557600,
                                                                          123456000)
