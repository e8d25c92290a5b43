"""Aggregated discovery served from its rendered body until what it shows changes: a CRD
served or removed, an APIService added (discovery_memo.py)."""

from __future__ import annotations

import asyncio

from minikube_py.apiserver.discovery_memo import RenderedMemo
from tests.apiserver.conftest import API
from tests.apiserver.test_crds import CRDS, established, widget_crd

AGGREGATED = {"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}
APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"


def test_a_body_is_rendered_again_only_under_another_fingerprint() -> None:
    memo, renders = RenderedMemo(), []

    def render(text: str):
        return lambda: renders.append(text) or text.encode()

    assert memo.get("/apis", 1, render("a")) == b"a"
    assert memo.get("/apis", 1, render("b")) == b"a"  # same fingerprint: the kept body
    assert memo.get("/api", 1, render("c")) == b"c"  # another key
    assert memo.get("/apis", 2, render("d")) == b"d"
    assert memo.get("/apis", 1, render("e")) == b"e"  # one body per key, not a history
    assert renders == ["a", "c", "d", "e"]


async def groups(api: API) -> list[str]:
    status, body = await api.get("/apis", headers=AGGREGATED)
    assert status == 200 and body["kind"] == "APIGroupDiscoveryList"
    return [item["metadata"]["name"] for item in body["items"]]


async def test_aggregated_discovery_follows_crds_and_apiservices(api: API) -> None:
    before = await groups(api)
    assert "example.com" not in before and await groups(api) == before
    status, crd = await api.post(CRDS, widget_crd())
    assert status == 201, crd
    await established(api)
    assert "example.com" in await groups(api)
    status, _ = await api.post(APISERVICES, {
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1beta1.metrics.example.io"},
        "spec": {"group": "metrics.example.io", "version": "v1beta1",
                 "service": {"namespace": "kube-system", "name": "nowhere", "port": 443},
                 "insecureSkipTLSVerify": True, "groupPriorityMinimum": 100,
                 "versionPriority": 100}})
    assert status == 201
    for _ in range(100):  # the aggregator's watch sees it a moment after the write
        if "metrics.example.io" in await groups(api):
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the APIService's group never showed in aggregated discovery")
    status, _ = await api.delete(f"{CRDS}/widgets.example.com")
    assert status == 200
    for _ in range(100):
        if "example.com" not in await groups(api):
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the deleted CRD's group stayed in aggregated discovery")
