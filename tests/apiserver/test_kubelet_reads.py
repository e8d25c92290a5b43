"""The kubelet's ConfigMap/Secret/Service reads (kubelet/reads.py) against a real API server:
answered from the shared informers' caches once synced (no request), a GET on a miss, GETs
alone without shared informers; and the token manager's pause when TokenRequest is not served."""

from __future__ import annotations

from prometheus_client import REGISTRY

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.cache import InformerFactory
from minikube_py.client.resources import CONFIGMAPS, SERVICES
from minikube_py.kubelet.reads import ClusterReads, shared_informers
from minikube_py.kubelet.token_manager import TokenManager
from tests.apiserver.conftest import API

NS = "/api/v1/namespaces/default"


def _requests(verb: str, resource: str, subresource: str = "") -> float:
    total = 0.0
    for family in REGISTRY.collect():
        if family.name == "apiserver_request":
            for sample in family.samples:
                labels = sample.labels
                if sample.name.endswith("_total") and labels.get("verb") == verb and \
                        labels.get("resource") == resource and \
                        labels.get("subresource", "") == subresource:
                    total += sample.value
    return total


async def _configmap(api: API, name: str) -> None:
    status, body = await api.call("POST", f"{NS}/configmaps",
                                  {"metadata": {"name": name}, "data": {"k": name}})
    assert status == 201, body


async def test_reads_come_from_the_shared_caches_once_synced(api: API) -> None:
    await _configmap(api, "cached")
    client = Client(HTTPTransport(api.url))
    factory = InformerFactory(client)
    reads = ClusterReads(client, shared_informers(factory))
    try:
        # not synced yet: a GET answers
        before = _requests("GET", "configmaps")
        assert (await reads.get(CONFIGMAPS, "cached", "default"))["data"] == {"k": "cached"}
        assert _requests("GET", "configmaps") == before + 1
        factory.start()
        await factory.wait_for_sync(10)
        before = _requests("GET", "configmaps")
        assert (await reads.get(CONFIGMAPS, "cached", "default"))["data"] == {"k": "cached"}
        services = await reads.list(SERVICES, "default")
        assert [s["metadata"]["name"] for s in services] == ["kubernetes"]
        assert _requests("GET", "configmaps") == before  # the cache answered
        # a miss asks the API server: an object the watch has not delivered, or none at all
        assert await reads.get_or_none(CONFIGMAPS, "absent", "default") is None
        assert _requests("GET", "configmaps") == before + 1
    finally:
        await factory.stop()
        await client.close()


async def test_without_shared_informers_every_read_is_a_get(api: API) -> None:
    await _configmap(api, "plain")
    client = Client(HTTPTransport(api.url))
    try:
        reads = ClusterReads(client)
        before = _requests("GET", "configmaps")
        for _ in range(2):
            assert (await reads.get(CONFIGMAPS, "plain", "default"))["data"] == {"k": "plain"}
        assert _requests("GET", "configmaps") == before + 2
        assert [s["metadata"]["name"] for s in await reads.list(SERVICES, "default")] == \
            ["kubernetes"]
    finally:
        await client.close()


async def test_token_manager_pauses_while_token_request_is_not_served(api: API) -> None:
    """This server has no signing key, so serviceaccounts/token is not served (404 with no
    kind): one pod's request finds out, the next pods do not ask again."""
    client = Client(HTTPTransport(api.url))
    try:
        manager = TokenManager(client)
        before = _requests("POST", "serviceaccounts", "token")
        for i in range(3):
            pod = {"metadata": {"name": f"p{i}", "namespace": "default", "uid": f"u{i}"},
                   "spec": {"serviceAccountName": "default"}}
            assert await manager.token(pod, "", 3607) is None
        assert _requests("POST", "serviceaccounts", "token") == before + 1
    finally:
        await client.close()
