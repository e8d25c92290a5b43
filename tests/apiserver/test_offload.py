"""Big requests do their pure work on the worker thread, small ones inline (offload.py).

Which thread ran defaulting/validation is recorded by wrapping the registry's pure step; a
ConfigMap of 20,000 keys (~250 KB) is heavy, a pod is not. The loop-hold budget itself is
measured by tests/robustness/test_fuzz_pipeline.py."""

from __future__ import annotations

import threading

import orjson

from minikube_py import offload
from minikube_py.registry import generic

from .conftest import API, pod

CM = "/api/v1/namespaces/default/configmaps"


def record_threads(monkeypatch) -> list[str]:
    seen: list[str] = []
    original = generic._defaulted_create_errors

    def recording(kind, obj):
        seen.append(threading.current_thread().name)
        return original(kind, obj)

    monkeypatch.setattr(generic, "_defaulted_create_errors", recording)
    return seen


async def test_a_big_create_is_validated_off_the_loop(api: API, monkeypatch) -> None:
    seen = record_threads(monkeypatch)
    big = {"metadata": {"name": "big"}, "data": {f"k{i}": "v" for i in range(20000)}}
    status, body = await api.post(CM, raw=orjson.dumps(big))
    assert status == 201, body
    assert seen and seen[-1].startswith("apiserver-heavy")
    status, body = await api.post("/api/v1/namespaces/default/pods", pod("small"))
    assert status == 201, body
    assert seen[-1] == threading.current_thread().name  # inline, on the loop's thread


async def test_an_update_of_a_big_object_is_heavy_whatever_the_patch(api: API,
                                                                        monkeypatch) -> None:
    big = {"metadata": {"name": "big"}, "data": {f"k{i}": "v" for i in range(20000)}}
    assert (await api.post(CM, raw=orjson.dumps(big)))[0] == 201
    seen: list[str] = []
    original = generic.validate_update

    def recording(kind, new, old):
        seen.append(threading.current_thread().name)
        return original(kind, new, old)

    monkeypatch.setattr(generic, "validate_update", recording)
    status, body = await api.patch(f"{CM}/big", {"data": {"one": "more"}})
    assert status == 200 and body["data"]["one"] == "more"
    assert seen[-1].startswith("apiserver-heavy")  # a 9-byte patch, a 250 KB object


async def test_the_heavy_flag_never_leaks_into_the_next_request(api: API) -> None:
    assert not offload.is_heavy()
    big = {"metadata": {"name": "big"}, "data": {f"k{i}": "v" for i in range(20000)}}
    assert (await api.post(CM, raw=orjson.dumps(big)))[0] == 201
    assert not offload.is_heavy()


async def test_errors_from_the_worker_are_statuses(api: API) -> None:
    bad = {"metadata": {"name": "Bad_Name"}, "data": {f"k{i}": "v" for i in range(20000)}}
    status, body = await api.post(CM, raw=orjson.dumps(bad))
    assert status == 422 and body["reason"] == "Invalid"
    deep = b'{"metadata":{"name":"d"},"data":' + b'{"a":' * 500 + b'1' + b'}' * 501
    status, body = await api.post(CM, raw=deep + b" " * 40000)
    assert status == 400 and "exceeded max depth of 100" in body["message"]
