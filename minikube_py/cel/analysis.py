"""What a CEL expression refers to and how its cost grows with its input: the checks cel-go's
type checker and cost estimator make before a program may run.

Kubernetes pieces: k8s.io/apiserver/pkg/cel (the compile step turns "undeclared reference"
and "found no matching overload" into compile errors) and cel-go's checker/cost.go (a static
cost estimate from the sizes of the inputs). The evaluator we run (cel-rust, see program.py)
resolves names only when it runs, and cannot be interrupted once it has started, so both
questions are answered here, on the parse tree of cel-python's (celpy's) Lark grammar.

Cost model: every operation costs 1; the body of a comprehension macro (`all`, `exists`,
`exists_one`, `map`, `filter`) runs once per element, so its cost is multiplied by C, the size
of the largest list or map; a function that walks a string (`matches`, `contains`,
`lowerAscii`, ...) costs S, a tenth of the length of the longest string (upstream's
StringTraversalCostFactor), and one that walks a list
(`sum`, `isSorted`, `in`, ...) costs C. The result is a polynomial in C and S
(`terms[(i, j)]` multiplies C**i * S**j); `Analysis.cost(c, s)` evaluates it. Upstream's
estimator is finer (it tracks each value's own size), ours is an upper bound of the same
shape: a rule nesting two comprehensions over an unbounded list is refused the same way, a
string function inside one comprehension is C*S, not C**2.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from celpy import celparser
from celpy.evaluation import celstr
from lark import Token, Tree

#: upstream's StringTraversalCostFactor is 0.1: walking ten characters costs one unit
STRING_TRAVERSAL_DIVISOR = 10

#: the comprehension macros; `has` is the other macro (a presence test, not a call)
MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})


@dataclass
class Reference:
    """A name an expression uses: a variable, or a function (global or receiver-style)."""

    name: str
    line: int
    column: int
    receiver: bool = False


@dataclass
class Analysis:
    """The result of one parse: free variables, called functions, literal regexes, the cost
    polynomial's terms, and the field paths each variable is read through (`paths["self"]`
    holding `("spec", "replicas")` for `self.spec.replicas`; `()` when the variable is used
    whole: compared, iterated, passed to a function)."""

    variables: list[Reference] = field(default_factory=list)
    paths: dict[str, set[tuple[str, ...]]] = field(default_factory=dict)
    functions: list[Reference] = field(default_factory=list)
    regexes: list[tuple[str, int, int]] = field(default_factory=list)
    terms: dict[tuple[int, int], int] = field(default_factory=dict)

    @functools.cached_property
    def constant(self) -> bool:
        """True when the cost does not depend on the input's sizes (read on every
        evaluation: computed once)."""
        return all(key == (0, 0) for key in self.terms)

    @functools.cached_property
    def _term_list(self) -> tuple[tuple[int, int, int], ...]:
        return tuple((n, i, j) for (i, j), n in self.terms.items())

    @property
    def nesting(self) -> int:
        """The highest power of C: how deeply comprehensions (and list walks) nest."""
        return max((c for c, _ in self.terms), default=0)

    def cost(self, collections: int, strings: int | None = None) -> int:
        """The cost bound for lists/maps of at most `collections` elements and strings of at
        most `strings` characters (default: the same number)."""
        c = max(int(collections), 1)
        s = c if strings is None else max(int(strings), 1)
        s = -(-s // STRING_TRAVERSAL_DIVISOR)  # upstream: 0.1 per character walked
        total = 0
        for n, i, j in self._term_list:
            total += n * c ** i * s ** j
        return total


class SyntaxProblem(ValueError):
    """The expression does not parse: `line`/`column` are 1-based, `text` is the parser's."""

    def __init__(self, text: str, line: int, column: int) -> None:
        super().__init__(text)
        self.text, self.line, self.column = text, line, column


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    return celparser.CELParser()


def analyze(expression: str) -> Analysis:
    """Parse `expression` and collect what it refers to and what it may cost."""
    try:
        tree = _parser().parse(expression)
    except celparser.CELParseError as err:
        line, column = getattr(err, "line", None) or 1, getattr(err, "column", None) or 1
        raise SyntaxProblem(str(err).splitlines()[0] if str(err) else "syntax error",
                            line, column) from None
    except RecursionError:
        raise SyntaxProblem("expression nests too deeply", 1, 1) from None
    out = Analysis()
    _walk(tree, frozenset(), (0, 0), out)
    return out


Depth = tuple[int, int]  # (powers of C, powers of S) of the context a node runs in


def _charge(out: Analysis, depth: Depth, amount: int) -> None:
    if amount:
        out.terms[depth] = out.terms.get(depth, 0) + amount


def _times_c(depth: Depth) -> Depth:
    return depth[0] + 1, depth[1]


def _times_s(depth: Depth) -> Depth:
    return depth[0], depth[1] + 1


def _pos(tree: Tree) -> tuple[int, int]:
    meta = tree.meta
    return getattr(meta, "line", 1) or 1, getattr(meta, "column", 1) or 1


def _ident_of(tree: Any) -> str | None:
    """The name when `tree` is a bare identifier (possibly wrapped in the grammar's chain of
    precedence rules), else None."""
    while isinstance(tree, Tree):
        if tree.data == "ident":
            return str(tree.children[0])
        if len(tree.children) != 1:
            return None
        tree = tree.children[0]
    return None


def _field_chain(tree: Tree) -> tuple[str, ...] | None:
    """`("self", "spec", "replicas")` for the selection `self.spec.replicas`, else None."""
    names: list[str] = []
    while isinstance(tree, Tree):
        if tree.data == "member_dot":
            names.append(str(tree.children[1]))
            tree = tree.children[0]
        elif tree.data == "ident":
            names.append(str(tree.children[0]))
            return tuple(reversed(names))
        elif len(tree.children) == 1:
            tree = tree.children[0]
        else:
            return None
    return None


def _args(tree: Tree) -> list[Any]:
    for child in tree.children:
        if isinstance(child, Tree) and child.data == "exprlist":
            return list(child.children)
    return []


def _walk(tree: Any, bound: frozenset[str], depth: Depth, out: Analysis) -> None:
    if not isinstance(tree, Tree):
        return
    kind = tree.data
    line, column = _pos(tree)
    if kind == "ident":
        name = str(tree.children[0])
        if name not in bound:
            out.variables.append(Reference(name, line, column))
            out.paths.setdefault(name, set()).add(())
        _charge(out, depth, 1)
        return
    if kind == "member_dot":
        chain = _field_chain(tree)
        if chain is not None and chain[0] not in bound:
            out.variables.append(Reference(chain[0], line, column))
            out.paths.setdefault(chain[0], set()).add(chain[1:])
            _charge(out, depth, len(chain))
            return
    if kind == "member_dot_arg":
        target, name = tree.children[0], str(tree.children[1])
        args = _args(tree)
        if name in MACROS and args and _ident_of(args[0]) is not None:
            _walk(target, bound, depth, out)
            inner = bound | {str(_ident_of(args[0]))}
            _charge(out, depth, 1)
            for body in args[1:]:
                _walk(body, inner, _times_c(depth), out)
            return
        namespace = _ident_of(target)
        if namespace is not None and namespace not in bound and namespace in _NAMESPACES:
            out.functions.append(Reference(f"{namespace}.{name}", line, column))
        else:
            out.functions.append(Reference(name, line, column, receiver=True))
            _walk(target, bound, depth, out)
        _call(name, args, bound, depth, out)
        return
    if kind == "ident_arg":
        name = str(tree.children[0])
        args = _args(tree)
        if name == "has":
            _charge(out, depth, 1)
            for arg in args:  # has(a.b): `a` must exist, `b` is a field name, not a variable
                _walk(arg, bound, depth, out)
            return
        out.functions.append(Reference(name, line, column))
        _call(name, args, bound, depth, out)
        return
    if kind == "literal":
        _charge(out, depth, 1)
        return
    _charge(out, depth, 1 if kind in _OPERATORS or len(tree.children) > 1 else 0)
    if kind == "relation_in":
        _charge(out, _times_c(depth), 1)
    for child in tree.children:
        if isinstance(child, Tree):
            _walk(child, bound, depth, out)


def _call(name: str, args: list[Any], bound: frozenset[str], depth: Depth,
          out: Analysis) -> None:
    """A function call: 1, plus S for a string walk and C for a list walk, then its
    arguments."""
    _charge(out, depth, 1)
    if name in LIST_LINEAR:
        _charge(out, _times_c(depth), 1)
    if name not in CONSTANT_TIME:
        _charge(out, _times_s(depth), 1)
    if name in ("matches", "find", "findAll") and args:
        literal = _string_literal(args[-1])
        if literal is not None:
            line, column = _pos(args[-1]) if isinstance(args[-1], Tree) else (1, 1)
            out.regexes.append((literal, line, column))
    for arg in args:
        _walk(arg, bound, depth, out)


def _string_literal(tree: Any) -> str | None:
    """The value of a plain quoted string literal (the common `matches('^a+$')`), else None."""
    while isinstance(tree, Tree):
        if tree.data == "literal":
            token = tree.children[0]
            if isinstance(token, Token) and token.type in ("STRING_LIT", "MLSTRING_LIT"):
                try:
                    return str(celstr(token))
                except Exception:  # noqa: BLE001 - an odd escape: left to run time
                    return None
            return None
        if len(tree.children) != 1:
            return None
        tree = tree.children[0]
    return None


#: functions that walk a list (or map) argument: C per call
LIST_LINEAR = frozenset({"isSorted", "sum", "min", "max", "indexOf", "lastIndexOf", "join",
                         "sets.contains", "sets.equivalent", "sets.intersects"})
#: functions whose cost does not depend on a string's length (all others: S per call)
CONSTANT_TIME = frozenset({"size", "isSorted", "sum", "min", "max", "sets.contains",
                           "sets.equivalent", "sets.intersects", "dyn", "type", "bool",
                           "getScheme", "getHost", "getHostname", "getPort", "sign",
                           "isGreaterThan", "isLessThan", "compareTo", "add", "sub",
                           "isInteger", "asInteger", "asApproximateFloat", "hasValue",
                           "value", "orValue", "optional.of", "optional.none", "getDate",
                           "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear",
                           "getHours", "getMilliseconds", "getMinutes", "getMonth",
                           "getSeconds"})

#: namespaced function families (`strings.quote(x)`, `math.greatest(a, b)`, `sets.contains`)
_NAMESPACES = frozenset({"strings", "math", "sets", "base64", "lists", "optional"})

#: grammar rules that are an operation even with one child (a rule with several children is
#: an operation too: `a && b`, `c ? x : y`; one child only carries precedence)
_OPERATORS = frozenset({"unary_not", "unary_neg", "member_dot", "member_index", "member_object",
                        "list_lit", "map_lit"})
