"""What a simulated container does when its pod says so: the exit annotations, and durations.

Kubernetes piece: none — this stands in for the process a container runtime would run. Most
containers run their real command through the simulated shell (process.py); these pod
annotations override that for every app container (init containers are not affected), so a
test can make any image exit when it wants:

- `minikube-py.io/exit-after: "5s"` — a Go duration (`500ms`, `5s`, `1m30s`, or a plain number
  of seconds): the container exits after that long;
- `minikube-py.io/exit-code: "1"` — its exit code (default 0). Alone, it means "exit at once
  with this code".

`parse_seconds` reads the durations here and `sleep`'s argument in the shell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

EXIT_AFTER_ANNOTATION = "minikube-py.io/exit-after"
EXIT_CODE_ANNOTATION = "minikube-py.io/exit-code"
#: the shells a container's command may name (`sh -c SCRIPT`)
SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
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


def annotation_behaviour(annotations: Mapping[str, str]) -> Behaviour | None:
    """The behaviour the exit annotations give, None without (or with malformed) ones."""
    if EXIT_AFTER_ANNOTATION not in annotations and EXIT_CODE_ANNOTATION not in annotations:
        return None
    try:
        seconds = parse_seconds(str(annotations.get(EXIT_AFTER_ANNOTATION, "0")))
        code = int(str(annotations.get(EXIT_CODE_ANNOTATION, "0")).strip()) % 256
    except ValueError:
        return None  # a bad annotation is ignored, like an unknown one
    return Behaviour(seconds, code) if seconds is not None else FOREVER
