"""Shell builtins: the commands that change the shell itself (POSIX XCU 2.14 special
builtins, plus cd, read, wait, local, command, type).

Kubernetes piece: none — part of the container's `/bin/sh`. Unlike applets
(shell_applets*.py), these read and write the Shell's state: variables and exports, the
positional parameters, options (`set -e`, `set -u`, `set -f`, `set -a`), traps, cwd, jobs;
`exit`, `return`, `break` and `continue` unwind through the interpreter as exceptions
(shell_io). Messages are busybox ash's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .shell_io import Break, Continue, Exit, Program, Read, Return, Sleep, Write, text
from .shell_syntax import NAME, ShellSyntaxError, parse
from .shell_pattern import split_fields

if TYPE_CHECKING:
    from .shell_interp import Shell

Builtin = Callable[["Shell", list[str]], Program]
#: special builtins: assignments before them stay (`IFS=: read` aside, POSIX 2.14)
SPECIAL = frozenset({":", ".", "break", "continue", "eval", "exec", "exit", "export",
                     "readonly", "return", "set", "shift", "trap", "unset"})
SIGNALS = {"HUP": 1, "INT": 2, "QUIT": 3, "KILL": 9, "USR1": 10, "USR2": 12, "PIPE": 13,
           "ALRM": 14, "TERM": 15, "CHLD": 17, "CONT": 18, "STOP": 19, "WINCH": 28}


def signal_name(spec: str) -> str | None:
    """`TERM`, `SIGTERM`, `15`, `term` -> "TERM"; `EXIT`/`0` -> "EXIT"; None if unknown."""
    upper = spec.upper().removeprefix("SIG")
    if upper in ("EXIT", "0"):
        return "EXIT"
    if upper in SIGNALS:
        return upper
    by_number = {str(n): name for name, n in SIGNALS.items()}
    return by_number.get(upper)


def _usage(sh: "Shell", message: str, status: int = 2) -> Program:
    yield Write(2, text(f"{sh.name}: {message}\n"))
    return status


def _colon(sh: "Shell", argv: list[str]) -> Program:
    return 0
    yield  # pragma: no cover


def _number(sh: "Shell", argv: list[str], default: int) -> int | None:
    if len(argv) < 2:
        return default
    return int(argv[1]) if argv[1].isdigit() else None


def _exit(sh: "Shell", argv: list[str]) -> Program:
    if len(argv) > 1 and not re.fullmatch(r"-?\d+", argv[1]):
        yield Write(2, text(f"{sh.name}: exit: Illegal number: {argv[1]}\n"))
        raise Exit(2)
    raise Exit(int(argv[1]) % 256 if len(argv) > 1 else sh.status)


def _return(sh: "Shell", argv: list[str]) -> Program:
    if len(argv) > 1 and not re.fullmatch(r"-?\d+", argv[1]):
        yield Write(2, text(f"{sh.name}: return: Illegal number: {argv[1]}\n"))
        raise Return(2)
    raise Return(int(argv[1]) % 256 if len(argv) > 1 else sh.status)


def _break(sh: "Shell", argv: list[str]) -> Program:
    levels = _number(sh, argv, 1)
    if not levels:
        return (yield from _usage(sh, f"{argv[0]}: Illegal number: {argv[1]}"))
    if not sh.loops:
        return 0
    raise (Break if argv[0] == "break" else Continue)(min(levels, sh.loops))


def _export(sh: "Shell", argv: list[str]) -> Program:
    names = [a for a in argv[1:] if a != "-p"]
    if not names:
        shown = sorted(sh.exported) if argv[0] == "export" else sorted(sh.vars)
        for name in shown:
            if name in sh.vars:
                yield Write(1, text(f"{argv[0]} {name}='{sh.vars[name]}'\n"))
        return 0
    for arg in names:
        name, eq, value = arg.partition("=")
        if not NAME.fullmatch(name):
            return (yield from _usage(sh, f"{argv[0]}: {arg}: bad variable name", 1))
        if eq:
            sh.assign(name, value)
        if argv[0] == "export":
            sh.exported.add(name)
    return 0


def _local(sh: "Shell", argv: list[str]) -> Program:
    if not sh.locals:
        return (yield from _usage(sh, "local: not in a function", 1))
    for arg in argv[1:]:
        name, eq, value = arg.partition("=")
        sh.locals[-1].setdefault(name, sh.vars.get(name))
        sh.vars[name] = value if eq else sh.vars.get(name, "")
    return 0


def _unset(sh: "Shell", argv: list[str]) -> Program:
    functions = "-f" in argv[1:]
    for name in (a for a in argv[1:] if a not in ("-f", "-v")):
        if functions:
            sh.funcs.pop(name, None)
        else:
            sh.vars.pop(name, None)
            sh.exported.discard(name)
    return 0
    yield  # pragma: no cover


def _set(sh: "Shell", argv: list[str]) -> Program:
    args = argv[1:]
    if not args:
        for name in sorted(sh.vars):
            yield Write(1, text(f"{name}='{sh.vars[name]}'\n"))
        return 0
    while args and args[0][:1] in ("-", "+") and args[0] not in ("-", "--"):
        flag = args.pop(0)
        if flag[1:] == "o" or flag[1:] == "":
            if args and args[0] in ("errexit", "nounset", "noglob", "allexport", "xtrace",
                                    "pipefail"):
                letter = {"errexit": "e", "nounset": "u", "noglob": "f", "allexport": "a",
                          "xtrace": "x", "pipefail": "p"}[args.pop(0)]
                (sh.options.add if flag[0] == "-" else sh.options.discard)(letter)
            continue
        for letter in flag[1:]:
            if letter not in "eufaxvnCh":
                return (yield from _usage(sh, f"set: illegal option -{letter}"))
            (sh.options.add if flag[0] == "-" else sh.options.discard)(letter)
    if args and args[0] in ("-", "--"):
        args.pop(0)
        sh.positional = list(args)
    elif args:
        sh.positional = list(args)
    return 0


def _shift(sh: "Shell", argv: list[str]) -> Program:
    count = _number(sh, argv, 1)
    if count is None or count > len(sh.positional):
        return (yield from _usage(sh, "shift: can't shift that many", 1))
    sh.positional = sh.positional[count:]
    return 0


def _eval(sh: "Shell", argv: list[str]) -> Program:
    source = " ".join(argv[1:])
    try:
        tree = parse(source)
    except ShellSyntaxError as exc:
        return (yield from _usage(sh, f"eval: {exc}"))
    return (yield from sh.run(tree))


def _dot(sh: "Shell", argv: list[str]) -> Program:
    if len(argv) < 2:
        return (yield from _usage(sh, f"{argv[0]}: filename argument required"))
    full = sh.resolve(argv[1])
    if not sh.sandbox.is_file(full):
        yield Write(2, text(f"{sh.name}: {argv[1]}: not found\n"))
        raise Exit(2)
    try:
        tree = parse(sh.sandbox.files[full].decode("utf-8", "surrogateescape"))
    except ShellSyntaxError as exc:
        return (yield from _usage(sh, f"{argv[1]}: {exc}"))
    try:
        return (yield from sh.run(tree))
    except Return as ret:
        return ret.code


def _exec(sh: "Shell", argv: list[str]) -> Program:
    """`exec cmd`: the shell becomes cmd (signals go to it); `exec >f`: redirect the shell."""
    if len(argv) == 1:
        return 0  # the redirections were applied by the caller: see interp._run_Simple
    program = sh.lookup_command(argv[1:])
    if program is None:
        yield Write(2, text(f"{sh.name}: exec: {argv[1]}: not found\n"))
        raise Exit(127)
    sh.exec_argv = argv[1:]
    raise Exit((yield from program))


def _trap(sh: "Shell", argv: list[str]) -> Program:
    args = argv[1:]
    if not args or args == ["-p"]:
        for name, action in sorted(sh.traps.items()):
            yield Write(1, text(f"trap -- '{action}' {name}\n"))
        return 0
    if len(args) == 1 or args[0].isdigit():
        action, specs = "-", args  # `trap TERM`, `trap 15`: back to the default
    else:
        action, specs = args[0], args[1:]
    status = 0
    for spec in specs:
        name = signal_name(spec)
        if name is None:
            yield Write(2, text(f"{sh.name}: trap: {spec}: invalid signal specification\n"))
            status = 1
        elif action == "-":
            sh.traps.pop(name, None)
        else:
            sh.traps[name] = action
    return status


def _cd(sh: "Shell", argv: list[str]) -> Program:
    target = argv[1] if len(argv) > 1 else sh.vars.get("HOME", "/root")
    if target == "-":
        target = sh.vars.get("OLDPWD", sh.cwd)
    full = sh.resolve(target)
    if not sh.sandbox.is_dir(full):
        yield Write(2, text(f"{sh.name}: cd: can't cd to {target}: No such file or directory\n"))
        return 2
    sh.vars["OLDPWD"] = sh.cwd
    sh.cwd = full
    sh.vars["PWD"] = full
    return 0


def _read(sh: "Shell", argv: list[str]) -> Program:
    args = argv[1:]
    raw = False
    while args and args[0].startswith("-") and len(args[0]) > 1:
        flag = args.pop(0)
        if flag == "-r":
            raw = True
        elif flag == "-p" and args:
            yield Write(2, text(args.pop(0)))
        elif flag in ("-t", "-n", "-u") and args:
            args.pop(0)
        elif flag not in ("-s",):
            return (yield from _usage(sh, f"read: illegal option {flag}"))
    names = args or ["REPLY"]
    line = yield Read()
    if line is None:
        for name in names:
            sh.assign(name, "")
        return 1
    value = line[:-1] if line.endswith("\n") else line
    while not raw and value.endswith("\\"):
        more = yield Read()
        if more is None:
            break
        value = value[:-1] + (more[:-1] if more.endswith("\n") else more)
    if not raw:
        value = re.sub(r"\\(.)", r"\1", value)
    ifs = sh.vars.get("IFS", " \t\n")
    if names == ["REPLY"] and not args:
        sh.assign("REPLY", value)
        return 0
    for index, name in enumerate(names):
        if index == len(names) - 1:
            white = "".join(c for c in ifs if c in " \t\n")
            sh.assign(name, value.strip(white) if white else value)
            break
        _, found, _ = split_fields(value, ifs)
        first = found[0] if found else ""
        sh.assign(name, first)
        rest = value.lstrip("".join(c for c in ifs if c in " \t\n"))[len(first):]
        rest = rest.lstrip("".join(c for c in ifs if c in " \t\n"))
        if rest[:1] and rest[:1] in ifs:
            rest = rest[1:].lstrip("".join(c for c in ifs if c in " \t\n"))
        value = rest
    return 0 if line.endswith("\n") else 1


def _wait(sh: "Shell", argv: list[str]) -> Program:
    """Sleep until the jobs named (all without arguments) end; a trapped signal ends the
    wait at once with 128+n and its trap runs (POSIX 2.11)."""
    session = sh.session
    wanted = [int(a.lstrip("%")) for a in argv[1:] if a.lstrip("%").isdigit()]
    jobs = [j for j in session.jobs if not wanted or j.pid in wanted]

    def finished() -> bool:
        return bool(sh.pending) or all(j.status is not None for j in jobs)

    if not jobs and wanted:
        return 127
    while not finished():
        session.waiting = finished
        try:
            yield Sleep(float("inf"))
        finally:
            session.waiting = None
        if sh.pending:
            return 128 + SIGNALS.get(sh.pending[0], 15)
    status = jobs[-1].status if jobs else 0
    session.jobs[:] = [j for j in session.jobs if j.status is None]
    return status or 0


def _command(sh: "Shell", argv: list[str]) -> Program:
    args = argv[1:]
    if args and args[0] in ("-v", "-V"):
        status = 1
        for name in args[1:]:
            found = _which(sh, name)
            if found is not None:
                yield Write(1, text(found + "\n"))
                status = 0
        return status
    if not args:
        return 0
    program = sh.lookup_command(args) if args[0] not in sh.funcs else None
    if program is None:
        return (yield from sh.not_found(args))
    return (yield from program)


def _which(sh: "Shell", name: str) -> str | None:
    from .shell_applets import APPLETS

    if name in sh.funcs or name in BUILTINS:
        return name
    if name in APPLETS:
        return f"/bin/{name}"
    return None


def _type(sh: "Shell", argv: list[str]) -> Program:
    from .shell_applets import APPLETS

    status = 0
    for name in argv[1:]:
        if name in sh.funcs:
            yield Write(1, text(f"{name} is a function\n"))
        elif name in SPECIAL:
            yield Write(1, text(f"{name} is a special shell builtin\n"))
        elif name in BUILTINS:
            yield Write(1, text(f"{name} is a shell builtin\n"))
        elif name in APPLETS:
            yield Write(1, text(f"{name} is /bin/{name}\n"))
        else:
            yield Write(1, text(f"{name}: not found\n"))
            status = 127
    return status


def _jobs(sh: "Shell", argv: list[str]) -> Program:
    for n, job in enumerate(sh.session.jobs, 1):
        state = "Running" if job.status is None else f"Done({job.status})"
        yield Write(1, text(f"[{n}] {job.pid} {state}\n"))
    return 0


BUILTINS: Mapping[str, Builtin] = {
    ":": _colon, "exit": _exit, "return": _return, "break": _break, "continue": _break,
    "export": _export, "readonly": _export, "local": _local, "unset": _unset, "set": _set,
    "shift": _shift, "eval": _eval, ".": _dot, "source": _dot, "exec": _exec, "trap": _trap,
    "cd": _cd, "read": _read, "wait": _wait, "command": _command, "type": _type,
    "jobs": _jobs, "umask": _colon, "ulimit": _colon, "alias": _colon, "unalias": _colon,
    "hash": _colon,
}
