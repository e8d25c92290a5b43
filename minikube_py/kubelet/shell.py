"""The simulated shell of a fake container: what `kubectl exec`, `kubectl attach` and a
container's own command run.

Kubernetes piece: none in the kubelet itself — upstream, `kubectl exec web -- env` reaches the
kubelet (pkg/kubelet/server.go getExec), which asks the container runtime to run a process in
the container's namespaces, and a container's `command` is the process the runtime starts. No
container runs here, so the kubelet runs this shell over the container's *simulated*
environment (`Sandbox`: env vars, hostname, files of ConfigMap and Secret volumes) instead.

This module is the public face; the parts, one job each:

- shell_syntax.py — the POSIX sh grammar (quoting, here-docs, `if`/`for`/`while`/`until`/
  `case`, functions, subshells, `&&`/`||`/`|`/`&`/`!`, redirections) -> a syntax tree;
- shell_expand.py, shell_arith.py, shell_pattern.py — `$X`, `${X:-d}` `${#X}` `${X%p}`...,
  `$(...)`/backticks, `$((...))`, `~`, IFS splitting, globbing against the sandbox;
- shell_interp.py — `Shell`: runs a tree (traps, `set -e`, jobs on a virtual clock, bounds);
- shell_builtins.py — cd, export, set, trap, read, wait, exec, eval, `.` ...;
- shell_applets*.py — the busybox applets (echo ... tar), busybox's messages;
- shell_io.py — the program protocol: a program is a generator yielding `Write(fd, data)`,
  `Sleep(seconds)`, `Read()` (a line of stdin is sent back, `None` at EOF) or `Read(size)`
  (what one read(2) returns: whatever stdin has, at least a byte) and returning its exit
  status; `StdinBuffer` (how stdin answers both), pipes, redirections, `run_sync` (tests);
- shell_process.py — `ContainerProcess`: a container's command as PID 1, with signals.

An unknown command in a shell is `sh: foo: not found`, 127; run directly (`kubectl exec --
foo`), it is the runtime's `executable file not found in $PATH`, 126, as containerd says.
"""

from __future__ import annotations

from .shell_applets import APPLETS
from .shell_fs import BIN_DIRS, PATH, Sandbox
from .shell_interp import SHELLS, Shell
from .shell_io import (
    Action,
    Program,
    Read,
    Result,
    Sleep,
    StdinBuffer,
    Write,
    decode_stdin,
    run_sync,
)
from .shell_process import ContainerProcess, Delivery
from .shell_syntax import ShellSyntaxError, parse

#: the programs a shell can run (kept under its old name)
COMMANDS = APPLETS


def script_known(source: str) -> bool:
    """`source` parses and every command it names literally is a builtin, an applet or a
    function it defines (so the simulated shell runs it faithfully)."""
    from .shell_builtins import BUILTINS
    from .shell_syntax import command_words, plain

    try:
        tree = parse(source)
    except ShellSyntaxError:
        return False
    found = list(command_words(tree))
    functions = {plain(word) for word, is_function in found if is_function}
    for word, is_function in found:
        name = plain(word)
        if is_function or name is None:
            continue  # `$CMD`: decided when it runs
        base = name.rsplit("/", 1)[-1]
        if name not in functions and name not in BUILTINS and base not in APPLETS:
            return False
    return True

__all__ = [
    "APPLETS", "BIN_DIRS", "COMMANDS", "PATH", "SHELLS", "Action", "ContainerProcess",
    "Delivery", "LineDiscipline", "Program", "Read", "Result", "Sandbox", "Shell",
    "ShellSyntaxError", "Sleep", "StdinBuffer", "Write", "decode_stdin", "parse", "run_sync",
    "script_known",
]


# -- terminal line discipline (kubectl exec -t) ----------------------------------------------
class LineDiscipline:
    """What a tty in canonical mode does with keystrokes: echo them, erase on backspace,
    hand over whole lines on Enter, EOF on ^D at the start of a line, `^C` on interrupt.
    Output written through `output` gets `\\n` -> `\\r\\n` (onlcr)."""

    def __init__(self) -> None:
        self.buffer = ""
        self.eof = False

    def feed(self, data: bytes) -> tuple[bytes, list[str]]:
        """-> (bytes to echo to the terminal, completed lines with their `\\n`)."""
        echo: list[str] = []
        lines: list[str] = []
        for ch in data.decode(errors="replace"):
            if self.eof:
                break
            if ch in "\r\n":
                echo.append("\r\n")
                lines.append(self.buffer + "\n")
                self.buffer = ""
            elif ch in "\x7f\b":
                if self.buffer:
                    self.buffer = self.buffer[:-1]
                    echo.append("\b \b")
            elif ch == "\x04":
                if self.buffer:
                    lines.append(self.buffer)
                    self.buffer = ""
                else:
                    self.eof = True
            elif ch == "\x03":
                echo.append("^C\r\n")
                self.buffer = ""
                lines.append("\n")
            elif ch == "\x15":  # ^U: kill the line
                echo.append("\b \b" * len(self.buffer))
                self.buffer = ""
            elif ch >= " " or ch == "\t":
                self.buffer += ch
                echo.append(ch)
        return "".join(echo).encode(), lines

    @staticmethod
    def output(data: bytes) -> bytes:
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
