"""`/debug/components` on the secure port is authorized like every non-resource path
(`get` to list, `post` to pause or resume): here with ABAC, over a real TLS socket."""

from __future__ import annotations

from pathlib import Path

from minikube_py.pausing import REGISTRY
from tests.apiserver.test_secure import serve


async def test_authorized_as_a_non_resource_path(tmp_path: Path) -> None:
    api, close = await serve(tmp_path)
    gate = REGISTRY.register("scheduler", "scheduler")
    try:
        status, body = await api.call("GET", "/debug/components")
        assert status == 401 and body["reason"] == "Unauthorized"
        status, body = await api.call("POST", "/debug/components/scheduler/pause",
                                      token="reader-token")  # pods only
        assert status == 403 and body["reason"] == "Forbidden"
        # the ops group is read-only: may list, may not pause
        status, body = await api.call("GET", "/debug/components", token="ops-token")
        assert status == 200 and [c["name"] for c in body["components"]] == ["scheduler"]
        status, body = await api.call("POST", "/debug/components/scheduler/pause",
                                      token="ops-token")
        assert status == 403 and not gate.paused
        status, body = await api.call("POST", "/debug/components/scheduler/pause",
                                      token="admin-token")
        assert status == 200 and body["paused"] is True and gate.paused
        status, body = await api.call("POST", "/debug/components/scheduler/resume",
                                      token="admin-token")
        assert status == 200 and body["paused"] is False and not gate.paused
        # the insecure port trusts its loopback callers, as for every path
        status, body = await api.call("GET", "/debug/components/scheduler", secure=False)
        assert status == 200 and body["kind"] == "scheduler"
        status, body = await api.call("GET", "/", secure=False)
        assert "/debug/components" in body["paths"]
    finally:
        REGISTRY.unregister(gate)
        await close()
