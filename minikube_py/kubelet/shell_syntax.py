"""The POSIX shell grammar: source text -> a syntax tree the interpreter walks.

Kubernetes piece: none — this is the part of a container image's `/bin/sh` (busybox ash,
dash) that `kubectl exec -- sh -c '...'` and a container's `command: [sh, -c, ...]` reach.
It follows the POSIX Shell Command Language (XCU 2.3-2.10): token recognition with quoting
(single, double, backslash), here-documents (`<<` and `<<-`), reserved words recognized only
where a command starts, and the grammar of lists, and-or lists, pipelines, compound commands
(`{ }`, `( )`, `if`, `for`, `while`, `until`, `case`) and function definitions.

Words keep their structure (literal text with a quoted flag, parameter expansions, command
substitutions parsed at once, arithmetic) so expansion happens at run time (`X=1; echo $X`)
and knows which characters were quoted (globbing, field splitting). Hand-written: the Python
parsers on PyPI (bashlex) lack `case` and arithmetic. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import NamedTuple, Union


class ShellSyntaxError(ValueError):
    pass


# -- words --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Lit:
    text: str
    quoted: bool


@dataclass(frozen=True)
class Param:
    """`$X`, `${X}`, `${#X}`, `${X:-word}` ...: `op` is "", "len" or the operator."""
    name: str
    op: str = ""
    arg: "Word | None" = None
    quoted: bool = False


@dataclass(frozen=True)
class CmdSub:
    body: "Node"
    quoted: bool


@dataclass(frozen=True)
class Arith:
    expr: "Word"
    quoted: bool


Part = Union[Lit, Param, CmdSub, Arith]
Word = tuple[Part, ...]

# -- commands -----------------------------------------------------------------------------
@dataclass
class HereDoc:
    delimiter: str
    strip_tabs: bool
    quoted: bool
    body: Word = ()


@dataclass
class Redir:
    fd: int
    op: str  # < > >> >| <> >& <& << <<-
    target: Word | None = None
    heredoc: HereDoc | None = None


@dataclass
class Simple:
    assigns: list[tuple[str, Word]]
    words: list[Word]
    redirs: list[Redir]


@dataclass
class Pipeline:
    commands: list["Node"]
    negate: bool = False


@dataclass
class AndOr:
    first: Pipeline
    rest: list[tuple[str, Pipeline]]


@dataclass
class CommandList:
    items: list[tuple[AndOr, bool]]  # (and-or list, run in the background)


@dataclass
class Group:
    body: CommandList
    subshell: bool
    redirs: list[Redir] = field(default_factory=list)


@dataclass
class If:
    arms: list[tuple[CommandList, CommandList]]
    orelse: CommandList | None
    redirs: list[Redir] = field(default_factory=list)


@dataclass
class For:
    var: str
    words: list[Word] | None  # None: "$@"
    body: CommandList
    redirs: list[Redir] = field(default_factory=list)


@dataclass
class Loop:
    cond: CommandList
    body: CommandList
    until: bool
    redirs: list[Redir] = field(default_factory=list)


@dataclass
class Case:
    word: Word
    arms: list[tuple[list[Word], CommandList | None]]
    redirs: list[Redir] = field(default_factory=list)


@dataclass
class FuncDef:
    name: str
    body: "Node"


Node = Union[Simple, Pipeline, AndOr, CommandList, Group, If, For, Loop, Case, FuncDef]

# -- tokens -------------------------------------------------------------------------------
_OPS = ("&&", "||", ";;", "<<-", "<<", ">>", ">&", "<&", "<>", ">|", ";", "&", "|", "(", ")",
        "<", ">")
_REDIR_OPS = frozenset(("<", ">", ">>", ">|", "<>", ">&", "<&", "<<", "<<-"))
_META = " \t\n;&|<>()"
RESERVED = frozenset(("if", "then", "else", "elif", "fi", "do", "done", "case", "esac",
                      "while", "until", "for", "in", "{", "}", "!"))
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=")
_PARAM_OPS = (":-", ":=", ":?", ":+", "-", "=", "?", "+", "%%", "%", "##", "#")


class Token(NamedTuple):
    kind: str  # word | op | io | nl | eof
    text: str
    word: Word = ()
    heredoc: HereDoc | None = None


def plain(word: Word) -> str | None:
    """The text of a word made of unquoted literal text only (a reserved word, a name)."""
    if len(word) == 1 and isinstance(word[0], Lit) and not word[0].quoted:
        return word[0].text
    return None


def literal(word: Word) -> str:
    """The text of a word with its quotes removed and no expansion (a here-doc delimiter)."""
    return "".join(p.text if isinstance(p, Lit) else "$" for p in word)


class Parser:
    """A recursive-descent parser over one source text with one token of lookahead."""

    def __init__(self, src: str, pos: int = 0) -> None:
        self.src = src
        self.pos = pos
        self.ahead: Token | None = None
        self.pending: list[HereDoc] = []
        self.want_delimiter: tuple[bool] | None = None

    # -- lexing ----------------------------------------------------------------------------
    def peek(self) -> Token:
        if self.ahead is None:
            self.ahead = self._lex()
        return self.ahead

    def take(self) -> Token:
        tok = self.peek()
        self.ahead = None
        return tok

    def _lex(self) -> Token:
        src, n = self.src, len(self.src)
        while self.pos < n:
            c = src[self.pos]
            if c in " \t\r":
                self.pos += 1
            elif c == "\\" and src.startswith("\\\n", self.pos):
                self.pos += 2
            elif c == "#":
                while self.pos < n and src[self.pos] != "\n":
                    self.pos += 1
            else:
                break
        if self.pos >= n:
            if self.pending:
                raise ShellSyntaxError(f"here-document delimited by end-of-file "
                                       f"(wanted '{self.pending[0].delimiter}')")
            return Token("eof", "")
        c = src[self.pos]
        if c == "\n":
            self.pos += 1
            self._read_heredocs()
            return Token("nl", "\n")
        op = next((o for o in _OPS if src.startswith(o, self.pos)), None)
        if op is not None:
            self.pos += len(op)
            if op in ("<<", "<<-"):
                self.want_delimiter = (op == "<<-",)
            return Token("op", op)
        start = self.pos
        word, self.pos = scan(src, self.pos, "word")
        raw = src[start:self.pos]
        if raw.isdigit() and self.pos < n and src[self.pos] in "<>":
            return Token("io", raw)
        heredoc = None
        if self.want_delimiter is not None:
            quoted = any(not isinstance(p, Lit) or p.quoted for p in word) or "\\" in raw
            heredoc = HereDoc(literal(word), self.want_delimiter[0], quoted)
            self.pending.append(heredoc)
            self.want_delimiter = None
        return Token("word", raw, word, heredoc)

    def _read_heredocs(self) -> None:
        for doc in self.pending:
            lines: list[str] = []
            while True:
                if self.pos >= len(self.src):
                    raise ShellSyntaxError(f"here-document delimited by end-of-file "
                                           f"(wanted '{doc.delimiter}')")
                end = self.src.find("\n", self.pos)
                end = len(self.src) if end < 0 else end
                line = self.src[self.pos:end]
                self.pos = min(end + 1, len(self.src))
                if doc.strip_tabs:
                    line = line.lstrip("\t")
                if line == doc.delimiter:
                    break
                lines.append(line + "\n")
            body = "".join(lines)
            doc.body = (Lit(body, True),) if doc.quoted else scan(body, 0, "heredoc")[0]
        self.pending = []

    # -- grammar ---------------------------------------------------------------------------
    def program(self, stop: str | None = None) -> CommandList:
        """A whole script; with `stop` (")"), up to that unmatched operator (a `$(...)`)."""
        body = self.command_list()
        tok = self.peek()
        if stop is not None and tok.kind == "op" and tok.text == stop:
            return body
        if tok.kind != "eof" or stop is not None:
            raise ShellSyntaxError(f"syntax error: unexpected {_describe(tok)}")
        return body

    def linebreak(self) -> None:
        while self.peek().kind == "nl":
            self.take()

    def _at_stop(self) -> bool:
        tok = self.peek()
        if tok.kind in ("eof",) or (tok.kind == "op" and tok.text in (")", ";;")):
            return True
        return tok.kind == "word" and plain(tok.word) in (
            "then", "else", "elif", "fi", "do", "done", "esac", "}")

    def command_list(self) -> CommandList:
        items: list[tuple[AndOr, bool]] = []
        self.linebreak()
        while not self._at_stop():
            andor = self.and_or()
            tok = self.peek()
            background = tok.kind == "op" and tok.text == "&"
            items.append((andor, background))
            if tok.kind == "op" and tok.text in (";", "&"):
                self.take()
            elif tok.kind == "nl":
                pass
            elif not self._at_stop():
                raise ShellSyntaxError(f"syntax error: unexpected {_describe(tok)}")
            self.linebreak()
        return CommandList(items)

    def compound_list(self, what: str) -> CommandList:
        body = self.command_list()
        if not body.items:
            expecting = _EXPECTING.get(what)
            raise ShellSyntaxError(f"syntax error: unexpected {_describe(self.peek())}"
                                   + (f' (expecting "{expecting}")' if expecting else ""))
        return body

    def and_or(self) -> AndOr:
        first = self.pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while (tok := self.peek()).kind == "op" and tok.text in ("&&", "||"):
            self.take()
            self.linebreak()
            rest.append((tok.text, self.pipeline()))
        return AndOr(first, rest)

    def pipeline(self) -> Pipeline:
        negate = False
        while self.peek().kind == "word" and plain(self.peek().word) == "!":
            self.take()
            negate = not negate
        commands = [self.command()]
        while (tok := self.peek()).kind == "op" and tok.text == "|":
            self.take()
            self.linebreak()
            commands.append(self.command())
        return Pipeline(commands, negate)

    def command(self) -> Node:
        tok = self.peek()
        if tok.kind == "op" and tok.text == "(":
            self.take()
            body = self.compound_list("(")
            self.expect_op(")")
            return self._redirected(Group(body, subshell=True))
        if tok.kind == "word":
            keyword = plain(tok.word)
            if keyword == "{":
                self.take()
                body = self.compound_list("{")
                self.expect_word("}")
                return self._redirected(Group(body, subshell=False))
            if keyword == "if":
                return self._redirected(self.if_clause())
            if keyword in ("while", "until"):
                self.take()
                cond = self.compound_list(keyword)
                self.expect_word("do")
                body = self.compound_list("do")
                self.expect_word("done")
                return self._redirected(Loop(cond, body, until=keyword == "until"))
            if keyword == "for":
                return self._redirected(self.for_clause())
            if keyword == "case":
                return self._redirected(self.case_clause())
            if keyword in RESERVED and keyword != "!":
                raise ShellSyntaxError(f"syntax error: unexpected {_describe(tok)}")
        return self.simple()

    def _redirected(self, node: Group | If | For | Loop | Case) -> Node:
        while self.peek().kind == "io" or (self.peek().kind == "op"
                                           and self.peek().text in _REDIR_OPS):
            node.redirs.append(self.redirect())
        return node

    def if_clause(self) -> If:
        self.take()
        arms = []
        orelse = None
        while True:
            cond = self.compound_list("if")
            self.expect_word("then")
            arms.append((cond, self.compound_list("then")))
            keyword = plain(self.take_word_token("fi").word)
            if keyword == "elif":
                continue
            if keyword == "else":
                orelse = self.compound_list("else")
                self.expect_word("fi")
            elif keyword != "fi":
                raise ShellSyntaxError(f"syntax error: unexpected {keyword!r}")
            return If(arms, orelse)

    def for_clause(self) -> For:
        self.take()
        name_tok = self.take()
        var = plain(name_tok.word) if name_tok.kind == "word" else None
        if var is None or not NAME.fullmatch(var):
            raise ShellSyntaxError("syntax error: bad for loop variable")
        words: list[Word] | None = None
        self.linebreak()
        if self.peek().kind == "word" and plain(self.peek().word) == "in":
            self.take()
            words = []
            while self.peek().kind == "word":
                words.append(self.take().word)
        if self.peek().kind == "op" and self.peek().text == ";":
            self.take()
        self.linebreak()
        self.expect_word("do")
        body = self.compound_list("do")
        self.expect_word("done")
        return For(var, words, body)

    def case_clause(self) -> Case:
        self.take()
        subject = self.take()
        if subject.kind != "word":
            raise ShellSyntaxError(f"syntax error: unexpected {_describe(subject)}")
        self.linebreak()
        self.expect_word("in")
        self.linebreak()
        arms: list[tuple[list[Word], CommandList | None]] = []
        while not (self.peek().kind == "word" and plain(self.peek().word) == "esac"):
            if self.peek().kind == "op" and self.peek().text == "(":
                self.take()
            patterns = [self.take_word_token(")").word]
            while self.peek().kind == "op" and self.peek().text == "|":
                self.take()
                patterns.append(self.take_word_token(")").word)
            self.expect_op(")")
            body = self.command_list()
            arms.append((patterns, body if body.items else None))
            if self.peek().kind == "op" and self.peek().text == ";;":
                self.take()
                self.linebreak()
            elif not (self.peek().kind == "word" and plain(self.peek().word) == "esac"):
                raise ShellSyntaxError(f"syntax error: unexpected {_describe(self.peek())}")
        self.take()
        return Case(subject.word, arms)

    def simple(self) -> Node:
        assigns: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirs: list[Redir] = []
        while True:
            tok = self.peek()
            if tok.kind == "io" or (tok.kind == "op" and tok.text in _REDIR_OPS):
                redirs.append(self.redirect())
            elif tok.kind == "word":
                self.take()
                assignment = _assignment(tok.word) if not words else None
                if assignment is not None:
                    assigns.append(assignment)
                    continue
                words.append(tok.word)
                if len(words) == 1 and not assigns and not redirs and \
                        self.peek().kind == "op" and self.peek().text == "(":
                    return self.function(tok)
            else:
                break
        if not (assigns or words or redirs):
            raise ShellSyntaxError(f"syntax error: unexpected {_describe(self.peek())}")
        return Simple(assigns, words, redirs)

    def function(self, name_tok: Token) -> FuncDef:
        name = plain(name_tok.word)
        if name is None or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*", name):
            raise ShellSyntaxError("syntax error: bad function name")
        self.take()
        self.expect_op(")")
        self.linebreak()
        body = self.command()
        if not isinstance(body, (Group, If, For, Loop, Case)):
            raise ShellSyntaxError("syntax error: unexpected word (expecting \"{\")")
        return FuncDef(name, body)

    def redirect(self) -> Redir:
        tok = self.take()
        fd = None
        if tok.kind == "io":
            fd = int(tok.text)
            tok = self.take()
        op = tok.text
        target = self.take()
        if target.kind != "word":
            raise ShellSyntaxError(f"syntax error: unexpected {_describe(target)}")
        if fd is None:
            fd = 0 if op in ("<", "<&", "<>", "<<", "<<-") else 1
        if op in ("<<", "<<-"):
            return Redir(fd, op, None, target.heredoc)
        return Redir(fd, op, target.word)

    # -- helpers ---------------------------------------------------------------------------
    def expect_word(self, keyword: str) -> None:
        tok = self.take()
        if tok.kind != "word" or plain(tok.word) != keyword:
            raise ShellSyntaxError(f"syntax error: unexpected {_describe(tok)} "
                                   f"(expecting \"{keyword}\")")

    def take_word_token(self, expecting: str) -> Token:
        tok = self.take()
        if tok.kind != "word":
            raise ShellSyntaxError(f"syntax error: unexpected {_describe(tok)} "
                                   f"(expecting \"{expecting}\")")
        return tok

    def expect_op(self, op: str) -> None:
        tok = self.take()
        if tok.kind != "op" or tok.text != op:
            raise ShellSyntaxError(f"syntax error: unexpected {_describe(tok)} "
                                   f"(expecting \"{op}\")")


_EXPECTING = {"if": "then", "elif": "then", "then": "fi", "else": "fi", "do": "done",
              "while": "do", "until": "do", "{": "}", "(": ")"}


def _describe(tok: Token) -> str:
    if tok.kind == "eof":
        return "end of file"
    if tok.kind == "nl":
        return "newline"
    return f'"{tok.text}"' if tok.kind == "op" else f'word "{tok.text}"'


def _assignment(word: Word) -> tuple[str, Word] | None:
    first = word[0] if word else None
    if not isinstance(first, Lit) or first.quoted:
        return None
    match = _ASSIGN.match(first.text)
    if match is None:
        return None
    rest = first.text[match.end():]
    value = ((Lit(rest, False),) if rest else ()) + tuple(word[1:])
    return match.group(1), value


def command_words(node: object) -> Iterator[tuple[Word, bool]]:
    """The first word of every simple command in a tree (with whether it is a function
    definition's name), `$(...)` bodies included: what a script may run."""
    if isinstance(node, Simple):
        if node.words:
            yield node.words[0], False
        for word in node.words:
            for part in word:
                if isinstance(part, CmdSub):
                    yield from command_words(part.body)
        return
    if isinstance(node, FuncDef):
        yield (Lit(node.name, False),), True
        yield from command_words(node.body)
        return
    for value in getattr(node, "__dict__", {}).values():
        for item in value if isinstance(value, list) else [value]:
            for inner in item if isinstance(item, tuple) else [item]:
                if isinstance(inner, (Simple, Pipeline, AndOr, CommandList, Group, If, For,
                                      Loop, Case, FuncDef)):
                    yield from command_words(inner)


def parse(text: str) -> CommandList:
    """A script's syntax tree; ShellSyntaxError with busybox's wording on bad input."""
    return Parser(text).program()


# -- words --------------------------------------------------------------------------------
_STOP = {"word": _META, "dq": '"', "brace": "}", "heredoc": "", "arith": ""}
_DQ_ESCAPES = {"dq": '$`"\\\n', "brace": '$`"\\}\n', "heredoc": "$`\\\n", "arith": "$`\\\n"}


def scan(src: str, i: int, mode: str, quoted: bool = False) -> tuple[Word, int]:
    """The parts of one word starting at `i` in `mode` ("word": a token; "dq": inside
    double quotes; "brace": the argument of `${X-...}`; "heredoc"/"arith": a whole text),
    and where it ends."""
    parts: list[Part] = []
    buf: list[str] = []
    buf_quoted = quoted
    stops = _STOP[mode]
    inner_quoted = quoted or mode in ("dq", "heredoc", "arith")

    def lit(chars: str, q: bool) -> None:
        nonlocal buf_quoted
        if buf and q != buf_quoted:
            flush()
        buf_quoted = q
        buf.append(chars)

    def flush() -> None:
        if buf:
            parts.append(Lit("".join(buf), buf_quoted))
            buf.clear()

    n = len(src)
    while i < n:
        c = src[i]
        if c in stops:
            break
        if c == "\\":
            nxt = src[i + 1] if i + 1 < n else ""
            if not inner_quoted:
                if nxt == "\n":
                    i += 2
                elif nxt == "":
                    lit("\\", False)
                    i += 1
                else:
                    lit(nxt, True)
                    i += 2
            elif nxt and nxt in _DQ_ESCAPES.get(mode, '$`"\\\n'):
                if nxt != "\n":
                    lit(nxt, True)
                i += 2
            else:
                lit("\\", True)
                i += 1
            continue
        if c == "'" and not inner_quoted:
            end = src.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("unterminated quoted string")
            lit(src[i + 1:end], True)
            if end == i + 1:
                flush()
                parts.append(Lit("", True))
            i = end + 1
            continue
        if c == '"' and not inner_quoted:
            sub, j = scan(src, i + 1, "dq", True)
            if j >= n:
                raise ShellSyntaxError("unterminated quoted string")
            flush()
            parts.extend(sub or (Lit("", True),))
            i = j + 1
            continue
        if c == "$":
            found = _dollar(src, i, inner_quoted)
            if found is not None:
                flush()
                parts.append(found[0])
                i = found[1]
                continue
        if c == "`":
            end, body = _backquoted(src, i + 1)
            flush()
            parts.append(CmdSub(parse(body), inner_quoted))
            i = end + 1
            continue
        lit(c, inner_quoted)
        i += 1
    flush()
    return tuple(parts), i


def _backquoted(src: str, i: int) -> tuple[int, str]:
    out: list[str] = []
    while i < len(src):
        c = src[i]
        if c == "\\" and i + 1 < len(src) and src[i + 1] in "$`\\":
            out.append(src[i + 1])
            i += 2
            continue
        if c == "`":
            return i, "".join(out)
        out.append(c)
        i += 1
    raise ShellSyntaxError("unterminated `...`")


def _dollar(src: str, i: int, quoted: bool) -> tuple[Part, int] | None:
    n = len(src)
    nxt = src[i + 1] if i + 1 < n else ""
    if src.startswith("$((", i):
        end = _arith_end(src, i + 3)
        if end is not None:
            expr, _ = scan(src[i + 3:end], 0, "arith", True)
            return Arith(expr, quoted), end + 2
    if nxt == "(":
        sub = Parser(src, i + 2)
        body = sub.program(stop=")")
        sub.take()  # the ")"
        return CmdSub(body, quoted), sub.pos
    if nxt == "{":
        return _braced(src, i + 2, quoted)
    match = NAME.match(src, i + 1)
    if match is not None:
        return Param(match.group(), quoted=quoted), match.end()
    if nxt and (nxt.isdigit() or nxt in "@*#?$!-"):
        return Param(nxt, quoted=quoted), i + 2
    return None


def _arith_end(src: str, i: int) -> int | None:
    depth = 0
    while i < len(src):
        if src[i] == "(":
            depth += 1
        elif src[i] == ")":
            if depth == 0:
                return i if src.startswith("))", i) else None
            depth -= 1
        i += 1
    return None


def _braced(src: str, i: int, quoted: bool) -> tuple[Part, int]:
    n = len(src)
    length = False
    if i < n and src[i] == "#" and i + 1 < n and src[i + 1] != "}":
        length, i = True, i + 1
    match = NAME.match(src, i)
    if match is not None:
        name, i = match.group(), match.end()
    elif i < n and src[i].isdigit():
        j = i
        while j < n and src[j].isdigit():
            j += 1
        name, i = src[i:j], j
    elif i < n and src[i] in "@*#?$!-0":
        name, i = src[i], i + 1
    else:
        raise ShellSyntaxError("syntax error: bad substitution")
    if i < n and src[i] == "}":
        return Param(name, "len" if length else "", None, quoted), i + 1
    if length:
        raise ShellSyntaxError("syntax error: bad substitution")
    op = next((o for o in _PARAM_OPS if src.startswith(o, i)), None)
    if op is None:
        raise ShellSyntaxError("syntax error: bad substitution")
    arg, j = scan(src, i + len(op), "brace", quoted)
    if j >= n:
        raise ShellSyntaxError("syntax error: missing '}'")
    return Param(name, op, arg, quoted), j + 1
