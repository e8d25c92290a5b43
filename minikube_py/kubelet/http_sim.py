"""The simulated HTTP server every container runs on each TCP port it declares.

Kubernetes piece: none — upstream, `kubectl port-forward` and `pods/{name}/proxy` reach a real
process listening in the pod's network namespace. Here no process runs and pods have no
reachable IPs, so the kubelet answers in-process: every request to a declared `containerPort`
gets `200` and a line naming the pod, its IP and the request (`pod web (10.244.0.5) GET
/hello`), whatever the method and path; a port nobody declared is "connection refused".
Pure: `serves` and `answer` for whole requests (pods/proxy), and `HTTPConnection`, which turns
the bytes of one port-forwarded TCP stream into response bytes (HTTP/1.x, keep-alive,
`Content-Length` bodies). Every answered request is reported to the connection's `on_answer`
(the kubelet writes it to the container's access log, logs.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import formatdate
from typing import Any

Obj = dict[str, Any]
SERVER = "minikube-py-simulated"
MAX_HEADER = 64 * 1024
REASONS = {200: "OK", 400: "Bad Request", 413: "Payload Too Large"}
#: (request line, status, body bytes sent, request headers with lower-case names)
OnAnswer = Callable[[str, int, int, dict[str, str]], None]


def serves(pod: Obj, port: int, running: set[str]) -> str | None:
    """The name of the running container that declares TCP `port`, or None (refused)."""
    for c in (pod.get("spec") or {}).get("containers") or []:
        if c.get("name") not in running:
            continue
        for p in c.get("ports") or []:
            if p.get("containerPort") == port and (p.get("protocol") or "TCP") == "TCP":
                return c.get("name")
    return None


def named_port(pod: Obj, name: str) -> int | None:
    """A containerPort by its `name` (pods/proxy accepts `web:http`)."""
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == name:
                return p.get("containerPort")
    return None


def body_text(pod_name: str, pod_ip: str, method: str, target: str) -> str:
    return f"pod {pod_name} ({pod_ip}) {method} {target}\n"


def answer(pod_name: str, pod_ip: str, method: str, target: str) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of one request."""
    body = body_text(pod_name, pod_ip, method, target).encode()
    headers = {"Content-Type": "text/plain; charset=utf-8", "Server": SERVER,
               "Content-Length": str(len(body))}
    return 200, headers, b"" if method == "HEAD" else body


def _response(status: int, headers: dict[str, str], body: bytes, version: str,
              close: bool) -> bytes:
    lines = [f"{version} {status} {REASONS.get(status, '')}",
             f"Date: {formatdate(usegmt=True)}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if close:
        lines.append("Connection: close")
    elif version == "HTTP/1.0":
        lines.append("Connection: keep-alive")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@dataclass
class HTTPConnection:
    """One TCP connection to the simulated server: `feed(bytes)` -> response bytes;
    `closed` once the server would close it (`Connection: close`, HTTP/1.0, bad input)."""

    pod_name: str
    pod_ip: str
    on_answer: OnAnswer | None = None
    buffer: bytearray = field(default_factory=bytearray)
    closed: bool = False

    def feed(self, data: bytes) -> bytes:
        if self.closed:
            return b""
        self.buffer += data
        out = bytearray()
        while not self.closed:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEADER:
                    out += self._fail(413)
                break
            head = bytes(self.buffer[:end]).decode("latin-1")
            lines = head.split("\r\n")
            parts = lines[0].split(" ")
            if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
                out += self._fail(400)
                break
            method, target, version = parts
            headers = {}
            for line in lines[1:]:
                name, sep, value = line.partition(":")
                if not sep:
                    out += self._fail(400)
                    return bytes(out)
                headers[name.strip().lower()] = value.strip()
            try:
                length = int(headers.get("content-length", "0"))
            except ValueError:
                out += self._fail(400)
                break
            if len(self.buffer) < end + 4 + length:
                break  # the body is still coming
            del self.buffer[:end + 4 + length]
            connection = headers.get("connection", "").lower()
            close = connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive")
            status, response_headers, body = answer(self.pod_name, self.pod_ip, method, target)
            out += _response(status, response_headers, body, version, close)
            if self.on_answer is not None:
                self.on_answer(lines[0], status, len(body), headers)
            self.closed = close
        return bytes(out)

    def _fail(self, status: int) -> bytes:
        self.closed = True
        body = f"{REASONS[status]}\n".encode()
        return _response(status, {"Content-Type": "text/plain; charset=utf-8",
                                  "Content-Length": str(len(body))}, body, "HTTP/1.1", True)
