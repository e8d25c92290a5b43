"""Stdin as the simulated shell's programs read it (kubelet/shell_io.py): `Read()` wants a
line, `Read(size)` what read(2) returns — whatever has arrived, at least a byte. Raw readers
(cat, tee, tr) answer each chunk as it arrives; line readers (read, head -n, grep, the
interactive shell) still wait for a newline. Table-driven over `StdinBuffer` and over
programs fed chunk by chunk, stdin kept open, as `kubectl exec -i pod -- cat` does."""

from __future__ import annotations

import asyncio

import pytest

from minikube_py.kubelet.shell import (
    PATH,
    Read,
    Sandbox,
    Shell,
    StdinBuffer,
    Write,
    run_sync,
)
from minikube_py.kubelet.shell_io import Program, Sleep
from minikube_py.kubelet.streaming import Stdin

LINE = Read()


def chunk(size: int = 64) -> Read:
    return Read(size)


@pytest.mark.parametrize(("canonical", "fed", "ended", "request_", "answer", "left"), [
    # a line waits for its newline, a chunk read takes whatever is there
    (False, [b"ab"], False, LINE, (False, None), b"ab"),
    (False, [b"ab"], False, chunk(), (True, "ab"), b""),
    (False, [b"ab"], False, chunk(1), (True, "a"), b"b"),
    (False, [b"a\nb\n"], False, LINE, (True, "a\n"), b"b\n"),
    (False, [b"a\nb\n"], False, chunk(), (True, "a\nb\n"), b""),
    (False, [b"a", b"b\n"], False, LINE, (True, "ab\n"), b""),
    # nothing there: a chunk read waits, at EOF it gets None
    (False, [], False, chunk(), (False, None), b""),
    (False, [], True, chunk(), (True, None), b""),
    (False, [], True, LINE, (True, None), b""),
    # EOF gives the unterminated tail to a line read
    (False, [b"tail"], True, LINE, (True, "tail"), b""),
    # a size below one still reads a byte (read(2) returns at least one)
    (False, [b"xy"], False, chunk(0), (True, "x"), b"y"),
    # a tty in canonical mode: one read(2) returns at most one line
    (True, [b"a\nb\n"], False, chunk(), (True, "a\n"), b"b\n"),
    (True, [b"ab"], False, chunk(), (True, "ab"), b""),
    # bytes that are not UTF-8 survive as surrogate escapes, even a character cut in two
    (False, [b"\xc3"], False, chunk(), (True, "\udcc3"), b""),
    (False, [b"\xff\x00\n"], False, LINE, (True, "\udcff\x00\n"), b""),
])
def test_stdin_buffer_answers_a_read(canonical: bool, fed: list[bytes], ended: bool,
                                     request_: Read, answer: tuple[bool, str | None],
                                     left: bytes) -> None:
    buffer = StdinBuffer(canonical=canonical)
    for data in fed:
        buffer.feed(data)
    if ended:
        buffer.end()
    assert buffer.take(request_) == answer
    assert bytes(buffer.data) == left


def test_stdin_buffer_limit_drops_what_a_full_pipe_cannot_take() -> None:
    buffer = StdinBuffer(limit=3)
    buffer.feed(b"abcdef")
    buffer.end()
    buffer.feed(b"late")
    assert buffer.take(chunk()) == (True, "abc")
    assert buffer.take(chunk()) == (True, None)


def interact(program: Program, chunks: list[bytes]) -> list[bytes]:
    """Feed `chunks` one at a time with stdin left open; -> what the program had written
    to stdout before any stdin, by the time it waited for more after each chunk, then
    what it wrote after EOF."""
    buffer = StdinBuffer()
    outputs: list[bytes] = []
    written = bytearray()
    pending = iter(chunks)

    def waiting() -> None:
        outputs.append(bytes(written))
        written.clear()

    try:
        action = next(program)
        while True:
            reply = None
            if isinstance(action, Write) and action.fd == 1:
                written += action.data
            elif isinstance(action, Read):
                reply = buffer.take_from(action, pending, waiting)
            elif not isinstance(action, (Write, Sleep)):
                raise AssertionError(action)
            action = program.send(reply)
    except StopIteration:
        pass
    outputs.append(bytes(written))
    return outputs


def box() -> Sandbox:
    return Sandbox("web", {"PATH": PATH, "HOSTNAME": "web"}, {"/etc/motd": b"motd\n"})


@pytest.mark.parametrize(("script", "chunks", "outputs"), [
    # raw readers (busybox's read(2)/write(2) loops): each chunk comes back as it arrives
    ("cat", [b"no newline", b" more"], [b"", b"no newline", b" more", b""]),
    ("cat -", [b"a", b"b\n"], [b"", b"a", b"b\n", b""]),
    ("cat /etc/motd - /etc/motd", [b"x"], [b"motd\n", b"x", b"motd\n"]),
    ("cat", [b"\xc3", b"\xa9\x00\xff"], [b"", b"\xc3", b"\xa9\x00\xff", b""]),
    ("tee /tmp/copy", [b"ab", b"c"], [b"", b"ab", b"c", b""]),
    ("tr a-z A-Z", [b"ab", b"c\n"], [b"", b"AB", b"C\n", b""]),
    ("tr -d b", [b"abc"], [b"", b"ac", b""]),
    ("tr -s a", [b"aa", b"ab"], [b"", b"a", b"b", b""]),
    ("cat | cat", [b"ab", b"c"], [b"", b"ab", b"c", b""]),
    ("cat | tr a-z A-Z", [b"ab"], [b"", b"AB", b""]),
    # line readers wait for the newline (or EOF)
    ("cat -n", [b"ab", b"c\n"], [b"", b"", b"     1\tabc\n", b""]),
    ("head -n 1", [b"ab", b"c\nd"], [b"", b"", b"abc\n"]),
    ("read X; echo $X", [b"ab", b"c\n"], [b"", b"", b"abc\n"]),
    ("cat | head -n 1", [b"ab", b"c\n"], [b"", b"", b"abc\n"]),
    ("sh", [b"echo h", b"i\n"], [b"", b"", b"hi\n", b""]),
    # readers whose output is stdio-buffered into a pipe, or that need all of it, answer
    # at EOF (busybox grep's puts(), base64's fread())
    ("grep x", [b"x", b"y\n", b"z"], [b"", b"", b"", b"", b"xy\n"]),
    ("base64", [b"ab"], [b"", b"", b"YWI=\n"]),
    ("wc -c", [b"ab", b"c"], [b"", b"", b"", b"3\n"]),
])
def test_readers_answer_as_stdin_arrives(script: str, chunks: list[bytes],
                                         outputs: list[bytes]) -> None:
    sandbox = box()
    assert interact(Shell(sandbox).exec(["sh", "-c", script]), chunks) == outputs
    if script.startswith("tee"):
        assert sandbox.files["/tmp/copy"] == b"abc"


@pytest.mark.parametrize(("script", "chunks", "stdout"), [
    # run_sync takes stdin in chunks too; lines are split on \n only, as read(2) sees them
    ("cat", [b"a", b"b"], "ab"),
    ("read A; read B; echo $B$A", [b"1\n2", b"\n"], "21\n"),
    ("read A; cat", [b"1\n23"], "23"),
    ("read X; echo \"$X\"", [b"a\rb\n"], "a\rb\n"),
])
def test_run_sync_with_chunked_stdin(script: str, chunks: list[bytes], stdout: str) -> None:
    assert run_sync(Shell(box()).exec(["sh", "-c", script]), chunks).stdout == stdout


def test_exec_stdin_answers_a_chunk_read_without_a_newline() -> None:
    """The kubelet's exec/attach stdin (streaming.Stdin): a chunk read is answered by the
    bytes that have arrived; a line read waits for the newline; EOF wakes both."""

    async def scenario() -> None:
        stdin = Stdin(True, False)
        waiting = asyncio.ensure_future(stdin.read(chunk()))
        await asyncio.sleep(0)
        assert not waiting.done()
        stdin.feed(b"no newline")
        assert await asyncio.wait_for(waiting, 1) == "no newline"
        line = asyncio.ensure_future(stdin.read(LINE))
        stdin.feed(b"ab")
        await asyncio.sleep(0.01)
        assert not line.done()
        stdin.feed(b"c\nrest")
        assert await asyncio.wait_for(line, 1) == "abc\n"
        stdin.end()
        assert await stdin.read(LINE) == "rest"
        assert await stdin.read(chunk()) is None
        assert await Stdin(False, False).read(chunk()) is None

    asyncio.run(scenario())


def test_exec_stdin_with_a_tty_hands_over_lines() -> None:
    """With `-t` the line discipline holds keystrokes until Enter (canonical mode)."""

    async def scenario() -> None:
        stdin = Stdin(True, True)
        assert stdin.feed(b"ab") == b"ab"
        read = asyncio.ensure_future(stdin.read(chunk()))
        await asyncio.sleep(0.01)
        assert not read.done()
        stdin.feed(b"\rcd\r")
        assert await asyncio.wait_for(read, 1) == "ab\n"
        assert await stdin.read(chunk()) == "cd\n"
        stdin.feed(b"\x04")
        assert await stdin.read(chunk()) is None

    asyncio.run(scenario())
