"""A container's main process, simulated: its command run by the simulated shell, on timers.

Kubernetes piece: none in the kubelet — this stands in for the process the container runtime
(containerd + runc) starts for a container and the CRI log it keeps. Upstream the kubelet only
asks the runtime to start and stop containers; here the kubelet runs the container's `command` +
`args` through the simulated shell (shell.py) over the container's simulated picture
(sandbox.py), so `busybox -- echo hi` logs `hi` and exits 0, `sh -c 'exit 3'` exits 3, and
`cat /etc/config/key` prints the ConfigMap's value.

Which commands run (`plan`): a program the shell knows (`echo`, `cat`, `env`, `sleep`, ...), and
`sh -c SCRIPT` whose every command the shell knows. Anything else — no command (the image's own
entrypoint), `nginx`, `python app.py`, a script that starts one — is a server: it runs until it
is stopped and logs what logs.py generates for servers. The pod annotations
`minikube-py.io/exit-after` / `exit-code` (command.py) still win for app containers.

Time passes only through the program's `Sleep` actions, each one timer on the node's Timers,
so thousands of containers cost no task each. A program that runs many actions without
sleeping is cut into slices of `SLICE_ACTIONS` actions, the next slice a zero-delay timer, so
one busy container cannot hold the event loop. What it writes goes to its ContainerLog
(logs.py), bounded there. Its stdin is closed (a `Read`, of a line or of a chunk, gets EOF)
unless the container has `stdin: true`, in which case a read waits for ever, as a process
waiting on an open pipe nobody writes to.

SIGTERM (`terminate`) follows shell.py's ContainerProcess contract (Linux's rule for PID 1: a
process without a handler ignores TERM): a bare `sleep 3600`, a script without
`trap ... TERM` or with `trap '' TERM` ignores it and runs until the grace period ends
(SIGKILL, 137); a script's trap runs (a `sleep` it waits in is cut short) and its exit is the
container's; an unknown program a script starts (`exec nginx`) and a server container
(nothing the shell runs) end on TERM, a server after `TERM_EXIT_SECONDS`, with 143.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any, NamedTuple

from . import shell_io
from .command import Behaviour, annotation_behaviour
from .logs import ContainerLog
from .shell_fs import Sandbox
from .timers import Step, Timers

Obj = dict[str, Any]

SLICE_ACTIONS = 1000        # actions run before the program yields the loop
TERM_EXIT_SECONDS = 0.5     # a server's shutdown after SIGTERM
TERM_EXIT_CODE = 143        # 128 + SIGTERM
KILL_EXIT_CODE = 137         # 128 + SIGKILL


@functools.cache
def _shell() -> ModuleType:
    """The simulated shell and its applets, imported when the first container runs (a
    cluster with no pods yet — a test session's start — does not load them)."""
    from . import shell

    return shell


class Plan(NamedTuple):
    """What a container's process is: `argv` run by the shell, or a fixed `behaviour`
    (exit after some seconds with a code; `seconds` None: a server that runs for ever)."""

    behaviour: Behaviour
    argv: tuple[str, ...] | None = None


SERVER = Plan(Behaviour(None, 0))


def argv_of(container: Mapping[str, Any]) -> list[str]:
    return [str(a) for a in (container.get("command") or [])] + \
        [str(a) for a in (container.get("args") or [])]


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def understood(argv: Sequence[str]) -> bool:
    """The simulated shell can run `argv` as a container's process: a program it knows, or a
    shell (a script of `-c`, or commands from stdin). A shell script may start programs the
    shell does not know: they run as servers (`_external`)."""
    if not argv:
        return False
    prog = _program(argv[0])
    sh = _shell()
    if prog not in sh.COMMANDS and prog not in sh.SHELLS:
        return False
    if prog in sh.SHELLS:
        operands = [a for a in argv[1:] if not a.startswith("-")]
        has_c = any(a.startswith("-") and "c" in a for a in argv[1:])
        return has_c == bool(operands)  # `sh script.sh`: a file of the image
    return True


def _external(shell: Any, argv: list[str]) -> shell_io.Program:
    """A program of the image the shell does not know (`exec nginx`): a server, running
    until a signal ends it."""
    yield shell_io.Sleep(float("inf"))
    return 0


def plan(container: Mapping[str, Any], annotations: Mapping[str, str] | None = None, *,
         init: bool = False) -> Plan:
    """What the process of `container` is (see the module docstring). An init container
    whose command is not understood completes at once with 0, so pods with one start."""
    if not init:
        fixed = annotation_behaviour(annotations or {})
        if fixed is not None:
            return Plan(fixed)
    argv = argv_of(container)
    if understood(argv):
        return Plan(Behaviour(None, 0), tuple(argv))
    return Plan(Behaviour(0.0, 0)) if init else SERVER


class Process:
    """One running instance of a container's command (shell.ContainerProcess) driven on the
    node's timers. `exited(code)` is called once, on the timers or from `terminate`."""

    __slots__ = ("process", "timers", "log", "exited", "stdin_open", "step", "done",
                 "pending", "clock", "slept_at", "sleeping")

    def __init__(self, argv: Sequence[str], sandbox: Sandbox, timers: Timers,
                 log: ContainerLog, exited: Callable[[int], None], *,
                 stdin_open: bool = False, clock: Callable[[], float] = time.time) -> None:
        self.process = _shell().ContainerProcess(list(argv), sandbox, external=_external,
                                           on_signal=_server_signal)
        self.timers = timers
        self.log = log
        self.exited = exited
        self.stdin_open = stdin_open
        self.step: Step | None = None
        self.done = False
        self.pending: Any = None  # the action not yet performed when a slice ended
        self.clock = clock
        self.slept_at = 0.0       # loop time the current Sleep began
        self.sleeping = False

    @property
    def sandbox(self) -> Sandbox:
        return self.process.root.sandbox

    def start(self) -> None:
        self._run(first=True)

    def stop(self) -> None:
        """The container is gone (killed, deleted): nothing more runs."""
        self.timers.cancel(self.step)
        self.step = None
        if not self.done:
            self.done = True
            self.process.signal("KILL")

    def terminate(self) -> bool:
        """SIGTERM. True when the process ended at once; False when it runs on (it ignores
        TERM, or its trap runs now and its exit, if any, comes through `exited`)."""
        if self.done:
            return True
        delivery = self.process.signal("TERM")
        if delivery.exited:
            self.timers.cancel(self.step)
            self.step = None
            self._finish(TERM_EXIT_CODE if delivery.status is None else delivery.status)
            return True
        if delivery.wake and self.sleeping:
            self.timers.cancel(self.step)
            self.step = None
            self._wake()
        return self.done

    def run_to_end(self) -> None:
        """Run at once to the end (an exec probe): sleeps do not wait, stdin is closed, at
        most SLICE_ACTIONS actions (a program still running then counts as failed, 1)."""
        program = self.process.program
        try:
            action = next(program)
            for _ in range(SLICE_ACTIONS):
                if isinstance(action, shell_io.Write):
                    self.log.write(self.clock(), action.fd, action.data)
                action = program.send(None)
            program.close()
            self._finish(1)
        except StopIteration as stop:
            self._finish(int(stop.value or 0) % 256)

    # -- the driver ------------------------------------------------------------------------
    def _wake(self) -> None:
        self.step = None
        self._run(first=False)

    def _run(self, *, first: bool) -> None:
        program = self.process.program
        if self.done:
            return
        try:
            if first:
                action = next(program)
            elif self.pending is not None:
                action, self.pending = self.pending, None
            else:
                reply = None
                if self.sleeping:  # woken early by a signal: the seconds that passed
                    reply = asyncio.get_running_loop().time() - self.slept_at
                    self.sleeping = False
                action = program.send(reply)
            for _ in range(SLICE_ACTIONS):
                if isinstance(action, shell_io.Write):
                    self.log.write(self.clock(), action.fd, action.data)
                elif isinstance(action, shell_io.Sleep):
                    self.slept_at = asyncio.get_running_loop().time()
                    self.sleeping = True
                    if action.seconds == float("inf"):
                        return  # sleeps for ever: only a signal ends it
                    self.step = self.timers.later(action.seconds, self._slept)
                    return
                elif isinstance(action, shell_io.Read):
                    if self.stdin_open:
                        return  # waits on stdin for ever
                action = program.send(None)
            self.pending = action
            self.step = self.timers.later(0.0, self._wake)  # the next slice
        except StopIteration as stop:
            self._finish(int(stop.value or 0) % 256)
        except Exception as exc:  # noqa: BLE001 - a shell bug must not break the node
            self.log.write(self.clock(), 2, f"{exc}\n".encode())
            self._finish(1)

    def _slept(self) -> None:
        self.sleeping = False
        self._wake()

    def _finish(self, code: int) -> None:
        if self.done:
            return
        self.done = True
        self.exited(code)


def _server_signal(argv: list[str], name: str) -> int | None:
    """An unknown program a script runs (nginx ...) ends on TERM, INT, QUIT: 143."""
    return TERM_EXIT_CODE if name in ("TERM", "INT", "QUIT") else None
