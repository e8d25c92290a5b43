"""`start --apiservers 2`: two API server processes over one store, behind one port (issue 23).

Real processes and sockets: the cluster's store process runs API server #0; the second API
server is a child process reaching the store through storage/remote. Each response names its
server (`X-Minikube-Apiserver`); the child also has a private port, so a test can pick it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import orjson
import pytest

from minikube_py.cli.apiserver_child import IDENTITY_HEADER
from minikube_py.testing import Cluster

NS = "multi"
WRITES_PER_SERVER = 60


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(nodes=1, secure=True, flags={"apiservers": 2}) as c:
        fleet = c.running.component("apiservers").handle
        children = [child.process for child in fleet.children]
        # `start` is ready with API server #0; the child joins the port once it serves
        deadline = time.monotonic() + 60
        while not fleet.serving.is_set():
            assert time.monotonic() < deadline, f"not serving: {fleet.pending()}"
            time.sleep(0.02)
        yield c
    # `start`'s stop stops every API server process
    assert all(p is not None and p.returncode is not None for p in children)


def private_url(cluster: Cluster) -> str:
    return cluster.running.component("apiservers").handle.urls[0]


async def on_each_server(base: str, count: int, open_one) -> dict[str, list]:
    """Connect to the shared port until each server has `count` of what `open_one` opens
    (keyed by the identity header): connections are spread by the kernel, not by us."""
    by_server: dict[str, list] = {"0": [], "1": []}
    for _ in range(200):
        if all(len(v) >= count for v in by_server.values()):
            return by_server
        thing, server = await open_one(base)
        if len(by_server[server]) < count:
            by_server[server].append(thing)
        else:
            await thing.release() if hasattr(thing, "release") else None
    raise AssertionError(f"the shared port never reached both servers: {by_server}")


async def read_events(response: aiohttp.ClientResponse, names: set[str],
                      expected: int) -> list[tuple[str, str, int]]:
    """(type, name, resourceVersion) of our objects' events until `expected` of them."""
    seen: list[tuple[str, str, int]] = []
    while len(seen) < expected:
        line = await response.content.readline()
        if not line:
            break
        event = orjson.loads(line)
        meta = event["object"]["metadata"]
        if meta["name"] in names:
            seen.append((event["type"], meta["name"], int(meta["resourceVersion"])))
    return seen


def test_every_watcher_on_every_server_sees_every_event_in_order(cluster: Cluster) -> None:
    cluster.create_namespace(NS)

    async def go() -> None:
        shared = cluster.running.url
        child = private_url(cluster)
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{shared}/api/v1/namespaces/{NS}/configmaps") as r:
                start = (await r.json())["metadata"]["resourceVersion"]
            query = f"/api/v1/namespaces/{NS}/configmaps?watch=1&resourceVersion={start}"

            async def open_watch(base: str):
                r = await http.get(base + query)
                assert r.status == 200
                return r, r.headers[IDENTITY_HEADER]

            watches = await on_each_server(shared, 2, open_watch)
            private, server = await open_watch(child)
            assert server == "1"
            watches["1"].append(private)

            names = {f"cm-{s}-{i}" for s in ("a", "b") for i in range(WRITES_PER_SERVER)}
            written: list[tuple[str, str, int]] = []

            async def writer(base: str, tag: str, other: str) -> None:
                for i in range(WRITES_PER_SERVER):
                    name = f"cm-{tag}-{i}"
                    async with http.post(f"{base}/api/v1/namespaces/{NS}/configmaps",
                                         json={"metadata": {"name": name},
                                               "data": {"i": str(i)}}) as r:
                        assert r.status == 201, await r.text()
                        obj = await r.json()
                    written.append(("ADDED", name, int(obj["metadata"]["resourceVersion"])))
                    if i % 3 == 0:  # update it through the other server
                        obj["data"]["i"] = "updated"
                        async with http.put(f"{other}/api/v1/namespaces/{NS}/configmaps/{name}",
                                            json=obj) as r:
                            assert r.status == 200, await r.text()
                            rv = (await r.json())["metadata"]["resourceVersion"]
                        written.append(("MODIFIED", name, int(rv)))

            await asyncio.gather(writer(shared, "a", child), writer(child, "b", shared))
            expected = sorted(written, key=lambda e: e[2])
            everyone = [w for ws in watches.values() for w in ws]
            results = await asyncio.wait_for(asyncio.gather(
                *(read_events(w, names, len(expected)) for w in everyone)), 60)
            for server, ws in watches.items():
                for w in ws:
                    got = results[everyone.index(w)]
                    assert got == expected, f"a watcher on API server {server} saw another story"
            for w in everyone:
                w.close()

    asyncio.run(go())


def test_a_write_on_one_server_is_read_at_once_on_the_other(cluster: Cluster) -> None:
    cluster.create_namespace("consistent")

    async def go() -> None:
        shared, child = cluster.running.url, private_url(cluster)
        async with aiohttp.ClientSession() as http:
            readers_seen = set()
            for i in range(30):
                name = f"r-{i}"
                writer = child if i % 2 else shared
                async with http.post(f"{writer}/api/v1/namespaces/consistent/configmaps",
                                     json={"metadata": {"name": name}}) as r:
                    assert r.status == 201
                    rv = (await r.json())["metadata"]["resourceVersion"]
                # a new connection each time: the kernel picks the server
                async with http.get(f"{shared}/api/v1/namespaces/consistent/configmaps/{name}",
                                    headers={"Connection": "close"}) as r:
                    assert r.status == 200, await r.text()
                    assert (await r.json())["metadata"]["resourceVersion"] == rv
                    readers_seen.add(r.headers[IDENTITY_HEADER])
                reader = shared if i % 2 else child
                async with http.get(f"{reader}/api/v1/namespaces/consistent/configmaps") as r:
                    listed = await r.json()
                assert name in {o["metadata"]["name"] for o in listed["items"]}
                assert int(listed["metadata"]["resourceVersion"]) >= int(rv)
            assert readers_seen == {"0", "1"}

    asyncio.run(go())


def test_kubectl_over_the_shared_secure_port(cluster: Cluster) -> None:
    cluster.kubectl("create", "namespace", "kubectl-multi")
    cluster.kubectl("-n", "kubectl-multi", "create", "configmap", "one", "--from-literal=a=b")
    for _ in range(4):  # each kubectl is a new connection: both servers answer in turn
        out = cluster.kubectl("-n", "kubectl-multi", "get", "configmap", "one",
                              "-o", "jsonpath={.data.a}")
        assert out.stdout == "b"
    assert cluster.kubectl("get", "--raw", "/readyz").stdout == "ok"
    names = cluster.kubectl("get", "namespaces", "-o", "name").stdout.split()
    assert "namespace/kubectl-multi" in names


def test_both_servers_answer_on_the_secure_port_with_the_same_certificate(cluster: Cluster) -> None:
    ca = cluster.ca_data
    assert ca is not None and cluster.token

    async def go() -> set[str]:
        context = ssl.create_default_context(cadata=ca.decode())
        seen: set[str] = set()
        async with aiohttp.ClientSession() as http:
            for _ in range(100):  # a new connection each time: the kernel picks the server
                async with http.get(f"{cluster.running.secure_url}/api/v1/namespaces/default",
                                    ssl=context, headers={
                                        "Authorization": f"Bearer {cluster.token}",
                                        "Connection": "close"}) as r:
                    assert r.status == 200, await r.text()
                    seen.add(r.headers[IDENTITY_HEADER])
                if seen == {"0", "1"}:
                    break
        return seen

    assert asyncio.run(go()) == {"0", "1"}


def test_start_is_ready_before_the_child_and_the_child_joins_the_port_when_it_serves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child is stopped (SIGSTOP) right after it is spawned: `start` still gets ready, and
    every connection reaches API server #0 — the child's sockets of the shared port are bound
    but not listening, so none waits on a process that cannot answer. Once the child runs and
    serves, it takes its share."""
    from minikube_py.cli.apiserver_fleet import Fleet
    from minikube_py.cli.start import running_cluster
    from tests.integration.test_trace import start_options

    spawn = Fleet.spawn

    async def spawn_stopped(self: Fleet, insecure: list, secure: list) -> None:
        await spawn(self, insecure, secure)
        for child in self.children:
            os.kill(child.process.pid, signal.SIGSTOP)

    monkeypatch.setattr(Fleet, "spawn", spawn_stopped)

    async def answered_by(http: aiohttp.ClientSession, url: str) -> str:
        async with http.get(f"{url}/readyz", headers={"Connection": "close"},
                            timeout=aiohttp.ClientTimeout(total=5)) as r:
            assert r.status == 200
            return r.headers[IDENTITY_HEADER]

    async def go() -> tuple[list[str], set[str]]:
        options = start_options(tmp_path, "--apiservers", "2", "--nodes", "0")
        async with running_cluster(options) as running, aiohttp.ClientSession() as http:
            fleet = running.component("apiservers").handle
            before = [await answered_by(http, running.url) for _ in range(40)]
            assert not fleet.serving.is_set()
            for child in fleet.children:
                os.kill(child.process.pid, signal.SIGCONT)
            await asyncio.wait_for(fleet.serving.wait(), 60)
            after: set[str] = set()
            for _ in range(100):
                after.add(await answered_by(http, running.url))
                if after == {"0", "1"}:
                    break
            return before, after

    before, after = asyncio.run(go())
    assert set(before) == {"0"}
    assert after == {"0", "1"}


def test_the_store_process_takes_the_smaller_share_of_new_connections(cluster: Cluster) -> None:
    """API server #0 also serves the store to the other: it has one socket of the shared port,
    the child CHILD_SHARE (apiserver_listeners.py), so the kernel hands it about 1 new
    connection in 1 + CHILD_SHARE. 200 connections: #0's expected 50 at shares 1:3, and more
    than 100 (what equal shares would give) is beyond any chance (p < 1e-12)."""
    ca = cluster.ca_data
    assert ca is not None

    async def go() -> dict[str, int]:
        context = ssl.create_default_context(cadata=ca.decode())
        counts = {"0": 0, "1": 0}
        async with aiohttp.ClientSession() as http:
            for _ in range(200):
                async with http.get(f"{cluster.running.secure_url}/readyz", ssl=context,
                                    headers={"Authorization": f"Bearer {cluster.token}",
                                             "Connection": "close"}) as r:
                    counts[r.headers[IDENTITY_HEADER]] += 1
        return counts

    counts = asyncio.run(go())
    assert counts["1"] > counts["0"] > 0, counts
    assert counts["0"] < 100, counts


# -- lifecycle: real `start` processes ----------------------------------------------------


def start_parent(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """`start --apiservers 2` in its own process; (the process, its children's pids)."""
    proc = subprocess.Popen([sys.executable, "-m", "tests.multiapi_parent", str(tmp_path), "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])
    deadline = time.monotonic() + 90
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        if line.strip().startswith("apiservers"):
            pids = [int(p) for p in line.rsplit("pids ", 1)[1].rstrip(")\n").split(", ")]
            return proc, pids
    proc.kill()
    raise AssertionError(f"start did not get ready: {proc.stderr.read() if proc.stderr else ''}")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"  # a zombie has exited; only its parent's wait is missing


def wait_gone(pids: list[int], timeout: float = 15.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


@pytest.mark.slow
def test_killing_start_leaves_no_api_server_behind(tmp_path: Path) -> None:
    proc, pids = start_parent(tmp_path)
    assert pids and all(alive(p) for p in pids)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert wait_gone(pids) == [], "API server processes outlived their parent"


@pytest.mark.slow
def test_an_api_server_crash_stops_start_with_exit_1(tmp_path: Path) -> None:
    proc, pids = start_parent(tmp_path)
    os.kill(pids[0], signal.SIGKILL)
    try:
        code = proc.wait(30)
    finally:
        proc.kill()
    assert code == 1
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert f"apiserver-1 (pid {pids[0]}) exited with code -9" in err
