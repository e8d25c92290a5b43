"""The WebSocket channel/reader protocols (httpstream/wsstream.py) and the remotecommand
options and error-stream formats (kubelet/remotecommand.py): pure, table-driven, as upstream's
wsstream conn_test.go and remotecommand httpstream tests pin them."""

from __future__ import annotations

import pytest

from minikube_py.httpstream import spdy, upgrade, wsstream
from minikube_py.kubelet.remotecommand import Options, status_payload

V4, V4B64, V5, V1 = (wsstream.REMOTECOMMAND[n] for n in (
    "v4.channel.k8s.io", "v4.base64.channel.k8s.io", "v5.channel.k8s.io", "channel.k8s.io"))


@pytest.mark.parametrize("protocol, message, expected", [
    (V4, b"\x00abc", (0, b"abc")),
    (V4, "\x00abc", (0, b"abc")),                 # TEXT frame on a binary protocol (python client)
    (V4, "\x00h\u00e9", (0, "hé".encode())),      # its UTF-8 bytes, as Go's []byte receive
    (V4, b"", None),                              # empty: skipped
    (V4, b"\xff\x00", (255, b"\x00")),            # no close signal before v5: channel 255 data
    (V5, b"\xff\x00", (wsstream.CLOSE, b"\x00")),  # v5: stdin closed
    (V5, b"\xff\x00\x01", None),                  # a close signal takes exactly one channel
    (V4B64, "0YWJj", (0, b"abc")),
    (V4B64, b"0YWJj", (0, b"abc")),               # BINARY frame on a base64 protocol
    (V4B64, "0not base64!", None),                # does not decode: dropped, as upstream
    (V1, b"\x04{}", (4, b"{}")),
])
def test_decode(protocol: wsstream.ChannelProtocol, message, expected) -> None:
    assert protocol.decode(message) == expected


def test_encode() -> None:
    assert V5.encode(1, b"hi") == b"\x01hi"
    assert V4B64.encode(3, b"hi") == "3aGk="
    assert wsstream.REMOTECOMMAND[""].encode(2, b"") == b"\x02"


@pytest.mark.parametrize("offer, expected", [
    ("", ""),  # no protocol: the binary default
    ("v4.channel.k8s.io, v5.channel.k8s.io", "v4.channel.k8s.io"),  # the client's order
    ("v9.channel.k8s.io,base64.channel.k8s.io", "base64.channel.k8s.io"),
    ("v3.channel.k8s.io", None),  # SPDY-only versions are not WebSocket protocols
])
def test_choose_follows_the_clients_order(offer: str, expected: str | None) -> None:
    assert wsstream.choose(offer, wsstream.REMOTECOMMAND) == expected


def test_reader_messages_are_at_most_2048_bytes() -> None:
    chunk = bytes(range(256)) * 20
    binary = list(wsstream.reader_messages(chunk, True))
    assert [len(m) for m in binary] == [2048, 2048, 1024] and b"".join(binary) == chunk
    assert list(wsstream.reader_messages(b"hi", False)) == ["aGk="]


@pytest.mark.parametrize("query, options, problem", [
    ({"stdout": "true"}, Options(False, True, False, False), None),
    ({"stdin": "1", "stderr": "True"}, Options(True, False, True, False), None),
    ({"stdout": "1", "stderr": "1", "tty": "1"}, Options(False, True, False, True), None),
    ({"stdout": "false", "stderr": "0"}, Options(False, False, False, False),
     "you must specify at least 1 of stdin, stdout, stderr"),
])
def test_options(query: dict, options: Options, problem: str | None) -> None:
    assert Options.from_query(query) == options and options.problem() == problem


def test_status_payloads_by_version() -> None:
    assert status_payload(4, 0, ["true"]) == b'{"metadata":{},"status":"Success"}'
    assert status_payload(3, 0, ["true"]) is None
    text = (b"command terminated with non-zero exit code: error executing command [sh -c exit 3]"
            b", exit code 3")
    assert status_payload(2, 3, ["sh", "-c", "exit 3"]) == text
    assert status_payload(5, 3, ["sh", "-c", "exit 3"]) == (
        b'{"metadata":{},"status":"Failure","message":"' + text + b'","reason":"NonZeroExitCode",'
        b'"details":{"causes":[{"reason":"ExitCode","message":"3"}]}}')


def test_spdy_negotiation_is_the_clients_order() -> None:
    offered = upgrade.client_protocols(["v4.channel.k8s.io", "v3.channel.k8s.io, v2.channel.k8s.io"])
    assert offered == ["v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io"]
    assert upgrade.negotiate(offered, {"v2.channel.k8s.io", "v3.channel.k8s.io"}) == \
        "v3.channel.k8s.io"
    assert upgrade.negotiate(["portforward.k8s.io"], {"v4.channel.k8s.io"}) is None


def test_spdy_session_events_and_ping() -> None:
    client = spdy.HeaderCodec()
    block = client.encode({"streamtype": "stdin"})
    syn = spdy.control(spdy.SYN_STREAM, 0, (1).to_bytes(4, "big") + bytes(6) + block)
    session = spdy.Session()
    out, events = session.receive(syn + spdy.data(1, b"x", fin=True) + spdy.ping(b"\0\0\0\x01")
                                  + spdy.rst_stream(1) + spdy.goaway(1))
    assert out == spdy.ping(b"\0\0\0\x01")
    assert events == [spdy.SynStream(1, {"streamtype": "stdin"}, False),
                      spdy.DataFrame(1, spdy.FLAG_FIN, b"x"), spdy.Reset(1), spdy.GoAway(1)]
