"""Query parameters and paths as clients nobody here wrote send them (issue 15's first
findings): kubernetes_asyncio's `watch=True`, kr8s's `GET /version/`."""

from __future__ import annotations

import asyncio

import aiohttp
import orjson
import pytest

from minikube_py.api.params import parse_bool

from .conftest import API, pod


@pytest.mark.parametrize(("value", "expected"), [
    (None, False), ("0", False), ("false", False), ("False", False), ("FALSE", False),
    ("1", True), ("true", True), ("True", True), ("t", True), ("yes", True), ("", True),
])
def test_booleans_convert_as_upstreams_parameter_codec(value, expected):
    assert parse_bool(value) is expected


async def test_version_answers_with_a_trailing_slash(api: API) -> None:
    plain = await api.get("/version")
    slashed = await api.get("/version/")
    assert slashed == plain and plain[0] == 200 and plain[1]["major"] == "1"


@pytest.mark.parametrize("value", ["True", "1", "true"])
async def test_watch_true_in_any_spelling_streams(api: API, value: str) -> None:
    assert (await api.post("/api/v1/namespaces/default/pods", pod("w")))[0] == 201
    url = f"{api.url}/api/v1/namespaces/default/pods?watch={value}"
    async with api.session.get(url, timeout=aiohttp.ClientTimeout(total=5)) as resp:
        assert resp.status == 200
        line = await asyncio.wait_for(resp.content.readline(), 5)
    event = orjson.loads(line)
    assert event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "w"


async def test_watch_false_in_any_spelling_lists(api: API) -> None:
    status, body = await api.get("/api/v1/namespaces/default/pods?watch=False")
    assert status == 200 and body["kind"] == "PodList"


def test_exec_options_accept_capitalised_booleans() -> None:
    from aiohttp.test_utils import make_mocked_request

    from minikube_py.api.errors import StatusError
    from minikube_py.apiserver.streaming import validate_options

    ok = make_mocked_request("GET", "/api/v1/namespaces/default/pods/web/exec?command=ls&stdout=True")
    validate_options("exec", ok)  # kubernetes_asyncio's stream(): was a 400
    none = make_mocked_request("GET", "/api/v1/namespaces/default/pods/web/exec?command=ls&stdout=False")
    with pytest.raises(StatusError) as exc:
        validate_options("exec", none)
    assert exc.value.code == 400 and "at least 1 of stdin, stdout, stderr" in exc.value.message


async def test_status_bytes_are_upstreams(api: API) -> None:
    """Field order of metav1.Status, `details` on a path 404 (kubectl debug dereferences it),
    omitempty details fields, and json.Encoder's trailing newline."""
    async with api.session.get(f"{api.url}/api/v1/nosuchthing") as resp:
        assert resp.status == 404
        assert await resp.read() == (
            b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
            b'"the server could not find the requested resource","reason":"NotFound",'
            b'"details":{},"code":404}\n')
    async with api.session.get(f"{api.url}/api/v1/namespaces/default/pods/nope") as resp:
        assert resp.status == 404
        assert await resp.read() == (
            b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
            b'"pods \\"nope\\" not found","reason":"NotFound","details":{"name":"nope",'
            b'"kind":"pods"},"code":404}\n')
