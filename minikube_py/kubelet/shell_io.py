"""The simulated shell's process protocol and its plumbing: pipes, redirections, capture.

Kubernetes piece: none — this stands in for file descriptors and the kernel's pipes between
the processes of a container. A program is a generator that yields what it needs done and
returns its exit status:

- `Write(fd, data)`: bytes to fd 1 (stdout) or 2 (stderr);
- `Sleep(seconds)`: time must pass (`inf`: until something else ends the program); the
  driver sends back None;
- `Read()`: one line of stdin, with its newline (what `read`, `head -n`, `grep`, `sed` and
  the shell's prompt loop need); `Read(size)`: what one read(2) of at most `size` bytes
  returns — whatever has arrived, at least one byte, waiting only when nothing has (what
  `cat`, `tee` and every applet that takes stdin whole use, so `cat` echoes a keystroke
  without waiting for a newline, as a real one does). The driver sends back a `str`, or
  None at EOF. Bytes that are not UTF-8 travel as lone surrogates (`decode_stdin`), so a
  binary stream (tar over `kubectl cp`) survives the trip: `stdin_bytes` turns them back.
  `StdinBuffer` is the one answer to both kinds, shared by every driver and by pipes.

Time passes only through Sleep, so the kubelet can drive a program with timers and tests
with `run_sync`. Everything here is pure generator plumbing.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Sequence
from typing import NamedTuple, Union

from .shell_fs import FsError, Sandbox


class Write(NamedTuple):
    fd: int  # 1 stdout, 2 stderr
    data: bytes


class Sleep(NamedTuple):
    seconds: float


class Read(NamedTuple):
    """Ask for stdin: `size` None — one line with its newline; an int — what read(2) of at
    most `size` bytes returns (whatever has arrived, at least one byte). None at EOF."""

    size: int | None = None


Action = Union[Write, Sleep, Read]
Program = Generator[Action, "str | None", int]
#: a command substitution or a pipe stage keeps at most this much of one writer's output
MAX_CAPTURE = 16 * 1024 * 1024
#: the buffer a raw stdin reader hands read(2) (busybox's bb_copyfd uses a few KiB; a larger
#: one only means fewer round trips here)
CHUNK = 64 * 1024


# -- control flow across generator frames ----------------------------------------------------
class Exit(Exception):
    """`exit N` (or a fatal error): ends the shell — or only the subshell it runs in."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class Return(Exit):
    """`return N` from a function or a `.` script."""


class Break(Exception):
    def __init__(self, levels: int) -> None:
        super().__init__(levels)
        self.levels = levels


class Continue(Break):
    pass


def decode_stdin(data: bytes) -> str:
    """How a driver turns stdin bytes into the `str` it answers a Read with (lossless)."""
    return data.decode("utf-8", "surrogateescape")


def stdin_bytes(text: str) -> bytes:
    """The inverse of `decode_stdin`: what a program reading binary data gets back."""
    return text.encode("utf-8", "surrogateescape")


def text(data: str) -> bytes:
    return data.encode("utf-8", "surrogateescape")


def lines_of(data: bytes) -> list[str]:
    return decode_stdin(data).splitlines(keepends=True)


def done(status: int = 0) -> Program:
    """A program that does nothing and ends with `status`."""
    return status
    yield  # pragma: no cover - makes this a generator


def say(fd: int, message: str, status: int) -> Program:
    """A program that writes one message and ends with `status`."""
    yield Write(fd, text(message))
    return status


def read_all() -> Generator[Action, str | None, bytes]:
    """Everything left on stdin, as bytes (read(2) until EOF)."""
    chunks: list[bytes] = []
    while (chunk := (yield Read(CHUNK))) is not None:
        chunks.append(stdin_bytes(chunk))
    return b"".join(chunks)


def copy_stdin(*sinks: Callable[[bytes], None]) -> Program:
    """Copy stdin to stdout read by read — `cat`'s loop (busybox bb_copyfd): each chunk is
    written as soon as it has arrived, and handed to every `sink` too (`tee`'s files)."""
    while (chunk := (yield Read(CHUNK))) is not None:
        data = stdin_bytes(chunk)
        for sink in sinks:
            sink(data)
        yield Write(1, data)
    return 0


# -- stdin as the kernel buffers it ---------------------------------------------------------
class StdinBuffer:
    """Bytes written to a program's stdin and not read yet: what a pipe (or, `canonical`, a
    tty in canonical mode, where one read(2) returns at most one line) holds. `take(read)`
    answers a Read the way the kernel answers the system call: (True, reply) when it can be
    answered now — a line, a chunk, or None at EOF — or (False, None) when the reader must
    wait for more. Pure: every driver (the kubelet's exec streams, `run_sync`, a pipe
    between two programs) feeds it and asks it, so all of them split stdin the same way."""

    def __init__(self, *, canonical: bool = False, limit: int | None = None) -> None:
        self.data = bytearray()
        self.ended = False
        self.canonical = canonical
        self.limit = limit

    def feed(self, data: bytes) -> None:
        """Bytes arrived (beyond `limit` unread bytes they are dropped: a full pipe)."""
        if self.ended:
            return
        if self.limit is not None:
            data = data[:max(0, self.limit - len(self.data))]
        self.data += data

    def end(self) -> None:
        """The writer closed its end: after the buffered bytes, reads get EOF."""
        self.ended = True

    def take(self, request: Read) -> tuple[bool, str | None]:
        data = self.data
        if request.size is None:
            newline = data.find(b"\n")
            if newline < 0 and not self.ended:
                return False, None
            size = newline + 1 if newline >= 0 else len(data)
        else:
            if not data:
                return self.ended, None
            size = max(1, request.size)
            if self.canonical and (newline := data.find(b"\n", 0, size)) >= 0:
                size = newline + 1
        if not data:
            return True, None
        chunk = bytes(data[:size])
        del data[:size]
        return True, decode_stdin(chunk)

    def take_from(self, request: Read, arriving: Iterator[bytes],
                  waiting: Callable[[], None] | None = None) -> str | None:
        """Answer `request`, feeding the next of `arriving` (EOF when there are no more)
        each time it would have to wait — a synchronous driver's stdin; `waiting` is told
        before each chunk is fed."""
        while not (answer := self.take(request))[0]:
            if waiting is not None:
                waiting()
            data = next(arriving, None)
            if data is None:
                self.end()
            else:
                self.feed(data)
        return answer[1]


# -- fd tables ----------------------------------------------------------------------------
class Out(NamedTuple):
    """An output fd goes to the outer fd `fd`."""
    fd: int


class ToFile(NamedTuple):
    path: str


class Null(NamedTuple):
    """/dev/null, or a closed fd."""


class FromLines(NamedTuple):
    """An input fd fed from a fixed text (a file, a here-doc, a pipe's end)."""
    lines: Iterator[str]


Target = Union[Out, ToFile, Null, FromLines, None]
#: fd -> where it goes; None for fd 0 means "the outer stdin"
FdTable = dict[int, Target]


def with_fds(program: Program, table: FdTable, box: Sandbox,
             on_error: Callable[[str], bytes]) -> Program:
    """Run `program` with its fds rerouted by `table` (what `cmd >f 2>&1 <in` sets up).
    A write a file cannot take (no space, a directory) ends the program with status 1
    and the error, as a real write(2) failure would kill a well-behaved program."""
    try:
        action = next(program)
        while True:
            reply = None
            if isinstance(action, Write):
                target = table.get(action.fd, Out(action.fd))
                if isinstance(target, Out):
                    yield Write(target.fd, action.data)
                elif isinstance(target, ToFile):
                    try:
                        box.write_file(target.path, action.data, append=True)
                    except FsError as exc:
                        program.close()
                        yield Write(2, on_error(str(exc)))
                        return 1
            elif isinstance(action, Read):
                source = table.get(0)
                if isinstance(source, FromLines):
                    reply = next(source.lines, None)
                elif isinstance(source, (Null, ToFile)):
                    reply = None
                else:
                    reply = yield action
            else:
                reply = yield action
            action = program.send(reply)
    except StopIteration as stop:
        return stop.value


def capture(program: Program, sink: list[bytes], *, limit: int = MAX_CAPTURE) -> Program:
    """Run `program` keeping its stdout in `sink` (a command substitution); past `limit`
    bytes the rest is dropped, as a full pipe nobody reads would stop the writer."""
    size = 0
    try:
        action = next(program)
        while True:
            reply = None
            if isinstance(action, Write) and action.fd == 1:
                if size + len(action.data) > limit:
                    program.close()
                    return 141  # SIGPIPE
                size += len(action.data)
                sink.append(action.data)
            else:
                reply = yield action
            action = program.send(reply)
    except StopIteration as stop:
        return stop.value


class _Source:
    """The reading end of a pipe: runs the writer only until the reader's Read can be
    answered (a line, or any bytes for a chunk read)."""

    def __init__(self, writer: Program) -> None:
        self.writer = writer
        self.started = False
        self.buffer = StdinBuffer(limit=MAX_CAPTURE)
        self.reply: str | None = None

    def pull(self, request: Read) -> Generator[Action, str | None, str | None]:
        while not (answer := self.buffer.take(request))[0]:
            try:
                action = self.writer.send(self.reply) if self.started else next(self.writer)
            except StopIteration:
                self.buffer.end()
                continue
            self.started, self.reply = True, None
            if isinstance(action, Write) and action.fd == 1:
                self.buffer.feed(action.data)
            else:
                self.reply = yield action  # its stderr, sleeps and stdin reads go outside
        return answer[1]

    def close(self) -> None:
        self.writer.close()


def pipe(writer: Program, reader: Program) -> Program:
    """`writer | reader`, lazily: the writer runs only as far as the reader reads, so
    `yes | head -n 3` ends; when the reader ends the writer is closed (its SIGPIPE)."""
    source = _Source(writer)
    try:
        action = next(reader)
        while True:
            if isinstance(action, Read):
                reply = yield from source.pull(action)
            else:
                reply = yield action
            action = reader.send(reply)
    except StopIteration as stop:
        return stop.value
    finally:
        source.close()


class Governor:
    """Bounds the work a program does between two Sleeps, so a script that never sleeps
    (`while :; do :; done`, `yes`) cannot hold the event loop: every `every` steps or
    `max_bytes` of output without a Sleep, it inserts `Sleep(pause)` — a little simulated
    time passes and the driver gets its loop back."""

    def __init__(self, every: int = 1000, max_bytes: int = 1 << 20, pause: float = 0.001) -> None:
        self.every = every
        self.max_bytes = max_bytes
        self.pause = pause
        self.steps = 0
        self.bytes = 0

    def tick(self, weight: int = 1) -> Sleep | None:
        """Count one step; the Sleep to yield when the budget is spent."""
        self.steps += weight
        if self.steps >= self.every:
            self.steps = self.bytes = 0
            return Sleep(self.pause)
        return None

    def govern(self, program: Program) -> Program:
        """`program` with a pause inserted after too much output without a Sleep."""
        try:
            action = next(program)
            while True:
                if isinstance(action, Sleep):
                    self.steps = self.bytes = 0
                elif isinstance(action, Write):
                    self.bytes += len(action.data)
                    if self.bytes >= self.max_bytes or self.tick() is not None:
                        self.steps = self.bytes = 0
                        yield Sleep(self.pause)
                action = program.send((yield action))
        except StopIteration as stop:
            return stop.value


# -- a synchronous driver (tests, and whoever needs no real time) ----------------------------
class Result(NamedTuple):
    stdout: str
    stderr: str
    code: int
    slept: float


def run_sync(program: Program, stdin: str | bytes | Sequence[bytes] = "") -> Result:
    """Drive `program` to its end, sleeps only added up. Stdin is `stdin` — a text or bytes
    that is all there at once, or a sequence of byte chunks that arrive one by one (a read
    that finds nothing left gets the next), then EOF."""
    out: list[bytes] = []
    err: list[bytes] = []
    if isinstance(stdin, str):
        stdin = [stdin.encode("utf-8", "surrogateescape")]
    elif isinstance(stdin, (bytes, bytearray)):
        stdin = [bytes(stdin)]
    arriving = iter(stdin)
    buffer = StdinBuffer()
    slept = 0.0
    try:
        action = next(program)
        while True:
            reply = None
            if isinstance(action, Write):
                (out if action.fd == 1 else err).append(action.data)
            elif isinstance(action, Sleep):
                slept += action.seconds
            else:
                reply = buffer.take_from(action, arriving)
            action = program.send(reply)
    except StopIteration as stop:
        code = stop.value
    return Result(b"".join(out).decode(errors="replace"), b"".join(err).decode(errors="replace"),
                  code, slept)
