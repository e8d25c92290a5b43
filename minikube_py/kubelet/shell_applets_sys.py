"""Busybox applets about the process and the machine: echo, printf, env, sleep, seq, yes,
date, uptime, test, expr, kill, ps, id, uname, sh ...

Kubernetes piece: none — the programs of a busybox image that `kubectl exec` and container
commands run most. Output and messages are busybox's. The clock is the session's `now`
(wall time unless a test injects one); `sleep` is a Sleep action, never a real wait.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .node_status import KERNEL_VERSION
from .shell_builtins import SIGNALS, signal_name
from .shell_io import Program, Sleep, Write, say, text

if TYPE_CHECKING:
    from .shell_interp import Shell

Applet = Callable[["Shell", list[str]], Program]
_SLEEP_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _echo(sh: "Shell", argv: list[str]) -> Program:
    args = argv[1:]
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = ("e" in args[0]) or (escapes and "E" not in args[0])
        args = args[1:]
    out = " ".join(args)
    if escapes:
        out, stop = unescape(out, octal_zero=True)
        newline = newline and not stop
    yield Write(1, text(out + ("\n" if newline else "")))
    return 0


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "a": "\a", "b": "\b", "f": "\f",
            "v": "\v", "e": "\x1b", '"': '"', "'": "'"}


def unescape(value: str, *, octal_zero: bool = False) -> tuple[str, bool]:
    """Backslash escapes as echo -e / printf %b read them; True if `\\c` stopped output."""
    out: list[str] = []
    i = 0
    while i < len(value):
        c = value[i]
        if c != "\\" or i + 1 >= len(value):
            out.append(c)
            i += 1
            continue
        nxt = value[i + 1]
        if nxt == "c":
            return "".join(out), True
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt == "x" and re.match(r"[0-9a-fA-F]", value[i + 2:i + 3]):
            digits = re.match(r"[0-9a-fA-F]{1,2}", value[i + 2:]).group()  # type: ignore[union-attr]
            out.append(chr(int(digits, 16)))
            i += 2 + len(digits)
        elif nxt.isdigit() and nxt in "01234567":
            start = i + (2 if octal_zero and nxt == "0" else 1)
            digits = re.match(r"[0-7]{1,3}", value[start:]).group()  # type: ignore[union-attr]
            out.append(chr(int(digits, 8) & 0xFF))
            i = start + len(digits)
        else:
            out.append("\\")
            i += 1
    return "".join(out), False


_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?([diouxXeEfgGcsb%])")


def _printf(sh: "Shell", argv: list[str]) -> Program:
    if len(argv) < 2:
        yield Write(2, b"printf: usage: printf FORMAT [ARGUMENT...]\n")
        return 1
    fmt, args = argv[1], argv[2:]
    out: list[str] = []
    status = 0
    position = 0
    while True:
        consumed = False
        pos = 0
        stopped = False
        for match in _SPEC.finditer(fmt):
            chunk, stopped = unescape(fmt[pos:match.start()], octal_zero=False)
            out.append(chunk)
            pos = match.end()
            if stopped:
                break
            flags, width, precision, conv = match.groups()
            if conv == "%":
                out.append("%")
                continue
            if width == "*":
                width = args[position] if position < len(args) else "0"
                position += 1
            if precision == "*":
                precision = args[position] if position < len(args) else "0"
                position += 1
            arg = args[position] if position < len(args) else None
            position += 1
            consumed = consumed or arg is not None
            spec = "%" + flags + (width or "") + (f".{precision}" if precision is not None else "")
            if conv in "sb":
                value = arg or ""
                if conv == "b":
                    value, stopped = unescape(value, octal_zero=True)
                out.append((spec + "s") % value)
                if stopped:
                    break
            elif conv == "c":
                out.append((spec + "s") % (arg or "")[:1])
            else:
                number, ok = _printf_number(arg or "0", conv)
                if not ok:
                    yield Write(2, text(f"printf: invalid number '{arg}'\n"))
                    status = 1
                out.append((spec + ("d" if conv in "iu" else conv)) % number)
        if not stopped:
            tail, stopped = unescape(fmt[pos:])
            out.append(tail)
        if stopped or not consumed or position >= len(args):
            break
    yield Write(1, text("".join(out)))
    return status


def _printf_number(arg: str, conv: str) -> tuple[float | int, bool]:
    if arg[:1] in ("'", '"'):
        return (ord(arg[1]) if len(arg) > 1 else 0), True
    try:
        if conv in "eEfgG":
            return float(arg), True
        return int(arg, 0) if not re.fullmatch(r"-?0\d+", arg) else int(arg, 8), True
    except ValueError:
        try:
            return (int(float(arg)) if conv not in "eEfgG" else float(arg)), False
        except ValueError:
            return 0, False


def _env(sh: "Shell", argv: list[str]) -> Program:
    args = argv[1:]
    env = sh.environ()
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-i", "-"):
            env = {}
        elif flag == "-u" and args:
            env.pop(args.pop(0), None)
        elif flag == "--":
            break
    while args and "=" in args[0] and not args[0].startswith("="):
        key, _, value = args.pop(0).partition("=")
        env[key] = value
    if not args:
        yield Write(1, text("".join(f"{k}={v}\n" for k, v in env.items())))
        return 0
    child = sh.spawn(sh.name)
    child.vars, child.exported = dict(env), set(env)
    program = child.lookup_command(args)
    if program is None:
        yield Write(2, text(f"env: can't execute '{args[0]}': No such file or directory\n"))
        return 127
    return (yield from program)


def _printenv(sh: "Shell", argv: list[str]) -> Program:
    env = sh.environ()
    if len(argv) == 1:
        yield Write(1, text("".join(f"{k}={v}\n" for k, v in env.items())))
        return 0
    status = 0
    for name in argv[1:]:
        if name in env:
            yield Write(1, text(env[name] + "\n"))
        else:
            status = 1
    return status


def _constant(status: int) -> Applet:
    def applet(sh: "Shell", argv: list[str]) -> Program:
        return status
        yield  # pragma: no cover
    return applet


def sleep_seconds(value: str) -> float | None:
    """busybox sleep's argument: `1`, `0.5`, `2m`, `1h`, `inf` -> seconds; None if bad."""
    match = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+|inf(?:inity)?)([smhd]?)", value)
    if match is None:
        return None
    number = math.inf if match.group(1).startswith("inf") else float(match.group(1))
    return number * _SLEEP_UNITS[match.group(2)]


def _sleep(sh: "Shell", argv: list[str]) -> Program:
    if len(argv) < 2:
        yield Write(2, b"sleep: usage: sleep [N]...\n")
        return 1
    total = 0.0
    for arg in argv[1:]:
        seconds = sleep_seconds(arg)
        if seconds is None:
            yield Write(2, text(f"sleep: invalid number '{arg}'\n"))
            return 1
        total += seconds
    yield Sleep(total)
    return 0


def _seq(sh: "Shell", argv: list[str]) -> Program:
    args = argv[1:]
    sep, width = "\n", False
    while args and args[0] in ("-w", "-s") or (args and args[0].startswith("-s")):
        flag = args.pop(0)
        if flag == "-w":
            width = True
        elif flag == "-s":
            sep = args.pop(0) if args else "\n"
        else:
            sep = flag[2:]
    try:
        numbers = [float(a) for a in args]
    except ValueError:
        bad = next(a for a in args if not re.fullmatch(r"-?\d*\.?\d+(e-?\d+)?", a))
        yield Write(2, text(f"seq: invalid number '{bad}'\n"))
        return 1
    if not 1 <= len(numbers) <= 3:
        yield Write(2, b"Usage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n")
        return 1
    first, step, last = (1.0, 1.0, numbers[0]) if len(numbers) == 1 else \
        (numbers[0], 1.0, numbers[1]) if len(numbers) == 2 else tuple(numbers)
    decimals = max((len(a.split(".")[1]) if "." in a else 0) for a in args)
    pad = max(len(f"{first:.{decimals}f}"), len(f"{last:.{decimals}f}")) if width else 0
    if step == 0:
        return 0
    batch: list[str] = []
    value, n = first, 0
    emitted = False
    while (value <= last + 1e-9) if step > 0 else (value >= last - 1e-9):
        batch.append(f"{value:0{pad}.{decimals}f}")
        n += 1
        value = first + n * step
        if len(batch) >= 1000:
            yield Write(1, text(("\n" if emitted and sep == "\n" else sep if emitted else "")
                                + sep.join(batch)))
            emitted, batch = True, []
    if batch:
        yield Write(1, text((sep if emitted else "") + sep.join(batch)))
        emitted = True
    if emitted:
        yield Write(1, b"\n")
    return 0


def _yes(sh: "Shell", argv: list[str]) -> Program:
    line = text((" ".join(argv[1:]) or "y") + "\n")
    chunk = line * max(1, 4096 // len(line))
    while True:
        yield Write(1, chunk)


def _date(sh: "Shell", argv: list[str]) -> Program:
    args = argv[1:]
    when = sh.session.now()
    fmt = "%a %b %e %H:%M:%S %Z %Y"
    while args:
        arg = args.pop(0)
        if arg in ("-u", "--utc"):
            continue
        if arg.startswith("+"):
            fmt = arg[1:]
        elif arg in ("-R", "--rfc-2822"):
            fmt = "%a, %d %b %Y %H:%M:%S +0000"
        elif arg.startswith("-I"):
            spec = arg[2:] or "date"
            fmt = {"date": "%Y-%m-%d", "hours": "%Y-%m-%dT%H+00:00",
                   "minutes": "%Y-%m-%dT%H:%M+00:00",
                   "seconds": "%Y-%m-%dT%H:%M:%S+00:00"}.get(spec, "%Y-%m-%d")
        elif arg == "-d" and args:
            value = args.pop(0)
            if value.startswith("@") and re.fullmatch(r"@-?\d+(\.\d+)?", value):
                when = float(value[1:])
            else:
                yield Write(2, text(f"date: invalid date '{value}'\n"))
                return 1
        else:
            yield Write(2, text(f"date: invalid date '{arg}'\n"))
            return 1
    yield Write(1, text(strftime(fmt, when) + "\n"))
    return 0


def strftime(fmt: str, when: float) -> str:
    """C strftime in UTC plus GNU's `%N` (nanoseconds) and `%s` (epoch seconds)."""
    fmt = fmt.replace("%N", f"{int((when % 1) * 1e9):09d}").replace("%s", str(int(when)))
    fmt = fmt.replace("%Z", "UTC").replace("%z", "+0000")
    return time.strftime(fmt, time.gmtime(when))


def _uptime(sh: "Shell", argv: list[str]) -> Program:
    now = sh.session.now()
    up = max(0, int(now - sh.session.boot))
    days, rest = divmod(up, 86400)
    hours, minutes = rest // 3600, rest % 3600 // 60
    shown = (f"{days} day{'s' if days != 1 else ''}, " if days else "") + \
        (f"{hours:2d}:{minutes:02d}" if hours else f"{minutes} min")
    yield Write(1, text(f" {strftime('%H:%M:%S', now)} up {shown},  0 users,  "
                        f"load average: 0.00, 0.00, 0.00\n"))
    return 0


def _line(value: Callable[["Shell"], str]) -> Applet:
    def applet(sh: "Shell", argv: list[str]) -> Program:
        yield Write(1, text(value(sh) + "\n"))
        return 0
    return applet


def _id(sh: "Shell", argv: list[str]) -> Program:
    flags = set("".join(a[1:] for a in argv[1:] if a.startswith("-")))
    if "u" in flags:
        out = "root" if "n" in flags else "0"
    elif "g" in flags:
        out = "root" if "n" in flags else "0"
    else:
        out = "uid=0(root) gid=0(root) groups=0(root),1(bin),2(daemon),3(sys),4(adm),6(disk)," \
              "10(wheel),11(floppy),20(dialout),26(tape),27(video)"
    yield Write(1, text(out + "\n"))
    return 0


def _uname(sh: "Shell", argv: list[str]) -> Program:
    flags = set("".join(a[1:] for a in argv[1:] if a.startswith("-"))) or {"s"}
    if "a" in flags:
        flags = set("snrvmo")
    fields = {"s": "Linux", "n": sh.sandbox.hostname, "r": KERNEL_VERSION,
              "v": "#1 SMP PREEMPT_DYNAMIC", "m": "x86_64", "o": "GNU/Linux"}
    yield Write(1, text(" ".join(fields[f] for f in "snrvmo" if f in flags) + "\n"))
    return 0


def _path_part(dirname: bool) -> Applet:
    def applet(sh: "Shell", argv: list[str]) -> Program:
        if len(argv) < 2:
            yield Write(2, text(f"Usage: {argv[0]} FILE\n"))
            return 1
        path = argv[1]
        stripped = path.rstrip("/") or ("/" if path.startswith("/") else "")
        if dirname:
            head = stripped.rsplit("/", 1)[0] if "/" in stripped else "."
            out = head.rstrip("/") or "/"
        else:
            out = stripped.rsplit("/", 1)[-1] or "/"
            if len(argv) > 2 and out.endswith(argv[2]) and out != argv[2]:
                out = out[:-len(argv[2])]
        yield Write(1, text(out + "\n"))
        return 0
    return applet


def _kill(sh: "Shell", argv: list[str]) -> Program:
    args = argv[1:]
    if args and args[0] == "-l":
        names = sorted(SIGNALS, key=SIGNALS.get)  # type: ignore[arg-type]
        yield Write(1, text("\n".join(f"{SIGNALS[n]}) {n}" for n in names) + "\n"))
        return 0
    sig = "TERM"
    if args and args[0] == "-s" and len(args) > 1:
        sig, args = args[1], args[2:]
    elif args and args[0].startswith("-") and len(args[0]) > 1:
        sig, args = args[0][1:], args[1:]
    name = "0" if sig == "0" else signal_name(sig)
    if name is None:
        yield Write(2, text(f"kill: bad signal name '{sig}'\n"))
        return 1
    status = 0
    for target in args:
        pid = target.lstrip("%")
        job = next((j for j in sh.session.jobs if str(j.pid) == pid), None)
        if job is not None and job.status is None:
            if name != "0":
                job.program.close()
                job.status = 128 + SIGNALS.get(name, 15)
        elif pid in ("1", str(sh.pid)) and name != "0":
            if name in sh.traps:
                sh.pending.append(name)
        elif pid not in ("1", str(sh.pid)):
            yield Write(2, text(f"kill: can't kill pid {target}: No such process\n"))
            status = 1
    return status


def _ps(sh: "Shell", argv: list[str]) -> Program:
    command = " ".join(sh.sandbox.command) or sh.name
    rows = [(1, command)] + [(j.pid, "sh") for j in sh.session.jobs if j.status is None]
    rows.append((max(r[0] for r in rows) + 1, "ps"))
    out = "PID   USER     TIME  COMMAND\n" + "".join(
        f"{pid:5d} root      0:00 {cmd}\n" for pid, cmd in rows)
    yield Write(1, text(out))
    return 0


def start_shell(sh: "Shell", argv: list[str], *, exec_tail: bool = False) -> tuple["Shell", Program]:
    """A child shell for `sh -c SCRIPT [NAME [ARGS..]]`, `sh FILE [ARGS..]` or `sh` (an
    interactive one), and the program that runs it. `exec_tail`: the last command of the
    script replaces the shell (dash and busybox do this for `-c`; signals then go to it)."""
    name = argv[0].rsplit("/", 1)[-1]
    args = argv[1:]
    options: set[str] = set()
    command = False
    while args and re.fullmatch(r"[-+][a-z]+", args[0]):
        flag = args.pop(0)
        command = command or "c" in flag
        options.update(set(flag[1:]) - {"c", "i", "l", "s"})
    if command:
        child = sh.spawn(name, args[2:])
        child.options = options & set("eufax")
        child.exec_tail = exec_tail
        if not args:
            return child, say(2, f"{name}: -c requires an argument\n", 2)
        child.name = args[1] if len(args) > 1 else name
        return child, child.script(args[0])
    child = sh.spawn(name, args[1:])
    child.options = options & set("eufax")
    if not args:
        return child, child.interactive()
    full = sh.resolve(args[0])
    if not sh.sandbox.is_file(full):
        return child, say(2, f"{name}: can't open '{args[0]}': No such file or directory\n", 2)
    child.name = args[0]
    return child, child.script(sh.sandbox.files[full].decode("utf-8", "surrogateescape"))


def _sh(sh: "Shell", argv: list[str]) -> Program:
    return (yield from start_shell(sh, argv)[1])


APPLETS: Mapping[str, Applet] = {
    "echo": _echo, "printf": _printf, "env": _env, "printenv": _printenv,
    "true": _constant(0), "false": _constant(1), "sleep": _sleep, "seq": _seq, "yes": _yes,
    "date": _date, "uptime": _uptime, "hostname": _line(lambda sh: sh.sandbox.hostname),
    "whoami": _line(lambda sh: "root"), "pwd": _line(lambda sh: sh.cwd), "id": _id,
    "uname": _uname, "basename": _path_part(False), "dirname": _path_part(True),
    "kill": _kill, "ps": _ps, "sh": _sh, "ash": _sh, "bash": _sh, "dash": _sh,
    "nproc": _line(lambda sh: "2"), "tty": _line(lambda sh: "/dev/pts/0" if sh.tty else "not a tty"),
}
