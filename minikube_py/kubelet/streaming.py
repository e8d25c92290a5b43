"""The kubelet's streaming endpoints: exec, attach, port-forward, and the pods' HTTP servers.

Kubernetes piece: pkg/kubelet/server/server.go `/exec/{podNamespace}/{podID}/{containerName}`,
`/attach/...` and `/portForward/{podNamespace}/{podID}` (served through
pkg/kubelet/cri/streaming: remotecommand over a WebSocket (channel protocols v1..v5) or over
SPDY/3.1 (remotecommand.py), port-forward over SPDY/3.1 — raw, or tunnelled in a WebSocket by
kubectl 1.31+ — or the WebSocket channel protocol), which the API server proxies for `pods/{name}/exec|attach|portforward` — plus
`/podProxy/{ns}/{pod}/{port}/{path}`, which stands in for the pod IP the API server would dial
for `pods/{name}/proxy` (simulated pods have no reachable IP).

What runs behind them is simulated: exec runs the simulated shell (shell.py) over the
container's environment and volumes (sandbox.py, read through the API client); attach shows
the container's log lines as they are produced (or, for a container with `stdin: true` running
a shell, an interactive shell); port-forward and podProxy reach the simulated HTTP server
(http_sim.py) of each declared containerPort.

Validation happens before the upgrade, so errors are plain HTTP answers the API server turns
into Status objects: an unknown pod is 404 `pod does not exist`, a container that is not
running 400 `container not found ("web")`, exec options asking for no stream 400 `you must
specify at least 1 of stdin, stdout, stderr`. A request without an upgrade (`websocket` or
`SPDY/3.1`) that would otherwise be accepted gets `426 Upgrade Required` (the API server's
pre-flight check).
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import TYPE_CHECKING, Any

import structlog
from aiohttp import WSMsgType, web

from ..httpstream import upgrade, wsstream
from ..httpstream.spdy import ProtocolError
from ..httpstream.wsstream import CLOSE, RESIZE, STDERR, STDIN, STDOUT, ChannelProtocol
from . import http_sim
from . import sandbox as sandboxes
from .command import SHELLS
from .containers import RUNNING
from .environment import load_sandbox
from .logs import (
    FIRST_ACCESS_POLL,
    AccessLog,
    LogSpan,
    access_line,
    lines_until,
    render_lines,
    server_lines,
)
from .portforward import PortForwardSession
from .remotecommand import SPDY_PROTOCOLS, Options, SpdyStreams, WebSocketStreams
from .shell_io import Program, Read, Sleep, StdinBuffer, Write

if TYPE_CHECKING:
    from .kubelet import Kubelet
    from .pod_status import PodRecord
    from .pool import KubeletPool

log = structlog.get_logger(component="kubelet")
Obj = dict[str, Any]

#: the port-forward SPDY session tunnelled in a WebSocket (kubectl 1.31+, KEP-4006)
#: how long a WebSocket exec/attach waits after the handshake before the program writes: a
#: container runtime takes milliseconds to start an exec, and client-go's WebSocket executor
#: (kubectl 1.30+) registers its streams only after the handshake returns — a message that
#: arrives first is discarded ("Unknown stream id 1") and the command fails ("closed all
#: streams"). Our simulated shell answers in microseconds, so it waits as a runtime would.
WEBSOCKET_EXEC_START_S = 0.02
PORTFORWARD_TUNNEL = "SPDY/3.1+portforward.k8s.io"
PORTFORWARD_WS_PROTOCOLS = {PORTFORWARD_TUNNEL, *wsstream.PORTFORWARD}
#: port-forward over a plain SPDY upgrade (kubectl <= 1.30)
PORTFORWARD_SPDY = "portforward.k8s.io"


def _text(status: int, message: str) -> web.Response:
    return web.Response(status=status, text=message)


def is_websocket(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


class Stdin:
    """The client's channel 0 as the program's stdin (through a tty's line discipline with
    `-t`): a StdinBuffer answers each Read — a line, or whatever has arrived for a chunk
    read, as read(2) on the pipe (or, with a tty, in canonical mode) would — and a Read it
    cannot answer yet waits for more. EOF is the v5 close signal, SPDY's FIN, the socket
    closing, or no stdin asked for. Bytes that are not UTF-8 travel as surrogate escapes,
    the shell's convention, so binary stdin (`tar -xf -` behind `kubectl cp`) arrives
    intact."""

    def __init__(self, enabled: bool, tty: bool) -> None:
        # the simulated shell (shell.py and its applets) is loaded by the first exec
        from .shell import LineDiscipline

        self.discipline = LineDiscipline() if tty else None
        self.buffer = StdinBuffer(canonical=tty)
        self.arrived = asyncio.Event()
        if not enabled:
            self.end()

    @property
    def ended(self) -> bool:
        return self.buffer.ended

    def feed(self, data: bytes) -> bytes:
        """-> what the terminal echoes."""
        if self.ended:
            return b""
        echo = b""
        if self.discipline is None:
            self.buffer.feed(data)
        else:
            echo, lines = self.discipline.feed(data)
            for line in lines:
                self.buffer.feed(line.encode("utf-8", "surrogateescape"))
            if self.discipline.eof:
                self.buffer.end()
        self.arrived.set()
        return echo

    def end(self) -> None:
        self.buffer.end()
        self.arrived.set()

    async def read(self, request: Read) -> str | None:
        """The answer to `request`, once stdin can give it."""
        while not (answer := self.buffer.take(request))[0]:
            self.arrived.clear()
            await self.arrived.wait()
        return answer[1]


class StreamingServer:
    def __init__(self, pool: KubeletPool, *, log_interval: float = 1.0) -> None:
        self.pool = pool
        self.log_interval = log_interval
        #: (pod uid, container) -> files written by earlier execs (the writable layer)
        self.layers: dict[tuple[str, str], dict[str, bytes]] = {}

    def routes(self) -> list[web.RouteDef]:
        return [
            web.route("*", "/exec/{namespace}/{pod}/{container}", self.exec),
            web.route("*", "/attach/{namespace}/{pod}/{container}", self.attach),
            web.route("*", "/portForward/{namespace}/{pod}", self.port_forward),
            web.route("*", r"/podProxy/{namespace}/{pod}/{port:\d+}/{path:.*}", self.pod_proxy),
        ]

    # -- finding the pod ---------------------------------------------------------------------
    def _find(self, request: web.Request) -> tuple[Kubelet, PodRecord]:
        key = f"{request.match_info['namespace']}/{request.match_info['pod']}"
        for kubelet in self.pool.kubelets.values():
            record = kubelet.workers.records.get(key)
            if record is not None:
                if not kubelet.running:
                    raise web.HTTPServiceUnavailable(
                        text=f"node {kubelet.name} is stopped (the failure toggle)")
                return kubelet, record
        raise web.HTTPNotFound(text="pod does not exist")

    @staticmethod
    def _running(record: PodRecord) -> set[str]:
        return {c.name for c in record.init + record.app if c.state == RUNNING}

    def _container(self, request: web.Request, record: PodRecord) -> Obj:
        name = request.match_info["container"]
        spec = sandboxes.find_container(record.pod, name)
        if spec is None or name not in self._running(record):
            raise web.HTTPBadRequest(text=f'container not found ("{name}")')
        return spec

    async def _websocket(self, request: web.Request, supported: set[str] | dict
                         ) -> web.WebSocketResponse:
        """Accept the WebSocket with the first protocol the client offers that we speak."""
        offered = request.headers.get("Sec-WebSocket-Protocol", "")
        protocol = wsstream.choose(offered, supported)
        if protocol is None:
            raise web.HTTPBadRequest(text=f"requested protocol(s) are not supported: "
                                          f"[{offered}]; supported protocols are "
                                          f"[{', '.join(p for p in supported if p)}]")
        ws = web.WebSocketResponse(protocols=(protocol,) if protocol else (),
                                   max_msg_size=16 << 20)
        await ws.prepare(request)
        return ws

    @staticmethod
    async def _spdy(request: web.Request, supported: dict[str, int] | set[str]
                    ) -> tuple[upgrade.Upgraded, str]:
        """httpstream.Handshake then the SPDY upgrade: the first protocol in the client's
        X-Stream-Protocol-Version list that we speak (403 listing ours when none)."""
        offered = upgrade.client_protocols(request.headers.getall(upgrade.PROTOCOL_HEADER, []))
        if not offered:
            raise web.HTTPBadRequest(
                text=f"unable to upgrade: {upgrade.PROTOCOL_HEADER} is required")
        protocol = upgrade.negotiate(offered, supported)
        if protocol is None:
            raise web.HTTPForbidden(
                headers={upgrade.ACCEPTED_HEADER: ", ".join(supported)},
                text=f"unable to upgrade: unable to negotiate protocol: client supports "
                     f"[{' '.join(offered)}], server accepts [{' '.join(supported)}]")
        return await upgrade.accept(request, {upgrade.PROTOCOL_HEADER: protocol}), protocol

    async def _sandbox(self, kubelet: Kubelet, record: PodRecord, container: Obj,
                       tty: bool) -> sandboxes.Sandbox:
        live = {r.uid for k in self.pool.kubelets.values() for r in k.workers.records.values()}
        for stale in [key for key in self.layers if key[0] not in live]:
            del self.layers[stale]
        self.pool.tokens.forget(live)
        config = kubelet.config
        return await load_sandbox(
            kubelet.reads, record.pod, container, pod_ip=record.ip or "",
            host_ip=self.pool.node_ip, tty=tty,
            allocatable={"cpu": config.cpu, "memory": config.memory,
                         "ephemeral-storage": config.ephemeral_storage},
            written=self.layers.setdefault((record.uid, container.get("name", "")), {}),
            tokens=self.pool.tokens)

    # -- exec and attach ---------------------------------------------------------------------
    async def exec(self, request: web.Request) -> web.StreamResponse:
        kubelet, record = self._find(request)
        container = self._container(request, record)
        argv = request.query.getall("command", [])
        if not argv:
            raise web.HTTPBadRequest(text="you must specify at least one command for the container")
        return await self._session(request, kubelet, record, container, argv, attach=False)

    async def attach(self, request: web.Request) -> web.StreamResponse:
        kubelet, record = self._find(request)
        container = self._container(request, record)
        argv = [str(a) for a in (container.get("command") or [])] + \
            [str(a) for a in (container.get("args") or [])]
        return await self._session(request, kubelet, record, container, argv, attach=True)

    async def _session(self, request: web.Request, kubelet: Kubelet, record: PodRecord,
                       container: Obj, argv: list[str], *, attach: bool) -> web.StreamResponse:
        options = Options.from_query(request.query)
        problem = options.problem()
        if problem:
            raise web.HTTPBadRequest(text=problem)
        streams: WebSocketStreams | SpdyStreams
        if upgrade.is_spdy_request(request.headers):
            conn, protocol = await self._spdy(request, SPDY_PROTOCOLS)
            streams = SpdyStreams(conn, SPDY_PROTOCOLS[protocol], options)
            response: web.StreamResponse = conn.response  # type: ignore[assignment]
        elif is_websocket(request):
            ws = await self._websocket(request, wsstream.REMOTECOMMAND)
            protocol = ws.ws_protocol or ""
            streams = WebSocketStreams(ws, wsstream.REMOTECOMMAND[protocol], options)
            response = ws
        else:
            raise web.HTTPUpgradeRequired(text="Upgrade request required")
        if not await streams.start():
            return response
        if isinstance(streams, WebSocketStreams):
            await asyncio.sleep(WEBSOCKET_EXEC_START_S)
        stdin = Stdin(options.stdin, options.tty)
        reader = asyncio.get_running_loop().create_task(self._read(streams, stdin))
        code = 0
        try:
            if attach and not _interactive_shell(container, argv):
                await self._follow_log(streams, record, container.get("name", ""), reader)
            else:
                box = await self._sandbox(kubelet, record, container, options.tty)
                from .shell import Shell

                shell = Shell(box, tty=options.tty)
                program = shell.interactive() if attach else shell.exec(argv)
                log.info("exec", pod=record.key, container=container.get("name"),
                         command=argv if not attach else "(attach)", tty=options.tty,
                         protocol=protocol)
                code = await self._drive(program, streams, stdin, reader, options.tty)
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
            await streams.finish(code, argv)
        return response

    @staticmethod
    async def _read(streams: WebSocketStreams | SpdyStreams, stdin: Stdin) -> None:
        """Client -> server data until the connection ends: stdin (echoed by a tty), the v5 /
        SPDY end of stdin, terminal resizes (a simulated terminal has no size to change)."""
        try:
            async for channel, data in streams.incoming():
                if channel == STDIN:
                    echo = stdin.feed(data)
                    if echo:
                        await streams.send(STDOUT, echo)
                elif channel == CLOSE and data[:1] == bytes([STDIN]):
                    stdin.end()
                elif channel == RESIZE:
                    log.debug("terminal resize", size=data[:200].decode(errors="replace"))
        finally:
            stdin.end()

    async def _drive(self, program: Program, channels: WebSocketStreams | SpdyStreams,
                     stdin: Stdin,
                     reader: asyncio.Task, tty: bool) -> int:
        """Perform what the shell asks until it returns its exit status (or the client goes)."""
        from .shell import LineDiscipline

        reply: str | None = None
        try:
            action = next(program)
            while True:
                reply = None
                if isinstance(action, Write):
                    data = LineDiscipline.output(action.data) if tty else action.data
                    await channels.send(STDERR if action.fd == 2 and not tty else STDOUT, data)
                elif isinstance(action, Sleep):
                    if math.isinf(action.seconds):
                        await reader
                    else:
                        await asyncio.wait([reader], timeout=action.seconds)
                    if reader.done():
                        program.close()
                        return 130
                elif isinstance(action, Read):
                    reply = await stdin.read(action)
                action = program.send(reply)
        except StopIteration as stop:
            return int(stop.value or 0)

    async def _follow_log(self, channels: WebSocketStreams | SpdyStreams, record: PodRecord,
                          container: str,
                          reader: asyncio.Task) -> None:
        """Attach to a container that is not a shell: its output from now on (a server's
        generated and access lines), until it ends."""
        ns, _, pod = record.key.partition("/")
        span = self.pool.log_span(ns, pod, container, False)
        if span is None:
            return
        started = span[0]
        sent = lines_until(started, time.time(), self.log_interval)
        recorded = LogSpan(*span).recorded
        acc_sent = recorded.end if isinstance(recorded, AccessLog) else 0
        while not reader.done():
            await asyncio.wait([reader], timeout=min(self.log_interval, FIRST_ACCESS_POLL))
            span = self.pool.log_span(ns, pod, container, False)
            if span is None or span[0] != started:
                return
            end = span[1] if span[1] is not None else time.time()
            total = max(sent, lines_until(started, end, self.log_interval))
            recorded = LogSpan(*span).recorded
            access = recorded if isinstance(recorded, AccessLog) else None
            lines, acc_sent = server_lines(ns, pod, container, started, self.log_interval,
                                           (sent, total), access, acc_sent)
            if lines:
                await channels.send(STDOUT, render_lines(lines, False))
            sent = total
            if span[1] is not None:
                return

    # -- port-forward ----------------------------------------------------------------------
    def _connector(self, record: PodRecord):
        name = record.key.partition("/")[2]

        def connect(port: int) -> http_sim.HTTPConnection | str:
            container = http_sim.serves(record.pod, port, self._running(record))
            if container is None:
                return (f"error forwarding port {port} to pod {record.uid}, uid : failed to "
                        f"connect to localhost:{port} inside namespace \"{name}\", IPv4: dial "
                        f"tcp4 127.0.0.1:{port}: connect: connection refused")

            def on_answer(request: str, status: int, size: int, headers: dict[str, str]) -> None:
                # port-forward dials localhost inside the pod's network namespace
                _log_access(record, container, "127.0.0.1", request, status, size,
                            headers.get("referer"), headers.get("user-agent"))

            return http_sim.HTTPConnection(name, record.ip or "", on_answer)

        return connect

    async def port_forward(self, request: web.Request) -> web.StreamResponse:
        _, record = self._find(request)
        if upgrade.is_spdy_request(request.headers):
            conn, _ = await self._spdy(request, {PORTFORWARD_SPDY})
            log.info("port-forward", pod=record.key, protocol=f"SPDY/3.1 {PORTFORWARD_SPDY}")
            try:
                await self._spdy_session(conn.reader.read, conn.write, record)
            finally:
                conn.close()
            return conn.response  # type: ignore[return-value]
        if not is_websocket(request):
            raise web.HTTPUpgradeRequired(text="Upgrade request required")
        ports = _ports(request.query.getall("ports", []))
        ws = await self._websocket(request, PORTFORWARD_WS_PROTOCOLS)
        log.info("port-forward", pod=record.key, protocol=ws.ws_protocol)
        try:
            if ws.ws_protocol == PORTFORWARD_TUNNEL:
                await self._spdy_session(_binary_messages(ws), ws.send_bytes, record)
            else:
                await self._channel_ports(ws, wsstream.PORTFORWARD[ws.ws_protocol or ""],
                                          record, ports)
        finally:
            await ws.close()
        return ws

    async def _spdy_session(self, read: Any, write: Any, record: PodRecord) -> None:
        """kubectl's port-forward SPDY session, raw or tunnelled: `read(n)` returns the next
        bytes (b"" at the end), `write(bytes)` sends."""
        session = PortForwardSession(self._connector(record))
        while True:
            data = await read(64 << 10)
            if not data:
                return
            try:
                out = session.receive(data)
            except ProtocolError as exc:
                log.warning("port-forward: bad SPDY from client", pod=record.key, error=str(exc))
                return
            if out:
                await write(out)
            if session.closed:
                return

    async def _channel_ports(self, ws: web.WebSocketResponse, protocol: ChannelProtocol,
                             record: PodRecord, ports: list[int]) -> None:
        """The WebSocket port-forward protocol (no SPDY): ports from `?ports=`, data on
        channel 2i and errors on 2i+1, each opened with the port as 2 little-endian bytes.
        When the pod has closed every port's connection the WebSocket closes, as upstream's
        kubelet (portforward/websocket.go) does once every port's copy has ended."""

        async def send(channel: int, data: bytes) -> None:
            message = protocol.encode(channel, data)
            await (ws.send_str(message) if isinstance(message, str) else ws.send_bytes(message))

        if not ports:
            await send(1, b"query parameter \"port\" is required")
            return
        connect = self._connector(record)
        conns: dict[int, http_sim.HTTPConnection] = {}
        for i, port in enumerate(ports):
            await send(2 * i, port.to_bytes(2, "little"))
            await send(2 * i + 1, port.to_bytes(2, "little"))
            connected = connect(port)
            if isinstance(connected, str):
                await send(2 * i + 1, connected.encode())
            else:
                conns[2 * i] = connected
        async for msg in ws:
            if msg.type not in (WSMsgType.BINARY, WSMsgType.TEXT):
                break
            decoded = protocol.decode(msg.data)
            if decoded is None or decoded[0] not in conns:
                continue
            conn = conns[decoded[0]]
            out = conn.feed(decoded[1])
            if out:
                await send(decoded[0], out)
            if conn.closed:  # the pod's side ended this port's connection
                del conns[decoded[0]]
                if not conns:
                    return  # every port's stream is over: upstream's kubelet closes the socket

    # -- the pods' HTTP servers (pods/proxy, services/proxy) ---------------------------------
    async def pod_proxy(self, request: web.Request) -> web.Response:
        _, record = self._find(request)
        port = int(request.match_info["port"])
        name = record.key.partition("/")[2]
        container = http_sim.serves(record.pod, port, self._running(record))
        if container is None:
            return _text(503, f"dial tcp {record.ip or ''}:{port}: connect: connection refused")
        await request.read()
        target = "/" + request.match_info["path"]
        if request.query_string:
            target += "?" + request.query_string
        status, headers, body = http_sim.answer(name, record.ip or "", request.method, target)
        version = f"HTTP/{request.version.major}.{request.version.minor}"
        # the API server dials the pod IP from the node: the server sees the node's address
        _log_access(record, container, self.pool.node_ip, f"{request.method} {target} {version}",
                    status, len(body), request.headers.get("Referer"),
                    request.headers.get("User-Agent"))
        headers.pop("Content-Length", None)
        return web.Response(status=status, body=body, headers=headers)


def _log_access(record: PodRecord, container: str, remote: str, request: str, status: int,
                size: int, referer: str | None, agent: str | None) -> None:
    """One answered request in the running server container's access log (created by its
    first request: a server nobody asked keeps none). A container whose command the shell
    runs logs only what its command writes."""
    for c in record.init + record.app:
        if c.name != container or c.state != RUNNING or c.argv is not None:
            continue
        if c.log is None:
            c.log = AccessLog()
        now = time.time()
        c.log.write(now, 1, access_line(c.image, remote, now, request, status, size, referer,
                                        agent))
        return


def _interactive_shell(container: Obj, argv: list[str]) -> bool:
    """A container attach can talk to: `stdin: true` and a shell without a script."""
    if not container.get("stdin"):
        return False
    if not argv:
        return True
    return argv[0].rsplit("/", 1)[-1] in SHELLS and "-c" not in argv[1:]


def _binary_messages(ws: web.WebSocketResponse) -> Any:
    """`read(n)` over a WebSocket's binary messages (the SPDY tunnel): b"" when it closes."""

    async def read(_: int) -> bytes:
        while True:
            msg = await ws.receive()
            if msg.type == WSMsgType.BINARY and msg.data:  # kubectl sends empty ones too
                return bytes(msg.data)
            if msg.type not in (WSMsgType.BINARY, WSMsgType.TEXT):
                return b""

    return read


def _ports(values: list[str]) -> list[int]:
    out = []
    for value in values:
        for part in value.split(","):
            if part.strip().isdigit():
                out.append(int(part.strip()))
    return out
