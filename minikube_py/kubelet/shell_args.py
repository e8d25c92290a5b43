"""What every busybox applet does first: parse its options and read its input files.

Kubernetes piece: none — the shared front of the simulated applets (shell_applets_*.py).
Options are parsed with the standard library's GNU-style getopt (options may follow
operands, `-n5` = `-n 5`, `--` ends them), as busybox's getopt32 does; an unknown option
is busybox's "invalid option" with status 1. Input is the named files, or stdin when there
are none or a name is `-`.
"""

from __future__ import annotations

import getopt
from collections.abc import Generator
from typing import TYPE_CHECKING

from .shell_io import Action, Write, read_all, text

if TYPE_CHECKING:
    from .shell_interp import Shell

Opts = dict[str, str]
Parsed = Generator[Action, object, "tuple[Opts, list[str]] | None"]


def parse_opts(argv: list[str], spec: str, long: list[str] | None = None) -> Parsed:
    """-> ({"-n": "5", "-v": ""}, operands), or None after printing the usage error.
    A repeated option keeps its last value."""
    name = argv[0].rsplit("/", 1)[-1]
    try:
        found, rest = getopt.gnu_getopt(argv[1:], spec, long or [])
    except getopt.GetoptError as exc:
        option = exc.opt or ""
        if "requires argument" in exc.msg:
            yield Write(2, text(f"{name}: option requires an argument -- '{option}'\n"))
        else:
            yield Write(2, text(f"{name}: {'unrecognized option' if len(option) > 1 else 'invalid option'}"
                                f" -- '{option}'\n"))
        return None
    return {k: v for k, v in found}, rest


def read_inputs(sh: "Shell", paths: list[str], name: str) -> Generator[Action, object, tuple[bytes, int]]:
    """The concatenated contents of `paths` (stdin for none or `-`) and the status: 1 if a
    file could not be read (its error already printed), else 0."""
    if not paths:
        paths = ["-"]
    chunks: list[bytes] = []
    status = 0
    for path in paths:
        if path == "-":
            chunks.append((yield from read_all()))
            continue
        data = yield from read_file(sh, path, name)
        if data is None:
            status = 1
        else:
            chunks.append(data)
    return b"".join(chunks), status


def read_file(sh: "Shell", path: str, name: str) -> Generator[Action, object, bytes | None]:
    """One file's bytes, or None after busybox's error message."""
    full = sh.resolve(path)
    box = sh.sandbox
    if box.is_file(full):
        return box.files[full]
    if box.is_dir(full):
        yield Write(2, text(f"{name}: read error: Is a directory\n"))
    else:
        yield Write(2, text(f"{name}: can't open '{path}': No such file or directory\n"))
    return None


def count(value: str, name: str) -> int | None:
    """A non-negative count option (`-n 5`), None when it is not one."""
    try:
        n = int(value)
    except ValueError:
        return None
    return n if n >= 0 else None
