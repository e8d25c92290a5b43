"""Owner-only files and directories whatever the umask, and the check before key material is
reused.

Kubernetes pieces: etcd's pkg/fileutil (PrivateDirMode 0700 for the data dir and its wal/ and
snap/, PrivateFileMode 0600 for its files; at start, CheckDirPermission warns when an existing
data dir has another mode) and client-go's keyutil.WriteKey (0600) / certutil.WriteCert (0644),
which kubeadm uses for /etc/kubernetes/pki, into a directory it creates itself. Neither
kube-apiserver nor kubeadm checks the mode of a key file it *loads*; this project refuses to
reuse key material (CA key, serving key, token file, any private key) that group or others can
write, or that another user owns, as OpenSSH refuses an "UNPROTECTED PRIVATE KEY FILE": whoever
can rewrite the CA key or the token file can become cluster admin, and a reused file keeps
whatever was done to it while the server was down.

Why explicit modes: `os.mkdir(path, mode)` and `os.open(path, flags, mode)` are filtered by the
process umask, and `os.makedirs` gives every intermediate directory 0777 & ~umask. Under
`umask 000` that made ~/.minikube-py, the data dir and the cert dir world-writable, and a file
opened with the default 0666 world-readable. Creating with the wanted mode (the umask can only
remove bits) and then chmod-ing to exactly that mode gives the same result under any umask,
without changing the process-wide umask under other threads' feet.

Pure decisions (`problem`) are separate from the file-system calls around them.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

#: etcd's fileutil.PrivateDirMode / PrivateFileMode; certutil's certificate mode
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
PUBLIC_FILE = 0o644
#: the bits that let someone other than the owner replace or rewrite a file
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
#: users whose files are trusted besides our own (root can rewrite anything anyway)
_ROOT = 0


class UnsafePermissionsError(ValueError):
    """Key material (or its directory) that someone else could have rewritten; the message
    names the file and the command that fixes it. A usage error: `start` exits 2."""

    def __init__(self, path: Path, what: str, reason: str, fix: str) -> None:
        super().__init__(f"refusing to use {what} {path}: {reason}; whoever can write it can "
                         f"take over the cluster. Fix: {fix}")
        self.path = path


def problem(mode: int, owner: int, *, uid: int) -> str | None:
    """Why a file or directory with `mode` owned by `owner` is not safe for user `uid` to
    trust, or None: it must be owned by `uid` (or root) and not writable by group or others."""
    if owner not in (uid, _ROOT):
        return f"it is owned by uid {owner}, not by this user (uid {uid}) or root"
    if mode & _OTHERS_WRITE:
        return f"group or others can write it (mode {stat.S_IMODE(mode):04o})"
    return None


def _fix(path: Path, reason: str, mode: int) -> str:
    chmod = f"chmod {mode:o} {path}"
    return f"chown $(id -u) {path} && {chmod}" if reason.startswith("it is owned") else chmod


def check_file(path: Path | str, what: str, *, private: bool = True,
               generated: bool = False) -> None:
    """Raise UnsafePermissionsError unless `path` (an existing file about to be reused) is
    owned by this user or root and not writable by group or others. `private` picks the
    mode the fix suggests (0600 for secrets, 0644 for certificates); `generated` files may
    also be deleted, to be generated anew."""
    path = Path(path)
    st = os.stat(path)  # the target of a symlink is what gets read
    reason = problem(st.st_mode, st.st_uid, uid=os.geteuid())
    if reason is not None:
        fix = _fix(path, reason, PRIVATE_FILE if private else PUBLIC_FILE)
        if generated:
            fix += " (or delete it, and a new one is generated at start)"
        raise UnsafePermissionsError(path, what, reason, fix)


def check_dir(path: Path | str, what: str) -> None:
    """Like check_file for a directory holding key material: someone who can write the
    directory can replace the files in it."""
    path = Path(path)
    st = os.stat(path)
    reason = problem(st.st_mode, st.st_uid, uid=os.geteuid())
    if reason is not None:
        raise UnsafePermissionsError(path, what, reason,
                                     _fix(path, reason, PRIVATE_DIR)
                                     + " (or use a directory of your own)")


def dir_problem(path: Path | str) -> str | None:
    """check_dir's verdict as text (None: fine), for callers that warn instead of refusing."""
    st = os.stat(path)
    return problem(st.st_mode, st.st_uid, uid=os.geteuid())


def make_private_dir(path: Path | str) -> Path:
    """`path` as a directory; it and every missing parent are created 0700 whatever the
    umask. Directories that already exist keep their mode (the caller decides whether to
    check them)."""
    path = Path(path)
    missing: list[Path] = []
    probe = path
    while not probe.is_dir() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR)
        except FileExistsError:
            if directory.is_dir():
                continue  # created meanwhile by someone else: theirs, not ours to chmod
            raise
        os.chmod(directory, PRIVATE_DIR)  # the umask may have removed owner bits
    return path


def create_file(path: Path | str, mode: int = PRIVATE_FILE,
                flags: int = os.O_WRONLY | os.O_CREAT | os.O_TRUNC) -> int:
    """A file descriptor of `path` opened with `flags`, its mode exactly `mode` whatever the
    umask — also when the file already existed (a temp file left by a crash keeps its old
    mode through O_CREAT|O_TRUNC)."""
    fd = os.open(path, flags, mode)
    try:
        os.fchmod(fd, mode)
    except BaseException:
        os.close(fd)
        raise
    return fd
