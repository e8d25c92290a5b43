"""Label selectors: upstream grammar, semantics, canonical strings and 400 messages.

Cases come from upstream pkg/labels/selector_test.go where it has them (good/bad strings,
restring without blanks, match tables); the property tests check the compiled matchers
against a naive reading of the semantics and that printing then parsing is the identity.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minikube_py.api import errors
from minikube_py.api.labels import (
    EVERYTHING,
    NOTHING,
    LabelSelector,
    Operator,
    Requirement,
    new_requirement,
    parse_label_selector,
    selector_from_label_selector,
    selector_from_set,
)


@pytest.mark.parametrize("text, canonical", [
    ("x=a,y=b,z=c", "x=a,y=b,z=c"),
    ("", ""),
    ("   ", ""),
    ("x!=a,y=b", "x!=a,y=b"),
    ("x=", "x="),
    ("x= ", "x="),
    ("x=,z= ", "x=,z="),
    ("!x", "!x"),
    ("x>1", "x>1"),
    ("x>1,z<5", "x>1,z<5"),
    ("x==a", "x==a"),
    ("z=c,a=x", "a=x,z=c"),  # sorted by key: deterministic
    ("x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z notin ()"),
    ("a in (b, a, b)", "a in (a,b)"),  # set semantics: sorted, de-duplicated
    ("in in (in, notin)", "in in (in,notin)"),  # keywords are identifiers in value context
    ("k in (,)", "k in ()"),
    ("\tapp = web , !canary\n", "app=web,!canary"),  # by key, not by text
    ("example.com/app notin (a)", "example.com/app notin (a)"),
])
def test_good_strings_restring(text: str, canonical: str) -> None:
    assert str(parse_label_selector(text)) == canonical


@pytest.mark.parametrize("text, message", [
    ("x==a==b", "found '==', expected: ',' or 'end of string'"),
    ("!x=a", "found '=', expected: ',' or 'end of string'"),
    ("x<a", "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"),
    ("x>99999999999999999999",
     "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"),
    ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"),
    ("x in (a,=)", "unable to parse requirement: found '=', expected: ',', or identifier"),
    ("x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
    ("x in", "unable to parse requirement: found '' expected: '('"),
    ("x in a", "unable to parse requirement: found 'a' expected: '('"),
    ("x y", "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"),
    ("x=(a)", "unable to parse requirement: found '(', expected: identifier"),
    (",", "found ',', expected: !, identifier, or 'end of string'"),
    ("!,", "unable to parse requirement: found ',', expected: identifier"),
    ("a,", "found '', expected: identifier after ','"),
    ("a,,b", "found ',', expected: identifier after ','"),
    ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
])
def test_bad_syntax_messages(text: str, message: str) -> None:
    with pytest.raises(errors.StatusError) as info:
        parse_label_selector(text)
    assert (info.value.code, info.value.reason, info.value.message) == (400, "BadRequest", message)


@pytest.mark.parametrize("text, prefix, detail", [
    ("-a", 'unable to parse requirement: invalid label key "-a": ', "name part must consist"),
    ("!-a", 'unable to parse requirement: invalid label key "-a": ', "name part must consist"),
    ("a/b/c=x", 'unable to parse requirement: invalid label key "a/b/c": ',
     "a qualified name must consist"),
    ("/a", 'unable to parse requirement: invalid label key "/a": ', "prefix part must be non-empty"),
    ("a=-b", 'unable to parse requirement: invalid label value: "-b": at key: "a": ',
     "a valid label must be an empty string"),
    ("a=" + "v" * 64, f'unable to parse requirement: invalid label value: "{"v" * 64}": at key: "a": ',
     "must be no more than 63 characters"),
    ("x>-1", 'unable to parse requirement: invalid label value: "-1"', "a valid label"),
    ("x=a||y=b", 'unable to parse requirement: invalid label value: "a||y"', "a valid label"),
])
def test_invalid_key_or_value_names_it(text: str, prefix: str, detail: str) -> None:
    with pytest.raises(errors.StatusError) as info:
        parse_label_selector(text)
    assert info.value.code == 400
    assert info.value.message.startswith(prefix)
    assert detail in info.value.message


def _match(text: str, labels: Mapping[str, str] | None) -> bool:
    return parse_label_selector(text).matches(labels)


@pytest.mark.parametrize("text, labels, expected", [
    ("", {"x": "y"}, True),
    ("x=y", {"x": "y"}, True),
    ("x==y", {"x": "y"}, True),
    ("x=y", {"x": "z"}, False),
    ("x=y", {}, False),
    ("x=y,z=w", {"x": "y", "z": "w"}, True),
    ("x=y,z=w", {"x": "y", "z": "a"}, False),
    ("x!=y", {"x": "z"}, True),
    ("x!=y", {"x": "y"}, False),
    ("x!=y", {}, True),  # absent key satisfies !=
    ("x=", {"x": ""}, True),
    ("x=", {}, False),
    ("x in (a,b)", {"x": "b"}, True),
    ("x in (a,b)", {"x": "c"}, False),
    ("x in (a,b)", {}, False),  # in requires presence
    ("x in (a)", {"x": "a"}, True),
    ("x notin (a,b)", {"x": "c"}, True),
    ("x notin (a,b)", {"x": "a"}, False),
    ("x notin (a,b)", {}, True),  # absent key satisfies notin
    ("x notin (a)", {"x": "a"}, False),
    ("x", {"x": ""}, True),
    ("x", {"y": "1"}, False),
    ("!x", {"y": "1"}, True),
    ("!x", {"x": "1"}, False),
    ("x>1", {"x": "2"}, True),
    ("x>1", {"x": "1"}, False),
    ("x>1", {"x": "abc"}, False),
    ("x>1", {}, False),
    ("x<10", {"x": "9"}, True),
    ("x<10", {"x": "10"}, False),
    ("x<10", {"x": "99999999999999999999"}, False),  # beyond int64: not a number
    ("x>1,y<5", {"x": "3", "y": "4"}, True),
    ("a=b", None, False),
    ("!a", None, True),
])
def test_matches(text: str, labels: Mapping[str, str] | None, expected: bool) -> None:
    assert _match(text, labels) is expected


@pytest.mark.parametrize("text, key, expected", [
    ("x=a", "x", "a"),
    ("x==a", "x", "a"),
    ("x in (a)", "x", "a"),
    ("x in (a,b)", "x", None),
    ("x!=a", "x", None),
    ("x", "x", None),
    ("x=a", "y", None),
    ("a=1,x=b", "x", "b"),
    ("", "x", None),
])
def test_exact_value(text: str, key: str, expected: str | None) -> None:
    assert parse_label_selector(text).exact_value(key) == expected


def test_everything_and_nothing() -> None:
    assert EVERYTHING.empty() and EVERYTHING.matches({"a": "b"}) and EVERYTHING.matches(None)
    assert not NOTHING.empty() and not NOTHING.matches({}) and not NOTHING.matches({"a": "b"})
    assert str(NOTHING) == "" and NOTHING != EVERYTHING
    assert parse_label_selector("") is EVERYTHING
    assert not parse_label_selector("a").empty()


def test_parse_is_deterministic_and_hashable() -> None:
    one, two = parse_label_selector("x=a,a=x"), parse_label_selector("a=x,x=a")
    assert one == two and hash(one) == hash(two) and str(one) == "a=x,x=a"
    assert one != parse_label_selector("a=x,x=b")


def test_selector_from_set() -> None:
    sel = selector_from_set({"b": "2", "a": "1"})
    assert str(sel) == "a=1,b=2"
    assert sel.matches({"a": "1", "b": "2", "c": "3"})
    assert not sel.matches({"a": "1"})
    assert selector_from_set({}) is EVERYTHING and selector_from_set(None) is EVERYTHING


@pytest.mark.parametrize("spec, labels, expected", [
    ({}, {"a": "b"}, True),
    ({"matchLabels": {}, "matchExpressions": []}, {}, True),
    ({"matchLabels": {"app": "web"}}, {"app": "web"}, True),
    ({"matchLabels": {"app": "web"}}, {"app": "db"}, False),
    ({"matchExpressions": [{"key": "t", "operator": "In", "values": ["a", "b"]}]}, {"t": "b"}, True),
    ({"matchExpressions": [{"key": "t", "operator": "NotIn", "values": ["a"]}]}, {}, True),
    ({"matchExpressions": [{"key": "t", "operator": "Exists"}]}, {"t": ""}, True),
    ({"matchExpressions": [{"key": "t", "operator": "DoesNotExist"}]}, {"t": ""}, False),
    ({"matchLabels": {"app": "web"},
      "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]},
     {"app": "web", "env": "prod"}, False),
])
def test_selector_from_label_selector(spec: dict, labels: dict, expected: bool) -> None:
    assert selector_from_label_selector(spec).matches(labels) is expected


def test_label_selector_nil_matches_nothing_empty_everything() -> None:
    assert selector_from_label_selector(None) is NOTHING
    assert selector_from_label_selector({}) is EVERYTHING
    sel = selector_from_label_selector({"matchExpressions": [
        {"key": "z", "operator": "In", "values": ["b", "a"]}, {"key": "a", "operator": "Exists"},
    ]})
    assert str(sel) == "a,z in (a,b)"


@pytest.mark.parametrize("spec, message", [
    ({"matchExpressions": [{"key": "t", "operator": "In", "values": []}]},
     "for 'in', 'notin' operators, values set can't be empty"),
    ({"matchExpressions": [{"key": "t", "operator": "NotIn"}]},
     "for 'in', 'notin' operators, values set can't be empty"),
    ({"matchExpressions": [{"key": "t", "operator": "Exists", "values": ["a"]}]},
     "values set must be empty for exists and does not exist"),
    ({"matchExpressions": [{"key": "t", "operator": "Gt", "values": ["1"]}]},
     '"Gt" is not a valid label selector operator'),
    ({"matchExpressions": [{"key": "t"}]}, '"" is not a valid label selector operator'),
    ({"matchLabels": {"-x": "a"}}, 'invalid label key "-x": '),
    ({"matchLabels": {"x": "a b"}}, 'invalid label value: "a b": at key: "x": '),
    ({"matchLabels": {"x": 1}}, "label selector keys and values must be strings"),
    ({"matchLabels": ["x"]}, "matchLabels must be an object and matchExpressions a list"),
])
def test_selector_from_label_selector_rejects(spec: dict, message: str) -> None:
    with pytest.raises(errors.StatusError) as info:
        selector_from_label_selector(spec)
    assert info.value.code == 400 and info.value.message.startswith(message)


@pytest.mark.parametrize("key, op, values, message", [
    ("x", "=", ("a", "b"), "exact-match compatibility requires one single value"),
    ("x", "gt", ("1", "2"), "for 'Gt', 'Lt' operators, exactly one value is required"),
    ("x", "gt", ("1_0",), "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("x", "~", ("a",), "operator '~' is not recognized"),
])
def test_new_requirement_rules(key: str, op: str, values: tuple, message: str) -> None:
    with pytest.raises(errors.StatusError) as info:
        new_requirement(key, op, values)
    assert info.value.message == message


def test_requirement_str_and_equality() -> None:
    req = new_requirement("x", Operator.IN, ["b", "a"])
    assert str(req) == "x in (a,b)" and req.values == ("b", "a")
    assert req == Requirement("x", Operator.IN, ("b", "a"))
    assert LabelSelector([req]).matches({"x": "a"})


def test_parse_errors_are_not_cached() -> None:
    for _ in range(2):
        with pytest.raises(errors.StatusError):
            parse_label_selector("x in (")
    assert parse_label_selector("x") is parse_label_selector("x")  # memoised


# ---------------------------------------------------------------------------------------------
# Properties

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_name = st.builds(
    lambda first, middle, last: first + middle + last if middle or last else first,
    st.sampled_from(_ALNUM), st.text("abz09-_.", max_size=4), st.text(_ALNUM, max_size=1),
).filter(lambda s: s[-1] in _ALNUM)
_key = st.one_of(_name, st.builds(lambda p, n: f"{p}.io/{n}", st.sampled_from(["ex", "k8s"]), _name))
_value = st.one_of(st.just(""), _name)
_number = st.integers(0, 50).map(str)


@st.composite
def _requirement(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    key = draw(_key)
    op = draw(st.sampled_from(["=", "==", "!=", "in", "notin", "exists", "!", "gt", "lt"]))
    if op in ("in", "notin"):
        return key, op, draw(st.lists(_value, min_size=1, max_size=3))
    if op in ("gt", "lt"):
        return key, op, [draw(_number)]
    if op in ("exists", "!"):
        return key, op, []
    return key, op, [draw(_value)]


def _render(key: str, op: str, values: list[str]) -> str:
    spaced = " " if values and values[0] in ("in", "notin") else ""
    return {
        "in": f"{key} in ( {' , '.join(values)} )", "notin": f"{key}  notin ({','.join(values)})",
        "exists": key, "!": f"! {key}", "gt": f"{key} > {values[0] if values else ''}",
        "lt": f"{key}<{values[0] if values else ''}",
    }.get(op, f"{key} {op}{spaced}{values[0] if values else ''}")


def _naive(op: str, values: list[str], labels: Mapping[str, str], key: str) -> bool:
    """The semantics as the upstream doc comment states them, with no cleverness."""
    present = key in labels
    value = labels.get(key)
    if op in ("=", "==", "in"):
        return present and value in values
    if op in ("!=", "notin"):
        return not present or value not in values
    if op == "exists":
        return present
    if op == "!":
        return not present
    if not present or not value.isdigit():
        return False
    return int(value) > int(values[0]) if op == "gt" else int(value) < int(values[0])


_labels = st.dictionaries(_key, st.one_of(_value, _number), max_size=4)


@settings(max_examples=150, deadline=None)
@given(st.lists(_requirement(), max_size=4), st.lists(_labels, min_size=1, max_size=3))
def test_parsed_selector_agrees_with_naive_semantics(reqs: list, label_sets: list) -> None:
    text = ",".join(_render(*r) for r in reqs)
    sel = parse_label_selector(text)
    for labels in label_sets:
        # sprinkle the selector's own keys in so requirements are exercised, not just absent
        for key, _op, values in reqs:
            if values and key not in labels and len(labels) % 2 == 0:
                labels[key] = values[0]
        expected = all(_naive(op, vals, labels, key) for key, op, vals in reqs)
        assert sel.matches(labels) is expected, (text, labels)


@settings(max_examples=150, deadline=None)
@given(st.lists(_requirement(), max_size=4))
def test_str_parse_round_trip(reqs: list) -> None:
    sel = parse_label_selector(",".join(_render(*r) for r in reqs))
    again = parse_label_selector(str(sel))
    assert again == sel and str(again) == str(sel)


@settings(max_examples=100, deadline=None)
@given(_labels, _labels)
def test_selector_from_set_matches_its_set(labels: dict, extra: dict) -> None:
    sel = selector_from_set(labels)
    assert sel.matches(labels)
    assert sel.matches({**extra, **labels})  # supersets match too
    assert parse_label_selector(str(sel)) == sel
    if labels:
        key = next(iter(labels))
        assert not sel.matches({k: v for k, v in labels.items() if k != key})
