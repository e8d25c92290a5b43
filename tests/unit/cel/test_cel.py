"""minikube_py.cel: compile errors, the Kubernetes library, RE2 and the cost bound."""

from __future__ import annotations

import time

import pytest

from minikube_py import cel


def run(expr: str, **variables):
    return cel.compile(expr, set(variables) | {"self"}).evaluate(variables)


@pytest.mark.parametrize("expr, expected", [
    ("'Hello'.lowerAscii() == 'hello' && 'a'.upperAscii() == 'A'", True),
    ("'a,b,c'.split(',')", ["a", "b", "c"]),
    ("['a', 'b'].join('-')", "a-b"),
    ("'  x '.trim()", "x"),
    ("'aXbX'.replace('X', '_')", "a_b_"),
    ("'abcb'.indexOf('b') == 1 && 'abcb'.lastIndexOf('b') == 3", True),
    ("'hello'.charAt(1) + 'hello'.substring(1, 3)", "eel"),
    ("[1, 2, 3].indexOf(2) == 1 && [1, 2, 1].lastIndexOf(1) == 2", True),
    ("[1, 2, 3].isSorted() && !['b', 'a'].isSorted()", True),
    ("[1, 2, 3].sum() == 6 && [3, 1, 2].min() == 1 && [3, 1, 2].max() == 3", True),
    ("[1.5, 2.5].sum()", 4.0),
    ("'abc 123 45'.find('[0-9]+')", "123"),
    ("'abc 123 45'.findAll('[0-9]+')", ["123", "45"]),
    ("'abc'.matches('^a.c$') && !'abd'.matches('^a.c$')", True),
    ("url('https://example.com:8443/p?q=1').getHost()", "example.com:8443"),
    ("url('https://example.com:8443/p').getHostname() + url('https://e.com/a b'.replace(' ', '')).getEscapedPath()", "example.com/ab"),
    ("isURL('https://x.y') && !isURL('not a url')", True),
    ("quantity('1Gi').isGreaterThan(quantity('500Mi')) && quantity('100m').isLessThan(quantity('1'))", True),
    ("quantity('1.5').add(quantity('500m')).isInteger() && quantity('2').asInteger() == 2", True),
    ("quantity('1k').compareTo(quantity('1000')) == 0 && isQuantity('10Mi') && !isQuantity('x')", True),
    ("'%s has %d items (%.2f)'.format(['list', 3, 1.5])", "list has 3 items (1.50)"),
    ("has(self.a) && !has(self.b)", True),
    ("self.l.all(x, x > 0) && self.l.exists(x, x == 2) && self.l.exists_one(x, x == 3)", True),
    ("self.l.map(x, x * 2).filter(x, x > 2)", [4, 6]),
    ("strings.quote('a\"b')", '"a\\"b"'),
    ("sets.contains([1, 2, 3], [1, 3])", True),
])
def test_kubernetes_library(expr, expected):
    assert run(expr, self={"a": 1, "l": [1, 2, 3]}) == expected


@pytest.mark.parametrize("expr, fragment", [
    ("self.x +", "Syntax error: mismatched input '<EOF>'"),
    ("nope == 1", "undeclared reference to 'nope' (in container '')"),
    ("self.frobnicate()", "found no matching overload for 'frobnicate'"),
    ("frob(self)", "undeclared reference to 'frob'"),
    ("self.matches('a(b')", "invalid matches argument: error parsing regexp: missing ): a(b"),
    ("self.matches('(?=x)')", "error parsing regexp"),  # RE2: no lookahead
])
def test_compile_errors_are_readable(expr, fragment):
    with pytest.raises(cel.CompileError) as err:
        cel.compile(expr, {"self"})
    text = str(err.value)
    assert text.startswith("compilation failed: ERROR: <input>:1:"), text
    assert fragment in text
    assert "\n | " in text  # the source line and caret, as cel-go prints issues


def test_comprehension_variables_are_declared_inside_only():
    assert run("self.l.all(x, x > 0)", self={"l": [1]}) is True
    with pytest.raises(cel.CompileError, match="undeclared reference to 'x'"):
        cel.compile("self.l.all(x, x > 0) && x > 0", {"self"})


@pytest.mark.parametrize("expr, message", [
    ("self.missing == 1", "no such key: missing"),
    ("1 / self.zero == 1", "division by zero"),
    ("self.s + 1 == 1", "no such overload"),
    ("self.l[5] == 1", "index out of bounds"),
    ("quantity('x').sign() == 1", "quantities must match the regular expression"),
])
def test_runtime_errors(expr, message):
    with pytest.raises(cel.EvaluationError, match=message):
        run(expr, self={"zero": 0, "s": "a", "l": [1]})


def test_compiled_once():
    assert cel.compile("self.a == 1", {"self"}) is cel.compile("self.a == 1", {"self"})
    assert cel.compile("self.a == 1", {"self"}) is not cel.compile("self.a == 1",
                                                                    {"self", "oldSelf"})


def test_uses_reports_transition_rules():
    assert cel.compile("self == oldSelf", {"self", "oldSelf"}).uses == {"self", "oldSelf"}
    assert cel.compile("self > 1", {"self", "oldSelf"}).uses == {"self"}


def test_cost_bound_grows_with_nesting():
    flat = cel.compile("self.all(x, x > 0)", {"self"})
    nested = cel.compile("self.all(x, self.all(y, x == y))", {"self"})
    assert flat.analysis.nesting == 1 and nested.analysis.nesting == 2
    assert nested.cost_bound({"self": list(range(100))}) > 50 * flat.cost_bound(
        {"self": list(range(100))})


def test_runaway_expression_is_refused_before_it_runs():
    """Three nested comprehensions over 300 items: ~18 s in the evaluator (which holds the
    GIL); the bound refuses it at once."""
    program = cel.compile("self.all(x, self.all(y, self.all(z, x + y + z >= 0)))", {"self"})
    started = time.perf_counter()
    with pytest.raises(cel.CostLimitExceeded) as err:
        program.evaluate({"self": list(range(300))})
    assert time.perf_counter() - started < 0.5
    assert err.value.cost > err.value.limit == cel.PER_CALL_LIMIT
    assert str(err.value) == "operation cancelled: actual cost limit exceeded"
    # the same expression on a small input is well within budget and runs
    assert program.evaluate({"self": [1, 2, 3]}) is True


def test_budget_argument_lowers_the_limit():
    program = cel.compile("self.all(x, x > 0)", {"self"})
    assert program.evaluate({"self": [1] * 100}) is True
    with pytest.raises(cel.CostLimitExceeded):
        program.evaluate({"self": [1] * 100}, budget=50)


def test_re2_find_is_linear_time():
    """A backtracking pattern on a long input: RE2 answers in milliseconds."""
    started = time.perf_counter()
    assert run("self.find('(a+)+$')", self="a" * 5000 + "b") == ""
    assert run("self.matches('(a+)+$')", self="a" * 5000 + "b") is False
    assert time.perf_counter() - started < 0.5


def test_sizes_measure_nested_values():
    assert cel.sizes({"a": [1, 2, {"b": "x" * 10}]}) == (3, 10)
    assert cel.sizes(5) == (1, 1)


def test_string_function_in_a_comprehension_is_c_times_s():
    program = cel.compile("self.all(x, x.startsWith('a'))", {"self"})
    assert program.analysis.nesting == 1
    assert (1, 1) in program.analysis.terms and (2, 0) not in program.analysis.terms
    assert cel.compile("self.a == 1", {"self"}).analysis.constant


def test_bindings_copy_only_what_the_programs_select():
    first = cel.compile("self.spec.replicas > 0 && has(self.spec.paused)", {"self"})
    second = cel.compile("self.metadata.name.startsWith('w')", {"self"})
    obj = {"metadata": {"name": "web", "labels": {"a": "b"}},
           "spec": {"replicas": 2, "template": {"big": ["x"] * 1000}},
           "status": {"ready": 1}}
    bindings = cel.Bindings({"self": obj, "unused": 1}, [first, second])
    assert bindings.activation == {"self": {"metadata": {"name": "web"},
                                            "spec": {"replicas": 2}}}
    assert first.run(bindings) is False and second.run(bindings) is True
    # a variable used whole is passed whole
    whole = cel.compile("self == oldSelf", {"self", "oldSelf"})
    assert cel.Bindings({"self": obj, "oldSelf": obj}, [whole]).activation["self"] is obj


def test_cost_bound_measures_only_what_is_read():
    program = cel.compile("self.small.all(x, self.small.all(y, x + y > 0))", {"self"})
    huge = {"small": [1, 2, 3], "other": list(range(100_000))}
    assert program.evaluate({"self": huge}) is True
