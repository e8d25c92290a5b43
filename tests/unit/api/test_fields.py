"""Field selectors: upstream term splitting, escaping, semantics and 400 messages."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minikube_py.api import errors
from minikube_py.api.fields import (
    EVERYTHING,
    FieldSelector,
    escape_value,
    one_term_equal,
    parse_field_selector,
    unescape_value,
)


@pytest.mark.parametrize("text, requirements, canonical", [
    ("", (), ""),
    (",,", (), ""),
    ("a=b", (("a", "=", "b"),), "a=b"),
    ("a==b", (("a", "=", "b"),), "a=b"),  # == normalised to =
    ("a!=b", (("a", "!=", "b"),), "a!=b"),
    ("a=", (("a", "=", ""),), "a="),
    ("b=1,a==2", (("a", "=", "2"), ("b", "=", "1")), "a=2,b=1"),  # raw terms sorted
    ("a=x!y", (("a", "=", "x!y"),), "a=x!y"),  # '!' needs no escape in a value
    (r"a=x\,y", (("a", "=", "x,y"),), r"a=x\,y"),
    (r"a=x\=y\\", (("a", "=", "x=y\\"),), r"a=x\=y\\"),
    (r"a=x\,y,b!=\\", (("a", "=", "x,y"), ("b", "!=", "\\")), r"a=x\,y,b!=\\"),
    ("spec.nodeName=,status.phase!=Running",
     (("spec.nodeName", "=", ""), ("status.phase", "!=", "Running")),
     "spec.nodeName=,status.phase!=Running"),
    (" a = b", ((" a ", "=", " b"),), " a = b"),  # no trimming, as upstream
])
def test_parse(text: str, requirements: tuple, canonical: str) -> None:
    sel = parse_field_selector(text)
    assert sel.requirements == requirements
    assert str(sel) == canonical


@pytest.mark.parametrize("text, message", [
    ("abc", "invalid selector: 'abc'; can't understand 'abc'"),
    ("a=b,xyz", "invalid selector: 'a=b,xyz'; can't understand 'xyz'"),
    (r"a=b\x", r"invalid field selector: invalid escape sequence: \x"),
    ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
    ("a=b=c", "invalid field selector: unescaped character in value: 61"),
    ("a==b=c", "invalid field selector: unescaped character in value: 61"),
])
def test_bad_syntax(text: str, message: str) -> None:
    with pytest.raises(errors.StatusError) as info:
        parse_field_selector(text)
    assert (info.value.code, info.value.reason, info.value.message) == (400, "BadRequest", message)


def test_allowed_fields() -> None:
    allowed = {"metadata.name", "spec.nodeName"}
    sel = parse_field_selector("spec.nodeName=n1", allowed)
    assert sel.exact_value("spec.nodeName") == "n1"
    with pytest.raises(errors.StatusError) as info:
        parse_field_selector("metadata.name=a,spec.host=n1", allowed)
    assert info.value.code == 400
    assert info.value.message == "field label not supported: spec.host"
    assert parse_field_selector("", allowed) is EVERYTHING


@pytest.mark.parametrize("text, fields, expected", [
    ("", {"a": "b"}, True),
    ("a=b", {"a": "b"}, True),
    ("a=b", {"a": "c"}, False),
    ("a=b", {}, False),
    ("a=", {}, True),  # missing reads as ""
    ("a!=", {}, False),
    ("a!=b", {}, True),
    ("a!=b", {"a": "b"}, False),
    ("a=b,c!=d", {"a": "b", "c": "e"}, True),
    ("a=b,c!=d", {"a": "b", "c": "d"}, False),
    (r"a=x\,y", {"a": "x,y"}, True),
])
def test_matches(text: str, fields: dict, expected: bool) -> None:
    assert parse_field_selector(text).matches(fields) is expected


@pytest.mark.parametrize("text, field, expected", [
    ("a=b", "a", "b"),
    ("a==b", "a", "b"),
    ("a!=b", "a", None),
    ("a!=b,a=c", "a", "c"),
    ("a=b", "c", None),
    ("", "a", None),
])
def test_exact_value(text: str, field: str, expected: str | None) -> None:
    assert parse_field_selector(text).exact_value(field) == expected


def test_everything_empty_and_equality() -> None:
    assert EVERYTHING.empty() and EVERYTHING.matches({})
    assert parse_field_selector(",") is EVERYTHING
    assert not parse_field_selector("a=b").empty()
    assert parse_field_selector("a=b,c=d") == parse_field_selector("c=d,a==b")
    assert one_term_equal("a", "x,y") == parse_field_selector(r"a=x\,y")
    assert FieldSelector() == EVERYTHING and hash(FieldSelector()) == hash(EVERYTHING)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=12))
def test_escape_round_trip(value: str) -> None:
    assert unescape_value(escape_value(value)) == value
    sel = parse_field_selector("f=" + escape_value(value))
    assert sel.exact_value("f") == value
    assert sel.matches({"f": value}) and (value == "" or not sel.matches({}))


_field = st.sampled_from(["metadata.name", "spec.nodeName", "status.phase"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_field, st.sampled_from(["=", "==", "!="]), st.text(max_size=6)),
                max_size=4))
def test_str_parse_round_trip(terms: list) -> None:
    text = ",".join(f"{f}{op}{escape_value(v)}" for f, op, v in terms)
    sel = parse_field_selector(text)
    assert parse_field_selector(str(sel)) == sel
    assert sorted(sel.requirements) == sorted((f, "!=" if op == "!=" else "=", v)
                                              for f, op, v in terms)
