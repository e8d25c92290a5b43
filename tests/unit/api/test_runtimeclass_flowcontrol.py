"""Pure logic of node.k8s.io RuntimeClass (admission decisions, validation) and of the API
Priority and Fairness configuration (bootstrap data, ensurer decisions, Dangling condition)."""

from __future__ import annotations

from minikube_py.api import flowcontrol as apf
from minikube_py.api import runtimeclass as rc
from minikube_py.api.validation import validate_create, validate_update

KATA = {"metadata": {"name": "kata"}, "handler": "kata",
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        "scheduling": {"nodeSelector": {"runtime": "kata"},
                       "tolerations": [{"key": "kata", "operator": "Exists",
                                        "effect": "NoSchedule"}]}}


def test_overhead_is_copied_and_checked() -> None:
    spec: dict = {}
    assert rc.set_overhead(spec, KATA) is None
    assert spec["overhead"] == {"cpu": "250m", "memory": "120Mi"}
    assert rc.validate_overhead(spec, KATA) is None
    same_value = {"overhead": {"cpu": "0.25", "memory": "120Mi"}}
    assert rc.set_overhead(same_value, KATA) is None
    assert rc.set_overhead({"overhead": {"cpu": "1"}}, KATA) == rc.OVERHEAD_MISMATCH
    assert rc.validate_overhead({"overhead": {"cpu": "1"}}, None) == rc.OVERHEAD_WITHOUT_CLASS


def test_scheduling_merges_selector_and_tolerations() -> None:
    spec: dict = {"nodeSelector": {"zone": "a"},
                  "tolerations": [{"key": "kata", "operator": "Exists"}]}
    assert rc.set_scheduling(spec, KATA) is None
    assert spec["nodeSelector"] == {"zone": "a", "runtime": "kata"}
    # the pod's effect-less Exists toleration is a superset of the class's: one is kept
    assert spec["tolerations"] == [{"key": "kata", "operator": "Exists"}]
    conflict = {"nodeSelector": {"runtime": "runc"}}
    assert rc.set_scheduling(conflict, KATA) == (
        "conflict: runtimeClass.scheduling.nodeSelector[runtime] = kata; "
        "pod.spec.nodeSelector[runtime] = runc")


def test_merge_tolerations_drops_subsumed_ones() -> None:
    a = {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}
    everything = {"operator": "Exists"}
    assert rc.merge_tolerations([a], [everything]) == [everything]
    assert rc.merge_tolerations([a], [dict(a)]) == [a]
    b = {"key": "other", "operator": "Exists"}
    assert rc.merge_tolerations([a], [b]) == [a, b]


def test_runtime_class_validation() -> None:
    bad = {"metadata": {"name": "x"}, "handler": "Not_A_Label",
           "scheduling": {"tolerations": [{"key": "a", "operator": "Exists"},
                                          {"key": "a", "operator": "Exists"}]}}
    got = [e.message() for e in validate_create("RuntimeClass", bad)]
    assert got[0].startswith('handler: Invalid value: "Not_A_Label": a lowercase RFC 1123 label')
    assert got[1].startswith("scheduling.tolerations[1]: Duplicate value: ")
    old = dict(KATA, metadata={"name": "kata", "resourceVersion": "1", "uid": "u"})
    new = dict(old, handler="runc")
    assert [e.message() for e in validate_update("RuntimeClass", new, old)] == [
        'handler: Invalid value: "runc": field is immutable']


def test_bootstrap_is_upstreams_and_valid() -> None:
    boot = apf.load_bootstrap()
    assert [o["metadata"]["name"] for o, _ in boot.levels()] == [
        "catch-all", "exempt", "system", "node-high", "leader-election", "workload-high",
        "workload-low", "global-default"]
    schemas = {o["metadata"]["name"]: o for o, _ in boot.schemas()}
    assert sorted(schemas, key=lambda n: schemas[n]["spec"]["matchingPrecedence"])[:3] == [
        "exempt", "probes", "system-leader-election"]
    assert [n for o, m in boot.schemas() if m for n in [o["metadata"]["name"]]] == [
        "exempt", "catch-all"]
    for obj, _ in boot.levels() + boot.schemas():
        assert validate_create(obj["kind"], obj) == [], obj["metadata"]["name"]
        assert obj["metadata"]["annotations"] == {apf.AUTO_UPDATE_ANNOTATION: "true"}


def _stored(obj: dict, generation: int, annotation: str | None) -> dict:
    import copy
    out = copy.deepcopy(obj)
    out["metadata"]["generation"] = generation
    if annotation is None:
        out["metadata"].pop("annotations")
    else:
        out["metadata"]["annotations"] = {apf.AUTO_UPDATE_ANNOTATION: annotation}
    return out


def test_ensurer_respects_the_autoupdate_annotation() -> None:
    """Upstream ensurer ReviseIfNeeded (pkg/registry/flowcontrol/ensurer/strategy.go)."""
    boot = apf.load_bootstrap()
    system = boot.suggested_levels[0]
    edited = _stored(system, 2, "false")
    edited["spec"]["limited"]["nominalConcurrencyShares"] = 99
    assert apf.ensure_update(system, edited, mandatory=False) is None  # user opted out
    restored = apf.ensure_update(system, _stored(edited, 2, "true"), mandatory=False)
    assert restored is not None and restored["spec"] == system["spec"]
    assert apf.ensure_update(system, _stored(edited, 2, "True"), mandatory=False)["spec"] \
        == system["spec"]  # Go's ParseBool
    # no annotation and edited (generation > 1): the edit is kept, marked "false"
    marked = apf.ensure_update(system, _stored(edited, 3, None), mandatory=False)
    assert marked["spec"] == edited["spec"]
    assert marked["metadata"]["annotations"] == {apf.AUTO_UPDATE_ANNOTATION: "false"}
    # never edited (generation 1): brought back and marked "true"
    fresh = apf.ensure_update(system, _stored(edited, 1, None), mandatory=False)
    assert fresh["spec"] == system["spec"]
    assert fresh["metadata"]["annotations"] == {apf.AUTO_UPDATE_ANNOTATION: "true"}
    assert apf.ensure_update(system, _stored(system, 5, "true"), mandatory=False) is None
    # a mandatory object is always brought back, whatever the annotation says
    catch_all = boot.mandatory_levels[0]
    changed = _stored(catch_all, 2, "false")
    changed["spec"]["limited"]["nominalConcurrencyShares"] = 1
    fixed = apf.ensure_update(catch_all, changed, mandatory=True)
    assert fixed is not None and fixed["spec"] == catch_all["spec"]
    assert fixed["metadata"]["annotations"][apf.AUTO_UPDATE_ANNOTATION] == "true"
    # users own the exempt level's concurrency settings (not compared)...
    exempt = boot.mandatory_levels[1]
    tuned = _stored(exempt, 2, "true")
    tuned["spec"]["exempt"]["nominalConcurrencyShares"] = 10
    assert apf.ensure_update(exempt, tuned, mandatory=True) is None
    # ...but a spec that differs otherwise is replaced whole, as plcReplaceSpec does
    broken = _stored(exempt, 2, "true")
    del broken["spec"]["exempt"]
    assert apf.ensure_update(exempt, broken, mandatory=True)["spec"] == exempt["spec"]


def test_removal_of_objects_no_longer_bootstrapped() -> None:
    names = frozenset({"kept"})

    def obj(name: str, annotation: str | None) -> dict:
        annotations = {} if annotation is None else {apf.AUTO_UPDATE_ANNOTATION: annotation}
        return {"metadata": {"name": name, "annotations": annotations}}
    assert apf.is_dangling_bootstrap_object(obj("old", "true"), names)
    assert apf.is_dangling_bootstrap_object(obj("old", "1"), names)
    assert not apf.is_dangling_bootstrap_object(obj("old", "false"), names)
    assert not apf.is_dangling_bootstrap_object(obj("old", "yes"), names)  # malformed: kept
    assert not apf.is_dangling_bootstrap_object(obj("mine", None), names)
    assert not apf.is_dangling_bootstrap_object(obj("kept", "true"), names)


def test_dangling_condition() -> None:
    fs = {"metadata": {"name": "x"}, "spec": {"priorityLevelConfiguration": {"name": "gone"}}}
    cond = apf.dangling_condition(fs, {"exempt"})
    assert (cond["status"], cond["reason"]) == ("True", "NotFound")
    updated = apf.with_condition(fs, cond, "2026-01-01T00:00:00Z")
    assert updated["status"]["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert apf.with_condition(updated, cond, "2026-01-02T00:00:00Z") is None
    found = apf.dangling_condition(fs, {"gone"})
    again = apf.with_condition(updated, found, "2026-01-03T00:00:00Z")
    assert again["status"]["conditions"] == [dict(found,
                                                  lastTransitionTime="2026-01-03T00:00:00Z")]
