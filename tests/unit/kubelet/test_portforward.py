"""SPDY framing (httpstream/spdy.py), the port-forward session (kubelet/portforward.py) and the
simulated HTTP server behind it (kubelet/http_sim.py) — pure, bytes in and bytes out. The
client side here is written like spdystream's: its own zlib stream with the SPDY dictionary."""

from __future__ import annotations

import struct
import zlib

from minikube_py.httpstream import spdy
from minikube_py.kubelet import http_sim
from minikube_py.kubelet.portforward import PortForwardSession

#: a SYN_STREAM header block kubectl 1.32 sent (streamtype=error, port=80, requestid=0)
KUBECTL_BLOCK = (b"x\xf9\xe3\xc6\xa7\xc2\x02%:p:+)JM\xcc\x85\x16%\xac\xa9\xa0\x80\x86\x14\xcbE"
                 b"\xa0$\xccda\xc0\xc0\xc0\xc0Y\x04\x89\xc4LP\xe2f4\x00\x00\x00\x00\xff\xff")


class Client:
    """The kubectl side of a session."""

    def __init__(self) -> None:
        self.codec = spdy.HeaderCodec()
        self.reader = spdy.FrameReader()

    def syn(self, stream_id: int, **headers: str) -> bytes:
        block = self.codec.encode(headers)
        return spdy.control(spdy.SYN_STREAM, 0,
                            struct.pack(">IIBB", stream_id, 0, 0, 0) + block)

    def frames(self, data: bytes) -> list:
        return self.reader.feed(data)


def test_dictionary_is_spdy3s() -> None:
    assert len(spdy.DICTIONARY) == 1423
    assert zlib.adler32(spdy.DICTIONARY) == 0xE3C6A7C2


def test_decodes_a_header_block_kubectl_sent() -> None:
    assert spdy.HeaderCodec().decode(KUBECTL_BLOCK) == {
        "streamtype": "error", "port": "80", "requestid": "0"}


def test_frames_split_across_messages_are_reassembled() -> None:
    frame = spdy.data(3, b"hello", fin=True)
    reader = spdy.FrameReader()
    assert reader.feed(frame[:5]) == []
    assert reader.feed(frame[5:]) == [spdy.DataFrame(3, spdy.FLAG_FIN, b"hello")]


def session(pod_ports: dict[int, bool]) -> PortForwardSession:
    def connect(port: int):
        if not pod_ports.get(port):
            return f"dial tcp4 127.0.0.1:{port}: connect: connection refused"
        return http_sim.HTTPConnection("web", "10.244.0.5")

    return PortForwardSession(connect)


def test_a_forwarded_http_request_gets_the_simulated_answer() -> None:
    kubectl, server = Client(), session({80: True})
    out = server.receive(kubectl.syn(1, streamType="error", port="80", requestID="0"))
    out += server.receive(kubectl.syn(3, streamType="data", port="80", requestID="0"))
    replies = kubectl.frames(out)
    assert [(f.type, spdy.stream_of(f)) for f in replies] == [(spdy.SYN_REPLY, 1),
                                                              (spdy.SYN_REPLY, 3)]
    request = b"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
    frames = kubectl.frames(server.receive(spdy.data(3, request[:10]) + spdy.data(3, request[10:])))
    assert len(frames) == 1 and frames[0].stream_id == 3
    head, _, body = frames[0].data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK") and b"Content-Length: 32" in head
    assert body == b"pod web (10.244.0.5) GET /hello\n"
    # kubectl closes the local socket: FIN on data -> both streams closed by the server
    frames = kubectl.frames(server.receive(spdy.data(3, b"", fin=True)))
    assert [(f.stream_id, f.flags) for f in frames] == [(3, spdy.FLAG_FIN), (1, spdy.FLAG_FIN)]
    server.receive(spdy.rst_stream(1) + spdy.rst_stream(3))
    assert server.pairs == {} and server.streams == {}


def test_connection_close_ends_the_pair() -> None:
    kubectl, server = Client(), session({80: True})
    server.receive(kubectl.syn(1, streamtype="error", port="80", requestid="7"))
    server.receive(kubectl.syn(3, streamtype="data", port="80", requestid="7"))
    frames = kubectl.frames(server.receive(spdy.data(
        3, b"POST /x HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc")))
    assert b"POST /x" in frames[0].data and b"Connection: close" in frames[0].data
    assert [(f.stream_id, f.flags) for f in frames[1:]] == [(3, 1), (1, 1)]


def test_a_closed_port_is_reported_on_the_error_stream() -> None:
    kubectl, server = Client(), session({80: True})
    server.receive(kubectl.syn(1, streamtype="error", port="81", requestid="0"))
    frames = kubectl.frames(server.receive(kubectl.syn(3, streamtype="data", port="81",
                                                       requestid="0")))
    assert frames[0].type == spdy.SYN_REPLY
    assert frames[1] == spdy.DataFrame(1, 0, b"dial tcp4 127.0.0.1:81: connect: connection refused")
    assert [(f.stream_id, f.flags) for f in frames[2:]] == [(3, 1), (1, 1)]


def test_ping_is_echoed() -> None:
    frames = Client().frames(session({}).receive(spdy.ping(b"\x00\x00\x00\x05")))
    assert frames == [spdy.ControlFrame(spdy.PING, 0, b"\x00\x00\x00\x05")]


def test_http_connection_keep_alive_and_bad_requests() -> None:
    conn = http_sim.HTTPConnection("web", "10.244.0.5")
    out = conn.feed(b"GET /a HTTP/1.1\r\n\r\nHEAD /b HTTP/1.1\r\n\r\n")
    assert out.count(b"HTTP/1.1 200 OK") == 2 and out.endswith(b"\r\n\r\n")  # HEAD: no body
    assert not conn.closed
    assert conn.feed(b"GET /c HTTP/1.0\r\n\r\n").endswith(b"GET /c\n") and conn.closed
    bad = http_sim.HTTPConnection("web", "10.244.0.5")
    assert bad.feed(b"hello\r\n\r\n").startswith(b"HTTP/1.1 400 Bad Request") and bad.closed


def test_serves_only_declared_tcp_ports_of_running_containers() -> None:
    pod = {"spec": {"containers": [
        {"name": "web", "ports": [{"containerPort": 80, "name": "http"},
                                  {"containerPort": 53, "protocol": "UDP"}]},
        {"name": "side", "ports": [{"containerPort": 9000}]}]}}
    assert http_sim.serves(pod, 80, {"web", "side"}) == "web"
    assert http_sim.serves(pod, 53, {"web"}) is None
    assert http_sim.serves(pod, 9000, {"web"}) is None  # side is not running
    assert http_sim.named_port(pod, "http") == 80
