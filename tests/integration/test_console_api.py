"""The console's HTTP endpoints over a real socket (aiohttp client): every JSON and SSE route,
bad input answered with a 4xx Kubernetes Status, and the door of a console on a non-loopback
address (401 without a token, 403 for a user who is not cluster-admin, 200 for one who is)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDict

from minikube_py.cli.storage_target import CommandError
from minikube_py.console.auth import COOKIE
from minikube_py.testing import Cluster

ADMIN_TOKEN = "console-admin-token"
ALICE_TOKEN = "console-alice-token"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(nodes=2, console=True) as c:
        yield c


def call(method: str, url: str, body: bytes | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
    """One request; (status, decoded JSON or text, response headers)."""
    if method == "POST":  # as the page's postJSON: an action must say it is JSON
        headers = {"Content-Type": "application/json", **(headers or {})}

    async def go() -> tuple[int, Any, dict[str, str]]:
        async with aiohttp.ClientSession() as session, \
                session.request(method, url, data=body, headers=headers) as response:
            kind = response.headers.get("Content-Type", "")
            data = await (response.json() if kind.startswith("application/json")
                          else response.text())
            return response.status, data, CIMultiDict(response.headers)
    return asyncio.run(go())


def assert_status(answer: tuple[int, Any, dict], code: int, reason: str, message: str) -> None:
    status, body, _ = answer
    assert status == code, body
    assert body["kind"] == "Status" and body["code"] == code and body["reason"] == reason
    assert body["message"] == message


def test_overview_nodes_and_pods(cluster: Cluster) -> None:
    base = cluster.console_url
    status, body, headers = call("GET", base + "console-api/overview")
    assert status == 200 and headers["Content-Type"].startswith("application/json")
    assert 0 < body["revision"] <= cluster.revision()
    assert body["nodes"] == {"total": 2, "ready": 2, "notReady": 0}
    assert set(body["pods"]) == {"total", "Pending", "Running", "Succeeded", "Failed", "Unknown"}
    assert set(body["rates"]) == {"requests", "watchEvents"}
    status, body, _ = call("GET", base + "console-api/nodes")
    assert status == 200
    assert [n["name"] for n in body["items"]] == ["node-0", "node-1"]
    assert all(n["ready"] == "True" and n["allocatable"]["pods"] > 0 for n in body["items"])
    status, body, _ = call("GET", base + "console-api/pods?namespace=nowhere")
    assert (status, body) == (200, {"items": []})


def test_overview_counts_requests_per_component_from_the_trace(cluster: Cluster) -> None:
    from minikube_py.trace import TRACE

    base = cluster.console_url
    call("GET", base + "console-api/overview")  # an open overview holds the ring on
    assert TRACE.active

    async def requests() -> None:
        async with aiohttp.ClientSession(headers={"User-Agent": "rate-test"}) as session:
            for _ in range(30):
                async with session.get(cluster.url + "/api/v1/namespaces/default") as r:
                    assert r.status == 200
    asyncio.run(requests())
    time.sleep(1.1)  # rates count whole seconds
    _, body, _ = call("GET", base + "console-api/overview")
    # 30 requests over at most the 5-second window; "rate-test" is one of the clients
    assert body["rates"]["requests"]["clients"] >= 30 / 5


def test_sample_workload_action_and_its_pods(cluster: Cluster) -> None:
    base = cluster.console_url
    namespace = cluster.create_namespace()["metadata"]["name"]
    status, body, _ = call("POST", base + "console-api/actions/sample-workload",
                           f'{{"namespace": "{namespace}", "replicas": 2}}'.encode())
    assert (status, body) == (201, {"namespace": namespace, "name": "sample", "replicas": 2})
    cluster.wait_for("deployments", "sample", "Available", namespace=namespace, timeout=20)
    status, body, _ = call("GET", base + f"console-api/pods?namespace={namespace}")
    assert len(body["items"]) == 2
    assert all(p["phase"] == "Running" and p["node"] for p in body["items"])
    # the nodes view counts the sample pods' requests (100m each)
    _, nodes, _ = call("GET", base + "console-api/nodes")
    assert sum(n["requested"]["cpu"] for n in nodes["items"]) >= 200
    # again: the API server's 409, relayed as it came
    assert_status(call("POST", base + "console-api/actions/sample-workload",
                       f'{{"namespace": "{namespace}", "replicas": 2}}'.encode()),
                  409, "AlreadyExists", 'deployments.apps "sample" already exists')


@pytest.mark.parametrize("body, code, reason, message", [
    (b"{nope", 400, "BadRequest", None),
    (b"[1, 2]", 400, "BadRequest", "the request body must be a JSON object"),
    (b'{"replicas": "two"}', 400, "BadRequest", "replicas: must be an integer"),
    (b'{"replicas": -1}', 400, "BadRequest", "replicas: must be between 0 and 500"),
    (b'{"name": "Bad_Name"}', 422, "Invalid", None),
])
def test_sample_workload_bad_input(cluster: Cluster, body: bytes, code: int, reason: str,
                                   message: str | None) -> None:
    status, answer, _ = call("POST", cluster.console_url + "console-api/actions/sample-workload",
                             body)
    assert status == code and answer["code"] == code and answer["reason"] == reason
    if message is not None:
        assert answer["message"] == message
    if code == 422:  # upstream's validation message, from the API server
        assert answer["message"].startswith('Deployment.apps "Bad_Name" is invalid: ')


def test_node_actions(cluster: Cluster) -> None:
    base = cluster.console_url
    assert_status(call("POST", base + "console-api/actions/nodes/nope/stop"),
                  404, "NotFound", 'nodes "nope" not found')
    assert_status(call("POST", base + "console-api/actions/nodes/node-0/explode"),
                  404, "NotFound", "the server could not find the requested resource")
    assert_status(call("GET", base + "console-api/actions/nodes/node-0/stop"), 405,
                  "MethodNotAllowed",
                  "the server does not allow this method on the requested resource")
    status, body, _ = call("POST", base + "console-api/actions/nodes/node-1/stop")
    assert (status, body) == (200, {"name": "node-1", "running": False})
    status, body, _ = call("POST", base + "console-api/actions/nodes/node-1/start")
    assert (status, body) == (200, {"name": "node-1", "running": True})
    cluster.wait_for("nodes", "node-1", "Ready", timeout=10)


def test_pause_actions(cluster: Cluster) -> None:
    base = cluster.console_url
    status, body, _ = call("GET", base + "console-api/components")
    assert status == 200 and body["components"] == ["controller-manager", "scheduler", "kubelet"]
    gates = {g["name"]: g for g in body["pausable"]}
    assert gates["scheduler"]["kind"] == "scheduler" and not gates["scheduler"]["paused"]
    assert gates["replicaset"]["kind"] == "controller"
    assert_status(call("POST", base + "console-api/actions/components/nope/pause"),
                  404, "NotFound", 'components "nope" not found')
    assert_status(call("POST", base + "console-api/actions/components/scheduler/nap"),
                  404, "NotFound", "the server could not find the requested resource")
    status, body, _ = call("POST", base + "console-api/actions/components/scheduler/pause")
    assert (status, body["name"], body["paused"]) == (200, "scheduler", True)
    try:
        # the same gate the cluster's scheduler checks: a new pod stays unscheduled
        namespace = cluster.create_namespace()["metadata"]["name"]
        cluster.kubectl("run", "waits", "--image=nginx", "-n", namespace)
        time.sleep(0.5)
        _, pods, _ = call("GET", base + f"console-api/pods?namespace={namespace}")
        assert [(p["name"], p["node"]) for p in pods["items"]] == [("waits", "")]
    finally:
        status, body, _ = call("POST", base + "console-api/actions/components/scheduler/resume")
    assert (status, body["paused"]) == (200, False)
    cluster.wait_for("pods", "waits", lambda p: bool(p and p["spec"].get("nodeName")),
                     namespace=namespace, timeout=10)


def test_events_list_and_stream(cluster: Cluster) -> None:
    base = cluster.console_url
    status, body, _ = call("GET", base + "console-api/events?limit=2")
    assert status == 200 and len(body["items"]) == 2  # the kubelets' Starting events at least
    assert all({"key", "reason", "object", "message"} <= set(e) for e in body["items"])
    assert_status(call("GET", base + "console-api/events?limit=many"), 400, "BadRequest",
                  "limit: invalid value 'many': must be an integer")
    assert_status(call("GET", base + "console-api/events?limit=0"), 400, "BadRequest",
                  "limit: invalid value 0: must be between 1 and 5000")

    async def first_event_then_a_new_one() -> tuple[bytes, bytes]:
        namespace = "console-events"
        async with aiohttp.ClientSession() as session, \
                session.get(base + "console-api/events/stream?limit=1") as response:
            assert response.headers["Content-Type"] == "text/event-stream"
            first = await asyncio.wait_for(response.content.readuntil(b"\n\n"), 10)
            # an event made now reaches the open stream (the shared watch's fan-out)
            await asyncio.to_thread(cluster.kubectl, "create", "namespace", namespace)
            await asyncio.to_thread(cluster.kubectl, "create", "deployment", "ev",
                                    "--image=nginx", "-n", namespace)
            while True:
                chunk = await asyncio.wait_for(response.content.readuntil(b"\n\n"), 15)
                if f'"{namespace}/'.encode() in chunk:
                    return first, chunk
    first, chunk = asyncio.run(first_event_then_a_new_one())
    assert first.startswith(b"data: {")
    assert b'"reason":"ScalingReplicaSet"' in chunk


def test_actions_must_be_json_and_hosts_must_not_be_rebound_names(cluster: Cluster) -> None:
    base = cluster.console_url
    url = base + "console-api/actions/nodes/node-0/start"
    # what a form or a no-cors fetch from another site can send without a preflight
    answer = call("POST", url, b"x", headers={"Content-Type": "text/plain"})
    assert answer[0] == 415 and answer[1]["reason"] == "UnsupportedMediaType"
    assert '(got "text/plain")' in answer[1]["message"]
    # DNS rebinding: a name that resolved to 127.0.0.1 for an attacker's page
    assert_status(call("GET", base + "console-api/nodes", headers={"Host": "evil.example:80"}),
                  403, "Forbidden", 'Host "evil.example:80" is not allowed on the console: use '
                  "a loopback address, localhost or this host's name "
                  f"({__import__('socket').gethostname().lower()})")
    assert call("GET", base + "console-api/nodes", headers={"Host": "localhost"})[0] == 200


def test_unknown_paths_and_static_assets(cluster: Cluster) -> None:
    base = cluster.console_url
    assert_status(call("GET", base + "console-api/nope"), 404, "NotFound",
                  "the server could not find the requested resource")
    status, text, headers = call("GET", base)
    assert status == 200 and '<script type="module" src="/static/app.js">' in text
    for asset in ("app.js", "api.js", "style.css", "views/overview.js", "views/nodes.js",
                  "views/pods.js", "views/events.js"):
        status, text, headers = call("GET", base + f"static/{asset}")
        assert status == 200 and text, asset
        kind = "text/css" if asset.endswith(".css") else "text/javascript"
        assert headers["Content-Type"].startswith(kind), (asset, headers["Content-Type"])
    # revalidation: the same bytes are a 304 without a body
    status, _, headers = call("GET", base + "static/app.js")
    again = call("GET", base + "static/app.js", headers={"If-None-Match": headers["ETag"]})
    assert (again[0], again[1]) == (304, "")
    for missing in ("static/nope.js", "static/../app.py", "static/%2e%2e/app.py"):
        assert_status(call("GET", base + missing), 404, "NotFound",
                      "the server could not find the requested resource")


# -- the door of a console on a non-loopback address ----------------------------------------
@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """The console on 0.0.0.0 (not loopback), with the secure port's token file: an admin in
    system:masters and alice, who is authenticated but bound to nothing."""
    tokens: Path = tmp_path_factory.mktemp("console-auth") / "tokens.csv"
    tokens.write_text(f'{ADMIN_TOKEN},admin,1,"system:masters"\n{ALICE_TOKEN},alice,2\n')
    os.chmod(tokens, 0o600)
    with Cluster(nodes=1, console=True, secure=True,
                 flags={"console-address": "0.0.0.0", "token-auth-file": str(tokens)}) as c:
        yield c


def test_non_loopback_console_asks_for_a_cluster_admin(guarded: Cluster) -> None:
    url = guarded.console_url + "console-api/overview"
    assert url.startswith("http://127.0.0.1:")
    assert_status(call("GET", url), 401, "Unauthorized", "Unauthorized")
    assert_status(call("GET", url, headers={"Authorization": "Bearer wrong"}), 401,
                  "Unauthorized", "Unauthorized")
    assert_status(call("GET", url, headers={"Authorization": f"Bearer {ALICE_TOKEN}"}), 403,
                  "Forbidden", '*.* is forbidden: User "alice" cannot * resource "*" in API group '
                  '"*" at the cluster scope')
    status, body, _ = call("GET", url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert status == 200 and body["nodes"]["total"] == 1
    # the static shell is behind the same door
    assert call("GET", guarded.console_url)[0] == 401


def test_token_in_the_query_sets_an_http_only_cookie(guarded: Cluster) -> None:
    async def go() -> tuple[int, str, int]:
        # unsafe: keep cookies of an IP address (aiohttp keeps only host names' by default)
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as session:
            async with session.get(guarded.console_url + f"?token={ADMIN_TOKEN}") as first:
                cookie = first.headers.get("Set-Cookie", "")
                status = first.status
            # the cookie alone now opens the door (what the page's fetch and EventSource send)
            async with session.get(guarded.console_url + "console-api/nodes") as second:
                return status, cookie, second.status
    status, cookie, second = asyncio.run(go())
    assert status == 200
    assert cookie.startswith(f"{COOKIE}={ADMIN_TOKEN};") and "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    assert second == 200


def test_non_loopback_console_without_authentication_refuses_to_start() -> None:
    refused = pytest.raises(CommandError, match="is not loopback: the console then asks for "
                                                "the secure port's credentials")
    with refused, Cluster(nodes=0, console=True, flags={"console-address": "0.0.0.0"}):
        pass


# -- start's flags and summary ---------------------------------------------------------------
def start_options(*flags: str) -> Any:
    from minikube_py.cli.start_options import StartOptions
    from minikube_py.testing.cluster import parse_start

    return StartOptions.from_args(parse_start(["start", *flags]))


def test_start_serves_the_console_on_loopback_by_default(tmp_path: Path) -> None:
    from minikube_py.cli.storage_target import ConfigError

    options = start_options()
    assert (options.console, options.console_address, options.console_port) == \
        (True, "127.0.0.1", 0)
    assert start_options("--no-console").console is False
    options = start_options("--console-address", "0.0.0.0", "--console-port", "8443")
    assert (options.console_address, options.console_port) == ("0.0.0.0", 8443)
    with pytest.raises(ConfigError, match="port 70000 is out of range"):
        start_options("--console-port", "70000")
    config = tmp_path / "cluster.yaml"  # the same names as config keys; flags win
    config.write_text("console-port: 9000\nno-console: true\n")
    options = start_options("--config", str(config), "--console-port", "9001")
    assert (options.console, options.console_port) == (False, 9001)


def test_start_summary_prints_the_console_url(cluster: Cluster,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from minikube_py.cli.start import print_summary

    print_summary(start_options("--kubeconfig-out", ""), cluster.running, 1.0)
    assert f"  console             {cluster.console_url}  (the web console)" in \
        capsys.readouterr().out
