"""What a simulated container "does": run forever, or exit after some seconds with a code.

Kubernetes piece: none — this stands in for the process a container runtime would run
(pkg/kubelet/dockertools in v1.0). No process runs, so the kubelet reads the container's
`command` + `args` and the pod's annotations to decide when the container exits and how.
Pure functions; the pod worker turns the answer into timers.

The grammar (first match wins):

1. Annotations on the pod, for every app container (init containers are not affected):
   - `minikube-py.io/exit-after: "5s"`  — a Go duration (`500ms`, `5s`, `1m30s`, or a plain
     number of seconds): the container exits after that long;
   - `minikube-py.io/exit-code: "1"`    — its exit code (default 0). Alone, it means
     "exit at once with this code".
2. The argv (`command` followed by `args`; programs match by base name, `/bin/sleep` = `sleep`):
   - `sleep N` — exits 0 after N seconds (`N` a number or a duration; `infinity` = forever);
   - `true` / `false` — exit 0 / 1 at once; `exit N` — exits N at once;
   - `echo ...`, `printf ...`, `:` — exit 0 at once;
   - `sh -c SCRIPT` (also `bash`, `ash`, `/bin/sh`): SCRIPT is a list of the simple commands
     above joined by `;`, `&&` or newlines. Their sleeps add up; the script ends at an `exit`,
     or with the status of its last command. A script containing anything else (a loop, a
     server binary) runs forever.
3. Anything else — no command (the image's own entrypoint), `nginx`, `python app.py` — runs
   forever, like a server. Init containers are the exception: one whose command is not
   understood completes at once with 0, so pods with init containers start.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

EXIT_AFTER_ANNOTATION = "minikube-py.io/exit-after"
EXIT_CODE_ANNOTATION = "minikube-py.io/exit-code"
SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
_INSTANT = frozenset({"true", ":", "echo", "printf"})
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class Behaviour(NamedTuple):
    """`seconds` until the container exits (None: never), and its exit code."""

    seconds: float | None
    exit_code: int = 0


FOREVER = Behaviour(None, 0)


def parse_seconds(text: str) -> float | None:
    """`5`, `0.5`, `5s`, `500ms`, `1m30s`, `2h`, `1d` -> seconds; `infinity`/`inf` -> None.
    Raises ValueError on anything else."""
    text = text.strip()
    if text in ("infinity", "inf"):
        return None
    try:
        value = float(text)
    except ValueError:
        pos, total = 0, 0.0
        for match in _DURATION.finditer(text):
            if match.start() != pos:
                break
            total += float(match.group(1)) * _UNITS[match.group(2)]
            pos = match.end()
        if pos != len(text) or not text:
            raise ValueError(f"not a duration: {text!r}") from None
        return total
    if value < 0:
        raise ValueError(f"negative duration: {text!r}")
    return value


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _simple(argv: Sequence[str]) -> tuple[float | None, int] | None:
    """(seconds, status) of one simple command, None when it is not one we know."""
    if not argv:
        return 0.0, 0
    prog, rest = _program(argv[0]), list(argv[1:])
    if prog == "sleep":
        if len(rest) != 1:
            return None
        try:
            return parse_seconds(rest[0]), 0
        except ValueError:
            return None
    if prog == "false":
        return 0.0, 1
    if prog == "exit":
        try:
            return 0.0, int(rest[0]) % 256 if rest else 0
        except ValueError:
            return None
    if prog in _INSTANT:
        return 0.0, 0
    return None


def _script(script: str) -> Behaviour | None:
    """A shell script of simple commands; None when it holds anything else."""
    total = 0.0
    status = 0
    for part in re.split(r"&&|;|\n", script):
        try:
            argv = shlex.split(part)
        except ValueError:
            return None
        if not argv:
            continue
        result = _simple(argv)
        if result is None:
            return None
        seconds, status = result
        if seconds is None:
            return FOREVER
        total += seconds
        if _program(argv[0]) == "exit":
            return Behaviour(total, status)
    return Behaviour(total, status)


def from_argv(argv: Sequence[str]) -> Behaviour | None:
    """The behaviour of `argv`, None when it is not understood (a server: runs forever)."""
    if not argv:
        return None
    prog = _program(argv[0])
    if prog in SHELLS:
        if len(argv) >= 3 and argv[1] in ("-c", "-ec", "-ce", "-xc"):
            return _script(argv[2])
        return None
    result = _simple(argv)
    if result is None:
        return None
    seconds, code = result
    return FOREVER if seconds is None else Behaviour(seconds, code)


def behaviour(container: Mapping[str, Any], annotations: Mapping[str, str] | None = None,
              *, init: bool = False) -> Behaviour:
    """What the simulated process of `container` does (see the module docstring)."""
    annotations = annotations or {}
    if not init and (EXIT_AFTER_ANNOTATION in annotations or EXIT_CODE_ANNOTATION in annotations):
        try:
            seconds = parse_seconds(str(annotations.get(EXIT_AFTER_ANNOTATION, "0")))
            code = int(str(annotations.get(EXIT_CODE_ANNOTATION, "0")).strip()) % 256
        except ValueError:
            pass  # a bad annotation is ignored, like an unknown one
        else:
            return Behaviour(seconds, code) if seconds is not None else FOREVER
    argv = [str(a) for a in (container.get("command") or [])] + \
        [str(a) for a in (container.get("args") or [])]
    found = from_argv(argv)
    if found is not None:
        return found
    return Behaviour(0.0, 0) if init else FOREVER
