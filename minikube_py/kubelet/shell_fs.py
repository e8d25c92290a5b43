"""The container's filesystem as the simulated shell sees it.

Kubernetes piece: none — upstream, a container sees its image's root filesystem plus the
volumes the kubelet mounted (pkg/volume/...). No container runs here, so `Sandbox` keeps that
picture in memory: the files of ConfigMap/Secret/downwardAPI volumes and /etc files that
sandbox.py builds, and whatever the container's commands write (kept in `layer`, the
container's writable layer, so the next exec into the same container sees it). Pure data:
no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BIN_DIRS = frozenset(PATH.split(":"))
_BASE_DIRS = ("/bin", "/dev", "/etc", "/home", "/proc", "/root", "/sys", "/tmp", "/usr",
              "/usr/bin", "/usr/local", "/var", "/var/log")
#: one file may not grow past this (a `yes > f` loop ends with ENOSPC instead of eating memory)
MAX_FILE_BYTES = 64 * 1024 * 1024


class FsError(OSError):
    """An errno-style failure: `str()` is the strerror text busybox prints."""


def parent(path: str) -> str:
    return path.rsplit("/", 1)[0] or "/"


def basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1] or "/"


@dataclass
class Sandbox:
    """The container as the shell sees it. `files` maps absolute paths to contents; `dirs`
    are the directories (parents of every file are implied)."""

    hostname: str
    env: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    cwd: str = "/"
    #: the container's writable layer: files written here are also kept in it, so the next
    #: exec into the same container sees them
    layer: dict[str, bytes] | None = None
    #: the container's own command (command + args), what `ps` shows as PID 1
    command: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.dirs.update(_BASE_DIRS)
        self.dirs.add("/")
        for path in list(self.files):
            self._add_parents(path)

    def _add_parents(self, path: str) -> None:
        up = parent(path)
        while up not in self.dirs:
            self.dirs.add(up)
            up = parent(up)

    def resolve(self, path: str, cwd: str | None = None) -> str:
        """`path` made absolute against `cwd` (default: the sandbox's), `.`/`..` folded."""
        if not path.startswith("/"):
            path = f"{(cwd or self.cwd).rstrip('/')}/{path}"
        parts: list[str] = []
        for part in path.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if parts:
                    parts.pop()
            else:
                parts.append(part)
        return "/" + "/".join(parts)

    # -- queries ---------------------------------------------------------------------------
    def is_dir(self, path: str) -> bool:
        return path in self.dirs

    def is_file(self, path: str) -> bool:
        return path in self.files

    def exists(self, path: str) -> bool:
        return path in self.files or path in self.dirs

    def read(self, path: str) -> bytes:
        if path in self.files:
            return self.files[path]
        raise FsError("Is a directory" if path in self.dirs else "No such file or directory")

    def listdir(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):].split("/", 1)[0] for p in (*self.files, *self.dirs)
                 if p.startswith(prefix) and p != prefix}
        return sorted(n for n in names if n)

    def walk(self, path: str) -> list[str]:
        """`path` and everything under it, parents before children."""
        prefix = path.rstrip("/") + "/"
        under = [p for p in (*self.dirs, *self.files) if p.startswith(prefix) and p != prefix]
        return [path, *sorted(set(under))]

    # -- changes ---------------------------------------------------------------------------
    def write_file(self, path: str, data: bytes, append: bool = False) -> None:
        if path in self.dirs:
            raise FsError("Is a directory")
        if parent(path) not in self.dirs and parent(path) in self.files:
            raise FsError("Not a directory")
        new = (self.files.get(path, b"") if append else b"") + data
        if len(new) > MAX_FILE_BYTES:
            raise FsError("No space left on device")
        self.files[path] = new
        self._add_parents(path)
        if self.layer is not None:
            self.layer[path] = new

    def mkdir(self, path: str, parents: bool = False) -> None:
        if self.exists(path):
            if parents and path in self.dirs:
                return
            raise FsError("File exists")
        if parent(path) not in self.dirs:
            if not parents:
                raise FsError("No such file or directory")
        self.dirs.add(path)
        self._add_parents(path)

    def remove(self, path: str) -> None:
        """Delete a file, or a directory with everything under it."""
        for victim in self.walk(path) if path in self.dirs else [path]:
            self.files.pop(victim, None)
            self.dirs.discard(victim)
            if self.layer is not None:
                self.layer.pop(victim, None)
