"""Naming a process for people: its pid and the command it runs.

Kubernetes piece: none; etcd's "database is locked by pid N" is the model. A newcomer told only
"in use by process 4711" still has to look the process up; the command line
("minikube-py start --nodes 3") says which of their clusters it is, and what to stop.
"""

from __future__ import annotations

import os

#: `python -m` modules shown as the command they are
MODULES = {"minikube_py.cli.main": "minikube-py"}


def command_line(pid: int, limit: int = 120) -> str | None:
    """The process's command line from /proc (None when gone or unreadable), the program
    reduced to its base name and shortened to `limit` characters."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    argv = [a.decode(errors="replace") for a in raw.split(b"\0") if a]
    if not argv:
        return None
    argv[0] = os.path.basename(argv[0])
    if len(argv) > 2 and argv[0].startswith("python") and argv[1] == "-m":
        argv = [MODULES.get(argv[2], argv[2]), *argv[3:]]  # `python -m X`: X is the program
    text = " ".join(argv)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_process(pid: int) -> str:
    """`process 4711 (minikube-py start --nodes 3)`, or `process 4711` when unreadable."""
    command = command_line(pid)
    return f"process {pid} ({command})" if command else f"process {pid}"
