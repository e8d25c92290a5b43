"""The events.k8s.io/v1 <-> core/v1 Event conversion (upstream pkg/apis/events/v1 conversion
and its test table) and the events.k8s.io validation rules on the stored form."""

from __future__ import annotations

from typing import Any

import pytest

from minikube_py.api import events_v1
from minikube_py.api.fields import parse_field_selector
from minikube_py.api.validation import EVENTS_V1, validate_create, validate_update
from minikube_py.registry.events import EVENTS_V1 as STRATEGY

META = {"name": "foo", "namespace": "default"}


def test_upstream_conversion_table() -> None:
    """Test_convert_v1_Event_To_core_Event / Test_convert_core_Event_To_v1_Event."""
    v1 = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": dict(META),
          "regarding": {"kind": "Pod", "namespace": "default", "name": "foo"},
          "deprecatedSource": {"component": "controller-manager", "host": "master1"},
          "note": "convert v1 event to core event"}
    core = events_v1.to_core(v1)
    assert core == {
        "apiVersion": "v1", "kind": "Event", "metadata": META,
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "foo"},
        "message": "convert v1 event to core event",
        "source": {"component": "controller-manager", "host": "master1"},
        # Go writes struct fields and reportingComponent/Instance (no omitempty) always
        "firstTimestamp": None, "lastTimestamp": None, "eventTime": None,
        "reportingComponent": "", "reportingInstance": ""}
    back = events_v1.from_core(core)
    assert back == {**v1, "eventTime": None, "deprecatedFirstTimestamp": None,
                    "deprecatedLastTimestamp": None}
    assert list(back) == ["apiVersion", "kind", "metadata", "eventTime", "regarding", "note",
                          "deprecatedSource", "deprecatedFirstTimestamp",
                          "deprecatedLastTimestamp"]  # events/v1's Go field order


@pytest.mark.parametrize(("v1_field", "core_field", "value"), [
    ("reportingController", "reportingComponent", "kubelet"),
    ("reportingInstance", "reportingInstance", "node-1"),
    ("action", "action", "Pulling"), ("reason", "reason", "Pulled"), ("type", "type", "Normal"),
    ("related", "related", {"kind": "Node", "name": "n"}),
    ("series", "series", {"count": 3, "lastObservedTime": "2024-01-01T00:00:00.000000Z"}),
    ("eventTime", "eventTime", "2024-01-01T00:00:00.000000Z"),
    ("deprecatedFirstTimestamp", "firstTimestamp", "2024-01-01T00:00:00Z"),
    ("deprecatedLastTimestamp", "lastTimestamp", "2024-01-01T00:00:01Z"),
    ("deprecatedCount", "count", 7),
])
def test_each_field_round_trips(v1_field: str, core_field: str, value: Any) -> None:
    core = events_v1.to_core({"metadata": dict(META), v1_field: value})
    assert core[core_field] == value
    assert events_v1.from_core(core)[v1_field] == value


def test_zero_values_are_omitted_as_go_omitempty_does() -> None:
    v1 = events_v1.from_core({"metadata": dict(META), "count": 0, "action": "", "related": None})
    assert "deprecatedCount" not in v1 and "action" not in v1 and "related" not in v1


def test_conversion_never_aliases_its_input() -> None:
    core = {"metadata": {"name": "a"}, "involvedObject": {"name": "x"}}
    v1 = events_v1.from_core(core)
    v1["metadata"]["name"] = "b"
    v1["regarding"]["name"] = "y"
    assert core == {"metadata": {"name": "a"}, "involvedObject": {"name": "x"}}


def test_field_labels_map_onto_the_storage_selectors() -> None:
    allowed = STRATEGY.allowed_fields()
    assert allowed == frozenset(events_v1.FIELD_LABELS)
    assert STRATEGY.stored_as is not None
    selector = parse_field_selector("regarding.name=web,reportingController=k,type=Normal",
                                    allowed)
    storage = STRATEGY.stored_as.storage_selector(selector)
    assert str(storage) == "involvedObject.name=web,reportingComponent=k,type=Normal"
    assert storage.matches(STRATEGY.field_attrs(events_v1.to_core({
        "metadata": dict(META), "regarding": {"name": "web"}, "reportingController": "k",
        "type": "Normal"})))


def stored(**body: Any) -> dict[str, Any]:
    event = {"metadata": dict(META), "eventTime": "2024-01-01T00:00:00.000000Z",
             "reportingController": "ctl", "reportingInstance": "i", "action": "A",
             "reason": "R", "type": "Normal", "regarding": {"kind": "Pod", "name": "p"}}
    event.update(body)
    return events_v1.to_core(event)


def fields(errs: list) -> list[tuple[str, str]]:
    return [(e.type, e.field) for e in errs]


def test_events_v1_create_rules() -> None:
    assert validate_create(EVENTS_V1, stored()) == []
    assert fields(validate_create(EVENTS_V1, stored(eventTime=None, type="X"))) == [
        ("FieldValueRequired", "eventTime"), ("FieldValueInvalid", "type")]
    # the deprecated core fields must be unset (their internal paths, as upstream reports)
    assert fields(validate_create(EVENTS_V1, stored(
        deprecatedCount=1, deprecatedFirstTimestamp="2024-01-01T00:00:00Z",
        deprecatedSource={"host": "h"}))) == [
        ("FieldValueInvalid", "firstTimestamp"), ("FieldValueInvalid", "count"),
        ("FieldValueInvalid", "source")]
    assert fields(validate_create(EVENTS_V1, stored(series={"count": 1}))) == [
        ("FieldValueInvalid", "series.count"), ("FieldValueRequired", "series.lastObservedTime")]
    bad_name = stored()
    bad_name["metadata"]["name"] = "Foo_1"
    assert fields(validate_create(EVENTS_V1, bad_name)) == [("FieldValueInvalid", "metadata.name")]
    # core/v1 requests keep the legacy rules only
    assert validate_create("Event", stored(type="X", deprecatedCount=1)) == []


def test_events_v1_update_rules() -> None:
    old = stored()
    old["metadata"].update(uid="u", resourceVersion="2", creationTimestamp="2024-01-01T00:00:00Z")
    new = stored(series={"count": 2, "lastObservedTime": "2024-01-01T00:01:00.000000Z"})
    new["metadata"] = dict(old["metadata"])
    assert validate_update(EVENTS_V1, new, old) == []
    changed = stored(note="n", reportingController="other")
    changed["metadata"] = dict(old["metadata"])
    assert fields(validate_update(EVENTS_V1, changed, old)) == [
        ("FieldValueInvalid", "message"), ("FieldValueInvalid", "reportingController")]
    assert validate_update("Event", changed, old) == []
