"""Shell arithmetic: the `$((...))` language (POSIX XCU 2.6.4, C's integer operators).

Kubernetes piece: none — part of the container's `/bin/sh`. Evaluated after parameter
expansion of the expression text; names without `$` are variables (empty or unset: 0), and
`=`, `+=`, `++` ... assign through the callbacks. Integers are 64-bit signed, as busybox
and dash use. Pure: a precedence-climbing evaluator over a token list.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_TOKEN = re.compile(r"\s*(?:(0[xX][0-9a-fA-F]+|\d+)|([A-Za-z_][A-Za-z0-9_]*)|"
                    r"(<<=|>>=|\*\*|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|"
                    r"[-+*/%<>=!~&|^?:(),]))")
_BINARY = {  # operator -> precedence (higher binds tighter)
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9,
    "*": 10, "/": 10, "%": 10, "**": 11,
}
_ASSIGN_OPS = frozenset(("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="))


class ArithError(ValueError):
    pass


def _wrap(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise ArithError("arithmetic syntax error")
        tokens.append(match.group(match.lastindex or 0))
        pos = match.end()
    return tokens


class _Evaluator:
    def __init__(self, tokens: list[str], get: Callable[[str], str],
                 set_: Callable[[str, str], None], depth: int) -> None:
        self.depth = depth
        self.tokens = tokens
        self.i = 0
        self.get = get
        self.set = set_

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise ArithError("arithmetic syntax error")
        self.i += 1
        return tok

    def var(self, name: str) -> int:
        raw = self.get(name).strip()
        if not raw:
            return 0
        try:
            return int(raw, 0) if not re.fullmatch(r"0\d+", raw) else int(raw, 8)
        except ValueError:
            if self.depth >= 16:
                raise ArithError("expression recursion loop detected") from None
            return evaluate(raw, self.get, self.set, _depth=self.depth + 1)

    def expr(self) -> int:
        return self.assignment()

    def assignment(self) -> int:
        tok = self.peek()
        nxt = self.tokens[self.i + 1] if self.i + 1 < len(self.tokens) else None
        if tok and re.fullmatch(r"[A-Za-z_]\w*", tok) and nxt in _ASSIGN_OPS:
            self.i += 2
            value = self.assignment()
            if nxt != "=":
                value = self.apply(nxt[:-1], self.var(tok), value)
            self.set(tok, str(value))
            return value
        return self.ternary()

    def ternary(self) -> int:
        cond = self.binary(1)
        if self.peek() == "?":
            self.take()
            yes = self.expr()
            if self.take() != ":":
                raise ArithError("arithmetic syntax error")
            no = self.ternary()
            return yes if cond else no
        return cond

    def binary(self, level: int) -> int:
        left = self.unary()
        while (op := self.peek()) in _BINARY and _BINARY[op] >= level:
            self.take()
            if op == "**":
                right = self.binary(_BINARY[op])  # right-associative
            else:
                right = self.binary(_BINARY[op] + 1)
            left = self.apply(op, left, right)
        return left

    def apply(self, op: str, a: int, b: int) -> int:
        if op in ("/", "%"):
            if b == 0:
                raise ArithError("divide by zero")
            quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
            return _wrap(quotient if op == "/" else a - b * quotient)
        ops: dict[str, Callable[[int, int], int]] = {
            "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
            "**": lambda x, y: x ** y if y >= 0 else 0, "<<": lambda x, y: x << (y & 63),
            ">>": lambda x, y: x >> (y & 63), "&": lambda x, y: x & y,
            "|": lambda x, y: x | y, "^": lambda x, y: x ^ y,
            "<": lambda x, y: int(x < y), ">": lambda x, y: int(x > y),
            "<=": lambda x, y: int(x <= y), ">=": lambda x, y: int(x >= y),
            "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y),
            "&&": lambda x, y: int(bool(x) and bool(y)), "||": lambda x, y: int(bool(x) or bool(y)),
        }
        if op == "**" and b > 64:
            return _wrap(pow(a, b, 1 << 64))
        return _wrap(ops[op](a, b))

    def unary(self) -> int:
        tok = self.take()
        if tok in ("-", "+", "!", "~"):
            value = self.unary()
            return {"-": -value, "+": value, "!": int(not value), "~": ~value}[tok]
        if tok in ("++", "--"):
            name = self.take()
            value = self.var(name) + (1 if tok == "++" else -1)
            self.set(name, str(value))
            return value
        if tok == "(":
            value = self.expr()
            if self.take() != ")":
                raise ArithError("arithmetic syntax error")
            return value
        if tok[0].isdigit():
            try:
                return _wrap(int(tok, 16) if tok[:2] in ("0x", "0X") else
                             int(tok, 8) if len(tok) > 1 and tok[0] == "0" else int(tok))
            except ValueError:
                raise ArithError("arithmetic syntax error") from None
        if re.fullmatch(r"[A-Za-z_]\w*", tok):
            value = self.var(tok)
            if self.peek() in ("++", "--"):
                self.set(tok, str(value + (1 if self.take() == "++" else -1)))
            return value
        raise ArithError("arithmetic syntax error")


def evaluate(text: str, get: Callable[[str], str], set_: Callable[[str, str], None],
             *, _depth: int = 0) -> int:
    """The value of an arithmetic expression; ArithError on bad syntax or division by zero."""
    tokens = tokenize(text)
    if not tokens:
        return 0
    ev = _Evaluator(tokens, get, set_, _depth)
    value = ev.expr()
    if ev.peek() is not None:
        raise ArithError("arithmetic syntax error")
    return value
