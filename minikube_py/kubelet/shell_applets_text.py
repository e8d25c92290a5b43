"""Busybox text applets: cat, grep, head, tail, wc, sort, uniq, cut, tr, sed, awk, tee,
xargs, base64, md5sum, sha256sum, gzip, gunzip, zcat.

Kubernetes piece: none — the filters a busybox image offers, as tutorials pipe them
(`env | grep KUBERNETES | sort`, `cat /etc/config/x | base64 -d`). Each reads its files or
stdin through shell_args and writes busybox's output; `sed` knows `s///[gI]`, `d`, `p` with
`-n` and line/regex addresses; `awk` knows `{print $N...}` with `-F` and a `/regex/` guard.
Binary data (gzip, base64 -d) stays bytes end to end. Pure.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING

import re2

from .shell_args import count, parse_opts, read_file, read_inputs
from .shell_io import CHUNK, Program, Read, Write, copy_stdin, stdin_bytes, text

if TYPE_CHECKING:
    from .shell_interp import Shell

Applet = Callable[["Shell", list[str]], Program]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _newline(line: bytes) -> bytes:
    return line if line.endswith(b"\n") else line + b"\n"


def _cat(sh: "Shell", argv: list[str]) -> Program:
    """Each operand in turn; stdin (no operand, or `-`) is copied read by read, so what a
    client types comes back at once, newline or not (`-n` needs line starts: by lines)."""
    parsed = yield from parse_opts(argv, "nuvetA")
    if parsed is None:
        return 1
    opts, paths = parsed
    status = number = 0
    for path in paths or ["-"]:
        if path == "-" and "-n" not in opts:
            yield from copy_stdin()
            continue
        if path == "-":
            while (line := (yield Read())) is not None:
                number += 1
                yield Write(1, text(f"{number:6d}\t") + stdin_bytes(line))
            continue
        data = yield from read_file(sh, path, "cat")
        if data is None:
            status = 1
            continue
        if "-n" in opts:
            lines = _lines(data)
            data = b"".join(text(f"{n:6d}\t") + ln for n, ln in enumerate(lines, number + 1))
            number += len(lines)
        if data:
            yield Write(1, data)
    return status


#: RE2 for every pattern a user gives (grep, sed, expr): linear-time matching, so a pattern
#: like `(a+)+$` cannot hold the event loop on a long line the way Python's backtracking `re`
#: would (a single match call is not a step the shell's governor can interrupt)
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False


def user_regex(pattern: str, ignore_case: bool = False):
    """A user's (already Python-syntax) pattern compiled with RE2; one RE2 cannot run
    (backreferences) or that is malformed matches itself literally."""
    prefix = "(?i)" if ignore_case else ""
    try:
        return re2.compile(prefix + pattern, _RE2_OPTIONS)
    except re2.error:
        return re2.compile(prefix + re.escape(pattern), _RE2_OPTIONS)


def bre_to_python(pattern: str) -> str:
    """A POSIX basic regular expression in Python syntax: `\\(` `\\)` `\\{` `\\}` `\\|` `\\+`
    are the operators, the bare characters literals."""
    pattern = pattern.replace("\\(", "\0(").replace("\\)", "\0)").replace("\\|", "\0|")
    pattern = pattern.replace("\\{", "\0{").replace("\\}", "\0}").replace("\\+", "\0+")
    return re.sub(r"(?<!\0)([()|{}+?])", r"\\\1", pattern).replace("\0", "")


def _regex(pattern: str, opts: dict[str, str]):
    if "-F" in opts:
        return user_regex(re.escape(pattern), "-i" in opts)
    if "-E" not in opts:  # basic regular expressions
        pattern = bre_to_python(pattern)
    if "-w" in opts:
        pattern = rf"\b(?:{pattern})\b"
    if "-x" in opts:
        pattern = rf"^(?:{pattern})$"
    return user_regex(pattern, "-i" in opts)


def _grep(sh: "Shell", argv: list[str]) -> Program:
    name = argv[0].rsplit("/", 1)[-1]
    parsed = yield from parse_opts(argv, "vicnEFqslhHwxre:o")
    if parsed is None:
        return 2
    opts, rest = parsed
    if name == "egrep":
        opts["-E"] = ""
    if name == "fgrep":
        opts["-F"] = ""
    if "-e" not in opts and not rest:
        yield Write(2, b"Usage: grep [-HhnlLoqvsriwFE] [-m N] [-A|B|C N] { PATTERN | -e PATTERN... | -f FILE... } [FILE]...\n")
        return 2
    pattern = opts["-e"] if "-e" in opts else rest.pop(0)
    regex = _regex(pattern, opts)
    files = rest or ["-"]
    show_name = ("-H" in opts or len(files) > 1) and "-h" not in opts
    matched = False
    status = 0
    for path in files:
        data, bad = yield from read_inputs(sh, [path], "grep")
        if bad:
            status = 2
            continue
        hits = 0
        out: list[str] = []
        for number, line in enumerate(data.decode("utf-8", "surrogateescape").splitlines(), 1):
            found = regex.search(line)
            if bool(found) == ("-v" in opts):
                continue
            hits += 1
            prefix = (f"{'(standard input)' if path == '-' else path}:" if show_name else "") + \
                (f"{number}:" if "-n" in opts else "")
            if "-o" in opts and found:
                out.extend(f"{prefix}{m.group()}\n" for m in regex.finditer(line))
            else:
                out.append(f"{prefix}{line}\n")
        matched = matched or hits > 0
        if "-q" in opts:
            continue
        if "-l" in opts:
            if hits:
                yield Write(1, text(f"{'(standard input)' if path == '-' else path}\n"))
        elif "-c" in opts:
            yield Write(1, text((f"{path}:" if show_name else "") + f"{hits}\n"))
        elif out:
            yield Write(1, text("".join(out)))
    if status and not ("-q" in opts and matched):
        return status
    return 0 if matched else 1


def _count_arg(argv: list[str]) -> list[str]:
    """`head -5` -> `head -n 5` (the historical form)."""
    return [argv[0]] + [x for a in argv[1:]
                        for x in (["-n", a[1:]] if re.fullmatch(r"-\d+", a) else [a])]


def _head(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(_count_arg(argv), "n:c:qv")
    if parsed is None:
        return 1
    opts, paths = parsed
    n = count(opts.get("-n", "10"), "head")
    if n is None:
        yield Write(2, text(f"head: invalid number '{opts.get('-n')}'\n"))
        return 1
    if paths in ([], ["-"]) and "-c" not in opts:
        for _ in range(n):  # stop reading after N lines: `yes | head -n 3` ends
            line = yield Read()
            if line is None:
                break
            yield Write(1, stdin_bytes(line))
        return 0
    data, status = yield from read_inputs(sh, paths, "head")
    if "-c" in opts:
        yield Write(1, data[:int(opts["-c"])])
    else:
        yield Write(1, b"".join(_lines(data)[:n]))
    return status


def _tail(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(_count_arg(argv), "n:c:fFqv")
    if parsed is None:
        return 1
    opts, paths = parsed
    spec = opts.get("-n", "10")
    data, status = yield from read_inputs(sh, paths, "tail")
    if "-c" in opts:
        yield Write(1, data[-int(opts["-c"]):] if int(opts["-c"]) else b"")
        return status
    lines = _lines(data)
    if spec.startswith("+"):
        shown = lines[max(int(spec[1:]) - 1, 0):]
    else:
        n = count(spec.lstrip("-"), "tail")
        if n is None:
            yield Write(2, text(f"tail: invalid number '{spec}'\n"))
            return 1
        shown = lines[-n:] if n else []
    yield Write(1, b"".join(shown))
    return status


def _wc(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "lwcmL")
    if parsed is None:
        return 1
    opts, paths = parsed
    wanted = [f for f in "lwc" if f"-{f}" in opts] or (["c"] if "-m" in opts else list("lwc"))
    status = 0
    totals = {"l": 0, "w": 0, "c": 0}
    for path in paths or ["-"]:
        data, bad = yield from read_inputs(sh, [path], "wc")
        status |= bad
        counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
        for k in totals:
            totals[k] += counts[k]
        shown = [counts[f] for f in wanted]
        label = "" if path == "-" else f" {path}"
        yield Write(1, text(" ".join(f"{v:>7}" if len(shown) > 1 else str(v)
                                     for v in shown) + label + "\n"))
    if len(paths) > 1:
        yield Write(1, text(" ".join(f"{totals[f]:>7}" for f in wanted) + " total\n"))
    return status


def _sort(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "nrufbk:t:o:sV")
    if parsed is None:
        return 1
    opts, paths = parsed
    data, status = yield from read_inputs(sh, paths, "sort")
    lines = data.decode("utf-8", "surrogateescape").splitlines()
    sep = opts.get("-t")
    key_field = int(opts["-k"].split(",")[0].split(".")[0]) if "-k" in opts else None

    def key_text(line: str) -> str:
        if key_field is None:
            return line
        parts = line.split(sep) if sep else line.split()
        return " ".join(parts[key_field - 1:]) if sep is None else sep.join(parts[key_field - 1:])

    def key(line: str) -> tuple:
        value = key_text(line)
        if "-b" in opts:
            value = value.lstrip()
        if "-n" in opts:
            match = re.match(r"\s*(-?\d+(?:\.\d+)?)", value)
            return (float(match.group(1)) if match else 0.0, line)
        return ((value.lower() if "-f" in opts else value), line)

    lines.sort(key=key, reverse="-r" in opts)
    if "-u" in opts:
        seen: set = set()
        unique = []
        for line in lines:
            k = key(line)[0]
            if k not in seen:
                seen.add(k)
                unique.append(line)
        lines = unique
    out = text("".join(line + "\n" for line in lines))
    if "-o" in opts:
        sh.sandbox.write_file(sh.resolve(opts["-o"]), out)
    else:
        yield Write(1, out)
    return status


def _uniq(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "cdui")
    if parsed is None:
        return 1
    opts, paths = parsed
    data, status = yield from read_inputs(sh, paths[:1], "uniq")
    groups: list[list[str]] = []
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        same = groups and ((groups[-1][0].lower() == line.lower()) if "-i" in opts
                           else groups[-1][0] == line)
        if same:
            groups[-1].append(line)
        else:
            groups.append([line])
    out = []
    for group in groups:
        if ("-d" in opts and len(group) < 2) or ("-u" in opts and len(group) > 1):
            continue
        out.append((f"{len(group):7d} " if "-c" in opts else "") + group[0] + "\n")
    yield Write(1, text("".join(out)))
    return status


def _ranges(spec: str) -> list[tuple[int, int]]:
    out = []
    for part in spec.split(","):
        start, dash, end = part.partition("-")
        lo = int(start) if start else 1
        hi = (int(end) if end else 1 << 30) if dash else lo
        out.append((lo, hi))
    return out


def _cut(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "d:f:c:b:s")
    if parsed is None:
        return 1
    opts, paths = parsed
    spec = opts.get("-f") or opts.get("-c") or opts.get("-b")
    if not spec:
        yield Write(2, b"cut: expected a list of bytes, characters, or fields\n")
        return 1
    try:
        ranges = _ranges(spec)
    except ValueError:
        yield Write(2, text(f"cut: invalid list '{spec}'\n"))
        return 1
    data, status = yield from read_inputs(sh, paths, "cut")
    delim = opts.get("-d", "\t")
    out = []
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        if "-f" in opts:
            if delim not in line:
                if "-s" not in opts:
                    out.append(line + "\n")
                continue
            fields = line.split(delim)
            picked = [f for i, f in enumerate(fields, 1) if any(lo <= i <= hi for lo, hi in ranges)]
            out.append(delim.join(picked) + "\n")
        else:
            out.append("".join(c for i, c in enumerate(line, 1)
                               if any(lo <= i <= hi for lo, hi in ranges)) + "\n")
    yield Write(1, text("".join(out)))
    return status


_TR_CLASSES = {"[:upper:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "[:lower:]": "abcdefghijklmnopqrstuvwxyz",
               "[:digit:]": "0123456789", "[:space:]": " \t\n\r\f\v", "[:blank:]": " \t",
               "[:alpha:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
               "[:alnum:]": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"}


def _tr_set(spec: str) -> str:
    from .shell_applets_sys import unescape

    for name, chars in _TR_CLASSES.items():
        spec = spec.replace(name, chars)
    spec, _ = unescape(spec)
    out: list[str] = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            out.extend(chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1))
            i += 3
        else:
            out.append(spec[i])
            i += 1
    return "".join(out)


def _tr(sh: "Shell", argv: list[str]) -> Program:
    """stdin to stdout read by read (busybox tr reads no files), so `tr a-z A-Z` answers
    each keystroke; `-s` squeezes across reads too."""
    parsed = yield from parse_opts(argv, "dsc")
    if parsed is None:
        return 1
    opts, sets = parsed
    if not sets or (len(sets) < 2 and "-d" not in opts and "-s" not in opts):
        yield Write(2, b"tr: missing operand\n")
        return 1
    first = _tr_set(sets[0])
    second = _tr_set(sets[1]) if len(sets) > 1 else ""
    table = str.maketrans(first, (second + second[-1:] * len(first))[:len(first)]) \
        if second and "-d" not in opts else None
    squeeze = _tr_set(sets[-1]) if "-s" in opts else ""
    last = ""
    while (value := (yield Read(CHUNK))) is not None:
        if "-d" in opts:
            value = "".join(c for c in value if (c in first) == ("-c" in opts))
        elif table is not None:
            value = value.translate(table)
        if squeeze:
            value = re.sub("([" + re.escape(squeeze) + r"])\1+", r"\1", value)
            if last and last in squeeze:
                value = value.lstrip(last)  # the run went on from the last read
        if value:
            last = value[-1]
            yield Write(1, text(value))
    return 0


def _sed(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "ne:iEr")
    if parsed is None:
        return 1
    opts, rest = parsed
    script = opts.get("-e") or (rest.pop(0) if rest else "")
    commands = []
    for part in re.split(r"[;\n](?![^/]*/[gIip0-9]*$)", script) if script else []:
        part = part.strip()
        if not part:
            continue
        parsed_cmd = _sed_command(part, "-E" in opts or "-r" in opts)
        if parsed_cmd is None:
            yield Write(2, text(f"sed: bad command '{part}'\n"))
            return 1
        commands.append(parsed_cmd)
    targets = rest if "-i" in opts else [None]
    for target in targets:
        data, status = yield from read_inputs(sh, [target] if target else rest, "sed")
        if status:
            return status
        out = []
        for number, line in enumerate(data.decode("utf-8", "surrogateescape").splitlines(), 1):
            deleted = False
            for address, verb, apply in commands:
                if address is not None and not address(number, line):
                    continue
                if verb == "d":
                    deleted = True
                    break
                if verb == "p":
                    out.append(line + "\n")
                elif verb == "s":
                    line = apply(line)
            if not deleted and "-n" not in opts:
                out.append(line + "\n")
        result = text("".join(out))
        if target:
            sh.sandbox.write_file(sh.resolve(target), result)
        else:
            yield Write(1, result)
    return 0


def _sed_command(part: str, extended: bool):  # -> (address, verb, apply) | None
    address = None
    match = re.match(r"(\d+|\$|/[^/]*/)", part)
    if match and part[match.end():match.end() + 1] in ("d", "p", "s", "") and \
            not (match.group().isdigit() and part == match.group()):
        spec = match.group()
        part = part[match.end():]
        if spec.startswith("/"):
            rx = _regex(spec[1:-1], {} if not extended else {"-E": ""})
            address = lambda n, line, rx=rx: bool(rx.search(line))  # noqa: E731
        elif spec == "$":
            address = None  # last line: treated as every line (good enough for `$d` rarely)
        else:
            address = lambda n, line, k=int(spec): n == k  # noqa: E731
    if part in ("d", "p"):
        return address, part, None
    if part.startswith("s") and len(part) > 1:
        delim = part[1]
        pieces = re.split(rf"(?<!\\){re.escape(delim)}", part[2:])
        if len(pieces) != 3:
            return None
        pattern, replacement, flags = pieces
        rx = _regex(pattern, {"-E": ""} if extended else {}) if "I" not in flags and "i" not in flags \
            else _regex(pattern, {"-i": "", **({"-E": ""} if extended else {})})
        repl = re.sub(r"\\(\d)", r"\\g<\1>", replacement).replace("&", "\\g<0>").replace("\\\\g<0>", "&")
        limit = 0 if "g" in flags else 1
        return address, "s", lambda line, rx=rx: rx.sub(repl, line, count=limit)
    return None


def _awk(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "F:v:")
    if parsed is None:
        return 1
    opts, rest = parsed
    if not rest:
        yield Write(2, b"awk: no program\n")
        return 1
    program = rest.pop(0).strip()
    match = re.fullmatch(r"(?:/(.*)/\s*)?(?:\{\s*(.*?)\s*;?\s*\})?", program, re.S)
    if match is None or (match.group(1) is None and match.group(2) is None):
        yield Write(2, text(f"awk: unsupported program '{program}'\n"))
        return 2
    guard = re.compile(match.group(1)) if match.group(1) is not None else None
    action = match.group(2) if match.group(2) is not None else "print"
    if not re.fullmatch(r"print(\s.*)?", action):
        yield Write(2, text(f"awk: unsupported program '{program}'\n"))
        return 2
    items = re.findall(r'"[^"]*"|\$\d+|\$NF|NR|NF|,', action[5:])
    data, status = yield from read_inputs(sh, rest, "awk")
    sep = opts.get("-F")
    out = []
    for number, line in enumerate(data.decode("utf-8", "surrogateescape").splitlines(), 1):
        if guard is not None and not guard.search(line):
            continue
        fields = line.split(sep) if sep else line.split()
        values: list[str] = []
        joined: list[str] = []
        for item in items or ["$0"]:
            if item == ",":
                joined.append(" ")
                continue
            if item.startswith('"'):
                joined.append(item[1:-1])
            elif item == "NR":
                joined.append(str(number))
            elif item == "NF":
                joined.append(str(len(fields)))
            else:
                index = len(fields) if item == "$NF" else int(item[1:])
                joined.append(line if index == 0 else fields[index - 1] if index <= len(fields) else "")
        values.append("".join(joined))
        out.append(values[0] + "\n")
    yield Write(1, text("".join(out)))
    return status


def _tee(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "ai")
    if parsed is None:
        return 1
    opts, paths = parsed
    fulls = [sh.resolve(p) for p in paths]
    for full in fulls:
        sh.sandbox.write_file(full, b"", append="-a" in opts)
    box = sh.sandbox
    return (yield from copy_stdin(*(partial(box.write_file, full, append=True)
                                    for full in fulls)))


def _xargs(sh: "Shell", argv: list[str]) -> Program:
    args = argv[1:]
    per = None
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag == "-n" and args:
            per = int(args.pop(0))
        elif flag.startswith("-n"):
            per = int(flag[2:])
        elif flag in ("-r", "-t", "-0"):
            continue
    data, _ = yield from read_inputs(sh, [], "xargs")
    items = data.decode("utf-8", "surrogateescape").split()
    command = args or ["echo"]
    if not items and "-r" in argv:
        return 0
    batches = [items[i:i + per] for i in range(0, len(items), per)] if per else [items]
    status = 0
    for batch in batches or [[]]:
        program = sh.lookup_command([*command, *batch])
        if program is None:
            yield Write(2, text(f"xargs: {command[0]}: No such file or directory\n"))
            return 127
        status = (yield from program) or status
    return 123 if status else 0


def _base64(sh: "Shell", argv: list[str]) -> Program:
    parsed = yield from parse_opts(argv, "dw:i")
    if parsed is None:
        return 1
    opts, paths = parsed
    data, status = yield from read_inputs(sh, paths, "base64")
    if "-d" in opts:
        try:
            yield Write(1, base64.b64decode(b"".join(data.split()), validate=True))
        except (binascii.Error, ValueError):
            yield Write(2, b"base64: invalid input\n")
            return 1
        return status
    encoded = base64.b64encode(data).decode()
    width = int(opts.get("-w", "76"))
    if width:
        encoded = "\n".join(encoded[i:i + width] for i in range(0, len(encoded), width))
    yield Write(1, text(encoded + "\n" if encoded else ""))
    return status


def _digest(algorithm: str) -> Applet:
    def applet(sh: "Shell", argv: list[str]) -> Program:
        parsed = yield from parse_opts(argv, "cs")
        if parsed is None:
            return 1
        _, paths = parsed
        status = 0
        for path in paths or ["-"]:
            data, bad = yield from read_inputs(sh, [path], argv[0])
            status |= bad
            if not bad:
                yield Write(1, text(f"{hashlib.new(algorithm, data).hexdigest()}  {path}\n"))
        return status
    return applet


def _gzip(sh: "Shell", argv: list[str]) -> Program:
    name = argv[0].rsplit("/", 1)[-1]
    parsed = yield from parse_opts(argv, "cdfk123456789nq")
    if parsed is None:
        return 1
    opts, paths = parsed
    decompress = "-d" in opts or name in ("gunzip", "zcat")
    to_stdout = "-c" in opts or name == "zcat" or not paths
    status = 0
    for path in paths or ["-"]:
        data, bad = yield from read_inputs(sh, [path], name)
        if bad:
            status = 1
            continue
        try:
            out = gzip.decompress(data) if decompress else gzip.compress(data, mtime=0)
        except (OSError, EOFError):
            yield Write(2, text(f"{name}: invalid magic\n"))
            status = 1
            continue
        if to_stdout or path == "-":
            yield Write(1, out)
            continue
        full = sh.resolve(path)
        target = full[:-3] if decompress and full.endswith(".gz") else full + ".gz"
        sh.sandbox.write_file(target, out)
        if "-k" not in opts:
            sh.sandbox.remove(full)
    return status


APPLETS: Mapping[str, Applet] = {
    "cat": _cat, "grep": _grep, "egrep": _grep, "fgrep": _grep, "head": _head, "tail": _tail,
    "wc": _wc, "sort": _sort, "uniq": _uniq, "cut": _cut, "tr": _tr, "sed": _sed, "awk": _awk,
    "tee": _tee, "xargs": _xargs, "base64": _base64, "md5sum": _digest("md5"),
    "sha1sum": _digest("sha1"), "sha256sum": _digest("sha256"), "sha512sum": _digest("sha512"),
    "gzip": _gzip, "gunzip": _gzip, "zcat": _gzip,
}
