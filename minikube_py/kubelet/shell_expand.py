"""Word expansion (POSIX XCU 2.6): what `$X`, `${X%.txt}`, `$(cmd)`, `$((1+2))`, `~`, field
splitting on IFS and `*.conf` turn a word into.

Kubernetes piece: none — part of the container's `/bin/sh`. The order is POSIX's: tilde,
parameter, command substitution and arithmetic expansion, then field splitting of what
unquoted expansions produced, then pathname expansion, then quote removal. Expansion can
run commands (`$(...)`), so these are generators yielding the same actions as programs.
An expansion error (`${X:?}`, `$((1/0))`) ends a non-interactive shell with status 2,
as dash and busybox do.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from .shell_arith import ArithError, evaluate
from .shell_io import Action, Exit, Write, text
from .shell_pattern import glob, has_magic, remove_affix, split_fields
from .shell_syntax import Arith, CmdSub, Lit, Param, Word

if TYPE_CHECKING:
    from .shell_interp import Shell

Expansion = Generator[Action, "str | float | None", list[str]]
Chunk = tuple[str, bool]  # (text, quoted)
#: a variable may not grow past this (`X=$X$X` doubling ends instead of eating memory)
MAX_VALUE = 16 * 1024 * 1024


def fail(sh: "Shell", message: str) -> Generator[Action, object, None]:
    """Report an expansion error and end the shell (status 2)."""
    yield Write(2, text(f"{sh.name}: {message}\n"))
    raise Exit(2)


def fields(sh: "Shell", words: list[Word]) -> Expansion:
    """The argument list `words` expand to (split, globbed, quotes removed)."""
    out: list[str] = []
    for word in words:
        for chunks in (yield from _split(sh, word, split=True)):
            if has_magic(chunks) and "f" not in sh.options:
                found = glob(chunks, sh.sandbox, sh.cwd)
                if found:
                    out.extend(found)
                    continue
            out.append("".join(t for t, _ in chunks))
    return out


def string(sh: "Shell", word: Word | None) -> Generator[Action, object, str]:
    """One string, no splitting or globbing (assignments, `case` subjects, redirections)."""
    if not word:
        return ""
    found = yield from _split(sh, word, split=False)
    return " ".join("".join(t for t, _ in chunks) for chunks in found)


def pattern(sh: "Shell", word: Word | None) -> Generator[Action, object, list[Chunk]]:
    """A pattern's chunks: quoted parts match literally (`case`, `${X%pat}`)."""
    if not word:
        return []
    found = yield from _split(sh, word, split=False)
    return [chunk for chunks in found for chunk in chunks]


def _split(sh: "Shell", word: Word, *, split: bool) -> Generator[Action, object, list[list[Chunk]]]:
    result: list[list[Chunk]] = [[]]
    ifs = sh.vars.get("IFS", " \t\n")
    for index, part in enumerate(word):
        if isinstance(part, Lit):
            value = part.text
            if index == 0 and not part.quoted and value.startswith("~"):
                value = _tilde(sh, value)
            result[-1].append((value, part.quoted))
            continue
        value = yield from _value(sh, part)
        if isinstance(value, list):  # "$@": one field per positional parameter
            if value:
                result[-1].append((value[0], True))
                result.extend([(v, True)] for v in value[1:])
            continue
        if part.quoted or not split:
            result[-1].append((value, True))
            continue
        lead, pieces, trail = split_fields(value, ifs)
        if lead and _content(result[-1]):
            result.append([])
        for n, piece in enumerate(pieces):
            if n:
                result.append([])
            result[-1].append((piece, False))
        if trail and _content(result[-1]):
            result.append([])
    return [chunks for chunks in result if _content(chunks)] or ([] if split else [[]])


def _content(chunks: list[Chunk]) -> bool:
    return any(quoted or t for t, quoted in chunks)


def _tilde(sh: "Shell", value: str) -> str:
    head, sep, tail = value.partition("/")
    if head == "~":
        return sh.vars.get("HOME", "/root") + sep + tail
    if head == "~root":
        return "/root" + sep + tail
    return value


def _value(sh: "Shell", part: Param | CmdSub | Arith) -> Generator[Action, object, str | list[str]]:
    if isinstance(part, CmdSub):
        return (yield from sh.substitute(part.body))
    if isinstance(part, Arith):
        expr = yield from string(sh, part.expr)
        try:
            return str(evaluate(expr, lambda n: sh.lookup(n)[0] or "", sh.assign))
        except ArithError as exc:
            yield from fail(sh, f"arithmetic syntax error: {exc}" if "zero" not in str(exc)
                            else "divide by zero")
    return (yield from _param(sh, part))


def _param(sh: "Shell", p: Param) -> Generator[Action, object, str | list[str]]:
    if p.name in ("@", "*"):
        values = list(sh.positional)
        if p.op == "len":
            return str(len(values))
        if p.op == "" and p.name == "@" and p.quoted:
            return values
        sep = " " if p.name == "@" or "IFS" not in sh.vars else sh.vars["IFS"][:1]
        value, is_set = sep.join(values), bool(values)
    else:
        found, is_set = sh.lookup(p.name)
        value = found or ""
    op = p.op
    if op == "":
        if not is_set and "u" in sh.options and p.name not in ("@", "*"):
            yield from fail(sh, f"{p.name}: parameter not set")
        return value
    if op == "len":
        return str(len(value))
    empty = not is_set or (op.startswith(":") and value == "")
    if op in (":-", "-"):
        return (yield from string(sh, p.arg)) if empty else value
    if op in (":=", "="):
        if empty:
            value = yield from string(sh, p.arg)
            sh.assign(p.name, value)
        return value
    if op in (":?", "?"):
        if empty:
            message = yield from string(sh, p.arg)
            yield from fail(sh, f"{p.name}: {message or ('parameter not set' if not is_set else 'parameter null')}")
        return value
    if op in (":+", "+"):
        return "" if empty else (yield from string(sh, p.arg))
    chunks = yield from pattern(sh, p.arg)
    return remove_affix(value, chunks, op)
