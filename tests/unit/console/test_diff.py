"""Diffs between two revisions of a stored value: JSON-path changes and unified lines."""

from __future__ import annotations

from minikube_py.console.diff import MAX_CHANGES, changes, diff


def test_changes_walk_objects_and_lists() -> None:
    old = {"spec": {"nodeName": ""}, "status": {"phase": "Pending", "conditions": [
        {"type": "PodScheduled"}]}, "metadata": {"annotations": {"a.b/c": "1"}}}
    new = {"spec": {"nodeName": "node-1"}, "status": {"phase": "Running", "podIP": "10.0.0.1",
           "conditions": [{"type": "PodScheduled"}, {"type": "Ready"}]}, "metadata": {}}
    found = {c["path"]: c for c in changes(old, new)}
    assert found[".spec.nodeName"] == {"path": ".spec.nodeName", "op": "replace", "old": "",
                                       "new": "node-1"}
    assert found[".status.podIP"]["op"] == "add"
    assert found[".status.conditions[1]"] == {"path": ".status.conditions[1]", "op": "add",
                                              "new": {"type": "Ready"}}
    assert found[".metadata.annotations"] == {"path": ".metadata.annotations", "op": "remove",
                                              "old": {"a.b/c": "1"}}
    assert ".status.conditions[0].type" not in found  # unchanged leaves are not listed


def test_keys_that_need_quoting_and_type_changes() -> None:
    found = changes({"a.b/c": 1, "n": 1}, {"a.b/c": 2, "n": "1"})
    assert [c["path"] for c in found] == ['["a.b/c"]', ".n"]
    assert found[1]["op"] == "replace"


def test_diff_of_a_creation_and_a_deletion_is_unified_only() -> None:
    created = diff(None, {"a": 1}, old_name="(none)", new_name="revision 5")
    assert created["changes"] == []
    assert created["unified"][:2] == ["--- (none)", "+++ revision 5"]
    assert "+  \"a\": 1" in created["unified"]
    deleted = diff({"a": 1}, None)
    assert any(line.startswith("-{") for line in deleted["unified"])


def test_changes_are_bounded() -> None:
    found = diff({"x": list(range(2000))}, {"x": [i + 1 for i in range(2000)]})
    assert len(found["changes"]) == MAX_CHANGES and found["truncated"]


def test_managed_fields_changes_come_last() -> None:
    old = {"metadata": {"managedFields": [{"f": 1}]}, "status": {"phase": "Pending"}}
    new = {"metadata": {"managedFields": [{"f": 2}]}, "status": {"phase": "Running"}}
    assert [c["path"] for c in diff(old, new)["changes"]] == [
        ".status.phase", ".metadata.managedFields[0].f"]
