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
(logs.py), bounded there. Its stdin is closed (`Read` gets EOF) unless the container has
`stdin: true`, in which case a read waits for ever, as a process waiting on an open pipe.

SIGTERM (`terminate`): a container's PID 1 has no default signal handlers, so a program that
does not handle TERM ignores it and runs until the grace period ends (SIGKILL, 137): a bare
`sleep 3600`, `cat`, `trap '' TERM`. A shell script without such a trap ends at once with 143,
and a server (nginx and friends handle TERM or their image's stop signal) ends after
`TERM_EXIT_SECONDS` with 143.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from . import shell as sh
from .command import Behaviour, annotation_behaviour
from .logs import ContainerLog
from .timers import Step, Timers

Obj = dict[str, Any]

SLICE_ACTIONS = 1000        # actions run before the program yields the loop
TERM_EXIT_SECONDS = 0.5     # a server's shutdown after SIGTERM
TERM_EXIT_CODE = 143        # 128 + SIGTERM
SHELL_FLAGS = ("-c", "-ec", "-ce", "-xc", "-cx", "-lc", "-eu", "-euc")
_IGNORE_TERM = re.compile(r"""\btrap\s+(?:''|""|-)\s+(?:[^;\n]*\s)?(?:SIG)?TERM\b""")
_HANDLE_TERM = re.compile(r"""\btrap\s+(?:'([^']*)'|"([^"]*)")\s+(?:[^;\n]*\s)?(?:SIG)?TERM\b""")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


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


def _script_known(script: str) -> bool:
    """Every command of `script` is one the shell knows (so running it is faithful)."""
    try:
        parsed = sh.parse(script)
    except (sh.ShellSyntaxError, ValueError):
        return False
    for _connector, pipeline in parsed:
        for command in pipeline:
            words = ["".join(text for text, _mode in word) for word in command.words]
            while words and _ASSIGNMENT.match(words[0]):
                words.pop(0)
            if words and "$" not in words[0] and _program(words[0]) not in sh.COMMANDS:
                return False
    return True


def understood(argv: Sequence[str]) -> bool:
    """The simulated shell can run `argv` as a container's process."""
    if not argv:
        return False
    prog = _program(argv[0])
    if prog not in sh.COMMANDS:
        return False
    if prog in ("sh", "bash", "ash", "dash") and len(argv) >= 2:
        flags = [a for a in argv[1:] if a.startswith("-")]
        if not flags or flags[-1] not in SHELL_FLAGS:
            return False  # `sh script.sh`: a file of the image
        script_at = argv.index(flags[-1]) + 1
        return script_at < len(argv) and _script_known(argv[script_at])
    return True


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


def term_policy(argv: Sequence[str]) -> tuple[bool, str | None]:
    """(ignores TERM, the trap's handler script or None) of a process run from `argv`."""
    prog = _program(argv[0]) if argv else ""
    if prog not in ("sh", "bash", "ash", "dash"):
        return True, None  # an applet as PID 1: no handler, TERM is ignored
    script = argv[-1]
    if _IGNORE_TERM.search(script):
        return True, None
    handler = _HANDLE_TERM.search(script)
    if handler is not None:
        return False, handler.group(1) if handler.group(1) is not None else handler.group(2)
    return False, None


class Process:
    """One running instance of a container's command. `exited(code)` is called once, on the
    node's timers or synchronously from `start`/`terminate`."""

    __slots__ = ("argv", "shell", "program", "timers", "log", "exited", "stdin_open",
                 "step", "done", "pending", "clock")

    def __init__(self, argv: Sequence[str], sandbox: sh.Sandbox, timers: Timers,
                 log: ContainerLog, exited: Callable[[int], None], *,
                 stdin_open: bool = False, clock: Callable[[], float] = time.time) -> None:
        self.argv = list(argv)
        self.shell = sh.Shell(sandbox)
        self.program: sh.Program | None = None
        self.timers = timers
        self.log = log
        self.exited = exited
        self.stdin_open = stdin_open
        self.step: Step | None = None
        self.done = False
        self.pending: Any = None  # the action not yet performed when a slice ended
        self.clock = clock

    @property
    def sandbox(self) -> sh.Sandbox:
        return self.shell.sandbox

    def start(self) -> None:
        self.program = self.shell.exec(self.argv)
        self._run(first=True)

    def stop(self) -> None:
        """The container is gone (killed, deleted): nothing more runs."""
        self.timers.cancel(self.step)
        self.step = None
        self.done = True
        if self.program is not None:
            self.program.close()

    def terminate(self) -> bool:
        """SIGTERM. True when the process ends (now or after a server's shutdown); False when
        it ignores TERM and only the grace period's SIGKILL will end it."""
        if self.done:
            return True
        ignores, handler = term_policy(self.argv)
        if ignores:
            return False
        self.timers.cancel(self.step)
        self.step = None
        if self.program is not None:
            self.program.close()
        code = TERM_EXIT_CODE
        if handler:
            code = self._run_handler(handler)
        self._finish(code)
        return True

    def run_to_end(self) -> None:
        """Run at once to the end (an exec probe): sleeps do not wait, stdin is closed, at
        most SLICE_ACTIONS actions (a program still running then counts as failed, 1)."""
        self.program = self.shell.exec(self.argv)
        try:
            action = next(self.program)
            for _ in range(SLICE_ACTIONS):
                if isinstance(action, sh.Write):
                    self.log.write(self.clock(), action.fd, action.data)
                action = self.program.send(None)
            self.program.close()
            self._finish(1)
        except StopIteration as stop:
            self._finish(int(stop.value or 0) % 256)

    def _run_handler(self, handler: str) -> int:
        """A `trap '...' TERM` handler, run to its end at once (its sleeps do not wait)."""
        program = self.shell.script(handler)
        steps = 0
        try:
            action = next(program)
            while steps < SLICE_ACTIONS:
                steps += 1
                if isinstance(action, sh.Write):
                    self.log.write(self.clock(), action.fd, action.data)
                action = program.send(None)
            program.close()
        except StopIteration as stop:
            return int(stop.value or 0)
        return TERM_EXIT_CODE

    # -- the driver ------------------------------------------------------------------------
    def _wake(self) -> None:
        self.step = None
        self._run(first=False)

    def _run(self, *, first: bool) -> None:
        program = self.program
        if program is None or self.done:
            return
        try:
            if first:
                action = next(program)
            elif self.pending is not None:
                action, self.pending = self.pending, None
            else:
                action = program.send(None)
            for _ in range(SLICE_ACTIONS):
                if isinstance(action, sh.Write):
                    self.log.write(self.clock(), action.fd, action.data)
                elif isinstance(action, sh.Sleep):
                    if action.seconds == float("inf"):
                        return  # sleeps for ever: only a signal ends it
                    self.step = self.timers.later(action.seconds, self._wake)
                    return
                elif isinstance(action, sh.Read):
                    if self.stdin_open:
                        return  # waits on stdin for ever
                    action = program.send(None)
                    continue
                action = program.send(None)
            self.pending = action
            self.step = self.timers.later(0.0, self._wake)  # the next slice
        except StopIteration as stop:
            self._finish(int(stop.value or 0) % 256)
        except Exception as exc:  # noqa: BLE001 - a shell bug must not break the node
            self.log.write(self.clock(), 2, f"{exc}\n".encode())
            self._finish(1)

    def _finish(self, code: int) -> None:
        if self.done:
            return
        self.done = True
        self.exited(code)
