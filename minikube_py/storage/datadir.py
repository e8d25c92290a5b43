"""The data directory: its layout and the lock that keeps it to one process.

Kubernetes v1.0 piece: etcd's --data-dir (etcd holds a flock on its WAL files so a second
etcd on the same directory fails at once). Layout:

    <data-dir>/LOCK          flock held while a store is open; holds the owner's pid
    <data-dir>/wal/*.wal     write-ahead log segments (wal.py)
    <data-dir>/snap/*.snap   snapshots (snapshot.py)

Modes, as etcd's fileutil (PrivateDirMode, PrivateFileMode): the directories are created 0700
and the files 0600 whatever the umask — the store holds every Secret. An existing data dir
that another user owns, or that group or others can write, is used with a warning naming the
fix, as etcd warns (CheckDirPermission) rather than refusing a directory the user chose.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import structlog

from ..fileperms import PRIVATE_FILE, create_file, dir_problem, make_private_dir
from ..procinfo import describe_process
from .errors import StorageError

log = structlog.get_logger(component="storage", backend="embedded")


class DataDirLockedError(StorageError):
    """Another process holds the data directory."""

    def __init__(self, path: Path, holder_pid: int | None) -> None:
        who = describe_process(holder_pid) if holder_pid else "another process"
        super().__init__(
            f"data dir {path} is in use by {who}; stop it, or use another --data-dir"
            + (" (a read-only `minikube-py storage` command can still inspect it)" if holder_pid else "")
        )
        self.path = path
        self.holder_pid = holder_pid


class DataDir:
    """Paths of one data directory, and its exclusive lock."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.wal = self.root / "wal"
        self.snap = self.root / "snap"
        self.lock_file = self.root / "LOCK"
        self._lock_fd: int | None = None

    def ensure(self) -> None:
        """The directories, created 0700 (parents too) whatever the umask; an existing root
        others could write is warned about."""
        if self.root.is_dir():
            problem = dir_problem(self.root)
            if problem is not None:
                log.warning("data dir permissions", data_dir=str(self.root), problem=problem,
                            fix=f"chmod 700 {self.root}")
        for path in (self.root, self.wal, self.snap):
            make_private_dir(path)

    def holder_pid(self) -> int | None:
        """Pid written by the current (or last) holder, if any."""
        try:
            text = self.lock_file.read_text().strip()
            return int(text) if text else None
        except (OSError, ValueError):
            return None

    def is_locked(self) -> bool:
        """Whether some process holds the lock right now (tested without taking it)."""
        if not self.lock_file.exists():
            return False
        fd = os.open(self.lock_file, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def lock(self) -> None:
        """Take the exclusive lock or raise DataDirLockedError naming the holder."""
        self.ensure()
        fd = (os.open(self.lock_file, os.O_RDWR) if self.lock_file.exists()
              else create_file(self.lock_file, PRIVATE_FILE, os.O_RDWR | os.O_CREAT))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DataDirLockedError(self.root, self.holder_pid()) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    def unlock(self) -> None:
        if self._lock_fd is not None:
            os.ftruncate(self._lock_fd, 0)
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None
