"""A container's main process, run by the simulated shell: the contract the kubelet drives.

Kubernetes piece: the process a container runtime starts for a container (`command` +
`args`, pkg/kubelet/kuberuntime startContainer) and the signals it gets when the kubelet
stops it (killContainer: SIGTERM, then SIGKILL after the grace period).

The contract:

    process = ContainerProcess(argv, sandbox, external=None, on_signal=server_signal)
    process.error          # None, or the runtime's start error (exit 128, reason StartError)
    process.program        # drive it: Write(fd, data) is log output (1 stdout, 2 stderr),
                           # Sleep(s) is time passing (answer None, or the float seconds that
                           # really passed if you cut it short), Read() wants a stdin line,
                           # Read(size) what read(2) would return (None: EOF);
                           # StopIteration.value is the exit status
    process.signal("TERM") # -> Delivery(exited, status, wake)

`signal` says what a signal does *now*: `exited=True` — the process is gone with `status`
(close the program, stop driving it); otherwise it keeps running, and if `wake` is True the
driver should end the current Sleep at once (answer it with the seconds that passed) so a
trap runs. A process that ignores TERM waits out the grace period; the kubelet then sends
KILL (`signal("KILL")` -> exited, 137). Who ignores TERM is Linux's rule for PID 1 (a
process without a handler ignores it, pid_namespaces(7)):

- a busybox applet as PID 1 (`sleep 3600`, `tail -f`, `yes`): ignores it;
- a shell script as PID 1 with no `trap ... TERM` (`sh -c 'while true; do ...; done'`):
  ignores it, as dash and busybox ash do; with `trap 'exit 0' TERM` the trap runs after the
  current foreground command (`wake` is True while it is in `wait`, so `sleep 1000 & wait`
  ends at once); `trap '' TERM` ignores it;
- the last command of `sh -c` runs in place of the shell when no trap is set (dash and
  busybox's exec optimisation), and `exec prog` replaces it: then prog's rule applies;
- anything else (`nginx`, an app binary: the `external` hook's programs) is assumed to
  handle TERM like a server: `on_signal(argv, name)` gives its exit status (default 0 for
  TERM/INT/QUIT), or None for "keeps running".

Time passes only through Sleep; a script that never sleeps gets `Sleep(0.001)` every 1000
commands or 1 MiB of output (shell_io.Governor), so driving it never holds the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .shell_applets import APPLETS
from .shell_applets_sys import start_shell
from .shell_builtins import SIGNALS
from .shell_fs import Sandbox
from .shell_interp import SHELLS, External, Shell
from .shell_io import Exit, Program, Write, text

OnSignal = Callable[[list[str], str], "int | None"]


class Delivery(NamedTuple):
    exited: bool
    status: int | None = None
    wake: bool = False


def server_signal(argv: list[str], name: str) -> int | None:
    """A server process (nginx ...): TERM, INT and QUIT end it promptly with status 0."""
    return 0 if name in ("TERM", "INT", "QUIT") else None


def runtime_start_error(argv: list[str]) -> str:
    return (f'failed to create containerd task: failed to create shim task: OCI runtime create '
            f'failed: runc create failed: unable to start container process: exec: '
            f'"{argv[0]}": executable file not found in $PATH: unknown')


class ContainerProcess:
    """PID 1 of a simulated container (see the module docstring for the contract)."""

    def __init__(self, argv: list[str], sandbox: Sandbox, *, external: External | None = None,
                 on_signal: OnSignal = server_signal,
                 now: Callable[[], float] | None = None) -> None:
        if not argv:
            raise ValueError("a container process needs a command")
        self.argv = list(argv)
        sandbox.command = self.argv
        self.root = Shell(sandbox, external=external)
        if now is not None:
            self.root.session.now = now
            self.root.session.boot = now()
        self.on_signal = on_signal
        self.main: Shell | None = None
        self.error: str | None = None
        self.program = self._start()

    def _start(self) -> Program:
        root = self.root
        if self.argv[0].rsplit("/", 1)[-1] in SHELLS:
            self.main, program = start_shell(root, self.argv, exec_tail=True)
        else:
            found = root.lookup_command(self.argv, direct=True)
            if found is None:
                self.error = runtime_start_error(self.argv)
                return _failed(self.error)
            program = found
        return root.scheduled(root.session.governor.govern(_catch_exit(program)))

    def _pid1(self) -> list[str] | None:
        """The argv PID 1 runs now when it is not a shell interpreting a script."""
        if self.main is None:
            return self.argv
        return self.main.exec_argv

    def signal(self, name: str = "TERM") -> Delivery:
        if name == "KILL":
            self.program.close()
            return Delivery(True, 128 + SIGNALS["KILL"])
        argv = self._pid1()
        if argv is not None:
            base = argv[0].rsplit("/", 1)[-1]
            if base in APPLETS or base in SHELLS:
                return Delivery(False)  # no handler: PID 1 ignores it
            status = self.on_signal(argv, name)
            if status is None:
                return Delivery(False)
            self.program.close()
            return Delivery(True, status)
        shell = self.main
        assert shell is not None
        action = shell.traps.get(name)
        if not action:
            return Delivery(False)  # no trap (PID 1 ignores it) or `trap '' TERM`
        shell.pending.append(name)
        return Delivery(False, None, wake=shell.session.waiting is not None)


def _catch_exit(program: Program) -> Program:
    try:
        return (yield from program)
    except Exit as stop:
        return stop.code


def _failed(message: str) -> Program:
    yield Write(2, text(message + "\n"))
    return 128
