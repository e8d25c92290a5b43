"""The simulated shell of a fake container: what `kubectl exec` and `kubectl attach` talk to.

Kubernetes piece: none in the kubelet itself — upstream, `kubectl exec web -- env` reaches the
kubelet (pkg/kubelet/server.go getExec), which asks the container runtime to run a process in
the container's namespaces. No container runs here, so the kubelet runs this small shell over
the container's *simulated* environment (`Sandbox`: env vars, hostname, files of ConfigMap and
Secret volumes) instead. Pure: a program is a generator that yields what it needs done —
`Write(fd, data)`, `Sleep(seconds)`, `Read()` (a line of stdin is sent back, `None` at EOF) —
and returns its exit status; the kubelet's streaming endpoint (streaming.py) performs those
actions over the WebSocket, and tests drive it with `run_sync`.

What it understands (busybox-flavoured messages, since busybox is the smallest shell image):
- commands: `echo [-n] [-e]`, `printf`, `env`, `printenv [NAME..]`, `export`, `unset`,
  `hostname`, `pwd`, `cd`, `ls [-a] [-l] [-1] [PATH..]`, `cat [FILE..]` (stdin without files),
  `sleep N`, `true`, `false`, `:`, `exit [N]`, `read [-r] NAME..`, `whoami`, `id`, `uname`,
  `date`, `grep [-v] [-i] [-c] PATTERN [FILE..]`, `head [-n N]`, `wc [-l]`, `sh`/`bash`/`ash`
  (`-c SCRIPT`, or an interactive read-eval loop over stdin);
- scripts: `;`, newlines, `&&`, `||`, `|`, redirections `>`, `>>`, `<`, `2>`, `2>&1`,
  `NAME=value`, `$NAME`, `${NAME}`, `${NAME:-default}`, `$?`, `$(command)`, quotes, `#` comments;
- an unknown command: `sh: foo: not found`, status 127 — and, run directly (not through a
  shell), the runtime's `executable file not found in $PATH`, status 126, as containerd says.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple, Union

from .command import parse_seconds


# -- what a program asks the driver to do -----------------------------------------------
class Write(NamedTuple):
    fd: int  # 1 stdout, 2 stderr
    data: bytes


class Sleep(NamedTuple):
    seconds: float


class Read(NamedTuple):
    """Ask for one line of stdin (with its newline); the driver sends None at EOF."""


Action = Union[Write, Sleep, Read]
Program = Generator[Action, "str | None", int]

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BIN_DIRS = frozenset(PATH.split(":"))
PROMPT = "\\w # "
_BASE_DIRS = ("/bin", "/dev", "/etc", "/home", "/proc", "/root", "/sys", "/tmp", "/usr",
              "/usr/bin", "/usr/local", "/var", "/var/log")


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

    def __post_init__(self) -> None:
        self.dirs.update(_BASE_DIRS)
        self.dirs.add("/")
        for path in list(self.files):
            self._add_parents(path)

    def _add_parents(self, path: str) -> None:
        parent = path.rsplit("/", 1)[0] or "/"
        while parent not in self.dirs:
            self.dirs.add(parent)
            parent = parent.rsplit("/", 1)[0] or "/"

    def resolve(self, path: str) -> str:
        if not path.startswith("/"):
            path = f"{self.cwd.rstrip('/')}/{path}"
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

    def write_file(self, path: str, data: bytes, append: bool = False) -> None:
        self.files[path] = (self.files.get(path, b"") if append else b"") + data
        self._add_parents(path)
        if self.layer is not None:
            self.layer[path] = self.files[path]

    def listdir(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        names = {p[len(prefix):].split("/", 1)[0] for p in (*self.files, *self.dirs)
                 if p.startswith(prefix) and p != prefix}
        return sorted(n for n in names if n)


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


# -- tokens and parsing -------------------------------------------------------------------
#: a word is a list of (text, mode): "lit" (single-quoted/escaped), "dq" (double-quoted),
#: "bare" (unquoted); expansion happens at run time, so `X=1; echo $X` works
Word = list[tuple[str, str]]
_OPERATORS = ("&&", "||", ";", "\n", "|", "&", ">>", "2>&1", "2>", ">", "<")


class ShellSyntaxError(ValueError):
    pass


def tokenize(text: str) -> list[Word | str]:
    """Words and operators (operators as plain strings)."""
    tokens: list[Word | str] = []
    word: Word = []
    started = False
    i, n = 0, len(text)

    def flush() -> None:
        nonlocal word, started
        if started:
            tokens.append(word)
        word, started = [], False

    while i < n:
        c = text[i]
        if c in " \t\r":
            flush()
            i += 1
        elif c == "#" and not started:
            while i < n and text[i] != "\n":
                i += 1
        elif c == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("unterminated quoted string")
            word.append((text[i + 1:end], "lit"))
            started, i = True, end + 1
        elif c == '"':
            j, buf = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n and text[j + 1] in '"\\$`':
                    buf.append(text[j + 1])
                    j += 2
                    continue
                if text.startswith("$(", j):
                    end = _matching_paren(text, j + 1)
                    buf.append(text[j:end + 1])
                    j = end + 1
                    continue
                buf.append(text[j])
                j += 1
            if j >= n:
                raise ShellSyntaxError("unterminated quoted string")
            word.append(("".join(buf), "dq"))
            started, i = True, j + 1
        elif c == "\\" and i + 1 < n:
            if text[i + 1] != "\n":
                word.append((text[i + 1], "lit"))
                started = True
            i += 2
        elif c == "$" and text.startswith("$(", i):
            end = _matching_paren(text, i + 1)
            word.append((text[i:end + 1], "bare"))
            started, i = True, end + 1
        else:
            op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
            if op is not None and not (op[0] == "2" and started):
                flush()
                tokens.append(op)
                i += len(op)
                continue
            j = i
            while j < n and text[j] not in " \t\r\n'\"\\;&|<>" and not text.startswith("$(", j):
                j += 1
            j = max(j, i + 1)
            word.append((text[i:j], "bare"))
            started, i = True, j
    flush()
    return tokens


def _matching_paren(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "(":
            depth += 1
        elif text[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    raise ShellSyntaxError("unterminated $(")


class Command(NamedTuple):
    words: list[Word]
    redirects: list[tuple[str, Word | None]]  # (op, target); 2>&1 has no target


#: a script: [(connector, pipeline)] where connector is "", ";", "&&" or "||"
Script = list[tuple[str, list[Command]]]


def parse(text: str) -> Script:
    tokens = tokenize(text)
    script: Script = []
    pipeline: list[Command] = []
    command = Command([], [])
    connector = ""
    i = 0

    def end_command() -> None:
        nonlocal command
        if not command.words and not command.redirects:
            raise ShellSyntaxError("syntax error: unexpected operator")
        pipeline.append(command)
        command = Command([], [])

    while i < len(tokens):
        tok = tokens[i]
        if isinstance(tok, list):
            command.words.append(tok)
        elif tok in (">", ">>", "<", "2>"):
            target = tokens[i + 1] if i + 1 < len(tokens) else None
            if not isinstance(target, list):
                raise ShellSyntaxError(f"syntax error: unexpected {'newline' if target in (None, chr(10)) else target!r}")
            command.redirects.append((tok, target))
            i += 1
        elif tok == "2>&1":
            command.redirects.append((tok, None))
        elif tok == "|":
            end_command()
        else:  # ; \n & && ||
            if command.words or command.redirects:
                end_command()
            elif pipeline or tok in ("&&", "||"):
                raise ShellSyntaxError(f"syntax error: unexpected {tok!r}")
            if pipeline:
                script.append((connector, pipeline))
                pipeline = []
            connector = ";" if tok in (";", "\n", "&") else tok
        i += 1
    if command.words or command.redirects:
        end_command()
    elif connector in ("&&", "||") and not pipeline:
        raise ShellSyntaxError("syntax error: unexpected end of file")
    if pipeline:
        script.append((connector, pipeline))
    return script


# -- the shell ----------------------------------------------------------------------------
Builtin = Callable[["Shell", list[str]], Program]
_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*)|([?$#0]))")


def _text(data: str) -> bytes:
    return data.encode()


class Shell:
    """One shell process: its variables (the container env, copied), last status, cwd."""

    def __init__(self, sandbox: Sandbox, *, name: str = "sh", tty: bool = False) -> None:
        self.sandbox = sandbox
        self.vars = dict(sandbox.env)
        self.status = 0
        self.name = name
        self.tty = tty  # a terminal: interactive shells print a prompt

    # -- entry points ----------------------------------------------------------------------
    def exec(self, argv: list[str]) -> Program:
        """What the runtime runs for `kubectl exec -- argv` (no shell in between)."""
        if not argv:
            return (yield from self.interactive())
        builtin = COMMANDS.get(argv[0].rsplit("/", 1)[-1])
        if builtin is None:
            yield Write(1, _text(
                f'OCI runtime exec failed: exec failed: unable to start container process: '
                f'exec: "{argv[0]}": executable file not found in $PATH: unknown\n'))
            return 126
        try:
            return (yield from builtin(self, argv))
        except _Exit as done:
            return done.code

    def script(self, text: str) -> Program:
        """`sh -c TEXT`."""
        try:
            parsed = parse(text)
        except ShellSyntaxError as exc:
            yield Write(2, _text(f"{self.name}: {exc}\n"))
            return 2
        try:
            return (yield from self._run_script(parsed))
        except _Exit as done:
            return done.code

    def interactive(self, prompt: str | None = None) -> Program:
        """A read-eval loop over stdin (`sh` with no `-c`), until EOF or `exit`; with a tty
        it prompts like busybox (`/ # `)."""
        if prompt is None:
            prompt = PROMPT if self.tty else ""
        while True:
            if prompt:
                yield Write(1, _text(self._prompt(prompt)))
            line = yield Read()
            if line is None:
                return self.status
            try:
                parsed = parse(line)
            except ShellSyntaxError as exc:
                yield Write(2, _text(f"{self.name}: {exc}\n"))
                self.status = 2
                continue
            try:
                self.status = yield from self._run_script(parsed)
            except _Exit as done:
                return done.code

    def _prompt(self, prompt: str) -> str:
        return prompt.replace("\\w", self.sandbox.cwd)

    # -- running ---------------------------------------------------------------------------
    def _run_script(self, script: Script) -> Program:
        status = self.status
        for connector, pipeline in script:
            if connector == "&&" and status != 0:
                continue
            if connector == "||" and status == 0:
                continue
            status = yield from self._pipeline(pipeline)
            self.status = status
        return status

    def _pipeline(self, pipeline: list[Command]) -> Program:
        feed: list[bytes] | None = None
        status = 0
        for index, command in enumerate(pipeline):
            last = index == len(pipeline) - 1
            capture: list[bytes] | None = None if last else []
            lines = iter(_lines(b"".join(feed))) if feed is not None else None
            status = yield from _redirect(self._command(command), capture, lines)
            feed = capture
        return status

    def _command(self, command: Command) -> Program:
        argv: list[str] = []
        for word in command.words:
            argv.append((yield from self._expand(word)))
        assignments = []
        while argv and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[0], re.S):
            assignments.append(argv.pop(0).split("=", 1))
        for key, value in assignments:
            self.vars[key] = value
        program = self._simple(argv) if argv else _nothing()
        for op, target in command.redirects:
            path = (yield from self._expand(target)) if target is not None else ""
            program = yield from self._apply_redirect(program, op, path)
            if program is None:
                return 1
        return (yield from program)

    def _apply_redirect(self, program: Program, op: str, path: str) -> Generator[Action, str | None, Program | None]:
        box = self.sandbox
        if op == "2>&1":
            return _merge_stderr(program)
        if path == "/dev/null":
            return _redirect(program, [] if op in (">", ">>") else None,
                             iter(()) if op == "<" else None, drop_stderr=op == "2>")
        full = box.resolve(path)
        if op == "<":
            if full not in box.files:
                yield Write(2, _text(f"{self.name}: can't open {path}: no such file\n"))
                return None
            return _redirect(program, None, iter(_lines(box.files[full])))
        if full in box.dirs:
            yield Write(2, _text(f"{self.name}: can't create {path}: Is a directory\n"))
            return None
        return _to_file(program, box, full, append=op == ">>", fd=2 if op == "2>" else 1)

    def _simple(self, argv: list[str]) -> Program:
        directory, _, base = argv[0].rpartition("/")
        builtin = COMMANDS.get(base) if not directory or directory in BIN_DIRS else None
        if builtin is None:
            yield Write(2, _text(f"{self.name}: {argv[0]}: not found\n"))
            return 127
        return (yield from builtin(self, argv))

    def _expand(self, word: Word) -> Generator[Action, str | None, str]:
        out = []
        for text, mode in word:
            if mode == "lit":
                out.append(text)
                continue
            if mode == "bare" and text.startswith("~") and not out:
                text = self.vars.get("HOME", "/root") + text[1:]
            pos = 0
            while pos < len(text):
                if text.startswith("$(", pos):
                    end = _matching_paren(text, pos + 1)
                    captured: list[bytes] = []
                    sub = Shell(self.sandbox, name=self.name)
                    sub.vars = dict(self.vars)
                    yield from _redirect(sub.script(text[pos + 2:end]), captured, None)
                    out.append(b"".join(captured).decode(errors="replace").rstrip("\n"))
                    pos = end + 1
                    continue
                match = _VAR.match(text, pos) if text[pos] == "$" else None
                if match is None:
                    nxt = text.find("$", pos + 1)
                    nxt = len(text) if nxt < 0 else nxt
                    out.append(text[pos:nxt])
                    pos = nxt
                    continue
                braced, default, plain, special = match.groups()
                if special == "?":
                    out.append(str(self.status))
                elif special == "$":
                    out.append("1")
                elif special == "#":
                    out.append("0")
                elif special == "0":
                    out.append(self.name)
                else:
                    value = self.vars.get(braced or plain or "", "")
                    out.append(value if value or default is None else default)
                pos = match.end()
        return "".join(out)


def _nothing() -> Program:
    return 0
    yield  # pragma: no cover - makes this a generator


def _lines(data: bytes) -> list[str]:
    return data.decode(errors="replace").splitlines(keepends=True)


def _redirect(program: Program, capture: list[bytes] | None, feed: Iterator[str] | None,
              *, drop_stderr: bool = False) -> Program:
    """Run `program`, keeping its stdout in `capture` and/or serving its stdin from `feed`."""
    try:
        action = next(program)
        while True:
            reply = None
            if capture is not None and isinstance(action, Write) and action.fd == 1:
                capture.append(action.data)
            elif drop_stderr and isinstance(action, Write) and action.fd == 2:
                pass
            elif feed is not None and isinstance(action, Read):
                reply = next(feed, None)
            else:
                reply = yield action
            action = program.send(reply)
    except StopIteration as stop:
        return stop.value


def _merge_stderr(program: Program) -> Program:
    try:
        action = next(program)
        while True:
            if isinstance(action, Write) and action.fd == 2:
                action = Write(1, action.data)
            action = program.send((yield action))
    except StopIteration as stop:
        return stop.value


def _to_file(program: Program, box: Sandbox, path: str, *, append: bool, fd: int) -> Program:
    box.write_file(path, b"", append=append)
    try:
        action = next(program)
        while True:
            reply = None
            if isinstance(action, Write) and action.fd == fd:
                box.write_file(path, action.data, append=True)
            else:
                reply = yield action
            action = program.send(reply)
    except StopIteration as stop:
        return stop.value


# -- commands -----------------------------------------------------------------------------
def _flags(argv: list[str], known: str) -> tuple[set[str], list[str]]:
    flags: set[str] = set()
    rest = []
    for i, arg in enumerate(argv[1:], 1):
        if arg == "--":
            rest.extend(argv[i + 1:])
            break
        if arg.startswith("-") and len(arg) > 1 and not rest and set(arg[1:]) <= set(known):
            flags.update(arg[1:])
        else:
            rest.append(arg)
    return flags, rest


def _echo(sh: Shell, argv: list[str]) -> Program:
    args = argv[1:]
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = "e" in args[0] or (escapes and "E" not in args[0])
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = text.encode().decode("unicode_escape", errors="replace")
    yield Write(1, _text(text + ("\n" if newline else "")))
    return 0


def _printf(sh: Shell, argv: list[str]) -> Program:
    if len(argv) < 2:
        yield Write(2, b"printf: usage: printf FORMAT [ARGUMENT...]\n")
        return 1
    fmt = argv[1].encode().decode("unicode_escape", errors="replace")
    args = iter(argv[2:])
    out = re.sub(r"%[sd%]", lambda m: "%" if m.group() == "%%" else next(args, ""), fmt)
    yield Write(1, _text(out))
    return 0


def _env(sh: Shell, argv: list[str]) -> Program:
    yield Write(1, _text("".join(f"{k}={v}\n" for k, v in sh.vars.items())))
    return 0


def _printenv(sh: Shell, argv: list[str]) -> Program:
    if len(argv) == 1:
        return (yield from _env(sh, argv))
    status = 0
    for name in argv[1:]:
        if name in sh.vars:
            yield Write(1, _text(sh.vars[name] + "\n"))
        else:
            status = 1
    return status


def _export(sh: Shell, argv: list[str]) -> Program:
    for arg in argv[1:]:
        if "=" in arg:
            key, value = arg.split("=", 1)
            sh.vars[key] = value
    return 0
    yield  # pragma: no cover


def _unset(sh: Shell, argv: list[str]) -> Program:
    for name in argv[1:]:
        sh.vars.pop(name, None)
    return 0
    yield  # pragma: no cover


def _hostname(sh: Shell, argv: list[str]) -> Program:
    yield Write(1, _text(sh.sandbox.hostname + "\n"))
    return 0


def _pwd(sh: Shell, argv: list[str]) -> Program:
    yield Write(1, _text(sh.sandbox.cwd + "\n"))
    return 0


def _cd(sh: Shell, argv: list[str]) -> Program:
    target = argv[1] if len(argv) > 1 else sh.vars.get("HOME", "/root")
    full = sh.sandbox.resolve(target)
    if full not in sh.sandbox.dirs:
        yield Write(2, _text(f"{sh.name}: cd: can't cd to {target}: No such file or directory\n"))
        return 2
    sh.sandbox.cwd = full
    sh.vars["PWD"] = full
    return 0


def _ls(sh: Shell, argv: list[str]) -> Program:
    flags, paths = _flags(argv, "al1hF")
    box = sh.sandbox
    status = 0
    targets = paths or ["."]
    for index, path in enumerate(targets):
        full = box.resolve(path)
        if full in box.files:
            yield Write(1, _text(_ls_entry(box, full, path, "l" in flags)))
            continue
        if full not in box.dirs:
            yield Write(2, _text(f"ls: {path}: No such file or directory\n"))
            status = 1
            continue
        if len(targets) > 1:
            yield Write(1, _text(("\n" if index else "") + f"{path}:\n"))
        names = box.listdir(full)
        if "a" in flags:
            names = [".", "..", *names]
        text = "".join(_ls_entry(box, f"{full.rstrip('/')}/{n}", n, "l" in flags) for n in names)
        yield Write(1, _text(text))
    return status


def _ls_entry(box: Sandbox, full: str, shown: str, long: bool) -> str:
    if not long:
        return shown + "\n"
    if full in box.files:
        return f"-rw-r--r--    1 root     root     {len(box.files[full]):>9} {shown}\n"
    return f"drwxr-xr-x    2 root     root     {4096:>9} {shown}\n"


def _cat(sh: Shell, argv: list[str]) -> Program:
    _, paths = _flags(argv, "uv")
    if not paths or paths == ["-"]:
        while True:
            line = yield Read()
            if line is None:
                return 0
            yield Write(1, _text(line))
    status = 0
    for path in paths:
        full = sh.sandbox.resolve(path)
        if full in sh.sandbox.files:
            yield Write(1, sh.sandbox.files[full])
        elif full in sh.sandbox.dirs:
            yield Write(2, _text("cat: read error: Is a directory\n"))
            status = 1
        else:
            yield Write(2, _text(f"cat: can't open '{path}': No such file or directory\n"))
            status = 1
    return status


def _sleep(sh: Shell, argv: list[str]) -> Program:
    if len(argv) != 2:
        yield Write(2, b"sleep: usage: sleep N\n")
        return 1
    try:
        seconds = parse_seconds(argv[1])
    except ValueError:
        yield Write(2, _text(f"sleep: invalid number '{argv[1]}'\n"))
        return 1
    yield Sleep(float("inf") if seconds is None else seconds)
    return 0


def _true(sh: Shell, argv: list[str]) -> Program:
    return 0
    yield  # pragma: no cover


def _false(sh: Shell, argv: list[str]) -> Program:
    return 1
    yield  # pragma: no cover


def _exit(sh: Shell, argv: list[str]) -> Program:
    code = sh.status
    if len(argv) > 1:
        try:
            code = int(argv[1]) % 256
        except ValueError:
            yield Write(2, _text(f"{sh.name}: exit: Illegal number: {argv[1]}\n"))
            code = 2
    raise _Exit(code)


def _read(sh: Shell, argv: list[str]) -> Program:
    _, names = _flags(argv, "r")
    line = yield Read()
    if line is None:
        return 1
    values = line.rstrip("\n").split(None, max(len(names) - 1, 0)) if names else []
    for i, name in enumerate(names or ["REPLY"]):
        sh.vars[name] = values[i] if i < len(values) else (line.rstrip("\n") if not names else "")
    return 0


def _whoami(sh: Shell, argv: list[str]) -> Program:
    yield Write(1, b"root\n")
    return 0


def _id(sh: Shell, argv: list[str]) -> Program:
    yield Write(1, b"uid=0(root) gid=0(root) groups=0(root)\n")
    return 0


def _uname(sh: Shell, argv: list[str]) -> Program:
    yield Write(1, _text(f"Linux{' ' + sh.sandbox.hostname if '-a' in argv else ''}\n"))
    return 0


def _date(sh: Shell, argv: list[str]) -> Program:
    yield Write(1, _text(time.strftime("%a %b %e %H:%M:%S UTC %Y", time.gmtime()) + "\n"))
    return 0


def _input_lines(sh: Shell, paths: list[str], name: str) -> Generator[Action, str | None, list[str] | None]:
    """The lines of `paths`, or of stdin without any."""
    if not paths:
        lines = []
        while (line := (yield Read())) is not None:
            lines.append(line)
        return lines
    out: list[str] = []
    for path in paths:
        full = sh.sandbox.resolve(path)
        if full not in sh.sandbox.files:
            yield Write(2, _text(f"{name}: {path}: No such file or directory\n"))
            return None
        out.extend(_lines(sh.sandbox.files[full]))
    return out


def _grep(sh: Shell, argv: list[str]) -> Program:
    flags, rest = _flags(argv, "vicF")
    if not rest:
        yield Write(2, b"Usage: grep [-vicF] PATTERN [FILE]...\n")
        return 2
    pattern = re.escape(rest[0]) if "F" in flags else rest[0]
    try:
        regex = re.compile(pattern, re.I if "i" in flags else 0)
    except re.error:
        regex = re.compile(re.escape(rest[0]), re.I if "i" in flags else 0)
    lines = yield from _input_lines(sh, rest[1:], "grep")
    if lines is None:
        return 2
    hits = [ln for ln in lines if bool(regex.search(ln)) != ("v" in flags)]
    if "c" in flags:
        yield Write(1, _text(f"{len(hits)}\n"))
    else:
        yield Write(1, _text("".join(ln if ln.endswith("\n") else ln + "\n" for ln in hits)))
    return 0 if hits else 1


def _head(sh: Shell, argv: list[str]) -> Program:
    count, args = 10, argv[1:]
    if len(args) >= 2 and args[0] == "-n":
        count, args = int(args[1]) if args[1].isdigit() else 10, args[2:]
    elif args and re.fullmatch(r"-\d+", args[0]):
        count, args = int(args[0][1:]), args[1:]
    lines = yield from _input_lines(sh, args, "head")
    if lines is None:
        return 1
    yield Write(1, _text("".join(lines[:count])))
    return 0


def _wc(sh: Shell, argv: list[str]) -> Program:
    flags, paths = _flags(argv, "lwc")
    lines = yield from _input_lines(sh, paths, "wc")
    if lines is None:
        return 1
    text = "".join(lines)
    counts = {"l": text.count("\n"), "w": len(text.split()), "c": len(text.encode())}
    shown = [str(counts[f]) for f in "lwc" if f in flags] or [str(counts[f]) for f in "lwc"]
    yield Write(1, _text(" ".join(shown) + "\n"))
    return 0


def _sh(sh: Shell, argv: list[str]) -> Program:
    name = argv[0].rsplit("/", 1)[-1]
    sub = Shell(sh.sandbox, name=name, tty=sh.tty)
    sub.vars = dict(sh.vars)
    args = argv[1:]
    while args and args[0] in ("-e", "-x", "-i", "-l", "-ex", "-xe"):
        args = args[1:]
    if args and args[0] in ("-c", "-ec", "-ce", "-xc", "-lc"):
        if len(args) < 2:
            yield Write(2, _text(f"{name}: -c requires an argument\n"))
            return 2
        return (yield from sub.script(args[1]))
    if args:
        full = sh.sandbox.resolve(args[0])
        if full not in sh.sandbox.files:
            yield Write(2, _text(f"{name}: can't open '{args[0]}': No such file or directory\n"))
            return 2
        return (yield from sub.script(sh.sandbox.files[full].decode(errors="replace")))
    return (yield from sub.interactive())


COMMANDS: Mapping[str, Builtin] = {
    "echo": _echo, "printf": _printf, "env": _env, "printenv": _printenv, "export": _export,
    "unset": _unset, "hostname": _hostname, "pwd": _pwd, "cd": _cd, "ls": _ls, "cat": _cat,
    "sleep": _sleep, "true": _true, ":": _true, "false": _false, "exit": _exit, "read": _read,
    "whoami": _whoami, "id": _id, "uname": _uname, "date": _date, "grep": _grep,
    "head": _head, "wc": _wc, "sh": _sh, "bash": _sh, "ash": _sh, "dash": _sh,
}


# -- terminal line discipline (kubectl exec -t) ----------------------------------------------
class LineDiscipline:
    """What a tty in canonical mode does with keystrokes: echo them, erase on backspace,
    hand over whole lines on Enter, EOF on ^D at the start of a line, `^C` on interrupt.
    Output written through `output` gets `\\n` -> `\\r\\n` (onlcr)."""

    def __init__(self) -> None:
        self.buffer = ""
        self.eof = False

    def feed(self, data: bytes) -> tuple[bytes, list[str]]:
        """-> (bytes to echo to the terminal, completed lines with their `\\n`)."""
        echo: list[str] = []
        lines: list[str] = []
        for ch in data.decode(errors="replace"):
            if self.eof:
                break
            if ch in "\r\n":
                echo.append("\r\n")
                lines.append(self.buffer + "\n")
                self.buffer = ""
            elif ch in "\x7f\b":
                if self.buffer:
                    self.buffer = self.buffer[:-1]
                    echo.append("\b \b")
            elif ch == "\x04":
                if self.buffer:
                    lines.append(self.buffer)
                    self.buffer = ""
                else:
                    self.eof = True
            elif ch == "\x03":
                echo.append("^C\r\n")
                self.buffer = ""
                lines.append("\n")
            elif ch == "\x15":  # ^U: kill the line
                echo.append("\b \b" * len(self.buffer))
                self.buffer = ""
            elif ch >= " " or ch == "\t":
                self.buffer += ch
                echo.append(ch)
        return "".join(echo).encode(), lines

    @staticmethod
    def output(data: bytes) -> bytes:
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


# -- a synchronous driver (tests, and whoever needs no real time) ----------------------------
class Result(NamedTuple):
    stdout: str
    stderr: str
    code: int
    slept: float


def run_sync(program: Program, stdin: str = "") -> Result:
    """Drive `program` to its end: stdin from `stdin`, sleeps only added up."""
    out: list[bytes] = []
    err: list[bytes] = []
    lines = iter(stdin.splitlines(keepends=True))
    slept = 0.0
    reply: str | None = None
    try:
        action = next(program)
        while True:
            reply = None
            if isinstance(action, Write):
                (out if action.fd == 1 else err).append(action.data)
            elif isinstance(action, Sleep):
                slept += action.seconds
            else:
                reply = next(lines, None)
            action = program.send(reply)
    except StopIteration as stop:
        code = stop.value
    return Result(b"".join(out).decode(), b"".join(err).decode(), code, slept)
