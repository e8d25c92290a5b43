"""The trace end to end: a pod's journey read over HTTP as Server-Sent Events from
`/debug/trace`, and printed by `minikube-py trace pod` (a subprocess), on a started cluster;
the endpoint's Status answers on bad input and on the secure port without credentials."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from minikube_py.cli.main import build_parser
from minikube_py.cli.start import running_cluster
from minikube_py.cli.start_options import StartOptions
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.resources import PODS, SERVICEACCOUNTS
from minikube_py.trace import TRACE
from minikube_py.trace.eventstream import EventParser
from tests.apiserver.test_secure import serve
from tests.e2e.kubectl_run import kubectl
from tests.polling import eventually

ROOT = Path(__file__).resolve().parents[2]
KUBECTL_131 = "/usr/lib/google-cloud-sdk/bin/kubectl.1.31"


def start_options(tmp: Path, *extra: str) -> StartOptions:
    args = ["start", "--data-dir", str(tmp / "data"), "--cert-dir", str(tmp / "certs"),
            "--fsync", "never", "--nodes", "2", "--secure-port", "0",
            "--scheduler-port", "0", "--controller-manager-port", "0", "--kubelet-port", "0",
            "--kubeconfig-out", "", "--authorization-mode", "AlwaysAllow",
            "--image-pull-duration", "0", "--container-start-duration", "0", *extra]
    # every listener binds port 0 and the cluster reports the port the OS chose
    return dataclasses.replace(StartOptions.from_args(build_parser().parse_args(args)),
                               ephemeral_ports=True)


def pod(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}}


async def read_events(resp: aiohttp.ClientResponse, until, limit: float = 20.0
                      ) -> list[dict[str, Any]]:
    """Records of an SSE response until `until(record)` is true."""
    parser, out = EventParser(), []
    async with asyncio.timeout(limit):
        while line := await resp.content.readline():
            event = parser.feed(line.decode())
            if event is None or event.event != "message":
                continue
            record = orjson.loads(event.data)
            out.append(record)
            if until(record):
                return out
    return out


def aval(check):  # type: ignore[no-untyped-def]
    """A sync check as the async one `eventually` polls."""
    async def call():  # type: ignore[no-untyped-def]
        return check()
    return call


async def default_account(client: Client) -> None:
    """Pods are admitted once the namespace's `default` ServiceAccount exists."""
    async def made():  # type: ignore[no-untyped-def]
        return await client.get_or_none(SERVICEACCOUNTS, "default", "default")
    await eventually(made, timeout=10, message="the default ServiceAccount")


def running(record: dict[str, Any]) -> bool:
    return record["kind"] == "kubelet" and record.get("phase") == "Running"


async def cli(url: str, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "minikube_py.cli.main", "trace", "pod", *args, "--master", url,
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"})
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_pod_journey_over_sse_and_cli(tmp_path: Path) -> None:
    async with running_cluster(start_options(tmp_path)) as cluster, \
            aiohttp.ClientSession() as session:
        client = Client(InProcessTransport(cluster.runner.app, user_agent="trace-test"))
        try:
            await default_account(client)
            assert not TRACE.active  # nobody looks: the hooks do nothing
            since = TRACE.last_seq
            url = f"{cluster.url}/debug/trace"
            query = {"object": "default/journey", "resource": "pods", "since": str(since)}
            async with session.get(url, params=query) as resp:
                assert resp.status == 200
                assert resp.headers["Content-Type"] == "text/event-stream"
                await eventually(aval(lambda: TRACE.active), message="a viewer turns the trace on")
                await client.create(PODS, pod("journey"), "default")
                records = await read_events(resp, running)
            await eventually(aval(lambda: not TRACE.active), message="the viewer left: trace off")

            assert all(r["namespace"] == "default" and r["name"] == "journey" for r in records)
            seqs = [r["seq"] for r in records]
            assert seqs == sorted(seqs) and seqs[0] > since
            kinds = [r["kind"] for r in records]
            created = next(i for i, r in enumerate(records)
                           if r["kind"] == "store" and r["type"] == "ADDED")
            scheduled = next(i for i, r in enumerate(records) if r["kind"] == "schedule")
            bound = next(i for i, r in enumerate(records) if r["kind"] == "request"
                         and r["subresource"] == "binding")
            # the attempt is recorded once its binding was answered: after the request
            assert created < bound < scheduled < kinds.index("kubelet"), kinds
            decision = records[scheduled]["detail"]
            assert decision["result"] == "scheduled" and decision["total"] == 2
            assert decision["node"] in ("node-0", "node-1")
            assert records[bound]["status"] == 201
            assert records[bound]["component"] == "kube-scheduler"
            create = next(r for r in records if r["kind"] == "request" and r["verb"] == "create"
                          and not r["subresource"])  # named by the object it made
            assert (create["status"], create["component"]) == (201, "trace-test")
            assert create["uid"] == records[-1]["uid"] and create["seq"] > records[created]["seq"]
            assert records[scheduled]["uid"] == records[-1]["uid"] != ""
            write = records[created]
            assert write["key"].endswith("/pods/default/journey") and write["revision"] > 0
            assert any(r["kind"] == "watch" and r["revision"] == write["revision"]
                       for r in records)  # the informers were handed the create
            later = [r for r in records if r["kind"] == "store" and r["type"] == "MODIFIED"]
            assert later and later[0]["prev_revision"] == write["revision"]

            # replay from the ring, then end (follow=false), resuming after a seq
            async with session.get(url, params={**query, "follow": "false",
                                                "since": str(seqs[2])}) as resp:
                replay = await read_events(resp, lambda r: False)
            assert [r["seq"] for r in replay] == seqs[3:]
            # every record (no object filter): scheduling attempts as summaries
            async with session.get(url, params={"follow": "false", "kind": "schedule",
                                                "since": str(since)}) as resp:
                summaries = await read_events(resp, lambda r: False)
            ours = [r for r in summaries if r["name"] == "journey"]
            assert [sorted(r["detail"]) for r in ours] == [
                ["feasible", "message", "node", "result", "seconds", "total"]]

            # the CLI replays the same journey
            code, out, err = await cli(cluster.url, "journey")
            assert code == 0, err
            steps = [line.split()[2] for line in out.splitlines()]
            for step in ("created", "scheduled", "bound", "running"):
                assert step in steps, out
            assert steps.index("created") < steps.index("bound") < steps.index("scheduled") \
                < steps.index("running")
            assert f"-> {decision['node']} (2/2 nodes fit" in out
            assert "create -> 201 in" in out and "by trace-test" in out

            # --follow prints a journey as it happens (a second pod)
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "minikube_py.cli.main", "trace", "pod", "second",
                "--follow", "--master", cluster.url, cwd=ROOT,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            try:
                await eventually(aval(lambda: TRACE.viewers > 0), timeout=30,
                                 message="the CLI attached")
                await client.create(PODS, pod("second"), "default")
                seen: list[str] = []
                async with asyncio.timeout(30):
                    while not any(" running " in line for line in seen):
                        line = await proc.stdout.readline()
                        assert line, (await proc.stderr.read()).decode()
                        seen.append(line.decode())
                assert any(" scheduled " in line for line in seen)
            finally:
                proc.terminate()
                await proc.wait()
        finally:
            await client.close()


async def test_cli_says_when_nothing_was_recorded(tmp_path: Path) -> None:
    async with running_cluster(start_options(tmp_path, "--nodes", "0")) as cluster:
        code, out, _ = await cli(cluster.url, "never-created", "-n", "nowhere")
    assert code == 0
    assert "no trace records of pod nowhere/never-created" in out


async def test_start_trace_keeps_the_ring_on(tmp_path: Path) -> None:
    options = start_options(tmp_path, "--trace", "--nodes", "0")
    assert options.trace
    async with running_cluster(options):
        assert TRACE.active and TRACE.viewers == 0
    assert not TRACE.active


@pytest.fixture
async def secure(tmp_path: Path):
    api, close = await serve(tmp_path)
    try:
        yield api
    finally:
        await close()


async def test_endpoint_auth_and_bad_input(secure) -> None:  # type: ignore[no-untyped-def]
    status, body = await secure.call("GET", "/debug/trace?follow=false")
    assert status == 401 and body["reason"] == "Unauthorized"
    status, body = await secure.call("GET", "/debug/trace?follow=false", token="reader-token")
    assert status == 403 and body["reason"] == "Forbidden"
    status, body = await secure.call("GET", "/debug/trace?follow=false", token="admin-token")
    assert status == 200
    for query, message in (("kind=bogus", "kind: unknown trace record kind 'bogus'"),
                           ("detail=most", "detail: must be full or summary"),
                           ("since=-3", "since: must be a non-negative sequence number"),
                           ("follow=maybe", "invalid value of follow: maybe")):
        status, body = await secure.call("GET", f"/debug/trace?{query}", token="admin-token")
        assert status == 400 and body["reason"] == "BadRequest", body
        assert message in body["message"]


@pytest.mark.skipif(not os.path.exists(KUBECTL_131), reason=f"needs {KUBECTL_131}")
async def test_kubectl_reads_the_trace(secure, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`kubectl get --raw /debug/trace?follow=false` on the secure port: refused for a user
    the authorizer does not allow, the records (its own earlier request among them) for one
    it does."""
    def run(*args: str, ok: bool = True):  # type: ignore[no-untyped-def]
        return asyncio.to_thread(kubectl, secure.https, tmp_path, "--certificate-authority",
                                 str(secure.ca), *args, ok=ok, binary=KUBECTL_131)

    since = TRACE.last_seq
    TRACE.hold()  # as `start --trace` does
    try:
        await run("--token", "admin-token", "get", "pods", "-n", "traced")
    finally:
        TRACE.release()
    denied = await run("--token", "reader-token", "get", "--raw",
                       "/debug/trace?follow=false", ok=False)
    assert denied.returncode != 0 and "Forbidden" in denied.stderr
    shown = await run("--token", "admin-token", "get", "--raw",
                      f"/debug/trace?follow=false&kind=request&namespace=traced&since={since}")
    parser = EventParser()
    events = [e for e in map(parser.feed, shown.stdout.splitlines()) if e is not None]
    records = [orjson.loads(e.data) for e in events]
    assert [(r["verb"], r["resource"], r["status"]) for r in records] == [("list", "pods", 200)]
    assert records[0]["component"].startswith("kubectl")
    assert int(events[0].id) > since
