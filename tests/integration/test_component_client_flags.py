"""The separate components' client and debugging flags (v1.5 SchedulerServer / CMServer):
--kube-api-content-type (JSON or protobuf on the wire), --kube-api-qps/--kube-api-burst
(client-side rate limit), --profiling/--contention-profiling (/debug/pprof on --port), and
--algorithm-provider's help naming the providers."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from minikube_py.api.errors import StatusError
from minikube_py.cli import controller_manager, scheduler
from minikube_py.cli.component_process import http_client, install_profiling
from minikube_py.cli.component_settings import PROFILING
from minikube_py.cli.componentconfig import component_config
from minikube_py.cli.main import build_parser
from minikube_py.cli.settings import resolve
from minikube_py.client.resources import NODES, PODS
from minikube_py.scheduler.factory import PROVIDERS
from tests.apiserver.conftest import start_api
from tests.apiserver_thread import ServerThread

REPO = Path(__file__).resolve().parents[2]
PROTOBUF = "application/vnd.kubernetes.protobuf"


def settings_of(command: str, *flags: str) -> dict:
    args = build_parser().parse_args([command, *flags])
    module = scheduler if command == "scheduler" else controller_manager
    return dict(resolve(args, module.SETTINGS, {}))


def test_defaults_and_configz_names():
    sched = settings_of("scheduler")
    assert (sched["kube_api_qps"], sched["kube_api_burst"]) == (0.0, 100)  # no limit
    cm = settings_of("controller-manager")
    assert (cm["kube_api_qps"], cm["kube_api_burst"]) == (0.0, 30)
    for values in (sched, cm):
        assert values["profiling"] is True and values["contention_profiling"] is False
        assert values["kube_api_content_type"] == "application/json"
    # /configz names them as v1.5's componentconfig did
    config = component_config((*scheduler.CLIENT, *PROFILING), sched)
    assert config == {"contentType": "application/json", "kubeAPIQPS": 0.0,
                      "kubeAPIBurst": 100, "enableProfiling": True,
                      "enableContentionProfiling": False}


def test_algorithm_provider_help_lists_every_provider(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["scheduler", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    listed = text.split("one of: ", 1)[1].split(" (", 1)[0]
    assert listed.split(" | ") == sorted(PROVIDERS)


async def test_protobuf_client_speaks_protobuf_and_reads_json_fallbacks(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path)
    client = http_client(settings_of("scheduler", "--master", api.url,
                                     "--kube-api-content-type", PROTOBUF), "test")
    seen: list[tuple[str, str]] = []
    request = client.transport.request

    async def observed(*args, **kwargs):
        response = await request(*args, **kwargs)
        seen.append((kwargs.get("content_type", ""), response.content_type))
        return response

    client.transport.request = observed  # type: ignore[method-assign]
    try:
        await client.create(NODES, {"apiVersion": "v1", "kind": "Node",
                                    "metadata": {"name": "node-1", "labels": {"a": "b"}}})
        created = await client.create(PODS, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, "default")
        assert created["metadata"]["name"] == "web" and created["metadata"]["uid"]
        assert seen[-1] == (PROTOBUF, PROTOBUF)  # sent and answered in protobuf
        await client.bind("default", "web", "node-1")
        got = await client.get(PODS, "web", "default")
        assert got["spec"]["nodeName"] == "node-1"
        listed = await client.list(NODES)
        assert [n["metadata"]["labels"] for n in listed["items"]] == [{"a": "b"}]
        assert seen[-1][1] == PROTOBUF
        with pytest.raises(StatusError) as info:
            await client.get(PODS, "nope", "default")
        assert info.value.code == 404 and info.value.message == 'pods "nope" not found'
        assert seen[-1][1] == PROTOBUF  # the Status too
        # a patch keeps its JSON patch type; discovery has no protobuf form: JSON comes back
        await client.patch(PODS, "web", {"metadata": {"labels": {"x": "y"}}}, "default")
        assert seen[-1][0] == "application/merge-patch+json"
        assert (await client.get_path("/api"))["kind"] == "APIVersions"
        assert seen[-1][1] == "application/json"
        # a kind without a protobuf message lists as JSON, even when the list is empty
        crds = await client.get_path("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        assert crds["kind"] == "CustomResourceDefinitionList" and crds["items"] == []
        assert seen[-1][1] == "application/json"
    finally:
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_protobuf_client_watches_protobuf_frames(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path)
    client = http_client(settings_of("scheduler", "--master", api.url,
                                     "--kube-api-content-type", PROTOBUF), "test")
    assert client.wire is not None
    framed: list[bool] = []
    decode = client.wire.watch_event

    async def observed(is_frame: bool, payload: bytes):
        framed.append(is_frame)
        return await decode(is_frame, payload)

    client.wire.watch_event = observed  # type: ignore[method-assign]
    try:
        rv = (await client.list(PODS, "default"))["metadata"]["resourceVersion"]
        events: list[tuple[str, str]] = []

        async def watch() -> None:
            async for event in client.watch(PODS, "default", resource_version=rv,
                                            allow_bookmarks=False):
                events.append((event.type, event.object["metadata"]["name"]))
                if event.type == "DELETED":
                    return

        watcher = asyncio.create_task(watch())
        await client.create(PODS, {"apiVersion": "v1", "kind": "Pod",
                                   "metadata": {"name": "w"},
                                   "spec": {"containers": [{"name": "c", "image": "x"}]}},
                            "default")
        await client.patch(PODS, "w", {"metadata": {"labels": {"a": "b"}}}, "default")
        await client.delete(PODS, "w", "default", grace_period_seconds=0)
        await asyncio.wait_for(watcher, 10)
        assert events[0] == ("ADDED", "w") and events[-1] == ("DELETED", "w")
        assert ("MODIFIED", "w") in events
        assert framed and all(framed)  # every event came as a protobuf frame
        with pytest.raises(StatusError) as info:  # a refused start: its Status, decoded
            async for _ in client.watch(PODS, "default", resource_version="abc"):
                pass
        assert (info.value.code, info.value.message) == (400, 'invalid resource version "abc"')
    finally:
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_kube_api_qps_and_burst_limit_the_client(tmp_path: Path):
    api, runner, store, session = await start_api(tmp_path)
    clients = []
    try:
        timings = []
        for qps, burst in (("10", "2"), ("0", "1")):  # 0: no limit
            client = http_client(settings_of("controller-manager", "--master", api.url,
                                             "--kube-api-qps", qps, "--kube-api-burst", burst),
                                 "test")
            clients.append(client)
            started = time.perf_counter()
            for _ in range(7):  # 2 at once, then 5 more at 10/s
                await client.list(PODS, "default")
            timings.append(time.perf_counter() - started)
        assert timings[0] >= 0.45, timings
        assert timings[1] < 0.4, timings
    finally:
        for client in clients:
            await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


@pytest.mark.parametrize("flags,index,block", [
    ((), 200, 404),
    (("--contention-profiling=true",), 200, 200),
    (("--profiling=false", "--contention-profiling=true"), 404, 404),
])
async def test_profiling_flags_mount_pprof_on_the_component_port(flags, index, block):
    values = settings_of("scheduler", *flags)
    app = web.Application()
    app.router.add_get("/healthz", lambda _r: web.Response(text="ok"))
    install_profiling(app, values)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    lock = asyncio.Lock()
    await lock.acquire()

    async def waits_on_the_lock() -> None:
        async with lock:
            pass

    waiter = asyncio.create_task(waits_on_the_lock())
    await asyncio.sleep(0)
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{url}/debug/pprof/") as resp:
                assert resp.status == index
            async with http.get(f"{url}/debug/pprof/block") as resp:
                assert resp.status == block
                if block == 200:
                    text = await resp.text()
                    assert "1 @ Lock.acquire" in text and "in waits_on_the_lock" in text
    finally:
        waiter.cancel()
        await runner.cleanup()


def test_unsupported_content_type_is_refused_at_start():
    proc = subprocess.run(
        [sys.executable, "-m", "minikube_py.cli.main", "scheduler", "--master",
         "http://127.0.0.1:9", "--port", "0", "--kube-api-content-type", "application/yaml"],
        capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert proc.returncode == 1
    assert ("--kube-api-content-type: serializer for application/yaml doesn't exist "
            "(supported: application/json, application/vnd.kubernetes.protobuf)") in proc.stderr


def test_scheduler_process_schedules_over_protobuf(tmp_path: Path):
    server = ServerThread(tmp_path / "data").start()
    log = tmp_path / "scheduler.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "minikube_py.cli.main", "scheduler", "--master", server.url,
             "--port", "0", "--kube-api-content-type", PROTOBUF],
            stdout=subprocess.DEVNULL, stderr=sink, cwd=REPO)

    def call(method: str, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(
            server.url + path, method=method, data=json.dumps(body).encode() if body else None,
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as resp:
            return json.loads(resp.read())

    try:
        call("POST", "/api/v1/nodes", {
            "metadata": {"name": "node-1"},
            "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"},
                       "conditions": [{"type": "Ready", "status": "True"}]}})
        call("POST", "/api/v1/namespaces/default/pods", {
            "metadata": {"name": "web"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pod = call("GET", "/api/v1/namespaces/default/pods/web")
            if pod["spec"].get("nodeName"):
                break
            time.sleep(0.1)
        assert pod["spec"].get("nodeName") == "node-1", log.read_text()[-3000:]
        # the Scheduled event follows the binding (the recorder sends it on its own)
        while time.monotonic() < deadline:
            events = call("GET", "/api/v1/namespaces/default/events")["items"]
            if any(e["reason"] == "Scheduled" for e in events):
                break
            time.sleep(0.1)
        assert any(e["reason"] == "Scheduled" for e in events)  # events sent as protobuf too
    finally:
        proc.terminate()
        proc.wait(10)
        server.stop()


def test_controller_manager_process_reconciles_over_protobuf(tmp_path: Path):
    """Every controller's informers list and watch in protobuf (JSON for kinds without a
    message); an RC still gets its pods."""
    server = ServerThread(tmp_path / "data").start()
    log = tmp_path / "controller-manager.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "minikube_py.cli.main", "controller-manager", "--master",
             server.url, "--port", "0", "--kube-api-content-type", PROTOBUF,
             "--log-format", "json"],
            stdout=subprocess.DEVNULL, stderr=sink, cwd=REPO)

    def call(method: str, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(
            server.url + path, method=method, data=json.dumps(body).encode() if body else None,
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as resp:
            return json.loads(resp.read())

    try:
        call("POST", "/api/v1/namespaces/default/replicationcontrollers", {
            "metadata": {"name": "rc"},
            "spec": {"replicas": 2, "selector": {"app": "rc"},
                     "template": {"metadata": {"labels": {"app": "rc"}},
                                  "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
        deadline = time.monotonic() + 30
        pods: list = []
        while len(pods) < 2 and time.monotonic() < deadline and proc.poll() is None:
            pods = call("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Drc")["items"]
            time.sleep(0.1)
        assert len(pods) == 2, log.read_text()[-3000:]
        assert proc.poll() is None
        errors = [line for line in log.read_text().splitlines()
                  if '"level":"error"' in line or "Traceback" in line]
        assert not errors, errors[:5]
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)
        server.stop()
