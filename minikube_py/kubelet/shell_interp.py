"""The shell interpreter: runs a parsed script as a program (POSIX XCU 2.9 "Shell Commands").

Kubernetes piece: none — the container image's `/bin/sh` (busybox ash), which
`kubectl exec -- sh -c ...`, `kubectl exec -it -- sh` and a container's own
`command: [sh, -c, ...]` reach. `Shell` holds one shell process's state (variables and
which are exported, positional parameters, functions, traps, options, cwd, `$?`) and walks
the syntax tree of shell_syntax.py; a command is looked up as a function, a shell builtin
(shell_builtins.py), a busybox applet (shell_applets*.py), the `external` hook (a program the
kubelet simulates, e.g. a web server) or else `sh: foo: not found` (127).

Pipelines run their stages lazily (shell_io.pipe), subshells and `$(...)` on a copy of the
state (`fork`). Background jobs (`cmd &`) run cooperatively on a virtual clock: a job runs
until it sleeps and resumes when the foreground's sleeps have let enough time pass (see
`scheduled`); `wait` sleeps until they end. Work is bounded: a step counter (shell_io.Governor)
turns 1000 commands or 1 MiB of output without a Sleep into `Sleep(0.001)`, function and
subshell nesting stops at `MAX_DEPTH`, files and captured output have size caps.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from . import shell_expand as expand
from .shell_fs import BIN_DIRS, Sandbox
from .shell_io import (
    Action,
    Break,
    Exit,
    FdTable,
    FromLines,
    Governor,
    Null,
    Out,
    Program,
    Read,
    Return,
    Sleep,
    ToFile,
    Write,
    capture,
    done,
    lines_of,
    pipe,
    text,
    with_fds,
)
from .shell_syntax import (
    AndOr,
    Case,
    CommandList,
    For,
    FuncDef,
    Group,
    If,
    Loop,
    Node,
    Pipeline,
    Redir,
    ShellSyntaxError,
    Simple,
    parse,
)

Builtin = Callable[["Shell", list[str]], Program]
#: a program the kubelet simulates for a command no applet implements (None: not found)
External = Callable[["Shell", list[str]], "Program | None"]
MAX_DEPTH = 64
SHELLS = frozenset({"sh", "ash", "bash", "dash"})
_PIDS = itertools.count(7)


@dataclass
class Job:
    """A background job: its program and when (virtual time) it wants to run next."""
    pid: int
    program: Program
    wake: float = 0.0
    status: int | None = None
    started: bool = False


@dataclass
class Session:
    """What a shell and all its subshells share: the job table, the clock, the governor."""
    governor: Governor = field(default_factory=Governor)
    jobs: list[Job] = field(default_factory=list)
    clock: float = 0.0
    #: set by `wait`: True when what it waits for has happened (ends the foreground's sleep)
    waiting: Callable[[], bool] | None = None
    #: the wall clock `date` and `uptime` read (a test injects a fixed one)
    now: Callable[[], float] = time.time
    boot: float = field(default_factory=time.time)


class Shell:
    """One shell process: its variables (the container env, copied), last status, cwd."""

    def __init__(self, sandbox: Sandbox, *, name: str = "sh", tty: bool = False,
                 args: list[str] | None = None, external: External | None = None,
                 session: Session | None = None) -> None:
        self.sandbox = sandbox
        self.vars: dict[str, str] = dict(sandbox.env)
        self.exported: set[str] = set(sandbox.env)
        self.status = 0
        self.name = name
        self.tty = tty  # a terminal: interactive shells print a prompt
        self.positional: list[str] = list(args or [])
        self.funcs: dict[str, Node] = {}
        self.traps: dict[str, str] = {}
        self.options: set[str] = set()
        self.cwd = sandbox.cwd
        self.external = external
        self.session = session or Session()
        self.depth = 0
        self.loops = 0
        self.errexit_off = 0
        self.fds: FdTable = {}
        self.pid = 1
        self.last_job: int | None = None
        self.last_sub = 0
        self.pending: list[str] = []  # signals caught, their traps not run yet
        self.locals: list[dict[str, str | None]] = []
        #: the program PID 1 "is" after `exec` (signals go to it): its argv
        self.exec_argv: list[str] | None = None
        #: run the script's last command in place of the shell (`sh -c` as PID 1)
        self.exec_tail = False
        self.tail: Simple | None = None

    # -- entry points ----------------------------------------------------------------------
    def exec(self, argv: list[str]) -> Program:
        """What the runtime runs for `kubectl exec -- argv` (no shell in between)."""
        if not argv:
            return (yield from self.interactive())
        program = self.lookup_command(argv, direct=True)
        if program is None:
            yield Write(1, text(
                f'OCI runtime exec failed: exec failed: unable to start container process: '
                f'exec: "{argv[0]}": executable file not found in $PATH: unknown\n'))
            return 126
        try:
            return (yield from self.scheduled(self.session.governor.govern(program)))
        except Exit as stop:
            return stop.code

    def script(self, source: str) -> Program:
        """`sh -c SOURCE`: parse, run, then the EXIT trap."""
        try:
            tree = parse(source)
        except ShellSyntaxError as exc:
            yield Write(2, text(f"{self.name}: {exc}\n"))
            return 2
        if self.exec_tail and tree.items and not tree.items[-1][1]:
            last = tree.items[-1][0]
            if not last.rest and len(last.first.commands) == 1 and not last.first.negate \
                    and isinstance(last.first.commands[0], Simple):
                self.tail = last.first.commands[0]
        return (yield from self.run_tree(tree))

    def run_tree(self, tree: CommandList) -> Program:
        try:
            self.status = yield from self.run(tree)
        except Exit as stop:
            self.status = stop.code
        except Break:
            pass
        return (yield from self.exit_trap())

    def exit_trap(self) -> Program:
        action = self.traps.pop("EXIT", None)
        if action:
            status = self.status
            try:
                yield from self.run(parse(action))
            except (Exit, ShellSyntaxError) as stop:
                return stop.code if isinstance(stop, Exit) else status
            return status
        return self.status

    def interactive(self, prompt: str | None = None) -> Program:
        """A read-eval loop over stdin (`sh` with no `-c`), until EOF or `exit`; with a tty
        it prompts like busybox (`/ # `, `> ` for a continued line)."""
        if prompt is None:
            prompt = "\\w # " if self.tty else ""
        pending = ""
        while True:
            if prompt:
                yield Write(1, text("> " if pending else prompt.replace("\\w", self.cwd)))
            line = yield Read()
            if line is None:
                return self.status
            source = pending + line
            try:
                tree = parse(source)
            except ShellSyntaxError as exc:
                if "end of file" in str(exc) or "unterminated" in str(exc):
                    pending = source if source.endswith("\n") else source + "\n"
                    continue
                pending = ""
                yield Write(2, text(f"{self.name}: {exc}\n"))
                self.status = 2
                continue
            pending = ""
            try:
                self.status = yield from self.run(tree)
            except Exit as stop:
                self.status = stop.code
                return (yield from self.exit_trap())
            except Break:
                pass

    # -- state -----------------------------------------------------------------------------
    def fork(self) -> "Shell":
        """A subshell: a copy of this shell's state sharing its files and session."""
        sub = Shell.__new__(Shell)
        sub.__dict__.update(self.__dict__)
        sub.vars = dict(self.vars)
        sub.exported = set(self.exported)
        sub.positional = list(self.positional)
        sub.funcs = dict(self.funcs)
        sub.traps = {k: v for k, v in self.traps.items() if v == "" and k != "EXIT"}
        sub.options = set(self.options)
        sub.fds = dict(self.fds)
        sub.pending = []
        sub.locals = []
        sub.tail, sub.exec_tail = None, False
        sub.depth = self.depth + 1
        return sub

    def spawn(self, name: str, args: list[str] | None = None) -> "Shell":
        """A child `sh` process: exported variables only, a fresh function table."""
        child = Shell(self.sandbox, name=name, tty=self.tty, args=args, external=self.external,
                      session=self.session)
        child.vars = self.environ()
        child.exported = set(child.vars)
        child.cwd = self.cwd
        child.depth = self.depth + 1
        return child

    def environ(self) -> dict[str, str]:
        return {k: v for k, v in self.vars.items() if k in self.exported}

    def lookup(self, name: str) -> tuple[str | None, bool]:
        """A parameter's value and whether it is set (specials included)."""
        if name == "?":
            return str(self.status), True
        if name == "$":
            return str(self.pid), True
        if name == "#":
            return str(len(self.positional)), True
        if name == "0":
            return self.name, True
        if name.isdigit():
            index = int(name) - 1
            return (self.positional[index], True) if index < len(self.positional) else (None, False)
        if name == "!":
            return (str(self.last_job), True) if self.last_job is not None else (None, False)
        if name == "-":
            return "".join(sorted(self.options)), True
        if name == "PWD":
            return self.vars.get("PWD", self.cwd), True
        value = self.vars.get(name)
        return value, value is not None

    def assign(self, name: str, value: str) -> None:
        if len(value) > expand.MAX_VALUE:
            raise Exit(2)
        self.vars[name] = value
        if "a" in self.options:
            self.exported.add(name)

    def resolve(self, path: str) -> str:
        return self.sandbox.resolve(path, self.cwd)

    def tick(self) -> Generator[Action, object, None]:
        pause = self.session.governor.tick()
        if pause is not None:
            yield pause

    # -- running ---------------------------------------------------------------------------
    def run(self, node: Node) -> Program:
        runner = getattr(self, "_run_" + type(node).__name__)
        return runner(node)

    def _run_CommandList(self, node: CommandList) -> Program:
        status = 0
        for andor, background in node.items:
            if background:
                self.start_job(andor)
                status = 0
            else:
                status = yield from self._run_AndOr(andor)
            self.status = status
        return status

    def _run_AndOr(self, node: AndOr) -> Program:
        chain = [("", node.first), *node.rest]
        status = 0
        for index, (op, pipeline) in enumerate(chain):
            if op and (op == "&&") != (status == 0):
                continue
            last = index == len(chain) - 1
            if not last:
                self.errexit_off += 1
            try:
                status = yield from self._run_Pipeline(pipeline)
            finally:
                if not last:
                    self.errexit_off -= 1
            self.status = status
            if self.pending:
                yield from self.run_traps()
            if last and status and not pipeline.negate and "e" in self.options \
                    and not self.errexit_off:
                raise Exit(status)
        return status

    def _run_Pipeline(self, node: Pipeline) -> Program:
        if len(node.commands) == 1:
            status = yield from self.run(node.commands[0])
        else:
            program: Program | None = None
            for command in node.commands:
                stage = self.fork().subshell(command)
                program = stage if program is None else pipe(program, stage)
            assert program is not None
            status = yield from program
        return int(status == 0) if node.negate else status

    def subshell(self, node: Node) -> Program:
        """`node` run in this (forked) shell as a separate process: `exit` ends only it."""
        if self.depth > MAX_DEPTH:
            yield Write(2, text(f"{self.name}: subshell nesting too deep\n"))
            return 2
        try:
            self.status = yield from self.run(node)
        except Exit as stop:
            self.status = stop.code
        except Break:
            pass
        return (yield from self.exit_trap())

    def substitute(self, body: CommandList) -> Generator[Action, object, str]:
        """`$(body)`: its standard output without trailing newlines; sets `$?`."""
        sink: list[bytes] = []
        self.last_sub = yield from capture(self.fork().subshell(body), sink)
        return b"".join(sink).decode("utf-8", "surrogateescape").rstrip("\n")

    def _run_Group(self, node: Group) -> Program:
        program = self.fork().subshell(node.body) if node.subshell else self.run(node.body)
        return (yield from self.redirected(program, node.redirs))

    def _run_If(self, node: If) -> Program:
        return (yield from self.redirected(self._if(node), node.redirs))

    def _if(self, node: If) -> Program:
        for cond, body in node.arms:
            if (yield from self.condition(cond)) == 0:
                return (yield from self.run(body))
        if node.orelse is not None:
            return (yield from self.run(node.orelse))
        return 0

    def condition(self, cond: CommandList) -> Program:
        self.errexit_off += 1
        try:
            return (yield from self.run(cond))
        finally:
            self.errexit_off -= 1

    def _run_Loop(self, node: Loop) -> Program:
        return (yield from self.redirected(self._loop(node), node.redirs))

    def _loop(self, node: Loop) -> Program:
        status = 0
        self.loops += 1
        try:
            while True:
                yield from self.tick()
                if ((yield from self.condition(node.cond)) == 0) == node.until:
                    break
                ran, broke = yield from self._iteration(node.body)
                status = status if ran is None else ran
                if broke:
                    break
        finally:
            self.loops -= 1
        return status

    def _iteration(self, body: CommandList) -> Program:
        """One pass of a loop's body: (its status, or None when `break`/`continue` cut it
        short; whether the loop ends). `break N`/`continue N` for an outer loop go on up."""
        try:
            return (yield from self.run(body)), False
        except Break as jump:
            if jump.levels > 1:
                raise type(jump)(jump.levels - 1) from None
            return None, type(jump) is Break

    def _run_For(self, node: For) -> Program:
        return (yield from self.redirected(self._for(node), node.redirs))

    def _for(self, node: For) -> Program:
        items = list(self.positional) if node.words is None else \
            (yield from expand.fields(self, node.words))
        status = 0
        self.loops += 1
        try:
            for item in items:
                yield from self.tick()
                self.assign(node.var, item)
                ran, broke = yield from self._iteration(node.body)
                status = status if ran is None else ran
                if broke:
                    break
        finally:
            self.loops -= 1
        return status

    def _run_Case(self, node: Case) -> Program:
        return (yield from self.redirected(self._case(node), node.redirs))

    def _case(self, node: Case) -> Program:
        from .shell_pattern import matches

        subject = yield from expand.string(self, node.word)
        for patterns, body in node.arms:
            for word in patterns:
                chunks = yield from expand.pattern(self, word)
                if matches(chunks, subject):
                    return (yield from self.run(body)) if body is not None else 0
        return 0

    def _run_FuncDef(self, node: FuncDef) -> Program:
        self.funcs[node.name] = node.body
        return 0
        yield  # pragma: no cover

    def _run_Simple(self, node: Simple) -> Program:
        yield from self.tick()
        self.last_sub = 0  # `X=$(false)` alone: its status is the substitution's
        argv = yield from expand.fields(self, node.words)
        values = []
        for name, word in node.assigns:
            values.append((name, (yield from expand.string(self, word))))
        if not argv:
            status = self.last_sub
            for name, value in values:
                self.assign(name, value)
            return (yield from self.redirected(done(status), node.redirs))
        from .shell_builtins import SPECIAL

        if argv == ["exec"] and node.redirs:  # `exec >log 2>&1`: for the rest of the shell
            table = yield from self.fd_table(node.redirs, dict(self.fds))
            if table is None:
                return 1
            self.fds = table
            return 0
        if node is self.tail and not self.traps:
            self.exec_argv = argv  # dash's -c optimisation: the last command is exec'd
        if argv[0] in SPECIAL or not values:
            for name, value in values:
                self.assign(name, value)
            program = self.lookup_command(argv)
            return (yield from self.redirected(program or self.not_found(argv), node.redirs))
        return (yield from self._with_env(argv, values, node.redirs))

    def _with_env(self, argv: list[str], values: list[tuple[str, str]],
                  redirs: list[Redir]) -> Program:
        """`NAME=value cmd`: the assignments hold for that command only."""
        saved = {name: (self.vars.get(name), name in self.exported) for name, _ in values}
        for name, value in values:
            self.assign(name, value)
            self.exported.add(name)
        try:
            program = self.lookup_command(argv)
            return (yield from self.redirected(program or self.not_found(argv), redirs))
        finally:
            for name, (old, was_exported) in saved.items():
                if old is None:
                    self.vars.pop(name, None)
                else:
                    self.vars[name] = old
                if not was_exported:
                    self.exported.discard(name)

    def lookup_command(self, argv: list[str], *, direct: bool = False) -> Program | None:
        """The program `argv` names: a function, a builtin, an applet, a script file, the
        external hook; None when nothing has that name."""
        from .shell_applets import APPLETS
        from .shell_builtins import BUILTINS

        name = argv[0]
        if "/" not in name and not direct:
            if name in self.funcs:
                return self.call(argv)
            if name in BUILTINS:
                return BUILTINS[name](self, argv)
        directory, _, base = name.rpartition("/")
        if (not directory or directory in BIN_DIRS) and base in APPLETS:
            return APPLETS[base](self, argv)
        if "/" in name and self.sandbox.is_file(self.resolve(name)):
            return self.run_file(argv)
        if self.external is not None:
            return self.external(self, argv)
        return None

    def not_found(self, argv: list[str]) -> Program:
        yield Write(2, text(f"{self.name}: {argv[0]}: not found\n"))
        return 127

    def run_file(self, argv: list[str]) -> Program:
        """A script file run as a command (`./start.sh` from a ConfigMap volume)."""
        data = self.sandbox.files[self.resolve(argv[0])]
        child = self.spawn("sh", argv[1:])
        child.name = argv[0]
        return child.script(data.decode("utf-8", "surrogateescape"))

    def call(self, argv: list[str]) -> Program:
        """A shell function: its own positional parameters; `return` ends it."""
        if self.depth >= MAX_DEPTH:
            yield Write(2, text(f"{self.name}: {argv[0]}: function nesting too deep\n"))
            return 2
        saved = self.positional
        self.positional = argv[1:]
        self.depth += 1
        self.locals.append({})
        try:
            return (yield from self.run(self.funcs[argv[0]]))
        except Return as ret:
            return ret.code
        finally:
            self.depth -= 1
            self.positional = saved
            for name, old in self.locals.pop().items():
                if old is None:
                    self.vars.pop(name, None)
                else:
                    self.vars[name] = old

    # -- redirections ----------------------------------------------------------------------
    def redirected(self, program: Program, redirs: list[Redir]) -> Program:
        """`program` with its fds set up as `redirs` say (applied in order, POSIX 2.7)."""
        if not redirs and not self.fds:
            return (yield from program)
        table = yield from self.fd_table(redirs, dict(self.fds))
        if table is None:
            program.close()
            return 1
        return (yield from with_fds(program, table, self.sandbox,
                                    lambda err: text(f"{self.name}: write error: {err}\n")))

    def fd_table(self, redirs: list[Redir], table: FdTable) -> Generator[Action, object, FdTable | None]:
        box = self.sandbox
        for redir in redirs:
            fd, op = redir.fd, redir.op
            if redir.heredoc is not None:
                body = yield from expand.string(self, redir.heredoc.body)
                table[fd] = FromLines(iter(lines_of(text(body))))
                continue
            target = yield from expand.string(self, redir.target)
            if op in (">&", "<&"):
                if target == "-":
                    table[fd] = Null()
                elif target.isdigit():
                    source = int(target)
                    table[fd] = table.get(source, Out(source) if source else None)
                else:
                    yield Write(2, text(f"{self.name}: {target}: bad file descriptor\n"))
                    return None
                continue
            if target in ("/dev/null", "/dev/zero"):
                table[fd] = Null() if op != "<" else FromLines(iter(()))
                continue
            if target in ("/dev/stdout", "/dev/stderr", "/proc/1/fd/1", "/proc/1/fd/2",
                          "/dev/fd/1", "/dev/fd/2"):
                table[fd] = table.get(int(target[-1]), Out(int(target[-1])))
                continue
            full = self.resolve(target)
            if op == "<":
                if not box.is_file(full):
                    reason = "Is a directory" if box.is_dir(full) else "No such file or directory"
                    yield Write(2, text(f"{self.name}: can't open '{target}': {reason}\n"))
                    return None
                table[fd] = FromLines(iter(lines_of(box.files[full])))
                continue
            try:
                if op == "<>":
                    if not box.is_file(full):
                        box.write_file(full, b"")
                    table[fd] = FromLines(iter(lines_of(box.files[full])))
                    continue
                box.write_file(full, b"", append=op == ">>")
            except OSError as exc:
                yield Write(2, text(f"{self.name}: can't create {target}: {exc}\n"))
                return None
            table[fd] = ToFile(full)
        return table

    # -- jobs and signals ------------------------------------------------------------------
    def start_job(self, andor: AndOr) -> None:
        """`cmd &`: a job with stdin from /dev/null, run when the foreground sleeps."""
        sub = self.fork()
        program = with_fds(sub.subshell(CommandList([(andor, False)])), {0: Null()},
                           self.sandbox, lambda err: text(f"{self.name}: write error: {err}\n"))
        job = Job(next(_PIDS), program, self.session.clock)
        self.session.jobs.append(job)
        self.last_job = job.pid

    def run_traps(self) -> Program:
        while self.pending:
            action = self.traps.get(self.pending.pop(0))
            if action:
                status = self.status
                yield from self.run(parse(action))
                self.status = status
        return self.status

    def scheduled(self, program: Program) -> Program:
        """The foreground `program` with the session's background jobs run in the time its
        sleeps let pass. A Sleep may be answered with the seconds that actually passed
        (a float: the driver cut it short for a signal) instead of None."""
        session = self.session
        try:
            action = next(program)
            while True:
                reply = None
                if isinstance(action, Sleep) and session.jobs:
                    reply = yield from self._sleep_with_jobs(action.seconds)
                else:
                    reply = yield action
                action = program.send(reply)
        except StopIteration as stop:
            return stop.value

    def _sleep_with_jobs(self, seconds: float) -> Generator[Action, object, float | None]:
        session = self.session
        start = session.clock
        deadline = start + seconds
        while True:
            live = [job for job in session.jobs if job.status is None]
            job = min(live, key=lambda j: j.wake, default=None)
            if session.waiting is not None and session.waiting():
                return session.clock - start
            if job is None or job.wake > deadline:
                if deadline > session.clock:
                    reply = yield Sleep(deadline - session.clock)
                    if isinstance(reply, (int, float)):
                        session.clock += reply
                        return session.clock - start
                    session.clock = deadline
                return None
            if job.wake > session.clock:
                reply = yield Sleep(job.wake - session.clock)
                if isinstance(reply, (int, float)):
                    session.clock += reply
                    return session.clock - start
                session.clock = job.wake
            yield from self._step_job(job)

    def _step_job(self, job: Job) -> Generator[Action, object, None]:
        """Run `job` until it sleeps (its wake time moves) or ends."""
        try:
            action = job.program.send(None) if job.started else next(job.program)
            job.started = True
            while not isinstance(action, Sleep):
                reply = (yield action) if isinstance(action, Write) else None
                action = job.program.send(reply)
            job.wake = self.session.clock + action.seconds
        except StopIteration as stop:
            job.status = stop.value or 0
        except Exit as stop:
            job.status = stop.code

