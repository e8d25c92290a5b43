"""Service updates take from and give back to the IP and node-port pools only when written
(upstream alloc.go's transaction): a dry run or a refused update neither leaks nor frees."""

from __future__ import annotations

from tests.apiserver.conftest import API

PATH = "/api/v1/namespaces/default/services"


def _service(name: str, **spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"ports": [{"name": "http", "port": 80}], **spec}}


async def test_a_dry_run_change_to_external_name_keeps_the_ip(api: API) -> None:
    status, svc = await api.post(PATH, _service("a", clusterIP="10.0.0.100"))
    assert status == 201, svc
    patch = {"spec": {"type": "ExternalName", "externalName": "x.example"}}
    status, body = await api.patch(f"{PATH}/a?dryRun=All", patch)
    assert status == 200 and "clusterIP" not in body["spec"], body
    status, body = await api.post(PATH, _service("b", clusterIP="10.0.0.100"))
    assert status == 422 and "provided IP is already allocated" in body["message"]
    status, body = await api.patch(f"{PATH}/a", patch)
    assert status == 200, body
    status, body = await api.post(PATH, _service("b", clusterIP="10.0.0.100"))
    assert status == 201, body


async def test_a_refused_update_gives_back_what_it_took(api: API) -> None:
    status, svc = await api.post(PATH, _service("ext", type="ExternalName",
                                                externalName="x.example"))
    assert status == 201, svc
    # to NodePort, but with an invalid sessionAffinity: nothing may stay allocated
    bad = {"spec": {"type": "NodePort", "externalName": None, "sessionAffinity": "Sticky",
                    "clusterIP": "10.0.0.101", "ports": [{"name": "http", "port": 80,
                                                           "nodePort": 30101}]}}
    status, body = await api.patch(f"{PATH}/ext", bad)
    assert status == 422, body
    status, body = await api.post(PATH, _service("c", type="NodePort", clusterIP="10.0.0.101",
                                                 ports=[{"port": 80, "nodePort": 30101}]))
    assert status == 201, body


async def test_leaving_node_port_releases_the_port_once_written(api: API) -> None:
    status, svc = await api.post(PATH, _service("np", type="NodePort",
                                                ports=[{"port": 80, "nodePort": 30102}]))
    assert status == 201, svc
    status, body = await api.patch(f"{PATH}/np", {"spec": {"type": "ClusterIP"}})
    assert status == 200 and "nodePort" not in body["spec"]["ports"][0], body
    assert "externalTrafficPolicy" not in body["spec"]
    status, body = await api.post(PATH, _service("np2", type="NodePort",
                                                 ports=[{"port": 80, "nodePort": 30102}]))
    assert status == 201, body
