"""The Time/MicroTime paths of a kind, compiled from the protobuf data (api/timefields.py)."""

from __future__ import annotations

from functools import cache

import pytest

from minikube_py.api import timefields


def test_pod_times_rewritten_through_lists_and_nested_messages() -> None:
    pod = {
        "metadata": {"name": "web", "creationTimestamp": "2024-05-01T12:00:00+02:00",
                     "managedFields": [{"manager": "m", "time": "2024-05-01T10:00:00.5Z"}],
                     "labels": {"a": "2024-05-01T12:00:00+02:00"}},  # a string, not a time
        "spec": {"containers": [{"name": "c", "image": "2024-05-01T12:00:00+02:00"}]},
        "status": {
            "startTime": "2024-05-01T10:00:00+00:00",
            "conditions": [{"type": "Ready", "lastProbeTime": None,
                            "lastTransitionTime": "2024-05-01T11:00:00+01:00"}],
            "containerStatuses": [{"state": {"terminated": {
                "startedAt": "2024-05-01T10:00:00-00:30", "finishedAt": None}}}],
        },
    }
    timefields.normalize(pod, "v1", "Pod")
    assert pod["metadata"]["creationTimestamp"] == "2024-05-01T10:00:00Z"
    assert pod["metadata"]["managedFields"][0]["time"] == "2024-05-01T10:00:00Z"
    assert pod["metadata"]["labels"]["a"] == "2024-05-01T12:00:00+02:00"
    assert pod["spec"]["containers"][0]["image"] == "2024-05-01T12:00:00+02:00"
    assert pod["status"]["startTime"] == "2024-05-01T10:00:00Z"
    assert pod["status"]["conditions"][0] == {"type": "Ready", "lastProbeTime": None,
                                              "lastTransitionTime": "2024-05-01T10:00:00Z"}
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated == {"startedAt": "2024-05-01T10:30:00Z", "finishedAt": None}


def test_events_micro_time_and_time_side_by_side() -> None:
    event = {"eventTime": "2024-05-01T12:00:00.123456+02:00",
             "series": {"count": 2, "lastObservedTime": "2024-05-01T10:00:01.000000Z"},
             "deprecatedFirstTimestamp": "2024-05-01T12:00:00.123456+02:00"}
    timefields.normalize(event, "events.k8s.io/v1", "Event")
    assert event == {"eventTime": "2024-05-01T10:00:00.123456Z",
                     "series": {"count": 2, "lastObservedTime": "2024-05-01T10:00:01.000000Z"},
                     "deprecatedFirstTimestamp": "2024-05-01T10:00:00Z"}


def test_map_of_times() -> None:
    pdb = {"status": {"disruptedPods": {"web-1": "2024-05-01T12:00:00+02:00", "web-2": None}}}
    timefields.normalize(pdb, "policy/v1", "PodDisruptionBudget")
    assert pdb["status"]["disruptedPods"] == {"web-1": "2024-05-01T10:00:00Z", "web-2": None}


def test_error_names_the_path_and_carries_go_text() -> None:
    event = {"metadata": {"name": "e"}, "eventTime": "2024-05-01T10:00:00+00:00"}
    with pytest.raises(timefields.TimeFieldError) as caught:
        timefields.normalize(event, "v1", "Event")
    assert str(caught.value) == ('parsing time "2024-05-01T10:00:00+00:00" as '
                                 '"2006-01-02T15:04:05.000000Z07:00": cannot parse "+00:00" as '
                                 '".000000"')


@pytest.mark.parametrize(("value", "word"), [(5, "number"), (True, "bool"), ([], "array"),
                                              ({}, "object")])
def test_a_time_that_is_no_string(value: object, word: str) -> None:
    with pytest.raises(timefields.TimeFieldError) as caught:
        timefields.normalize({"metadata": {"creationTimestamp": value}}, "v1", "ConfigMap")
    assert str(caught.value) == f"json: cannot unmarshal {word} into Go value of type string"


def test_wrong_shapes_on_the_way_are_left_to_the_type_checks() -> None:
    obj = {"metadata": [], "status": {"conditions": {"x": 1}, "containerStatuses": [5, None]}}
    timefields.normalize(obj, "v1", "Pod")
    assert obj == {"metadata": [], "status": {"conditions": {"x": 1},
                                              "containerStatuses": [5, None]}}


def test_kinds_without_times_or_message_have_empty_trees() -> None:
    assert timefields.tree_of("example.com/v1", "Widget") == {}
    cm = timefields.tree_of("v1", "ConfigMap")
    assert set(cm) == {"metadata"}  # ObjectMeta's times only


def test_recursive_messages_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    """A message that refers to itself (apiextensions' JSONSchemaProps, when the data gains
    it) compiles to a tree that refers to itself; the walk follows the object's depth."""
    from minikube_py.api.kinds import proto
    time = f"{proto.META}.Time"
    messages = {
        "t.Node": [proto.ProtoField(1, "child", "t.Node", False, False, False, False, False),
                   proto.ProtoField(2, "items", "t.Leaf", True, False, False, False, False),
                   proto.ProtoField(3, "name", "string", False, False, False, False, False)],
        "t.Leaf": [proto.ProtoField(1, "back", "t.Node", False, False, False, False, False),
                   proto.ProtoField(2, "at", time, False, False, False, False, False)],
        "t.Plain": [proto.ProtoField(1, "x", "t.Plain", False, False, False, False, False)],
    }
    monkeypatch.setattr(proto, "fields", lambda name: messages.get(name))
    monkeypatch.setattr(proto, "messages", lambda: list(messages))
    monkeypatch.setattr(timefields, "_timed", cache(timefields._timed.__wrapped__))
    assert timefields._timed() == {"t.Node", "t.Leaf"}
    tree = timefields._compile("t.Node", {})
    assert tree["child"].node is tree and set(tree) == {"child", "items"}
    obj = {"child": {"child": {"items": [{"at": "2024-05-01T12:00:00+02:00",
                                          "back": {"name": "n"}}]}}}
    timefields._walk(obj, tree)
    assert obj["child"]["child"]["items"][0]["at"] == "2024-05-01T10:00:00Z"
    assert timefields._compile("t.Plain", {}) == {}


def test_managed_fields_entries_read_times_as_every_other_time() -> None:
    """The field manager's entry decoder shares gotime: what Go accepts is kept (a one-digit
    hour, a comma fraction), in UTC to the second."""
    from minikube_py.api.managedfields_codec import _INVALID, canonical_time
    assert canonical_time("2024-05-01T1:00:00,5+02:00") == "2024-04-30T23:00:00Z"
    assert canonical_time("0001-01-01T00:00:00Z") is None
    assert canonical_time("2024-05-01T10:00:00z") is _INVALID
    assert canonical_time(5) is _INVALID
