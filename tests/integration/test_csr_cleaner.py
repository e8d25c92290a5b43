"""The csrcleaner against a real API server: CSRs in each state (pending, denied, failed,
issued, issued with a short-lived certificate), then the controller's clock moved forward past
upstream's ages — one hour after approval/denial/failure, 24 hours pending, or the
certificate's notAfter — and exactly the due ones deleted."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from minikube_py.client import Client
from minikube_py.client.inprocess import InProcessTransport
from minikube_py.client.resources import CERTIFICATE_SIGNING_REQUESTS as CSRS
from minikube_py.controllers.csrcleaner import CSRCleanerController
from minikube_py.controllers.csrsigning import CSRSigningController
from tests.apiserver.test_secure import serve
from tests.integration.test_cluster_controllers import eventually, get_or_none, running
from tests.integration.test_csr_signing import csr_body, new_request

MINUTE = 60.0


@pytest.fixture
async def cluster(tmp_path: Path):
    api, close = await serve(tmp_path, authorization_mode="AlwaysAllow",
                             authorization_policy_file=None)
    client = Client(InProcessTransport(api.app))
    certs = tmp_path / "certs"
    try:
        async with running(client, CSRSigningController, CSRCleanerController,
                           cluster_signing_cert_file=str(certs / "ca.crt"),
                           cluster_signing_key_file=str(certs / "ca.key")) as controllers:
            yield client, controllers[1]
    finally:
        await client.close()
        await close()


async def _decide(client: Client, name: str, type_: str) -> None:
    csr = await client.get(CSRS, name)
    csr["status"] = {"conditions": [{"type": type_, "status": "True", "reason": "Test",
                                     "message": "by the test"}]}
    await client.update(CSRS, csr, subresource="approval")


async def _has(client: Client, name: str, what: str) -> bool:
    csr = await client.get(CSRS, name)
    status = csr.get("status") or {}
    if what == "certificate":
        return bool(status.get("certificate"))
    return any(c["type"] == what for c in status.get("conditions") or [])


async def test_csrs_are_deleted_after_upstreams_ages(cluster) -> None:
    client, cleaner = cluster
    request, _ = new_request("someone")
    for name, extra in (("pending", {}), ("denied", {}), ("issued", {}),
                        ("short", {"expirationSeconds": 600})):
        await client.create(CSRS, csr_body(name, request, **extra))
    not_a_node, _ = new_request("not-a-node", ("system:nodes",))
    await client.create(CSRS, csr_body("failed", not_a_node,
                                       "kubernetes.io/kube-apiserver-client-kubelet",
                                       ("client auth", "digital signature")))
    await _decide(client, "denied", "Denied")
    for name in ("issued", "short", "failed"):
        await _decide(client, name, "Approved")
    for name, what in (("issued", "certificate"), ("short", "certificate"),
                       ("failed", "Failed")):
        async def done(name: str = name, what: str = what) -> bool:
            """csrsigning has signed or failed the approved requests"""
            return await _has(client, name, what)
        await eventually(done, timeout=10)

    async def left() -> set[str]:
        return {c["metadata"]["name"] for c in (await client.list(CSRS))["items"]}

    async def cache_has(names: set[str]) -> bool:
        """the cleaner's informer has seen every update"""
        cached = {c["metadata"]["name"]: c for c in cleaner.csrs.indexer.list()}
        return set(cached) == names and all(
            (cached[n].get("status") or {}).get("conditions") for n in names - {"pending"})

    everything = {"pending", "denied", "issued", "short", "failed"}
    await eventually(lambda: cache_has(everything))
    start = time.time()
    assert await cleaner.clean() == []  # nothing is old yet
    cleaner.clock = lambda: start + 11 * MINUTE  # past the 10-minute certificate's notAfter
    assert await cleaner.clean() == ["short"]
    assert await get_or_none(client, CSRS, "short") is None
    await eventually(lambda: cache_has(everything - {"short"}))
    cleaner.clock = lambda: start + 59 * MINUTE
    assert await cleaner.clean() == []
    cleaner.clock = lambda: start + 61 * MINUTE  # an hour after approval, denial, failure
    assert sorted(await cleaner.clean()) == ["denied", "failed", "issued"]
    assert await left() == {"pending"}
    await eventually(lambda: cache_has({"pending"}))
    cleaner.clock = lambda: start + 23 * 60 * MINUTE
    assert await cleaner.clean() == []
    cleaner.clock = lambda: start + 24 * 60 * MINUTE + MINUTE  # a day unhandled
    assert await cleaner.clean() == ["pending"]
    assert await left() == set()
