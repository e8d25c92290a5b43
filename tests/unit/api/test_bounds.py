"""The bounds on request documents (api/bounds.py), YAML as sigs.k8s.io/yaml converts it
(api/yamljson.py) and the JSON patch copy limit (api/patch.py): issue 14's freezes, each
answered by a 4xx in microseconds to milliseconds instead of a frozen or spinning loop."""

from __future__ import annotations

import time

import pytest

from minikube_py.api import bounds, yamljson
from minikube_py.api.errors import StatusError
from minikube_py.api.patch import json_patch

LAUGHS = ("a0: &a0 [x,x,x,x,x,x,x,x,x]\n"
          + "".join(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10)))


def status(fn, *args):  # the StatusError a call raises
    with pytest.raises(StatusError) as exc:
        fn(*args)
    return exc.value


def timed(fn, *args):
    started = time.perf_counter()
    err = status(fn, *args)
    return err, time.perf_counter() - started


# -- bounds.measure -------------------------------------------------------------------------


def test_measure_counts_values_and_allows_the_depth_limit():
    assert bounds.measure({"a": [1, 2, {"b": None}]}) == 6
    deep = current = {}
    for _ in range(bounds.MAX_DEPTH - 1):
        current["x"] = current = {}
    bounds.measure(deep)


def test_measure_refuses_one_level_too_deep_without_recursion():
    deep = current = []
    for _ in range(5000):  # would blow Python's stack if walked recursively
        current.append([])
        current = current[0]
    err = status(bounds.measure, deep)
    assert err.code == 400 and "exceeded max depth of 100" in err.message


def test_measure_refuses_too_many_values():
    with pytest.raises(StatusError) as exc:
        bounds.measure([0] * 50, "doc", max_nodes=10)
    err = exc.value
    assert err.code == 413 and "more than 10 values" in err.message


def test_small_json_bodies_skip_the_walk():
    assert not bounds.might_be_deep(b'{"a": [1, {"b": 2}]}')
    assert bounds.might_be_deep(b"[" * 101 + b"]" * 101)


# -- YAML -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [b"&a [*a]", b"a: &a {b: *a}", b"&a {k: [1, *a]}"])
def test_an_alias_that_contains_itself_is_400_at_once(text):
    err, seconds = timed(yamljson.load, text)
    assert err.code == 400 and "anchor value contains itself" in err.message
    assert seconds < 0.05


def test_billion_laughs_is_refused_before_expansion():
    err, seconds = timed(yamljson.load, LAUGHS.encode())
    assert err.code == 400 and "document contains excessive aliasing" in err.message
    assert seconds < 0.05  # measured on the 20-node graph, not the 4e9-value expansion


def test_alias_ratio_follows_go_yaml():
    assert yamljson.allowed_alias_ratio(1000) == 0.99
    assert yamljson.allowed_alias_ratio(4_000_000) == 0.10
    assert 0.10 < yamljson.allowed_alias_ratio(2_000_000) < 0.99
    # a modest fan-out is fine: 2 levels of 10
    doc = yamljson.load(b"a: &a [1,2,3,4,5,6,7,8,9,10]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n")
    assert len(doc["b"]) == 10 and doc["b"][3] == list(range(1, 11))


def test_aliases_are_independent_copies():
    doc = yamljson.load(b"a: &x {k: [1, 2]}\nb: *x\n")
    doc["a"]["k"].append(3)
    assert doc["b"] == {"k": [1, 2]}


def test_yaml_nesting_is_bounded():
    ok = b"[" * bounds.MAX_DEPTH + b"]" * bounds.MAX_DEPTH
    assert yamljson.load(ok) is not None
    err = status(yamljson.load, b"[" * 150 + b"]" * 150)  # (libyaml itself stops at 1000)
    assert err.code == 400 and "exceeded max depth of 100" in err.message


@pytest.mark.parametrize(("text", "expected"), [
    (b"{1: b}", {"1": "b"}),                      # sigs.k8s.io/yaml: integer keys become strings
    (b"{2.5: b}", {"2.5": "b"}),
    (b"{1.0e+30: b}", {"1e+30": "b"}),           # strconv.FormatFloat(v, 'g', -1, 32)
    (b"{true: b, no: c}", {"true": "b", "false": "c"}),
    (b"{.inf: b}", {".inf": "b"}),
    (b"a: !!binary aGVsbG8=", {"a": "hello"}),    # go-yaml: the string of the decoded bytes
    (b"a: !!binary /w==", {"a": "\ufffd"}),       # invalid UTF-8 as JSON writes it
    (b"a: yes\nb: 0x1F\nc: 2001-12-14\nd: ~", {"a": True, "b": 31, "c": "2001-12-14", "d": None}),
    (b"a: 99999999999999999999999", {"a": 1e23}),  # beyond 64 bits: a float, as JSON reads it
    (b"a: !custom 12", {"a": "12"}),              # an unknown tag: the plain string
    (b"b: &b {x: 1, y: 2}\nd: {<<: *b, y: 3}", {"b": {"x": 1, "y": 2}, "d": {"x": 1, "y": 3}}),
    (b"", None),
])
def test_yaml_to_json_as_upstream(text, expected):
    assert yamljson.load(text) == expected


@pytest.mark.parametrize(("text", "fragment"), [
    (b"{null: 1}", "unsupported map key of type: <nil>"),
    (b"{[1]: 1}", "unsupported map key of type: []interface {}"),
    (b"{{a: 1}: 1}", "unsupported map key of type: map[interface {}]interface {}"),
    (b"a: !!binary '!!!'", "!!binary value contains invalid base64 data"),
    (b"a: 1\n---\nb: 2", "expected a single document"),
    (b"a: [1", "error converting YAML to JSON"),
    (b"a: !!python/object:os.system echo", ""),
])
def test_yaml_errors_are_400(text, fragment):
    try:
        yamljson.load(text)
    except StatusError as err:
        assert err.code == 400 and fragment in err.message
    else:
        assert fragment == ""  # a python tag is just an unknown tag: its plain string


# -- JSON patch copies ----------------------------------------------------------------------


def test_copying_a_list_into_itself_stops_at_the_copy_limit():
    ops = [{"op": "add", "path": "/zz", "value": ["x"]}] + [
        {"op": "copy", "from": "/zz", "path": "/zz/-"}] * 24
    err, seconds = timed(json_patch, {"metadata": {"name": "a"}}, ops)
    assert err.code == 422 and err.reason == "Invalid"
    cause = err.details["causes"][0]
    assert cause["reason"] == "UnexpectedServerResponse"
    assert cause["message"].startswith("Unable to complete the copy")
    assert seconds < 1.0  # 2^24 values without the bound


def test_copy_bytes_limit_is_upstreams_message():
    big = "A" * (1024 * 1024)
    ops = [{"op": "copy", "from": "/s", "path": f"/c{i}"} for i in range(4)]
    err = status(json_patch, {"s": big}, ops)
    message = err.details["causes"][0]["message"]
    assert message.startswith("Unable to complete the copy, the accumulated size increase of "
                              "copy is ") and message.endswith("exceeding the limit 3145728")


def test_copies_are_fresh_and_ordinary_patches_still_work():
    result = json_patch({"a": {"k": [1]}}, [{"op": "copy", "from": "/a", "path": "/b"},
                                            {"op": "add", "path": "/b/k/-", "value": 2},
                                            {"op": "copy", "from": "", "path": "/c"}])
    assert result["a"] == {"k": [1]} and result["b"] == {"k": [1, 2]}
    assert result["c"] == {"a": {"k": [1]}, "b": {"k": [1, 2]}}


def test_a_patch_cannot_nest_its_result_deeper_than_the_bound():
    doc = current = {}
    for _ in range(60):
        current["x"] = current = {}
    ops = [{"op": "copy", "from": "", "path": "/x" * 60 + "/y"}]
    err = status(json_patch, doc, ops)
    assert err.code == 400 and "the patched object: exceeded max depth" in err.message


# -- selectors ------------------------------------------------------------------------------


def test_selector_queries_have_a_requirement_cap():
    from minikube_py.api.fields import parse_field_selector
    from minikube_py.api.labels import parse_label_selector

    assert len(parse_label_selector(",".join(f"k{i}=v" for i in range(1000))).requirements) == 1000
    err = status(parse_label_selector, ",".join(f"k{i}=v" for i in range(1001)))
    assert err.code == 400 and "labelSelector: too many requirements (1001; at most 1000)" == err.message
    err = status(parse_field_selector, ",".join(f"metadata.name=v{i}" for i in range(1001)))
    assert err.code == 400 and err.message.startswith("fieldSelector: too many requirements")
    # one `in` list of many values is one requirement (a frozenset lookup per object)
    many = parse_label_selector("a in (" + ",".join(f"v{i}" for i in range(5000)) + ")")
    assert many.matches({"a": "v4999"}) and not many.matches({"a": "x"})


def test_an_invalid_object_reports_at_most_100_errors():
    from minikube_py.api.errors import FieldError, FieldErrorType, invalid_object

    errs = [FieldError(FieldErrorType.INVALID, f"metadata.finalizers[{i}]", "bad", "x")
            for i in range(600)]
    err = invalid_object("ConfigMap", "c", errs)
    assert len(err.details["causes"]) == 100
    assert err.message.endswith(", and 500 more errors]")


def test_json_in_a_yaml_body_is_read_as_json_with_the_same_bounds():
    assert yamljson.load(b' {"a": [1, 2], "b": {"c": null}}') == {"a": [1, 2], "b": {"c": None}}
    assert yamljson.load(b"{a: 1}") == {"a": 1}  # a flow mapping, not JSON: YAML
    err = status(yamljson.load, b"{\"a\":" + b"[" * 150 + b"]" * 150 + b"}")
    assert err.code == 400 and "exceeded max depth of 100" in err.message


@pytest.mark.parametrize(("text", "expected"), [
    (b"a: " + b"9" * 400, {"a": "9" * 400}),   # beyond a double: go-yaml keeps the string
    (b"a: 1e400", {"a": "1e400"}),
    (b"a: 1.0e+400", {"a": "1.0e+400"}),
])
def test_numbers_beyond_a_double_stay_strings_as_go_yaml_leaves_them(text, expected):
    assert yamljson.load(text) == expected


def test_explicit_infinity_cannot_be_json():
    err = status(yamljson.load, b"a: .inf")
    assert err.code == 400 and "unsupported value" in err.message


def test_sorted_in_runs_sorts_like_sorted_without_one_long_sort():
    import random

    rng = random.Random(7)
    items = [(f"k{rng.randrange(10**6)}", rng.randrange(5)) for _ in range(3 * bounds.SORT_RUN + 17)]
    assert bounds.sorted_in_runs(items) == sorted(items)
    assert bounds.sorted_in_runs(items, key=lambda t: t[1]) == sorted(items, key=lambda t: t[1])
    assert bounds.sorted_in_runs(iter([3, 1, 2])) == [1, 2, 3]
