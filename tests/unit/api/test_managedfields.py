"""Server-side apply and managedFields: field sets, conflicts, force, pruning, updates."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minikube_py.api.errors import StatusError
from minikube_py.api.managedfields import (
    field_set,
    fields_v1,
    parse_fields_v1,
    path_string,
    record_update,
    server_side_apply,
)

T1, T2, T3 = "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z", "2024-01-03T00:00:00Z"


def deployment(replicas: int = 1, image: str = "nginx:1.25", **labels: str) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": labels or {"app": "web"}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": image}]}}},
    }


def entries(obj: dict) -> dict[tuple[str, str], dict]:
    return {(e["manager"], e["operation"]): e for e in obj["metadata"].get("managedFields", [])}


def apply(live: dict | None, config: dict, manager: str = "kubectl", force: bool = False,
          now: str = T1, kind: str = "Deployment") -> dict:
    return server_side_apply(live, config, kind=kind, manager=manager, force=force, now=now)


def test_create_by_apply_records_upstream_fieldsv1() -> None:
    config = {"apiVersion": "v1", "kind": "Pod",
              "metadata": {"name": "p", "labels": {"app": "x"}},
              "spec": {"containers": [{"name": "c", "image": "nginx",
                                       "ports": [{"containerPort": 80}]}]}}
    obj = apply(None, config, kind="Pod")
    assert obj["spec"] == config["spec"] and obj["metadata"]["labels"] == {"app": "x"}
    assert obj["metadata"]["managedFields"] == [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": "v1", "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {'k:{"name":"c"}': {
                ".": {}, "f:image": {}, "f:name": {},
                "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {
                    ".": {}, "f:containerPort": {}}}}}},
        },
    }]
    assert "managedFields" not in config["metadata"]  # input untouched


def test_atomic_fields_and_sets_in_fieldsv1() -> None:
    config = deployment()
    config["metadata"]["finalizers"] = ["x/y"]
    config["spec"]["template"]["spec"]["containers"][0]["args"] = ["a", "b"]
    tree = fields_v1(field_set(config, "Deployment"))
    assert tree["f:metadata"]["f:finalizers"] == {'v:"x/y"': {}}
    assert tree["f:spec"]["f:selector"] == {}  # LabelSelector is +structType=atomic
    container = tree["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"c"}']
    assert container["f:args"] == {}
    assert "f:name" not in tree["f:metadata"] and "f:apiVersion" not in tree


def test_reapplying_the_same_config_is_stable() -> None:
    first = apply(None, deployment())
    again = apply(first, deployment(), now=T2)
    assert again == first  # nothing changed, so not even the time moves


def test_conflict_with_an_update_manager_is_409_in_upstreams_words() -> None:
    live = apply(None, deployment(replicas=1))
    edited = copy.deepcopy(live)
    edited["spec"]["replicas"] = 5
    record_update(live, edited, manager="kubectl-edit", operation="Update", now=T2)
    with pytest.raises(StatusError) as err:
        apply(edited, deployment(replicas=3), now=T3)
    assert err.value.code == 409 and err.value.reason == "Conflict"
    assert err.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas')
    assert err.value.details == {"causes": [{
        "reason": "FieldManagerConflict",
        "message": 'conflict with "kubectl-edit" using apps/v1', "field": ".spec.replicas"}]}


def test_several_conflicts_are_grouped_by_manager() -> None:
    live = apply(None, deployment(replicas=1), manager="alice")
    with pytest.raises(StatusError) as err:
        apply(live, deployment(replicas=2, image="nginx:2"), manager="bob")
    assert err.value.message == (
        'Apply failed with 2 conflicts: conflicts with "alice":\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="c"].image')
    assert [c["field"] for c in err.value.details["causes"]] == [
        ".spec.replicas", '.spec.template.spec.containers[name="c"].image']


def test_same_value_is_shared_ownership_not_a_conflict() -> None:
    live = apply(None, deployment(), manager="alice")
    shared = apply(live, deployment(), manager="bob", now=T2)
    owners = entries(shared)
    assert set(owners) == {("alice", "Apply"), ("bob", "Apply")}
    assert owners[("alice", "Apply")]["fieldsV1"] == owners[("bob", "Apply")]["fieldsV1"]


def test_force_takes_ownership() -> None:
    live = apply(None, deployment(replicas=1), manager="alice")
    forced = apply(live, {"apiVersion": "apps/v1", "kind": "Deployment",
                          "metadata": {"name": "web"}, "spec": {"replicas": 4}},
                   manager="hpa", force=True, now=T2)
    assert forced["spec"]["replicas"] == 4
    owners = entries(forced)
    assert "f:replicas" not in owners[("alice", "Apply")]["fieldsV1"]["f:spec"]
    assert owners[("hpa", "Apply")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert owners[("hpa", "Apply")]["time"] == T2


def test_fields_dropped_from_the_config_are_removed_unless_owned_by_another() -> None:
    alone = apply(apply(None, deployment(app="web", tier="front")), deployment(app="web"), now=T2)
    assert alone["metadata"]["labels"] == {"app": "web"}
    config = deployment(app="web", tier="front")
    config["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "s"})
    live = apply(None, config)
    other = copy.deepcopy(live)
    other["metadata"]["labels"]["team"] = "x"
    record_update(live, other, manager="kubectl-label", operation="Update", now=T2)
    shared = apply(other, {"apiVersion": "apps/v1", "kind": "Deployment",
                           "metadata": {"name": "web", "labels": {"tier": "front"}}},
                   manager="helper", now=T2)
    result = apply(shared, deployment(app="web"), now=T3)
    assert result["metadata"]["labels"] == {"app": "web", "team": "x", "tier": "front"}
    assert [c["name"] for c in result["spec"]["template"]["spec"]["containers"]] == ["c"]
    assert result["spec"]["replicas"] == 1


def test_dropping_every_label_removes_the_emptied_map() -> None:
    live = apply(None, deployment())
    config = deployment()
    del config["metadata"]["labels"]
    result = apply(live, config, now=T2)
    assert "labels" not in result["metadata"]
    assert result["metadata"]["name"] == "web"


def test_dropped_item_stays_when_another_manager_owns_part_of_it() -> None:
    config = deployment()
    config["spec"]["template"]["spec"]["containers"].append({"name": "side", "image": "s"})
    live = apply(None, config)
    edited = copy.deepcopy(live)
    edited["spec"]["template"]["spec"]["containers"][1]["image"] = "s2"
    record_update(live, edited, manager="kubectl-edit", operation="Update", now=T2)
    result = apply(edited, deployment(), now=T3)
    assert result["spec"]["template"]["spec"]["containers"][1] == {"name": "side", "image": "s2"}


def test_keyed_lists_merge_and_unknown_lists_replace() -> None:
    live = apply(None, deployment(), manager="alice")
    extra = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"template": {"spec": {
                 "containers": [{"name": "c", "env": [{"name": "X", "value": "1"}]},
                                {"name": "d", "image": "d"}],
                 "tolerations": [{"key": "k", "operator": "Exists"}]}}}}
    result = apply(live, extra, manager="bob", now=T2)
    containers = result["spec"]["template"]["spec"]["containers"]
    assert containers == [{"name": "c", "image": "nginx:1.25", "env": [{"name": "X", "value": "1"}]},
                          {"name": "d", "image": "d"}]
    assert result["spec"]["template"]["spec"]["tolerations"] == [{"key": "k", "operator": "Exists"}]


def test_status_in_an_applied_config_is_ignored() -> None:
    config = deployment()
    config["status"] = {"replicas": 9}
    live = apply(None, config)
    assert "status" not in live
    assert "f:status" not in live["metadata"]["managedFields"][0]["fieldsV1"]


@pytest.mark.parametrize(("config", "message"), [
    ({"metadata": {"name": "x", "managedFields": []}}, "metadata.managedFields must be nil"),
])
def test_managed_fields_in_an_applied_config_is_400(config: dict, message: str) -> None:
    with pytest.raises(StatusError) as err:
        apply(None, config)
    assert (err.value.code, err.value.message) == (400, message)


def test_record_update_on_create_owns_every_set_field() -> None:
    obj = deployment()
    obj["metadata"].update(uid="u", resourceVersion="1", creationTimestamp=T1, generation=1)
    obj["status"] = {"replicas": 1}
    record_update(None, obj, manager="kubectl-create", operation="Update", now=T1)
    (entry,) = obj["metadata"]["managedFields"]
    assert {k: entry[k] for k in ("manager", "operation", "apiVersion", "time")} == {
        "manager": "kubectl-create", "operation": "Update", "apiVersion": "apps/v1", "time": T1}
    assert parse_fields_v1(entry["fieldsV1"]) == field_set(deployment(), "Deployment")
    assert "f:status" not in entry["fieldsV1"]


def test_record_update_moves_changed_fields_and_keeps_times() -> None:
    live = apply(None, deployment())
    new = copy.deepcopy(live)
    new["spec"]["replicas"] = 2
    del new["metadata"]["labels"]
    record_update(live, new, manager="kubectl-edit", operation="Update", now=T2)
    owners = entries(new)
    assert owners[("kubectl-edit", "Update")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert owners[("kubectl-edit", "Update")]["time"] == T2
    applier = owners[("kubectl", "Apply")]
    assert applier["time"] == T1
    assert "f:metadata" not in applier["fieldsV1"]
    assert "f:replicas" not in applier["fieldsV1"]["f:spec"]
    assert [e["operation"] for e in new["metadata"]["managedFields"]] == ["Apply", "Update"]


def test_record_update_no_op_leaves_managed_fields_alone() -> None:
    live = apply(None, deployment())
    new = copy.deepcopy(live)
    new["metadata"]["resourceVersion"] = "99"
    new["status"] = {"observedGeneration": 3}
    record_update(live, new, manager="kubelet", operation="Update", now=T2)
    assert new["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_record_update_restores_managed_fields_a_client_dropped() -> None:
    live = apply(None, deployment())
    new = copy.deepcopy(live)
    del new["metadata"]["managedFields"]
    new["spec"]["replicas"] = 3
    record_update(live, new, manager="kubectl-scale", operation="Update", now=T2)
    assert set(entries(new)) == {("kubectl", "Apply"), ("kubectl-scale", "Update")}


@pytest.mark.parametrize(("path", "text"), [
    (("f:spec", "f:replicas"), ".spec.replicas"),
    (("f:spec", "f:containers", 'k:{"name":"c"}', "f:image"), '.spec.containers[name="c"].image'),
    (("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}'), '.spec.ports[port=80,protocol="TCP"]'),
    (("f:metadata", "f:finalizers", 'v:"a/b"'), '.metadata.finalizers[="a/b"]'),
    (("f:spec", "f:x", "i:3"), ".spec.x[3]"),
])
def test_path_string_matches_upstream(path: tuple, text: str) -> None:
    assert path_string(path) == text


def test_parse_rejects_malformed_fieldsv1() -> None:
    assert parse_fields_v1({"f:a": "leaf"}) is None
    assert parse_fields_v1([]) is None


_elements = st.sampled_from(["f:a", "f:b", 'k:{"name":"x"}', 'v:"y"', "i:0"])
_paths = st.lists(_elements, min_size=1, max_size=4).map(tuple)


@settings(max_examples=60, deadline=None)
@given(st.sets(_paths, max_size=8))
def test_fieldsv1_round_trips(paths: set[tuple[str, ...]]) -> None:
    assert parse_fields_v1(fields_v1(paths)) == paths


_values = st.recursive(
    st.one_of(st.integers(0, 3), st.text("ab", max_size=2)),
    lambda inner: st.dictionaries(st.sampled_from(["replicas", "x", "labels"]), inner,
                                  min_size=1, max_size=3),
    max_leaves=8)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.sampled_from(["replicas", "paused", "extra"]), _values, max_size=3))
def test_apply_onto_nothing_yields_the_config_and_owns_it(spec: dict[str, Any]) -> None:
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"},
              "spec": spec}
    obj = apply(None, config)
    assert obj["spec"] == spec
    owned = {p for e in obj["metadata"].get("managedFields", [])
             for p in parse_fields_v1(e["fieldsV1"])}
    assert owned == field_set(config, "Deployment")


@settings(max_examples=80, deadline=None)
@given(st.sets(_paths, max_size=8), st.sets(_paths, max_size=4), st.sets(_paths, max_size=4))
def test_tree_edits_agree_with_set_algebra(start: set, removed: set, added: set) -> None:
    from minikube_py.api.managedfields import _tree_insert, _tree_remove

    tree = fields_v1(start)
    for path in removed:
        _tree_remove(tree, path)
    _tree_insert(tree, added)
    assert parse_fields_v1(tree) == (start - removed) | added
    assert tree == fields_v1(parse_fields_v1(tree))  # still in canonical shape


def test_record_update_never_mutates_old_even_when_new_shares_its_entries() -> None:
    live = apply(None, deployment())
    before = copy.deepcopy(live)
    new = dict(live)
    new["metadata"] = dict(live["metadata"])  # shallow: shares the managedFields list
    new["metadata"]["labels"] = {"app": "web", "extra": "1"}
    new["spec"] = dict(live["spec"], replicas=7)
    record_update(live, new, manager="kubectl-edit", operation="Update", now=T2)
    assert live == before
    assert entries(new)[("kubectl-edit", "Update")]["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:extra": {}}}, "f:spec": {"f:replicas": {}}}


@pytest.mark.parametrize("reset", [[], [{}]])
def test_record_update_reset_by_empty_managed_fields(reset: list) -> None:
    live = apply(None, deployment())
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = reset
    record_update(live, new, manager="kubectl-edit", operation="Update", now=T2)
    assert "managedFields" not in new["metadata"]
    new2 = copy.deepcopy(live)
    new2["metadata"]["managedFields"] = reset
    new2["spec"]["replicas"] = 2
    record_update(live, new2, manager="kubectl-edit", operation="Update", now=T2)
    assert set(entries(new2)) == {("kubectl-edit", "Update")}


def test_fields_tree_equals_the_path_set_route_on_varied_objects():
    """The create fast path builds the same FieldsV1 as fields_v1(field_set(...))."""
    from minikube_py.api.managedfields import field_set, fields_tree, fields_v1

    objects = [
        ("Pod", {"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "p", "labels": {"b": "1", "a": "2"}, "annotations": {},
                              "finalizers": ["x", "y"], "ownerReferences": [
                                  {"uid": "u1", "kind": "RC", "name": "r", "apiVersion": "v1"}]},
                 "spec": {"containers": [
                     {"name": "c", "image": "i", "ports": [{"containerPort": 80}, {"containerPort": 81,
                                                            "protocol": "UDP"}],
                      "env": [{"name": "A", "value": "1"}], "resources": {},
                      "command": ["sh", "-c"], "args": []},
                     {"name": "b", "image": "j", "volumeMounts": [{"name": "v", "mountPath": "/m"}]}],
                     "volumes": [{"name": "v", "emptyDir": {}}], "tolerations": [{"key": "k"}],
                     "nodeSelector": {"disk": "ssd"}, "initContainers": [],
                     "dnsPolicy": None, "restartPolicy": "Always"},
                 "status": {"phase": "Pending"}}),
        ("Service", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                     "spec": {"ports": [{"port": 80, "targetPort": 8080}], "selector": {"a": "b"},
                              "type": "ClusterIP"}}),
        ("ConfigMap", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                       "data": {"k": "v", "a": ""}}),
        ("Deployment", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                        "spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}},
                                 "template": {"metadata": {"labels": {"a": "b"}},
                                              "spec": {"containers": [{"name": "c", "image": "x"}]}},
                                 "strategy": {"type": "RollingUpdate",
                                              "rollingUpdate": {"maxSurge": "25%"}}}}),
        ("Widget", {"apiVersion": "x/v1", "kind": "Widget", "metadata": {"name": "w"},
                    "spec": {"list": [1, 2], "objs": [{"a": 1}], "empty": []}}),
    ]
    for kind, obj in objects:
        # byte-identical, key order included (upstream prints FieldsV1 keys sorted)
        assert orjson.dumps(fields_tree(obj, kind)) == orjson.dumps(
            fields_v1(field_set(obj, kind))), kind


# --- junk managedFields: decoded and re-encoded, never stored as sent ---------------------


def _sent(live: dict, managed: Any) -> dict:
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = managed
    return new


@pytest.mark.parametrize("junk", [
    [{"manager": "junk-writer", "operation": "Bogus", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
      "fieldsV1": {"f:spec": {}}}],
    [{"manager": "junk-writer", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": {}}],
    [{"manager": "junk-writer", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV2"}],
    [{"manager": "junk-writer", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
      "fieldsV1": "f:spec"}],
    [{"manager": 7, "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1"}],
    [{"manager": "junk-writer", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
      "time": "yesterday"}],
    [{"manager": "junk-writer", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
      "fieldsV1": {"f:spec": {"bogus": {}}}}],
    [{"manager": "junk-writer", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
      "fieldsV1": {"f:spec": {"k:{not json": {}}}}],
    [{"manager": "junk-writer", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
      "fieldsV1": {"f:spec": {"i:one": {}}}}],
    [{"manager": "junk-writer", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
      "fieldsV1": {"f:spec": {"k:[1]": {}}}}],
    [{"manager": "junk-writer", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
      "fieldsV1": {"f:spec": {"f:x": 3}}}],
    ["not an entry"],
    "not a list",
])
def test_record_update_falls_back_to_live_entries_when_sent_ones_do_not_decode(junk: Any) -> None:
    live = apply(None, deployment())
    new = _sent(live, junk)
    new["spec"]["replicas"] = 5
    record_update(live, new, manager="unknown", operation="Update", now=T2)
    assert set(entries(new)) == {("kubectl", "Apply"), ("unknown", "Update")}
    assert entries(new)[("unknown", "Update")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    assert "junk-writer" not in str(new["metadata"]["managedFields"])


def test_record_update_on_create_with_junk_records_only_the_writer() -> None:
    obj = deployment()
    obj["metadata"]["managedFields"] = [{"manager": "junk-writer", "operation": "Bogus"}]
    record_update(None, obj, manager="unknown", operation="Update", now=T1)
    (entry,) = obj["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["time"]) == ("unknown", "Update", T1)
    assert parse_fields_v1(entry["fieldsV1"]) == field_set(deployment(), "Deployment")


def test_record_update_stores_sent_entries_canonical() -> None:
    """Unknown keys go, path elements are re-serialised, times become UTC seconds, unknown
    element types are dropped and `.` stays only on members with children (upstream decodes
    and re-encodes every write)."""
    live = apply(None, deployment())
    sent = [{"manager": "edited", "operation": "Update", "apiVersion": "apps/v1",
             "time": "2024-01-01T02:30:00.5+02:00", "fieldsType": "FieldsV1", "junk": "x" * 99,
             "fieldsV1": {".": {}, "f:metadata": {".": {}, "f:labels": {"f:app": None}},
                          "f:spec": {"f:template": {"f:spec": {"f:containers": {
                              'k:{ "name" : "c" }': {".": {}, "f:image": {}}}}},
                              "f:strategy": {"x:future": {}}, "f:replicas": {".": {}}}}}]
    new = _sent(live, sent)
    record_update(live, new, manager="kubectl-edit", operation="Update", now=T2)
    assert new["metadata"]["managedFields"] == [{
        "manager": "edited", "operation": "Update", "apiVersion": "apps/v1",
        "time": "2024-01-01T00:30:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {".": {}, "f:labels": {"f:app": {}}},
                     "f:spec": {"f:replicas": {}, "f:strategy": {}, "f:template": {"f:spec": {
                         "f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}}}}}}}}]


def test_record_update_drops_entries_left_without_fields_and_collapses_duplicates() -> None:
    live = apply(None, deployment())
    entry = {"manager": "a", "operation": "Update", "apiVersion": "apps/v1",
             "fieldsType": "FieldsV1"}
    sent = [dict(entry, fieldsV1={"f:spec": {"f:paused": {}}}), dict(entry, manager="empty"),
            dict(entry, fieldsV1={"f:spec": {"f:replicas": {}}})]
    new = _sent(live, sent)
    record_update(live, new, manager="kubectl-edit", operation="Update", now=T2)
    assert new["metadata"]["managedFields"] == [
        dict(entry, fieldsV1={"f:spec": {"f:replicas": {}}})]


def _chain(depth: int, leaves: int) -> dict:
    tree: dict = {f"f:leaf{i}": {} for i in range(leaves)}
    for level in range(depth):
        tree = {f"f:l{level}": tree}
    return tree


def test_fieldsv1_walks_are_iterative_whatever_the_depth() -> None:
    paths = parse_fields_v1(_chain(1200, 2))  # past Python's recursion limit
    assert paths is not None and len(paths) == 2 and {len(p) for p in paths} == {1201}


def test_fieldsv1_expanding_past_the_bound_is_not_decoded() -> None:
    """100 levels with 20000 leaves would be 2 million path elements: refused, quickly."""
    import time

    live = apply(None, deployment())
    sent = [{"manager": "big", "operation": "Update", "apiVersion": "apps/v1",
             "fieldsType": "FieldsV1", "fieldsV1": _chain(99, 20000)}]
    new = _sent(live, sent)
    started = time.perf_counter()
    record_update(live, new, manager="kubectl-edit", operation="Update", now=T2)
    assert time.perf_counter() - started < 2
    assert new["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_apply_over_live_entries_that_do_not_decode_starts_afresh() -> None:
    """A stored entry whose FieldsV1 holds a `k:` that is not JSON used to reach the pruning
    code and fail with a JSONDecodeError (a 500)."""
    live = apply(None, deployment())
    live["metadata"]["managedFields"] = [{
        "manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1", "time": T1,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{broken": {".": {}, "f:name": {}, "f:image": {}}}}}}}}]
    obj = apply(live, deployment(replicas=2), now=T2)
    assert obj["spec"]["replicas"] == 2
    assert set(entries(obj)) == {("kubectl", "Apply")}


@pytest.mark.parametrize(("agent", "manager"), [
    ("", "unknown"),
    ("/1.0", "unknown"),
    ("kubectl/v1.31.0 (linux/amd64)", "kubectl"),
    ("a\x00b\tc d/x", "abc d"),
    ("é" * 100, "é" * 64),
    ("x" * 300, "x" * 128),
])
def test_update_manager_is_upstreams_prefix_from_user_agent(agent: str, manager: str) -> None:
    from minikube_py.api.managedfields import update_manager

    assert update_manager(agent) == manager


def test_record_update_through_a_subresource_ignores_sent_entries() -> None:
    """upstream ignoreManagedFieldsFromRequestObject: a subresource write keeps the live
    entries whatever it sends, and its own entry names the subresource."""
    live = apply(None, deployment())
    new = _sent(live, [{"manager": "rewritten", "operation": "Update", "apiVersion": "apps/v1",
                        "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}])
    record_update(live, new, manager="kubectl", operation="Update", now=T2,
                  subresource="status")
    assert new["metadata"]["managedFields"] == live["metadata"]["managedFields"]
    new["spec"]["paused"] = True
    record_update(live, new, manager="ctl", operation="Update", now=T2, subresource="finalize")
    mine = entries(new)[("ctl", "Update")]
    assert mine["subresource"] == "finalize" and mine["fieldsV1"] == {"f:spec": {"f:paused": {}}}


# --- the status subresource ------------------------------------------------------------------


def with_status(obj: dict, **status: Any) -> dict:
    obj = copy.deepcopy(obj)
    obj["status"] = status
    return obj


def test_status_updates_track_status_only_under_their_subresource() -> None:
    live = apply(None, deployment())
    sent = with_status(deployment(replicas=9), replicas=1, observedGeneration=1)
    sent["metadata"]["managedFields"] = live["metadata"]["managedFields"]
    record_update(live, sent, manager="ctrl", operation="Update", now=T2, subresource="status")
    ctrl = entries(sent)[("ctrl", "Update")]
    assert ctrl == {"manager": "ctrl", "operation": "Update", "apiVersion": "apps/v1",
                    "time": T2, "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:status": {"f:observedGeneration": {}, "f:replicas": {}}},
                    "subresource": "status"}
    # the spec sent along is reset by the strategy: the applier keeps owning it
    assert entries(sent)[("kubectl", "Apply")] == live["metadata"]["managedFields"][0]


def test_main_resource_writes_still_ignore_status() -> None:
    live = with_status(apply(None, deployment()), replicas=1)
    new = with_status(deployment(replicas=2), replicas=5)
    new["metadata"]["managedFields"] = live["metadata"]["managedFields"]
    record_update(live, new, manager="editor", operation="Update", now=T2)
    assert entries(new)[("editor", "Update")]["fieldsV1"] == {"f:spec": {"f:replicas": {}}}
    applied = apply(live, with_status(deployment(), replicas=7), manager="other", force=True)
    assert applied["status"] == {"replicas": 1}
    assert all("f:status" not in e["fieldsV1"] for e in applied["metadata"]["managedFields"])


def test_status_apply_applies_status_and_conflicts_across_subresources() -> None:
    live = apply(None, deployment())
    live["status"] = {}
    updated = with_status(live, observedGeneration=1)
    record_update(live, updated, manager="ctrl", operation="Update", now=T2,
                  subresource="status")
    config = with_status(deployment(replicas=5, image="other"), observedGeneration=3)
    with pytest.raises(StatusError) as err:
        server_side_apply(updated, config, kind="Deployment", manager="kubectl", force=False,
                          now=T3, subresource="status")
    assert err.value.code == 409
    assert err.value.message == (
        'Apply failed with 1 conflict: conflict with "ctrl" with subresource "status" using '
        'apps/v1: .status.observedGeneration')
    forced = server_side_apply(updated, config, kind="Deployment", manager="kubectl",
                               force=True, now=T3, subresource="status")
    assert forced["status"] == {"observedGeneration": 3}
    assert forced["spec"] == live["spec"]  # spec is reset on the status subresource
    got = {(e["manager"], e["operation"], e.get("subresource", "")): e
           for e in forced["metadata"]["managedFields"]}
    assert set(got) == {("kubectl", "Apply", ""), ("kubectl", "Apply", "status")}
    assert got[("kubectl", "Apply", "status")]["fieldsV1"] == {
        "f:status": {"f:observedGeneration": {}}}
    assert got[("kubectl", "Apply", "")] == live["metadata"]["managedFields"][0]


def test_status_apply_prunes_what_it_stopped_applying() -> None:
    live = with_status(apply(None, deployment()), replicas=1)
    first = server_side_apply(live, with_status(deployment(), replicas=1, readyReplicas=1),
                              kind="Deployment", manager="me", force=False, now=T2,
                              subresource="status")
    second = server_side_apply(first, with_status(deployment(), replicas=1),
                               kind="Deployment", manager="me", force=False, now=T3,
                               subresource="status")
    assert second["status"] == {"replicas": 1}
    emptied = server_side_apply(second, deployment(), kind="Deployment", manager="me",
                                force=False, now=T3, subresource="status")
    assert emptied["status"] == {}  # still present, so the status write replaces it
