"""What `minikube-py start` shows while it starts: a line per step, then a live count of the
nodes registering, ended by the summary (start.print_summary).

Kubernetes piece: kubeadm init's `[preflight]`, `[certs]`, `[control-plane]`,
`[wait-control-plane]` phase lines, and minikube start's step lines — a person watching a start
sees what is being done and how long it took, instead of silence until "ready". The live part
uses rich when stdout is a terminal (and rich is installed: it comes with the CEL package's
command line, as for `minikube-py trace`); otherwise (a pipe, a log file, CI) plain lines only, one
per step and one when every node is Ready, so a log stays readable.

A reporter is passed into `running_cluster`; the default, Silent, prints nothing (tests and
minikube_py.testing start clusters by the hundred).
"""

from __future__ import annotations

import sys
import time
from typing import IO, Protocol


class Progress(Protocol):
    def step(self, text: str) -> None:
        """One step done (printed with the time since the previous step)."""

    def nodes(self, ready: int, total: int, waiting_for: str) -> None:
        """The readiness wait's state; called every poll until ready."""

    def done(self) -> None:
        """The wait is over (stop any live display)."""


class Silent:
    """No output: the default for library callers."""

    def step(self, text: str) -> None:
        pass

    def nodes(self, ready: int, total: int, waiting_for: str) -> None:
        pass

    def done(self) -> None:
        pass


class Lines:
    """A line per step on `out`; with `live` (a terminal), a rich status line counting Ready
    nodes while they register, else one line when they all are."""

    def __init__(self, out: IO[str] | None = None, *, live: bool | None = None) -> None:
        self.out = out or sys.stdout
        self.live = self.out.isatty() if live is None else live
        self.began = self.last = time.monotonic()
        self._status = None  # rich.status.Status while the live display runs
        self._total = 0

    def _print(self, text: str) -> None:
        now = time.monotonic()
        self.out.write(f"  {text} ({now - self.last:.2f} s)\n")
        self.out.flush()
        self.last = now

    def step(self, text: str) -> None:
        self._print(text)

    def nodes(self, ready: int, total: int, waiting_for: str) -> None:
        self._total = total
        if not self.live:
            return
        text = f"waiting: {ready}/{total} nodes Ready" + (f"; {waiting_for}" if waiting_for
                                                            else "")
        if self._status is None:
            try:  # rich comes with the CEL package's CLI; plain lines without it
                from rich.console import Console
            except ImportError:
                self.live = False
                return
            self._status = Console(file=self.out).status(text)
            self._status.start()
        else:
            self._status.update(text)

    def done(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
        if self._total:
            self._print(f"{self._total} node{'s' if self._total != 1 else ''} Ready, "
                        "components Healthy")
        else:
            self._print("components Healthy")
