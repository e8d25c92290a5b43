"""Busybox file applets: ls, mkdir, rm, rmdir, touch, cp, mv, ln, chmod, chown, find, tar.

Kubernetes piece: none — the file tools of a busybox image over the sandbox's files. `tar`
is what `kubectl cp` runs through exec (`tar cf - PATH` to copy out, `tar -xmf - -C DIR`
to copy in): it reads and writes real tar streams with the standard library's tarfile, so
the kubectl on the other end unpacks them. Modes, owners and times are not simulated
(`chmod`, `chown` succeed without effect; `ls -l` shows fixed ones). Pure.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .shell_args import parse_opts, read_inputs
from .shell_fs import FsError, basename
from .shell_io import Program, Write, text

if TYPE_CHECKING:
    from .shell_interp import Shell

Applet = Callable[["Shell", list[str]], Program]


def _ls(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "al1hFAdRts")
    if parsed is None:
        return 1
    opts, paths = parsed
    box = sh.sandbox
    long = "-l" in opts
    status = 0
    targets = paths or ["."]
    files = [p for p in targets if box.is_file(sh.resolve(p)) or ("-d" in opts and box.exists(sh.resolve(p)))]
    for path in targets:
        if not box.exists(sh.resolve(path)):
            yield Write(2, text(f"ls: {path}: No such file or directory\n"))
            status = 1
    if files:
        yield Write(1, text("".join(_entry(sh, sh.resolve(p), p, long) for p in files)))
    dirs = [p for p in targets if p not in files and box.is_dir(sh.resolve(p))]
    for index, path in enumerate(dirs):
        full = sh.resolve(path)
        if len(targets) > 1:
            yield Write(1, text(("\n" if index or files else "") + f"{path}:\n"))
        names = box.listdir(full)
        if "-a" not in opts and "-A" not in opts:
            names = [n for n in names if not n.startswith(".")]
        if "-a" in opts:
            names = [".", "..", *names]
        if long:
            yield Write(1, text(f"total {len(names)}\n"))
        yield Write(1, text("".join(
            _entry(sh, f"{full.rstrip('/')}/{n}", n + ("/" if "-F" in opts and
                                                     box.is_dir(f"{full.rstrip('/')}/{n}") else ""),
                   long) for n in names)))
    return status


def _entry(sh: "Shell", full: str, shown: str, long: bool) -> str:
    if not long:
        return shown + "\n"
    box = sh.sandbox
    if box.is_file(full):
        return f"-rw-r--r--    1 root     root     {len(box.files[full]):>9} Jan  1 00:00 {shown}\n"
    return f"drwxr-xr-x    2 root     root     {4096:>9} Jan  1 00:00 {shown}\n"


def _fs_error(name: str, path: str, exc: Exception) -> Write:
    return Write(2, text(f"{name}: can't {'create directory' if name == 'mkdir' else 'remove' if name in ('rm', 'rmdir') else 'create'} '{path}': {exc}\n"))


def _mkdir(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "pm:")
    if parsed is None:
        return 1
    opts, paths = parsed
    status = 0
    for path in paths:
        try:
            sh.sandbox.mkdir(sh.resolve(path), parents="-p" in opts)
        except FsError as exc:
            yield _fs_error("mkdir", path, exc)
            status = 1
    return status


def _rm(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "rRfiv")
    if parsed is None:
        return 1
    opts, paths = parsed
    status = 0
    for path in paths:
        full = sh.resolve(path)
        if not sh.sandbox.exists(full):
            if "-f" not in opts:
                yield Write(2, text(f"rm: can't remove '{path}': No such file or directory\n"))
                status = 1
            continue
        if sh.sandbox.is_dir(full) and not ({"-r", "-R"} & set(opts)):
            yield Write(2, text(f"rm: '{path}' is a directory\n"))
            status = 1
            continue
        sh.sandbox.remove(full)
    return status


def _rmdir(sh: "Shell", argv: list[str]) -> Program:
    status = 0
    for path in argv[1:]:
        full = sh.resolve(path)
        if not sh.sandbox.is_dir(full):
            yield Write(2, text(f"rmdir: '{path}': No such file or directory\n"))
            status = 1
        elif sh.sandbox.listdir(full):
            yield Write(2, text(f"rmdir: '{path}': Directory not empty\n"))
            status = 1
        else:
            sh.sandbox.remove(full)
    return status


def _touch(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "cd:t:r:am")
    if parsed is None:
        return 1
    opts, paths = parsed
    status = 0
    for path in paths:
        full = sh.resolve(path)
        if sh.sandbox.exists(full) or "-c" in opts:
            continue
        try:
            sh.sandbox.write_file(full, b"")
        except FsError as exc:
            yield Write(2, text(f"touch: {path}: {exc}\n"))
            status = 1
    return status


def _copy(sh: "Shell", argv: list[str]) -> Program:
    """cp and mv: files, or trees with -r (mv always moves trees)."""
    name = argv[0].rsplit("/", 1)[-1]
    parsed = yield from parse_opts(argv, "rRafpvin")
    if parsed is None:
        return 1
    opts, paths = parsed
    if len(paths) < 2:
        yield Write(2, text(f"{name}: missing destination file operand\n"))
        return 1
    box = sh.sandbox
    *sources, dest = paths
    dest_full = sh.resolve(dest)
    if len(sources) > 1 and not box.is_dir(dest_full):
        yield Write(2, text(f"{name}: '{dest}' is not a directory\n"))
        return 1
    status = 0
    for source in sources:
        full = sh.resolve(source)
        if not box.exists(full):
            yield Write(2, text(f"{name}: can't stat '{source}': No such file or directory\n"))
            status = 1
            continue
        target = f"{dest_full.rstrip('/')}/{basename(full)}" if box.is_dir(dest_full) else dest_full
        if box.is_dir(full) and name == "cp" and not ({"-r", "-R", "-a"} & set(opts)):
            yield Write(2, text(f"cp: omitting directory '{source}'\n"))
            status = 1
            continue
        try:
            for path in box.walk(full) if box.is_dir(full) else [full]:
                moved = target + path[len(full):]
                if box.is_dir(path):
                    box.mkdir(moved, parents=True)
                else:
                    box.write_file(moved, box.files[path])
            if name == "mv":
                box.remove(full)
        except FsError as exc:
            yield Write(2, text(f"{name}: can't create '{target}': {exc}\n"))
            status = 1
    return status


def _ln(sh: "Shell", argv: list[str]) -> Program:
    """No links in the sandbox: `ln -s TARGET NAME` copies what TARGET is now."""
    paths = [a for a in argv[1:] if not a.startswith("-")]
    if len(paths) != 2:
        yield Write(2, b"ln: missing operand\n")
        return 1
    return (yield from _copy(sh, ["cp", "-r", *paths]))


def _noop(sh: "Shell", argv: list[str]) -> Program:
    status = 0
    for path in [a for a in argv[2:] if not a.startswith("-")]:
        if not sh.sandbox.exists(sh.resolve(path)):
            yield Write(2, text(f"{argv[0]}: {path}: No such file or directory\n"))
            status = 1
    return status


def _find(sh: "Shell", argv: list[str]) -> Program:
    """`find [PATH..] [-name PATTERN] [-type f|d]`."""
    from .shell_pattern import matches

    args = argv[1:]
    roots = []
    while args and not args[0].startswith("-"):
        roots.append(args.pop(0))
    name_pattern = kind = None
    while args:
        flag = args.pop(0)
        if flag in ("-name", "-iname") and args:
            name_pattern = args.pop(0)
        elif flag == "-type" and args:
            kind = args.pop(0)
        elif flag == "-print":
            continue
        else:
            yield Write(2, text(f"find: unrecognized: {flag}\n"))
            return 1
    status = 0
    out = []
    for root in roots or ["."]:
        full = sh.resolve(root)
        if not sh.sandbox.exists(full):
            yield Write(2, text(f"find: {root}: No such file or directory\n"))
            status = 1
            continue
        for path in sh.sandbox.walk(full) if sh.sandbox.is_dir(full) else [full]:
            shown = root.rstrip("/") + path[len(full):] if path != full else root
            if kind == "f" and not sh.sandbox.is_file(path) or kind == "d" and not sh.sandbox.is_dir(path):
                continue
            if name_pattern is not None and not matches([(name_pattern, False)], basename(path)):
                continue
            out.append(shown + "\n")
    yield Write(1, text("".join(out)))
    return status


# -- tar ----------------------------------------------------------------------------------
def _tar_args(argv: list[str]) -> list[str]:
    """`tar cf - x` (the old bundled form kubectl uses) -> `tar -c -f - x`."""
    args = argv[1:]
    if args and not args[0].startswith("-"):
        args = ["-" + args[0], *args[1:]]
    return [argv[0], *(a for a in args if not a.startswith("--no-same")
                       and a not in ("--preserve-permissions",))]


def _tar(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(_tar_args(argv), "cxtf:C:zvmoOph")
    if parsed is None:
        return 1
    opts, paths = parsed
    modes = [m for m in ("-c", "-x", "-t") if m in opts]
    if len(modes) != 1:
        yield Write(2, b"tar: need exactly one of 'c', 'x' or 't'\n")
        return 1
    archive = opts.get("-f", "-")
    cwd = sh.resolve(opts["-C"]) if "-C" in opts else sh.cwd
    if modes[0] == "-c":
        return (yield from _tar_create(sh, paths, archive, cwd, "-z" in opts, "-v" in opts))
    data, status = yield from read_inputs(sh, [archive], "tar")
    if status:
        return status
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:gz" if "-z" in opts else "r:*")
        members = tar.getmembers()
    except (tarfile.TarError, OSError, EOFError) as exc:
        yield Write(2, text(f"tar: invalid tar magic ({exc})\n"))
        return 1
    if modes[0] == "-t":
        yield Write(1, text("".join(m.name + ("/" if m.isdir() else "") + "\n" for m in members)))
        return 0
    box = sh.sandbox
    if not box.is_dir(cwd):
        yield Write(2, text(f"tar: can't change directory to '{opts['-C']}': No such file or directory\n"))
        return 1
    for member in members:
        target = sh.sandbox.resolve(member.name, cwd)
        if not target.startswith(cwd.rstrip("/") + "/") and target != cwd:
            continue  # a path escaping the directory: skipped, as GNU tar does
        try:
            if member.isdir():
                box.mkdir(target, parents=True)
            elif member.isfile():
                extracted = tar.extractfile(member)
                box.write_file(target, extracted.read() if extracted else b"")
            if "-v" in opts:
                yield Write(1, text(member.name + "\n"))
        except FsError as exc:
            yield Write(2, text(f"tar: can't create '{member.name}': {exc}\n"))
            return 1
    return 0


def _tar_create(sh: "Shell", paths: list[str], archive: str, cwd: str, gz: bool,
                verbose: bool) -> Program:
    box = sh.sandbox
    buffer = io.BytesIO()
    status = 0
    warned = False
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w", format=tarfile.GNU_FORMAT) as tar:
        for path in paths:
            full = box.resolve(path, cwd)
            if not box.exists(full):
                yield Write(2, text(f"tar: {path}: No such file or directory\n"))
                status = 1
                continue
            if path.startswith("/") and not warned:
                yield Write(2, b"tar: removing leading '/' from member names\n")
                warned = True
            for item in box.walk(full) if box.is_dir(full) else [full]:
                name = (path.rstrip("/") + item[len(full):]).lstrip("/") or "."
                info = tarfile.TarInfo(name)
                info.mtime = 0
                if box.is_dir(item):
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(info)
                else:
                    data = box.files[item]
                    info.size, info.mode = len(data), 0o644
                    tar.addfile(info, io.BytesIO(data))
                if verbose:
                    yield Write(2, text(name + "\n"))
    if archive == "-":
        yield Write(1, buffer.getvalue())
    else:
        box.write_file(sh.resolve(archive), buffer.getvalue())
    return status


APPLETS: Mapping[str, Applet] = {
    "ls": _ls, "mkdir": _mkdir, "rm": _rm, "rmdir": _rmdir, "touch": _touch, "cp": _copy,
    "mv": _copy, "ln": _ln, "chmod": _noop, "chown": _noop, "chgrp": _noop, "find": _find,
    "tar": _tar,
}
