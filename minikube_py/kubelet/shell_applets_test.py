"""`test` / `[` and `expr`: the two little expression languages scripts branch on.

Kubernetes piece: none — busybox applets of the container image. `test` follows POSIX's
operand-count rules and `-a`/`-o`/`!`/parentheses; file tests look at the sandbox. `expr`
is the POSIX grammar (`|`, `&`, comparisons, `+ -`, `* / %`, `:` regex match, plus
busybox's `length`, `substr`, `index`, `match`). Status: 0 true, 1 false, 2 error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from .shell_applets_text import bre_to_python, user_regex
from .shell_io import Program, Write, text

if TYPE_CHECKING:
    from .shell_interp import Shell

_INT_OPS: dict[str, Callable[[int, int], bool]] = {
    "-eq": lambda a, b: a == b, "-ne": lambda a, b: a != b, "-lt": lambda a, b: a < b,
    "-le": lambda a, b: a <= b, "-gt": lambda a, b: a > b, "-ge": lambda a, b: a >= b,
}
_STR_OPS: dict[str, Callable[[str, str], bool]] = {
    "=": lambda a, b: a == b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b, ">": lambda a, b: a > b,
}
_UNARY = frozenset("-e -f -d -s -r -w -x -n -z -h -L -b -c -p -S -t -g -u -k -O -G".split())


class _TestError(ValueError):
    pass


class _Test:
    def __init__(self, sh: "Shell", args: list[str]) -> None:
        self.sh = sh
        self.args = args
        self.i = 0

    def parse(self) -> bool:
        value = self.or_expr()
        if self.i != len(self.args):
            raise _TestError(f"{self.args[self.i]}: unknown operand")
        return value

    def or_expr(self) -> bool:
        value = self.and_expr()
        while self.peek() == "-o":
            self.i += 1
            value = self.and_expr() or value
        return value

    def and_expr(self) -> bool:
        value = self.not_expr()
        while self.peek() == "-a":
            self.i += 1
            value = self.not_expr() and value
        return value

    def not_expr(self) -> bool:
        if self.peek() == "!" and self.i + 1 < len(self.args):
            self.i += 1
            return not self.not_expr()
        return self.primary()

    def peek(self, ahead: int = 0) -> str | None:
        j = self.i + ahead
        return self.args[j] if j < len(self.args) else None

    def primary(self) -> bool:
        tok = self.peek()
        if tok is None:
            raise _TestError("argument expected")
        if tok == "(" and self.peek(2) == ")" or (tok == "(" and self.peek(1) not in _STR_OPS
                                                  and self.peek(1) not in _INT_OPS):
            self.i += 1
            value = self.or_expr()
            if self.peek() != ")":
                raise _TestError("closing paren expected")
            self.i += 1
            return value
        op = self.peek(1)
        if op in _STR_OPS or op in _INT_OPS:
            left, right = tok, self.peek(2)
            if right is None:
                raise _TestError("argument expected")
            self.i += 3
            if op in _STR_OPS:
                return _STR_OPS[op](left, right)
            return _INT_OPS[op](_integer(left), _integer(right))
        if tok in _UNARY and self.peek(1) is not None:
            self.i += 2
            return self.unary(tok, self.args[self.i - 1])
        self.i += 1
        return tok != ""

    def unary(self, op: str, arg: str) -> bool:
        if op == "-n":
            return arg != ""
        if op == "-z":
            return arg == ""
        if op == "-t":
            return self.sh.tty
        box = self.sh.sandbox
        full = self.sh.resolve(arg) if arg else ""
        if op in ("-e", "-r", "-w"):
            return bool(full) and box.exists(full)
        if op == "-f":
            return box.is_file(full)
        if op == "-d":
            return box.is_dir(full)
        if op == "-s":
            return box.is_dir(full) or bool(box.files.get(full))
        if op == "-x":
            return box.is_dir(full) or full.rsplit("/", 1)[0] in ("/bin", "/usr/bin", "/sbin")
        return False


def _integer(value: str) -> int:
    if not re.fullmatch(r"\s*[-+]?\d+\s*", value):
        raise _TestError(f"{value}: bad number" if value else "invalid number ''")
    return int(value)


def _test(sh: "Shell", argv: list[str]) -> Program:
    args = argv[1:]
    if argv[0] == "[":
        if not args or args[-1] != "]":
            yield Write(2, b"[: missing ]\n")
            return 2
        args = args[:-1]
    if not args:
        return 1
    try:
        return 0 if _Test(sh, args).parse() else 1
    except _TestError as exc:
        yield Write(2, text(f"{argv[0]}: {exc}\n"))
        return 2


# -- expr ---------------------------------------------------------------------------------
class _ExprError(ValueError):
    pass


def _num(value: str | int) -> int:
    if isinstance(value, int):
        return value
    if not re.fullmatch(r"-?\d+", value):
        raise _ExprError("non-numeric argument")
    return int(value)


def _compare(a: str | int, b: str | int) -> int:
    try:
        return (_num(a) > _num(b)) - (_num(a) < _num(b))
    except _ExprError:
        return (str(a) > str(b)) - (str(a) < str(b))


class _Expr:
    LEVELS: list[dict[str, Callable[[str | int, str | int], str | int]]] = [
        {"|": lambda a, b: a if a not in ("", 0, "0") else (b if b not in ("", "0") else 0)},
        {"&": lambda a, b: a if a not in ("", 0, "0") and b not in ("", 0, "0") else 0},
        {"=": lambda a, b: int(_compare(a, b) == 0), "!=": lambda a, b: int(_compare(a, b) != 0),
         "<": lambda a, b: int(_compare(a, b) < 0), "<=": lambda a, b: int(_compare(a, b) <= 0),
         ">": lambda a, b: int(_compare(a, b) > 0), ">=": lambda a, b: int(_compare(a, b) >= 0)},
        {"+": lambda a, b: _num(a) + _num(b), "-": lambda a, b: _num(a) - _num(b)},
        {"*": lambda a, b: _num(a) * _num(b), "/": lambda a, b: _div(a, b, False),
         "%": lambda a, b: _div(a, b, True)},
        {":": lambda a, b: _match(str(a), str(b))},
    ]

    def __init__(self, args: list[str]) -> None:
        self.args = args
        self.i = 0

    def level(self, n: int) -> str | int:
        if n == len(self.LEVELS):
            return self.primary()
        left = self.level(n + 1)
        while self.i < len(self.args) and self.args[self.i] in self.LEVELS[n]:
            op = self.args[self.i]
            self.i += 1
            left = self.LEVELS[n][op](left, self.level(n + 1))
        return left

    def take(self) -> str:
        if self.i >= len(self.args):
            raise _ExprError("syntax error")
        self.i += 1
        return self.args[self.i - 1]

    def primary(self) -> str | int:
        tok = self.take()
        if tok == "(":
            value = self.level(0)
            if self.take() != ")":
                raise _ExprError("syntax error")
            return value
        if tok == "length" and self.i < len(self.args):
            return len(str(self.primary()))
        if tok == "substr":
            value, start, length = str(self.primary()), _num(self.primary()), _num(self.primary())
            return value[start - 1:start - 1 + length] if start > 0 and length > 0 else ""
        if tok == "index":
            value, chars = str(self.primary()), str(self.primary())
            return min((value.find(c) + 1 for c in chars if c in value), default=0)
        if tok == "match":
            return _match(str(self.primary()), str(self.primary()))
        return tok


def _div(a: str | int, b: str | int, modulo: bool) -> int:
    x, y = _num(a), _num(b)
    if y == 0:
        raise _ExprError("division by zero")
    q = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)
    return x - y * q if modulo else q


def _match(value: str, regex: str) -> str | int:
    """BRE anchored at the start: `\\(..\\)` returns the group, else the match length."""
    found = user_regex(bre_to_python(regex)).match(value)
    if "\\(" in regex:
        return found.group(1) if found and found.group(1) is not None else ""
    return found.end() if found else 0


def _expr(sh: "Shell", argv: list[str]) -> Program:
    parser = _Expr(argv[1:])
    try:
        value = parser.level(0)
        if parser.i != len(parser.args):
            raise _ExprError("syntax error")
    except _ExprError as exc:
        yield Write(2, text(f"expr: {exc}\n"))
        return 2
    except re.error:
        yield Write(2, b"expr: bad regular expression\n")
        return 2
    yield Write(1, text(f"{value}\n"))
    return 1 if value in ("", 0, "0") else 0


APPLETS = {"test": _test, "[": _test, "[[": _test, "expr": _expr}
