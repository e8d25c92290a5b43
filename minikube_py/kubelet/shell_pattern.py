"""Shell pattern matching, pathname expansion and field splitting (POSIX XCU 2.13, 2.6.5).

Kubernetes piece: none — part of the container's `/bin/sh`. A pattern arrives as chunks of
(text, quoted): quoted characters match themselves, unquoted `*`, `?` and `[...]` are
wildcards — the same rule serves `case` arms, `${X%pattern}` and globbing against the
sandbox's files. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .shell_fs import Sandbox

Chunks = Sequence[tuple[str, bool]]  # (text, quoted)


def has_magic(chunks: Chunks) -> bool:
    return any(not quoted and any(c in text for c in "*?[") for text, quoted in chunks)


def to_regex(chunks: Chunks) -> str:
    """The regular expression (for `re.fullmatch`, DOTALL) a shell pattern means."""
    out: list[str] = []
    flat = [(c, quoted) for text, quoted in chunks for c in text]
    i = 0
    while i < len(flat):
        c, quoted = flat[i]
        if quoted:
            out.append(re.escape(c))
        elif c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            end, cls = _bracket(flat, i + 1)
            if end is None:
                out.append(re.escape(c))
            else:
                out.append(cls)
                i = end
        elif c == "\\" and i + 1 < len(flat):
            i += 1
            out.append(re.escape(flat[i][0]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _bracket(flat: list[tuple[str, bool]], i: int) -> tuple[int | None, str]:
    """A bracket expression starting after `[` -> (index of its `]`, regex class)."""
    negate = i < len(flat) and flat[i][0] in "!^" and not flat[i][1]
    if negate:
        i += 1
    members: list[str] = []
    first = True
    while i < len(flat):
        c, quoted = flat[i]
        if c == "]" and not first and not quoted:
            return i, "[" + ("^" if negate else "") + "".join(members) + "]"
        if c == "[" and not quoted and i + 1 < len(flat) and flat[i + 1][0] == ":":
            close = "".join(ch for ch, _ in flat[i:]).find(":]")
            if close > 0:
                name = "".join(ch for ch, _ in flat[i + 2:i + close])
                members.append(_CLASSES.get(name, ""))
                i += close + 2
                first = False
                continue
        if c == "-" and members and not first and i + 1 < len(flat) and flat[i + 1][0] != "]":
            members.append("-")
        else:
            members.append(re.escape(c) if c in "\\^[]-" else c)
        first = False
        i += 1
    return None, ""


_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "upper": "A-Z",
            "lower": "a-z", "space": r" \t\n\r\f\v", "xdigit": "0-9A-Fa-f",
            "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"), "blank": r" \t"}


def matches(chunks: Chunks, value: str) -> bool:
    return re.fullmatch(to_regex(chunks), value, re.S) is not None


def remove_affix(value: str, chunks: Chunks, op: str) -> str:
    """`${X%pat}` (shortest suffix), `%%` (longest), `#` (shortest prefix), `##` (longest)."""
    regex = re.compile(to_regex(chunks), re.S)
    n = len(value)
    if op in ("#", "##"):
        ends = range(0, n + 1) if op == "#" else range(n, -1, -1)
        for end in ends:
            if regex.fullmatch(value, 0, end):
                return value[end:]
    else:
        starts = range(n, -1, -1) if op == "%" else range(0, n + 1)
        for start in starts:
            if regex.fullmatch(value, start, n):
                return value[:start]
    return value


def glob(chunks: Chunks, box: Sandbox, cwd: str) -> list[str]:
    """The sorted paths a pattern names in the sandbox (empty: no match, the caller keeps
    the word as it is). Relative patterns give relative paths, as `echo *` prints."""
    pattern = "".join(text for text, _ in chunks)
    absolute = pattern.startswith("/")
    # split the chunks into path components, keeping the quoted flags
    components: list[list[tuple[str, bool]]] = [[]]
    for text, quoted in chunks:
        pieces = text.split("/")
        for index, piece in enumerate(pieces):
            if index:
                components.append([])
            if piece:
                components[-1].append((piece, quoted))
    if absolute:
        components = components[1:]
    found = ["/" if absolute else ""]
    for index, component in enumerate(components):
        if not component:
            continue
        nxt: list[str] = []
        last = index == len(components) - 1
        for base in found:
            directory = box.resolve(base or ".", cwd)
            if not has_magic(component):
                name = "".join(t for t, _ in component)
                candidate = _join(base, name)
                if box.exists(box.resolve(candidate, cwd)):
                    nxt.append(candidate)
                continue
            if not box.is_dir(directory):
                continue
            regex = re.compile(to_regex(component), re.S)
            hidden_ok = component[0][0].startswith(".")
            for name in box.listdir(directory):
                if (hidden_ok or not name.startswith(".")) and regex.fullmatch(name):
                    candidate = _join(base, name)
                    if last or box.is_dir(box.resolve(candidate, cwd)):
                        nxt.append(candidate)
        found = nxt
        if not found:
            return []
    if pattern.endswith("/"):
        found = [f + "/" for f in found if box.is_dir(box.resolve(f, cwd))]
    return sorted(found)


def _join(base: str, name: str) -> str:
    if not base:
        return name
    return base + name if base.endswith("/") else f"{base}/{name}"


def split_fields(value: str, ifs: str) -> tuple[bool, list[str], bool]:
    """Field splitting of one expansion's result: (separated before the first field,
    the fields, separated after the last). IFS white space folds, other IFS characters
    each end a field (`a::b` with IFS=: is a, "", b)."""
    if not ifs:
        return False, [value] if value else [], False
    white = "".join(c for c in ifs if c in " \t\n")
    other = "".join(c for c in ifs if c not in " \t\n")
    stripped = value.strip(white) if white else value
    lead = bool(white) and value[:1] != "" and value[:1] in white
    trail = bool(white) and value[-1:] != "" and value[-1:] in white
    if not stripped:
        return bool(value), [], bool(value)
    ws = f"[{re.escape(white)}]*" if white else ""
    if other:
        pattern = f"{ws}[{re.escape(other)}]{ws}" + (f"|[{re.escape(white)}]+" if white else "")
    else:
        pattern = f"[{re.escape(white)}]+"
    fields = re.split(pattern, stripped)
    if other and fields and fields[-1] == "" and stripped[-1:] in other:
        fields.pop()
        trail = True
    return lead, fields, trail
