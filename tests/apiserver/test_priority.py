"""scheduling.k8s.io/v1 PriorityClass and the Priority and DefaultTolerationSeconds plugins,
against a real API server over HTTP."""

from __future__ import annotations

from pathlib import Path

from tests.apiserver.conftest import pod, start_api

CHAIN = ("NamespaceLifecycle", "Priority", "DefaultTolerationSeconds")
CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"
PODS = "/api/v1/namespaces/default/pods"


def priority_class(name: str, value: int, **fields) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value, **fields}


async def _close(runner, store, session) -> None:
    await session.close()
    await runner.cleanup()
    await store.close()


async def test_system_classes_exist_are_listed_and_cannot_be_deleted(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path, admission_control=CHAIN)
    try:
        status, body = await api.get(CLASSES)
        assert status == 200
        assert {(pc["metadata"]["name"], pc["value"], pc["preemptionPolicy"])
                for pc in body["items"]} == {
            ("system-node-critical", 2000001000, "PreemptLowerPriority"),
            ("system-cluster-critical", 2000000000, "PreemptLowerPriority")}
        status, body = await api.delete(f"{CLASSES}/system-node-critical")
        assert status == 403
        assert body["message"] == ('priorityclasses.scheduling.k8s.io "system-node-critical" is '
                                   "forbidden: this is a system priority class and cannot be "
                                   "deleted")
        status, groups = await api.get("/apis")
        assert "scheduling.k8s.io" in [g["name"] for g in groups["groups"]]
        status, resources = await api.get("/apis/scheduling.k8s.io/v1")
        entry = next(r for r in resources["resources"] if r["name"] == "priorityclasses")
        assert entry["namespaced"] is False and entry["shortNames"] == ["pc"]
        status, table = await api.get(CLASSES + "/system-cluster-critical", headers={
            "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        assert [c["name"] for c in table["columnDefinitions"]] == [
            "Name", "Value", "Global-Default", "Age", "PreemptionPolicy"]
        assert table["rows"][0]["cells"][:3] == ["system-cluster-critical", 2000000000, False]
    finally:
        await _close(runner, store, session)


async def test_priority_class_validation(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path, admission_control=CHAIN)
    try:
        status, body = await api.post(CLASSES, priority_class("too-high", 1_000_000_001))
        assert status == 422
        assert body["message"] == ('PriorityClass.scheduling.k8s.io "too-high" is invalid: value: '
                                   "Forbidden: maximum allowed value of a user defined priority "
                                   "is 1000000000")
        status, body = await api.post(CLASSES, priority_class("system-mine", 5))
        assert status == 422
        assert ("metadata.name: Forbidden: priority class names with 'system-' prefix are "
                "reserved for system use only. error: system-mine is not a known system "
                "priority class") in body["message"]
        status, created = await api.post(CLASSES, priority_class("high", 1000))
        assert status == 201 and created["preemptionPolicy"] == "PreemptLowerPriority"
        changed = dict(created, value=2000)
        status, body = await api.put(f"{CLASSES}/high", changed)
        assert status == 422 and "value: Forbidden: may not be changed in an update." in (
            body["message"])
        status, _ = await api.post(CLASSES, priority_class("first", 10, globalDefault=True))
        assert status == 201
        status, body = await api.post(CLASSES, priority_class("second", 20, globalDefault=True))
        assert status == 403
        assert body["message"] == ('priorityclasses.scheduling.k8s.io "second" is forbidden: '
                                   "PriorityClass first is already marked as default. Only one "
                                   "default can exist")
    finally:
        await _close(runner, store, session)


async def test_pods_get_priority_preemption_policy_and_default_tolerations(
        tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path, admission_control=CHAIN)
    try:
        status, created = await api.post(PODS, pod("plain"))
        assert status == 201, created
        spec = created["spec"]
        assert spec["priority"] == 0 and spec["preemptionPolicy"] == "PreemptLowerPriority"
        assert "priorityClassName" not in spec
        assert spec["tolerations"] == [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
             "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
             "effect": "NoExecute", "tolerationSeconds": 300}]

        critical = pod("critical")
        critical["spec"]["priorityClassName"] = "system-cluster-critical"
        critical["spec"]["tolerations"] = [{"operator": "Exists"}]  # tolerates everything
        status, created = await api.post(PODS, critical)
        assert status == 201, created
        assert created["spec"]["priority"] == 2000000000
        assert created["spec"]["tolerations"] == [{"operator": "Exists"}]

        status, _ = await api.post(CLASSES, priority_class(
            "batch", 100, globalDefault=True, preemptionPolicy="Never"))
        assert status == 201
        status, created = await api.post(PODS, pod("defaulted"))
        assert status == 201
        assert (created["spec"]["priorityClassName"], created["spec"]["priority"],
                created["spec"]["preemptionPolicy"]) == ("batch", 100, "Never")

        unknown = pod("unknown")
        unknown["spec"]["priorityClassName"] = "nope"
        status, body = await api.post(PODS, unknown)
        assert status == 403 and body["reason"] == "Forbidden"
        assert body["message"] == ('pods "unknown" is forbidden: no PriorityClass with name '
                                   "nope was found")
        forged = pod("forged")
        forged["spec"]["priority"] = 7
        status, body = await api.post(PODS, forged)
        assert status == 403
        assert body["message"] == (
            'pods "forged" is forbidden: the integer value of priority (7) must not be provided '
            "in pod spec; priority admission controller computed 100 from the given "
            "PriorityClass name")

        # a PUT that leaves the admission-set fields out keeps them
        status, current = await api.get(f"{PODS}/plain")
        del current["spec"]["priority"], current["spec"]["preemptionPolicy"]
        current["metadata"]["labels"] = {"changed": "yes"}
        status, updated = await api.put(f"{PODS}/plain", current)
        assert status == 200, updated
        assert updated["spec"]["priority"] == 0
        assert len(updated["spec"]["tolerations"]) == 2
    finally:
        await _close(runner, store, session)


async def test_toleration_seconds_follow_the_options(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(
        tmp_path, admission_control=CHAIN, default_not_ready_toleration_seconds=30,
        default_unreachable_toleration_seconds=60)
    try:
        status, created = await api.post(PODS, pod("p"))
        assert status == 201
        assert [t["tolerationSeconds"] for t in created["spec"]["tolerations"]] == [30, 60]
    finally:
        await _close(runner, store, session)


async def test_priority_plugin_gaps_checked_against_upstream(tmp_path: Path) -> None:
    """Upstream plugin/pkg/admission/priority (1.31): a preemptionPolicy the client wrote
    that differs from the class's is refused; an existing class cannot become the default
    while another one is; the default class itself may be updated; `kubectl get pc` columns."""
    api, runner, store, session = await start_api(tmp_path, admission_control=CHAIN)
    try:
        status, _ = await api.post(CLASSES, priority_class("never", 50,
                                                           preemptionPolicy="Never"))
        assert status == 201
        p = pod("policy")
        p["spec"]["priorityClassName"] = "never"
        p["spec"]["preemptionPolicy"] = "PreemptLowerPriority"
        status, body = await api.post(PODS, p)
        assert status == 403
        assert body["message"] == (
            'pods "policy" is forbidden: the string value of PreemptionPolicy '
            "(PreemptLowerPriority) must not be provided in pod spec; priority admission "
            "controller computed Never from the given PriorityClass name")
        status, first = await api.post(CLASSES, priority_class("first", 10, globalDefault=True))
        assert status == 201
        first["description"] = "still the default"
        status, _ = await api.put(f"{CLASSES}/first", first)
        assert status == 200  # the default itself may change
        status, never = await api.get(f"{CLASSES}/never")
        never["globalDefault"] = True
        status, body = await api.put(f"{CLASSES}/never", never)
        assert status == 403 and body["message"].endswith(
            "PriorityClass first is already marked as default. Only one default can exist")
        status, table = await api.get(CLASSES, headers={
            "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        assert [c["name"] for c in table["columnDefinitions"]] == [
            "Name", "Value", "Global-Default", "Age", "PreemptionPolicy"]
        rows = {r["cells"][0]: r["cells"] for r in table["rows"]}
        assert rows["system-node-critical"][1:3] == [2000001000, False]
        assert rows["first"][1:3] == [10, True]
    finally:
        await _close(runner, store, session)
