"""--admission-control against a real API server over HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from minikube_py.apiserver.options import APIServerOptions
from minikube_py.apiserver.server import APIServer
from minikube_py.storage import EmbeddedStore
from tests.apiserver.conftest import pod, start_api


async def _with_api(tmp_path: Path, plugins: tuple[str, ...]):
    return await start_api(tmp_path, admission_control=plugins)


async def _close(runner, store, session) -> None:
    await session.close()
    await runner.cleanup()
    await store.close()


async def _namespace(api, name: str) -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    assert (await api.post("/api/v1/namespaces", ns))[0] == 201


def sized(name: str, **resources: dict) -> dict:
    body = pod(name)
    body["spec"]["containers"][0]["resources"] = resources
    return body


async def test_always_deny_denies_writes_but_not_reads(tmp_path: Path) -> None:
    api, runner, store, session = await _with_api(tmp_path, ("AlwaysDeny",))
    try:
        status, body = await api.post("/api/v1/namespaces/default/pods", pod("web"))
        assert status == 403 and body["reason"] == "Forbidden"
        assert body["message"] == ('pods "web" is forbidden: admission control is denying all '
                                   "modifications")
        status, _ = await api.get("/api/v1/namespaces/default/pods")
        assert status == 200
    finally:
        await _close(runner, store, session)


async def test_limit_ranger_defaults_and_rejects(tmp_path: Path) -> None:
    api, runner, store, session = await _with_api(tmp_path, ("NamespaceLifecycle", "LimitRanger"))
    try:
        lr = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
              "spec": {"limits": [{"type": "Container", "min": {"cpu": "100m"},
                                   "max": {"cpu": "1"}, "default": {"cpu": "500m"},
                                   "defaultRequest": {"cpu": "200m"}}]}}
        status, _ = await api.post("/api/v1/namespaces/default/limitranges", lr)
        assert status == 201
        status, created = await api.post("/api/v1/namespaces/default/pods", pod("plain"))
        assert status == 201, created
        assert created["spec"]["containers"][0]["resources"] == {
            "requests": {"cpu": "200m"}, "limits": {"cpu": "500m"}}
        assert created["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
            "LimitRanger plugin set: cpu request for container c; cpu limit for container c")
        status, body = await api.post("/api/v1/namespaces/default/pods",
                                      sized("small", requests={"cpu": "50m"}))
        assert status == 403 and body["reason"] == "Forbidden"
        assert body["message"] == ('pods "small" is forbidden: minimum cpu usage per Container '
                                   "is 100m, but request is 50m")
        status, body = await api.post("/api/v1/namespaces/default/pods",
                                      sized("big", limits={"cpu": "2"}))
        assert status == 403
        assert "maximum cpu usage per Container is 1, but limit is 2" in body["message"]
        status, _ = await api.get("/api/v1/namespaces/default/pods/small")
        assert status == 404
    finally:
        await _close(runner, store, session)


async def test_resource_quota_rejects_and_tracks_usage(tmp_path: Path) -> None:
    api, runner, store, session = await _with_api(tmp_path, ("ResourceQuota",))
    try:
        await _namespace(api, "team")  # default holds the `kubernetes` service
        quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                 "spec": {"hard": {"pods": "2", "requests.cpu": "1", "services": "5"}}}
        assert (await api.post("/api/v1/namespaces/team/resourcequotas", quota))[0] == 201
        path = "/api/v1/namespaces/team/pods"
        status, body = await api.post(path, pod("nocpu"))
        assert status == 403
        assert body["message"] == ('pods "nocpu" is forbidden: failed quota: q: must specify '
                                   "requests.cpu for: c")
        for name in ("a", "b"):
            status, body = await api.post(path, sized(name, requests={"cpu": "400m"}))
            assert status == 201, body
        _, q = await api.get("/api/v1/namespaces/team/resourcequotas/q")
        assert q["status"]["used"] == {"pods": "2", "requests.cpu": "800m", "services": "0"}
        assert q["status"]["hard"] == quota["spec"]["hard"]
        status, body = await api.post(path, sized("c", requests={"cpu": "100m"}))
        assert status == 403 and body["reason"] == "Forbidden"
        assert body["message"] == ('pods "c" is forbidden: exceeded quota: q, requested: pods=1, '
                                   "used: pods=2, limited: pods=2")
        status, _ = await api.delete(f"{path}/a", {"gracePeriodSeconds": 0})
        assert status == 200
        _, q = await api.get("/api/v1/namespaces/team/resourcequotas/q")
        assert q["status"]["used"]["pods"] == "1"
        assert q["status"]["used"]["requests.cpu"] == "400m"
        status, body = await api.post(path, sized("c", requests={"cpu": "700m"}))
        assert status == 403 and "requested: requests.cpu=700m" in body["message"]
        status, body = await api.post(path, sized("c", requests={"cpu": "600m"}))
        assert status == 201, body
    finally:
        await _close(runner, store, session)


async def test_resource_quota_dry_run_checks_but_charges_nothing(tmp_path: Path) -> None:
    api, runner, store, session = await _with_api(tmp_path, ("ResourceQuota",))
    try:
        await _namespace(api, "team")  # default holds the `kubernetes` service
        quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                 "spec": {"hard": {"pods": "1"}}}
        assert (await api.post("/api/v1/namespaces/team/resourcequotas", quota))[0] == 201
        path = "/api/v1/namespaces/team/pods"
        for name in ("dry1", "dry2"):
            status, body = await api.post(path + "?dryRun=All", pod(name))
            assert status == 201, body
        _, q = await api.get("/api/v1/namespaces/team/resourcequotas/q")
        assert (q["status"].get("used") or {}).get("pods", "0") == "0"  # nothing charged
        assert (await api.post(path, pod("real")))[0] == 201
        status, body = await api.post(path + "?dryRun=All", pod("over"))
        assert status == 403 and "exceeded quota: q" in body["message"]
        _, q = await api.get("/api/v1/namespaces/team/resourcequotas/q")
        assert q["status"]["used"] == {"pods": "1"}
    finally:
        await _close(runner, store, session)


async def test_resource_quota_charges_what_a_service_update_adds(tmp_path: Path) -> None:
    api, runner, store, session = await _with_api(tmp_path, ("ResourceQuota",))
    try:
        await _namespace(api, "team")  # default holds the `kubernetes` service
        quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                 "spec": {"hard": {"services": "5", "services.nodeports": "1"}}}
        assert (await api.post("/api/v1/namespaces/team/resourcequotas", quota))[0] == 201
        path = "/api/v1/namespaces/team/services"
        for name in ("a", "b"):
            svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
                   "spec": {"ports": [{"port": 80}], "selector": {"app": name}}}
            assert (await api.post(path, svc))[0] == 201
        to_node_port = {"spec": {"type": "NodePort"}}
        status, body = await api.call("PATCH", f"{path}/a", to_node_port,
                                      headers={"Content-Type": "application/merge-patch+json"})
        assert status == 200, body
        _, q = await api.get("/api/v1/namespaces/team/resourcequotas/q")
        assert q["status"]["used"] == {"services": "2", "services.nodeports": "1"}
        status, current = await api.get(f"{path}/b")
        current["spec"]["type"] = "NodePort"
        status, body = await api.put(f"{path}/b", current)
        assert status == 403 and body["message"] == (
            'services "b" is forbidden: exceeded quota: q, requested: services.nodeports=1, '
            "used: services.nodeports=1, limited: services.nodeports=1")
        _, b = await api.get(f"{path}/b")
        assert b["spec"]["type"] == "ClusterIP"
        # an update that adds nothing is not charged
        status, body = await api.call("PATCH", f"{path}/b", {"metadata": {"labels": {"x": "y"}}},
                                      headers={"Content-Type": "application/merge-patch+json"})
        assert status == 200, body
    finally:
        await _close(runner, store, session)


async def test_namespace_auto_provision_and_exists(tmp_path: Path) -> None:
    api, runner, store, session = await _with_api(tmp_path, ("NamespaceAutoProvision",))
    try:
        status, body = await api.post("/api/v1/namespaces/fresh/pods", pod("web"))
        assert status == 201, body
        status, ns = await api.get("/api/v1/namespaces/fresh")
        assert status == 200 and ns["status"]["phase"] == "Active"
    finally:
        await _close(runner, store, session)
    api, runner, store, session = await _with_api(tmp_path / "b", ("NamespaceExists",))
    try:
        status, body = await api.post("/api/v1/namespaces/missing/pods", pod("web"))
        assert status == 404 and body["message"] == 'namespaces "missing" not found'
    finally:
        await _close(runner, store, session)


async def test_service_account_and_security_context_deny(tmp_path: Path) -> None:
    api, runner, store, session = await _with_api(
        tmp_path, ("ServiceAccount", "SecurityContextDeny"))
    try:
        path = "/api/v1/namespaces/default/pods"
        status, body = await api.post(path, pod("web"))
        assert status == 403
        assert body["message"].startswith(
            'pods "web" is forbidden: error looking up service account default/default:')
        sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}
        assert (await api.post("/api/v1/namespaces/default/serviceaccounts", sa))[0] == 201
        status, body = await api.post(path, pod("web"))
        assert status == 201 and body["spec"]["serviceAccountName"] == "default"
        root = pod("root")
        root["spec"]["securityContext"] = {"runAsUser": 0}
        status, body = await api.post(path, root)
        assert status == 403
        assert body["message"] == ('pods "root" is forbidden: '
                                   "pod.Spec.SecurityContext.RunAsUser is forbidden")
    finally:
        await _close(runner, store, session)


async def test_unknown_plugin_is_a_startup_error(tmp_path: Path) -> None:
    store = await EmbeddedStore.open(tmp_path / "data", fsync=False)
    try:
        with pytest.raises(ValueError, match='unknown admission plugin "Bogus"'):
            APIServer(store, APIServerOptions(admission_control=("NamespaceLifecycle", "Bogus")))
    finally:
        await store.close()
