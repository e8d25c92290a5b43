"""exec, attach, port-forward and proxy through a real API server to a real kubelet pool:
the client speaks what kubectl 1.30+ speaks (WebSocket `v5.channel.k8s.io`; SPDY tunnelled
in a WebSocket for port-forward), the API server proxies to the kubelet, the kubelet runs the
simulated shell / HTTP server."""

from __future__ import annotations

import asyncio
import base64
import re
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from minikube_py.client import Client, HTTPTransport
from minikube_py.client.resources import CONFIGMAPS, ENDPOINTS, PODS, SERVICES
from minikube_py.httpstream import spdy, upgrade
from minikube_py.kubelet import KubeletConfig, KubeletPool
from tests.apiserver.conftest import API, start_api
from tests.integration import spdy_client
from tests.integration.spdy_client import SpdyClient

FAST = KubeletConfig(node_status_update_frequency=0.2, image_pull_seconds=0.01,
                     container_start_seconds=0.01)
SLOW = KubeletConfig(node_status_update_frequency=0.2, image_pull_seconds=60)
V5 = "v5.channel.k8s.io"
PODS_PATH = "/api/v1/namespaces/default/pods"


class Env:
    def __init__(self, api: API, client: Client, session: aiohttp.ClientSession) -> None:
        self.api, self.client, self.session = api, client, session

    async def pod(self, name: str, node: str = "n-0", volumes: list | None = None,
                  **container: Any) -> dict:
        """A pod placed on `node` directly (spec.nodeName), running by the time it returns."""
        body = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "default", "labels": {"app": name}},
                "spec": {"nodeName": node, "volumes": volumes or [], "containers": [
                    {"name": "web", "image": "nginx", "ports": [{"containerPort": 80}],
                     **container}]}}
        await self.client.create(PODS, body)
        if node != "slow-0":
            for _ in range(500):
                pod = await self.client.get(PODS, name, "default")
                if (pod.get("status") or {}).get("phase") == "Running":
                    return pod
                await asyncio.sleep(0.01)
            raise AssertionError(f"pod {name} never ran")
        return body

    async def exec(self, pod: str, *command: str, stdin: bytes | None = None,
                   protocol: str = V5, sub: str = "exec") -> tuple[bytes, bytes, dict]:
        query = [("command", c) for c in command] + [("stdout", "true"), ("stderr", "true")]
        if stdin is not None:
            query.append(("stdin", "true"))
        async with self.session.ws_connect(f"{self.api.url}{PODS_PATH}/{pod}/{sub}",
                                           params=query, protocols=[protocol]) as ws:
            assert ws.protocol == protocol
            if stdin is not None:
                await ws.send_bytes(b"\x00" + stdin)
                await ws.send_bytes(b"\xff\x00")  # v5: stdin closed
            return await channels(ws)


async def channels(ws: aiohttp.ClientWebSocketResponse) -> tuple[bytes, bytes, dict]:
    out, err, status = b"", b"", {}
    async for msg in ws:
        assert msg.type == aiohttp.WSMsgType.BINARY
        channel, data = msg.data[0], msg.data[1:]
        if channel == 1:
            out += data
        elif channel == 2:
            err += data
        elif channel == 3:
            status = orjson.loads(data)
    return out, err, status


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    api, runner, store, session = await start_api(tmp_path)
    client = Client(HTTPTransport(api.url))
    pool = KubeletPool(client, port=0, log_interval=0.05)
    pool.add_nodes("n", 1, FAST)
    pool.add_nodes("slow", 1, SLOW)
    await pool.start()
    try:
        await pool.wait_ready(5)
        await pool.wait_synced(5)
        yield Env(api, client, session)
    finally:
        await pool.stop()
        await client.close()
        await session.close()
        await runner.cleanup()
        await store.close()


async def test_exec_returns_output_and_success(env: Env) -> None:
    await env.pod("web")
    out, err, status = await env.exec("web", "echo", "hi")
    assert (out, err, status) == (b"hi\n", b"", {"metadata": {}, "status": "Success"})


async def test_exec_exit_code_and_stderr(env: Env) -> None:
    await env.pod("web")
    out, err, status = await env.exec("web", "sh", "-c", "echo out; foo; exit 3")
    assert (out, err) == (b"out\n", b"sh: foo: not found\n")
    assert status["status"] == "Failure" and status["reason"] == "NonZeroExitCode"
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]


async def test_exec_sees_env_and_configmap_volume(env: Env) -> None:
    await env.client.create(CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": "cfg", "namespace": "default"},
                                         "data": {"greeting": "hello\n", "mode": "prod"}})
    await env.pod("web", env=[{"name": "GREETING", "value": "hi-there"},
                              {"name": "MODE", "valueFrom": {"configMapKeyRef": {
                                  "name": "cfg", "key": "mode"}}}],
                  volumeMounts=[{"name": "c", "mountPath": "/etc/config"}],
                  volumes=[{"name": "c", "configMap": {"name": "cfg"}}])
    out, _, _ = await env.exec("web", "env")
    assert b"GREETING=hi-there\n" in out and b"MODE=prod\n" in out and b"HOSTNAME=web\n" in out
    out, _, _ = await env.exec("web", "sh", "-c", "ls /etc/config; cat /etc/config/greeting")
    assert out == b"greeting\nmode\nhello\n"


async def test_exec_reads_stdin_until_the_v5_close_signal(env: Env) -> None:
    await env.pod("web")
    out, _, status = await env.exec("web", "sh", stdin=b"echo one\nhostname\n")
    assert out == b"one\nweb\n" and status["status"] == "Success"


async def test_older_channel_protocols_still_work(env: Env) -> None:
    await env.pod("web")
    out, _, status = await env.exec("web", "sh", "-c", "exit 2", protocol="v4.channel.k8s.io")
    assert status["details"]["causes"][0]["message"] == "2"
    async with env.session.ws_connect(f"{env.api.url}{PODS_PATH}/web/exec",
                                      params=[("command", "hostname"), ("stdout", "true")],
                                      protocols=["base64.channel.k8s.io"]) as ws:
        texts = [msg.data async for msg in ws]
    # "1": the empty message that opens the session on the lowest channel read (stdout);
    # channel 1, base64 of "web\n"; success: no error frame before v4
    assert texts == ["1", "1d2ViCg=="]


async def test_attach_streams_the_containers_output(env: Env) -> None:
    await env.pod("web")
    async with env.session.ws_connect(f"{env.api.url}{PODS_PATH}/web/attach",
                                      params={"container": "web", "stdout": "true"},
                                      protocols=[V5]) as ws:
        assert (await ws.receive(timeout=5)).data == b"\x01"  # the session is open
        msg = await ws.receive(timeout=5)
        assert msg.data[0] == 1 and b"web: heartbeat" in msg.data
        async with env.session.get(f"{env.api.url}{PODS_PATH}/web/proxy/attached") as resp:
            assert resp.status == 200
        out = b""
        while b'"GET /attached HTTP/1.1" 200' not in out:  # the server's access line too
            out += (await ws.receive(timeout=5)).data[1:]


async def test_errors_before_the_upgrade_are_statuses(env: Env) -> None:
    await env.pod("web")
    await env.pod("slow", node="slow-0")
    await env.client.create(PODS, {"apiVersion": "v1", "kind": "Pod",
                                   "metadata": {"name": "floating", "namespace": "default"},
                                   "spec": {"containers": [{"name": "c", "image": "x"}]}})
    url = f"{env.api.url}{PODS_PATH}"
    cases = [
        ("slow/exec", 400, 'container not found ("web")'),
        ("floating/exec", 400, "pod floating does not have a host assigned"),
        ("web/exec?container=nope", 400, "container nope is not valid for pod web"),
        ("nope/exec", 404, 'pods "nope" not found'),
    ]
    for path, code, message in cases:
        sep = "&" if "?" in path else "?"
        with pytest.raises(aiohttp.WSServerHandshakeError) as failed:
            await env.session.ws_connect(f"{url}/{path}{sep}command=true&stdout=true",
                                         protocols=[V5])
        assert failed.value.status == code, path
        async with env.session.get(f"{url}/{path}{sep}command=true&stdout=true") as resp:
            body = await resp.json()
        assert (resp.status, body["message"]) == (code, message)


async def spdy_exec(env: Env, query: str, *protocols: str, stdin: bytes | None = None,
                    tty: bool = False) -> tuple[str, SpdyClient]:
    """exec over a plain SPDY/3.1 upgrade as client-go < 1.30 does it: the error stream first,
    then one stream per channel asked for; stdin written then half-closed."""
    answer = await spdy_client.connect(f"{env.api.url}{PODS_PATH}/web/exec?{query}", *protocols)
    assert answer.status == 101, answer.body
    client = SpdyClient(answer.upgraded)
    streams = {"error": await client.create(streamtype="error")}
    for kind in ("stdin", "stdout") + (("resize",) if tty else ("stderr",)):
        if kind == "resize" or f"{kind}=true" in query:
            streams[kind] = await client.create(streamtype=kind)
    if stdin is not None:
        if tty:
            await client.send(streams["resize"], b'{"Width":80,"Height":24}')
        await client.send(streams["stdin"], stdin, fin=True)
    await client.read()
    answer.upgraded.close()  # as client-go closes its connection once the error stream ends
    client.streams = streams  # type: ignore[attr-defined]
    return answer.header(upgrade.PROTOCOL_HEADER), client


async def test_exec_over_spdy_like_kubectl_before_1_30(env: Env) -> None:
    await env.pod("web")
    protocol, client = await spdy_exec(
        env, "command=sh&stdin=true&stdout=true&stderr=true", "v4.channel.k8s.io",
        "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io",
        stdin=b"echo one\ntwo\nexit 3\n")
    s = client.streams  # type: ignore[attr-defined]
    assert protocol == "v4.channel.k8s.io"
    assert set(s.values()) <= client.replies and client.goaway
    assert (client.data.get(s["stdout"]), client.data.get(s["stderr"])) == (b"one\n", b"sh: two: not found\n")
    status = orjson.loads(client.data[s["error"]])
    assert status["reason"] == "NonZeroExitCode"
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "3"}]
    assert {s["stdout"], s["stderr"], s["error"]} <= client.fins


async def test_exec_over_spdy_v2_reports_failure_as_text(env: Env) -> None:
    await env.pod("web")
    protocol, client = await spdy_exec(env, "command=sh&command=-c&command=exit%202&stdout=true",
                                       "v2.channel.k8s.io", "channel.k8s.io")
    assert protocol == "v2.channel.k8s.io"
    assert client.data[client.streams["error"]] == (  # type: ignore[attr-defined]
        b"command terminated with non-zero exit code: error executing command "
        b"[sh -c exit 2], exit code 2")
    _, ok = await spdy_exec(env, "command=true&stdout=true", "v2.channel.k8s.io")
    assert ok.data[ok.streams["error"]] == b""  # type: ignore[attr-defined]  # success: nothing


async def test_exec_over_spdy_with_a_tty_has_a_resize_stream_and_no_stderr(env: Env) -> None:
    await env.pod("web")
    _, client = await spdy_exec(env, "command=sh&stdin=true&stdout=true&stderr=true&tty=true",
                                "v4.channel.k8s.io", stdin=b"echo hi\n\x04", tty=True)
    s = client.streams  # type: ignore[attr-defined]
    assert b"hi\r\n" in client.data[s["stdout"]]
    assert orjson.loads(client.data[s["error"]])["status"] == "Success"


async def test_spdy_protocol_negotiation_failure_is_a_status(env: Env) -> None:
    await env.pod("web")
    answer = await spdy_client.connect(f"{env.api.url}{PODS_PATH}/web/exec?command=true&stdout=1",
                                       "v9.channel.k8s.io")
    body = orjson.loads(answer.body)
    assert (answer.status, body["reason"]) == (403, "Forbidden")
    assert "unable to negotiate protocol: client supports [v9.channel.k8s.io]" in body["message"]


async def test_port_forward_over_spdy_like_kubectl_before_1_31(env: Env) -> None:
    pod = await env.pod("web")
    answer = await spdy_client.connect(f"{env.api.url}{PODS_PATH}/web/portforward",
                                       "portforward.k8s.io")
    assert (answer.status, answer.header(upgrade.PROTOCOL_HEADER)) == (101, "portforward.k8s.io")
    client = SpdyClient(answer.upgraded)
    error = await client.create(streamtype="error", port="80", requestid="0")
    data = await client.create(streamtype="data", port="80", requestid="0")
    await client.send(error, b"", fin=True)
    await client.send(data, b"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    await client.read(until=lambda: data in client.fins)
    assert client.data[data].endswith(f"pod web ({pod['status']['podIP']}) GET /hello\n".encode())
    answer.upgraded.close()


async def test_port_forward_over_the_spdy_websocket_tunnel(env: Env) -> None:
    pod = await env.pod("web")
    codec, reader = spdy.HeaderCodec(), spdy.FrameReader()

    def syn(stream: int, kind: str, port: int) -> bytes:
        block = codec.encode({"streamtype": kind, "port": str(port), "requestid": "0"})
        return spdy.control(spdy.SYN_STREAM, 0, struct.pack(">IIBB", stream, 0, 0, 0) + block)

    async with env.session.ws_connect(f"{env.api.url}{PODS_PATH}/web/portforward",
                                      protocols=["SPDY/3.1+portforward.k8s.io"]) as ws:
        await ws.send_bytes(syn(1, "error", 80))
        await ws.send_bytes(syn(3, "data", 80))
        await ws.send_bytes(spdy.data(3, b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"))
        frames: list = []
        while not any(isinstance(f, spdy.DataFrame) and f.data for f in frames):
            frames += reader.feed((await ws.receive(timeout=5)).data)
    answer = next(f for f in frames if isinstance(f, spdy.DataFrame) and f.data)
    assert answer.stream_id == 3
    assert answer.data.endswith(f"pod web ({pod['status']['podIP']}) GET /hello\n".encode())


async def test_pod_proxy_and_service_proxy(env: Env) -> None:
    pod = await env.pod("web")
    ip = pod["status"]["podIP"]
    async with env.session.get(f"{env.api.url}{PODS_PATH}/web/proxy/") as resp:
        assert (resp.status, await resp.text()) == (200, f"pod web ({ip}) GET /\n")
    async with env.session.post(f"{env.api.url}{PODS_PATH}/web:80/proxy/a/b?x=1",
                                data=b"body") as resp:
        assert await resp.text() == f"pod web ({ip}) POST /a/b?x=1\n"
    async with env.session.get(f"{env.api.url}{PODS_PATH}/web:81/proxy/") as resp:
        body = await resp.json()
        assert resp.status == 503 and "connection refused" in body["message"]
    await env.client.create(SERVICES, {"apiVersion": "v1", "kind": "Service",
                                       "metadata": {"name": "web", "namespace": "default"},
                                       "spec": {"selector": {"app": "web"}, "ports": [
                                           {"name": "http", "port": 8080,
                                            "targetPort": 80}]}})
    svc_url = f"{env.api.url}/api/v1/namespaces/default/services"
    async with env.session.get(f"{svc_url}/web/proxy/x") as resp:
        body = await resp.json()
        assert resp.status == 503
        assert body["message"] == 'no endpoints available for service "web"'
    await env.client.create(ENDPOINTS, {
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "web", "namespace": "default"},
        "subsets": [{"addresses": [{"ip": ip, "nodeName": "n-0", "targetRef": {
            "kind": "Pod", "name": "web", "namespace": "default"}}],
            "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}]})
    for ident in ("web", "web:http", "web:8080"):
        async with env.session.get(f"{svc_url}/{ident}/proxy/svc") as resp:
            assert (resp.status, await resp.text()) == (200, f"pod web ({ip}) GET /svc\n")


async def test_discovery_lists_the_connect_subresources(env: Env) -> None:
    async with env.session.get(f"{env.api.url}/api/v1") as resp:
        names = {r["name"]: r for r in (await resp.json())["resources"]}
    for sub in ("pods/exec", "pods/attach", "pods/portforward", "pods/proxy",
                "services/proxy"):
        assert sub in names
    assert names["pods/exec"]["verbs"] == ["create", "get"]


async def ws_messages(ws: aiohttp.ClientWebSocketResponse, timeout: float = 5) -> list:
    out = []
    while True:
        msg = await ws.receive(timeout=timeout)
        if msg.type not in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
            return out
        out.append(msg.data)


async def test_log_over_a_websocket_in_both_reader_protocols(env: Env) -> None:
    """wsstream.Reader: binary messages (no protocol, binary.k8s.io) or base64 text."""
    await env.pod("web")
    url = f"{env.api.url}{PODS_PATH}/web/log"
    first = b"container web of pod default/web started\n"
    for protocols, decode in (([], bytes), (["binary.k8s.io"], bytes),
                              (["base64.binary.k8s.io"], base64.b64decode)):
        async with env.session.ws_connect(url, protocols=protocols) as ws:
            assert ws.protocol == (protocols[0] if protocols else None)
            messages = await ws_messages(ws)
        assert messages and all(len(decode(m)) <= 2048 for m in messages)
        assert b"".join(decode(m) for m in messages).startswith(first), protocols
    async with env.session.ws_connect(url + "?follow=true", protocols=["binary.k8s.io"]) as ws:
        assert (await ws.receive(timeout=5)).data.startswith(first)  # then the client leaves
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:  # a Status, before the upgrade
        await env.session.ws_connect(f"{url}?container=nope")
    assert refused.value.status == 400


async def raw_exec(env: Env, query: list[tuple[str, str]], protocols: list[str],
                   *frames: bytes | str) -> tuple[str | None, list]:
    """exec with the frames given (str: TEXT, bytes: BINARY), messages back until the close."""
    async with env.session.ws_connect(f"{env.api.url}{PODS_PATH}/web/exec", params=query,
                                      protocols=protocols) as ws:
        for frame in frames:
            await (ws.send_str(frame) if isinstance(frame, str) else ws.send_bytes(frame))
        return ws.protocol, await ws_messages(ws)


async def test_stdin_in_text_frames_and_unrequested_stderr(env: Env) -> None:
    """The official Python client writes str stdin as TEXT frames ("\\x00..." on v4) and
    asks for stderr=False: the stdin is read, and nothing is written on channel 2."""
    await env.pod("web")
    query = [("command", "sh"), ("stdin", "True"), ("stdout", "True"), ("stderr", "False"),
             ("tty", "False")]
    protocol, messages = await raw_exec(env, query, ["v4.channel.k8s.io"],
                                        "\x00echo one\nfoo\n", b"\x00exit 5\n")
    assert protocol == "v4.channel.k8s.io"
    assert messages[0] == b"\x01"  # the session is open
    assert b"".join(m[1:] for m in messages if m[0] == 1) == b"one\n"
    assert not [m for m in messages if m[0] == 2]
    status = orjson.loads(b"".join(m[1:] for m in messages if m[0] == 3))
    assert status["details"]["causes"] == [{"reason": "ExitCode", "message": "5"}]


async def test_base64_protocol_takes_binary_frames_too(env: Env) -> None:
    await env.pod("web")
    query = [("command", "sh"), ("stdin", "1"), ("stdout", "1")]
    _, messages = await raw_exec(env, query, ["v4.base64.channel.k8s.io"],
                                 b"0" + base64.b64encode(b"echo b64\n"),
                                 "0" + base64.b64encode(b"exit 0\n").decode())
    assert messages[0] == "1"
    assert b"".join(base64.b64decode(m[1:]) for m in messages if m[0] == "1") == b"b64\n"
    assert orjson.loads(base64.b64decode(messages[-1][1:]))["status"] == "Success"


async def test_v5_is_chosen_whenever_offered(env: Env) -> None:
    await env.pod("web")
    protocol, _ = await raw_exec(env, [("command", "true"), ("stdout", "1")],
                                 ["v4.channel.k8s.io", "v5.channel.k8s.io"])
    assert protocol == "v5.channel.k8s.io"


async def test_tty_takes_no_stderr_and_reads_resizes(env: Env) -> None:
    await env.pod("web")
    query = [("command", "sh"), ("stdin", "1"), ("stdout", "1"), ("stderr", "1"), ("tty", "1")]
    _, messages = await raw_exec(env, query, [V5], b'\x04{"Width":100,"Height":30}',
                                 b"\x00foo\r", b"\x00exit\r")
    assert not [m for m in messages if m[0] == 2]
    assert b"sh: foo: not found\r\n" in b"".join(m[1:] for m in messages if m[0] == 1)


async def test_exec_asking_for_no_stream_is_refused(env: Env) -> None:
    await env.pod("web")
    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        await raw_exec(env, [("command", "true"), ("stdout", "false")], [V5])
    assert refused.value.status == 400


def _official_client_exec(url: str, binary: bool) -> tuple[object, object, int | None]:
    """`kubernetes.stream.stream` as its docs show, interactive: stdin written as str (TEXT
    frames) or bytes (BINARY frames), stderr not asked for."""
    kubernetes = pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
    from kubernetes.stream import stream

    configuration = kubernetes.client.Configuration()
    configuration.host = url
    with kubernetes.client.ApiClient(configuration) as api:
        core = kubernetes.client.CoreV1Api(api)
        resp = stream(core.connect_get_namespaced_pod_exec, "web", "default", command=["sh"],
                      stdin=True, stdout=True, stderr=False, tty=False, binary=binary,
                      _preload_content=False)
        try:
            lines = ["echo binary; foo\n", "exit 7\n"] if binary else ["echo text; foo\n",
                                                                      "exit 7\n"]
            resp.write_stdin(lines[0].encode() if binary else lines[0])
            first = resp.readline_stdout(timeout=5)
            resp.write_stdin(lines[1].encode() if binary else lines[1])
            resp.run_forever(timeout=5)
            return first, resp.read_stderr(timeout=0.1), resp.returncode
        finally:
            resp.close()


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
async def test_official_python_client_exec_with_stdin(env: Env, binary: bool) -> None:
    await env.pod("web")
    first, stderr, code = await asyncio.to_thread(_official_client_exec, env.api.url, binary)
    assert first == (b"binary" if binary else "text")
    assert not stderr and code == 7  # stderr=False: `foo: not found` is not sent


async def test_requests_through_the_proxy_are_the_servers_access_lines(env: Env) -> None:
    """pods/proxy and port-forward requests each append an access line (nginx's combined
    format) to the serving container's log, among its generated lines; a follower sees the
    next one as soon as it is answered."""
    await env.pod("web")
    log_url = f"{env.api.url}{PODS_PATH}/web/log"
    async with env.session.get(log_url) as resp:
        assert b'"GET' not in await resp.read()  # no request yet: generated lines only
    async with env.session.get(f"{env.api.url}{PODS_PATH}/web:80/proxy/hello",
                               headers={"User-Agent": "curl/8.5.0"}) as resp:
        assert resp.status == 200
        size = len(await resp.read())
    async with env.session.get(log_url) as resp:
        text = await resp.text()
    assert text.startswith("container web of pod default/web started\n")
    access = [line for line in text.splitlines() if '"GET /hello' in line]
    assert len(access) == 1
    assert re.fullmatch(r'127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] '
                        rf'"GET /hello HTTP/1\.1" 200 {size} "-" "curl/8\.5\.0"', access[0])
    async with env.session.get(log_url, params={"follow": "true"}) as follow:
        while '"GET /hello' not in (await follow.content.readline()).decode():
            pass
        async with env.session.get(f"{env.api.url}{PODS_PATH}/web/proxy/next") as resp:
            assert resp.status == 200
        for _ in range(100):
            line = (await asyncio.wait_for(follow.content.readline(), 5)).decode()
            if '"GET /next HTTP/1.1" 200' in line:
                break
        else:
            raise AssertionError("the follower never saw the access line")
    answer = await spdy_client.connect(f"{env.api.url}{PODS_PATH}/web/portforward",
                                       "portforward.k8s.io")
    client = SpdyClient(answer.upgraded)
    error = await client.create(streamtype="error", port="80", requestid="0")
    data = await client.create(streamtype="data", port="80", requestid="0")
    await client.send(error, b"", fin=True)
    await client.send(data, b"HEAD /pf HTTP/1.0\r\nUser-Agent: pf\r\n\r\n")
    await client.read(until=lambda: data in client.fins)
    answer.upgraded.close()
    async with env.session.get(log_url, params={"sinceSeconds": "60"}) as resp:
        assert '"HEAD /pf HTTP/1.0" 200 0 "-" "pf"\n' in await resp.text()
