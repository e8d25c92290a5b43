"""Object semantics through the HTTP API: metadata, concurrency, status, deletion, subresources."""

from __future__ import annotations

import asyncio

from tests.apiserver.conftest import API, pod

PODS = "/api/v1/namespaces/default/pods"


async def test_create_fills_system_metadata_and_generate_name(api: API):
    code, created = await api.post(PODS, {**pod(""), "metadata": {"generateName": "web-"}})
    assert code == 201
    md = created["metadata"]
    assert md["name"].startswith("web-") and len(md["name"]) == 9
    assert md["uid"] and md["creationTimestamp"].endswith("Z") and md["generation"] == 1
    assert md["resourceVersion"].isdigit()
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


async def test_stale_resource_version_is_409_and_spec_change_bumps_generation(api: API):
    _, created = await api.post("/apis/apps/v1/namespaces/default/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"a": "b"}},
                 "template": {"metadata": {"labels": {"a": "b"}},
                              "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    assert created["spec"]["replicas"] == 1 and created["metadata"]["generation"] == 1
    created["spec"]["replicas"] = 3
    code, updated = await api.put("/apis/apps/v1/namespaces/default/deployments/d", created)
    assert code == 200 and updated["metadata"]["generation"] == 2
    code, status = await api.put("/apis/apps/v1/namespaces/default/deployments/d", created)
    assert code == 409 and status["reason"] == "Conflict"
    assert "the object has been modified" in status["message"]
    updated["metadata"]["labels"] = {"x": "y"}
    _, relabeled = await api.put("/apis/apps/v1/namespaces/default/deployments/d", updated)
    assert relabeled["metadata"]["generation"] == 2  # metadata is not spec


async def test_main_update_ignores_status_and_status_update_ignores_spec(api: API):
    _, created = await api.post(PODS, pod("p"))
    created["status"]["phase"] = "Running"
    created["spec"]["activeDeadlineSeconds"] = 30
    _, updated = await api.put(f"{PODS}/p", created)
    assert updated["status"]["phase"] == "Pending" and updated["spec"]["activeDeadlineSeconds"] == 30
    updated["status"]["phase"] = "Running"
    updated["spec"]["activeDeadlineSeconds"] = 60
    code, after = await api.put(f"{PODS}/p/status", updated)
    assert code == 200
    assert after["status"]["phase"] == "Running" and after["spec"]["activeDeadlineSeconds"] == 30


async def test_immutable_pod_fields_are_invalid(api: API):
    _, created = await api.post(PODS, pod("p"))
    created["spec"]["containers"][0]["name"] = "renamed"
    code, status = await api.put(f"{PODS}/p", created)
    assert code == 422 and status["reason"] == "Invalid"
    assert status["details"]["causes"][0]["field"] == "spec"


async def test_unchanged_update_writes_nothing(api: API):
    _, created = await api.post(PODS, pod("p"))
    code, same = await api.put(f"{PODS}/p", created)
    assert code == 200 and same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_finalizers_hold_deletion_until_removed(api: API):
    body = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "held", "finalizers": ["example.com/keep"]}}
    await api.post("/api/v1/namespaces/default/configmaps", body)
    code, deleting = await api.delete("/api/v1/namespaces/default/configmaps/held")
    assert code == 200 and deleting["metadata"]["deletionTimestamp"]
    code, still = await api.get("/api/v1/namespaces/default/configmaps/held")
    assert code == 200
    code, _ = await api.patch("/api/v1/namespaces/default/configmaps/held",
                              {"metadata": {"finalizers": None}})
    assert code == 200
    code, _ = await api.get("/api/v1/namespaces/default/configmaps/held")
    assert code == 404


async def test_namespace_terminating_then_finalize_removes_it(api: API):
    await api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                          "metadata": {"name": "tmp"}})
    code, ns = await api.delete("/api/v1/namespaces/tmp")
    assert code == 200 and ns["status"]["phase"] == "Terminating"
    ns["spec"]["finalizers"] = []
    code, _ = await api.put("/api/v1/namespaces/tmp/finalize", ns)
    assert code == 200
    code, _ = await api.get("/api/v1/namespaces/tmp")
    assert code == 404


async def test_binding_is_one_cas_and_v1_bindings_endpoint(api: API):
    await api.post(PODS, pod("a"))
    code, status = await api.post("/api/v1/namespaces/default/bindings", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
        "target": {"kind": "Node", "name": "n1"}})
    assert code == 201 and status["status"] == "Success"
    code, status = await api.post(f"{PODS}/a/binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"},
        "target": {"kind": "Pod", "name": "n2"}})
    assert code == 422 and "target.kind" in status["message"]
    await api.post(PODS, pod("b"))
    results = await asyncio.gather(*(api.post(f"{PODS}/b/binding", {
        "apiVersion": "v1", "kind": "Binding", "metadata": {"name": "b"},
        "target": {"kind": "Node", "name": f"n{i}"}}) for i in range(10)))
    assert sorted(code for code, _ in results) == [201] + [409] * 9


async def test_scale_subresource_get_put_with_precondition(api: API):
    await api.post("/api/v1/namespaces/default/replicationcontrollers", {
        "apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"},
        "spec": {"replicas": 1, "selector": {"app": "x"},
                 "template": {"metadata": {"labels": {"app": "x"}},
                              "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    code, scale = await api.get("/api/v1/namespaces/default/replicationcontrollers/rc/scale")
    assert code == 200 and scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 1} and scale["status"]["selector"] == "app=x"
    scale["spec"]["replicas"] = 5
    code, scaled = await api.put("/api/v1/namespaces/default/replicationcontrollers/rc/scale", scale)
    assert code == 200 and scaled["spec"]["replicas"] == 5
    code, _ = await api.put("/api/v1/namespaces/default/replicationcontrollers/rc/scale", scale)
    assert code == 409  # the Scale's resourceVersion is stale now
    scale["spec"]["replicas"] = -1
    scale["metadata"].pop("resourceVersion")
    code, status = await api.put("/api/v1/namespaces/default/replicationcontrollers/rc/scale", scale)
    assert code == 422 and status["details"]["causes"][0]["field"] == "spec.replicas"


async def test_service_node_port_and_release(api: API):
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
           "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}}
    code, created = await api.post("/api/v1/namespaces/default/services", svc)
    assert code == 201 and created["spec"]["ports"][0]["nodePort"] == 30080
    code, status = await api.post("/api/v1/namespaces/default/services",
                                  {**svc, "metadata": {"name": "s2"}})
    assert code == 422 and "provided port is already allocated" in status["message"]
    await api.delete("/api/v1/namespaces/default/services/s")
    code, _ = await api.post("/api/v1/namespaces/default/services", {**svc, "metadata": {"name": "s3"}})
    assert code == 201


async def test_events_carry_a_lease_for_the_ttl(api: API):
    code, event = await api.post("/api/v1/namespaces/default/events", {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Started", "message": "m", "type": "Normal"})
    assert code == 201
    kv = await api.server.store.get("/registry/events/default/e1")
    assert kv.lease != 0
    info = await api.server.store.lease_info(kv.lease)
    assert 3600 <= info.ttl <= 3600 + 60


async def test_delete_collection_with_selector(api: API):
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        await api.post(PODS, pod(name, tier=tier))
    code, deleted = await api.delete(f"{PODS}?labelSelector=tier%3Dx")
    assert code == 200 and sorted(i["metadata"]["name"] for i in deleted["items"]) == ["a", "b"]
    _, left = await api.get(PODS)
    assert [i["metadata"]["name"] for i in left["items"]] == ["c"]


async def test_list_paging_and_selectors(api: API):
    for i in range(7):
        await api.post(PODS, pod(f"p{i}", parity="even" if i % 2 == 0 else "odd"))
    names, token = [], ""
    while True:
        _, page = await api.get(f"{PODS}?limit=3" + (f"&continue={token}" if token else ""))
        names += [i["metadata"]["name"] for i in page["items"]]
        token = page["metadata"].get("continue")
        if not token:
            break
    assert names == [f"p{i}" for i in range(7)]
    _, even = await api.get(f"{PODS}?labelSelector=parity%3Deven&limit=2")
    assert [i["metadata"]["name"] for i in even["items"]] == ["p0", "p2"]
    assert even["metadata"]["continue"]
    _, rest = await api.get(f"{PODS}?labelSelector=parity%3Deven&limit=2&continue="
                            + even["metadata"]["continue"])
    assert [i["metadata"]["name"] for i in rest["items"]] == ["p4", "p6"]
    _, running = await api.get(f"{PODS}?fieldSelector=status.phase!%3DPending")
    assert running["items"] == []


async def test_list_at_an_exact_past_revision(api: API):
    _, first = await api.post(PODS, pod("one"))
    await api.post(PODS, pod("two"))
    rv = first["metadata"]["resourceVersion"]
    _, past = await api.get(f"{PODS}?resourceVersion={rv}&resourceVersionMatch=Exact")
    assert [i["metadata"]["name"] for i in past["items"]] == ["one"]
    code, status = await api.get(f"{PODS}?resourceVersion=999999")
    assert code == 504 and "Too large resource version" in status["message"]
