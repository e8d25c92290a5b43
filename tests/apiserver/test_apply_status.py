"""Server-side apply and managedFields on the status subresource, through a real server.

Upstream (the field manager over structured-merge-diff, with the status strategies'
GetResetFields): an apply to `.../NAME/status` applies the configuration's `status` only and
records it as the manager's Apply entry with `subresource: status`; update and non-apply
patches of `/status` record an Update entry with `subresource: status` holding the status
fields they changed; conflicts are decided across all entries, as on the main resource.
"""

from __future__ import annotations

from typing import Any

from tests.apiserver.conftest import API

DEPLOYS = "/apis/apps/v1/namespaces/default/deployments"
APPLY = "application/apply-patch+yaml"


def deployment(**status: Any) -> dict:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    }
    if status:
        body["status"] = status
    return body


def entry(obj: dict, manager: str, operation: str, subresource: str = "") -> dict:
    (found,) = [e for e in obj["metadata"]["managedFields"]
                if e["manager"] == manager and e["operation"] == operation
                and e.get("subresource", "") == subresource]
    return found


async def apply_status(api: API, config: dict, manager: str, force: bool = False
                       ) -> tuple[int, Any]:
    query = f"?fieldManager={manager}" + ("&force=true" if force else "")
    return await api.patch(f"{DEPLOYS}/web/status{query}", config, content_type=APPLY)


async def test_apply_to_status_sets_status_only_and_records_a_status_entry(api: API):
    code, created = await api.post(DEPLOYS, deployment())
    assert code == 201, created
    config = deployment(observedGeneration=99)
    config["metadata"]["labels"] = {"ignored": "yes"}
    config["spec"]["replicas"] = 7
    code, applied = await apply_status(api, config, "status-applier")
    assert code == 200, applied
    assert applied["status"]["observedGeneration"] == 99
    assert applied["spec"]["replicas"] == 1 and "labels" not in applied["metadata"]
    mine = entry(applied, "status-applier", "Apply", "status")
    assert mine["apiVersion"] == "apps/v1" and mine["fieldsType"] == "FieldsV1"
    assert mine["fieldsV1"] == {"f:status": {"f:observedGeneration": {}}}
    assert list(mine) == ["manager", "operation", "apiVersion", "time", "fieldsType",
                          "fieldsV1", "subresource"]
    code, stored = await api.get(f"{DEPLOYS}/web")
    assert stored["metadata"]["managedFields"] == applied["metadata"]["managedFields"]


async def test_status_apply_conflicts_with_a_status_updater_until_forced(api: API):
    await api.post(DEPLOYS, deployment())
    code, current = await api.get(f"{DEPLOYS}/web/status")
    current["status"] = {"observedGeneration": 1, "replicas": 1}
    code, updated = await api.put(f"{DEPLOYS}/web/status?fieldManager=ctrl", current)
    assert code == 200, updated
    ctrl = entry(updated, "ctrl", "Update", "status")
    assert ctrl["fieldsV1"] == {"f:status": {"f:observedGeneration": {}, "f:replicas": {}}}

    code, status = await apply_status(api, deployment(observedGeneration=99), "applier")
    assert code == 409, status
    assert status["reason"] == "Conflict"
    assert status["message"] == ('Apply failed with 1 conflict: conflict with "ctrl" with '
                                 'subresource "status" using apps/v1: .status.observedGeneration')
    assert status["details"]["causes"] == [{
        "reason": "FieldManagerConflict", "message": 'conflict with "ctrl" with subresource '
        '"status" using apps/v1', "field": ".status.observedGeneration"}]

    code, forced = await apply_status(api, deployment(observedGeneration=99), "applier",
                                      force=True)
    assert code == 200, forced
    assert forced["status"] == {"observedGeneration": 99, "replicas": 1}
    assert entry(forced, "ctrl", "Update", "status")["fieldsV1"] == {
        "f:status": {"f:replicas": {}}}
    assert entry(forced, "applier", "Apply", "status")["fieldsV1"] == {
        "f:status": {"f:observedGeneration": {}}}


async def test_the_same_manager_applying_spec_and_status_has_two_entries(api: API):
    code, made = await api.patch(f"{DEPLOYS}/web?fieldManager=me", deployment(replicas=5),
                                 content_type=APPLY)
    assert code == 201, made
    assert "status" not in entry(made, "me", "Apply")["fieldsV1"]  # main resource: reset
    assert made.get("status", {}).get("replicas") != 5
    code, applied = await apply_status(api, deployment(replicas=5), "me")
    assert code == 200, applied
    assert applied["status"]["replicas"] == 5
    main, status = entry(applied, "me", "Apply"), entry(applied, "me", "Apply", "status")
    assert "subresource" not in main and "f:spec" in main["fieldsV1"]
    assert status["fieldsV1"] == {"f:status": {"f:replicas": {}}}
    # re-applying spec without the status does not prune the status the other entry owns
    code, again = await api.patch(f"{DEPLOYS}/web?fieldManager=me", deployment(),
                                  content_type=APPLY)
    assert code == 200 and again["status"]["replicas"] == 5


async def test_a_status_apply_drops_what_it_no_longer_applies(api: API):
    await api.post(DEPLOYS, deployment())
    condition = {"type": "Progressing", "status": "True", "reason": "R"}
    code, first = await apply_status(api, deployment(replicas=1, conditions=[condition]), "me")
    assert code == 200, first
    assert entry(first, "me", "Apply", "status")["fieldsV1"] == {"f:status": {
        "f:conditions": {'k:{"type":"Progressing"}': {
            ".": {}, "f:reason": {}, "f:status": {}, "f:type": {}}},
        "f:replicas": {}}}
    code, second = await apply_status(api, deployment(replicas=1), "me")
    assert code == 200, second
    assert second["status"] == {"replicas": 1}
    code, third = await apply_status(api, deployment(), "me")
    assert code == 200, third
    assert third["status"] == {}
    assert [e for e in third["metadata"].get("managedFields", [])
            if e.get("subresource")] == []


async def test_patches_and_updates_of_status_record_their_subresource(api: API):
    await api.post(DEPLOYS, deployment())
    code, patched = await api.patch(f"{DEPLOYS}/web/status?fieldManager=patcher",
                                    {"status": {"replicas": 1}, "spec": {"replicas": 9}})
    assert code == 200, patched
    assert patched["spec"]["replicas"] == 1
    assert entry(patched, "patcher", "Update", "status")["fieldsV1"] == {
        "f:status": {"f:replicas": {}}}
    # a main-resource update that leaves status alone keeps the status entry as it is
    patched["spec"]["replicas"] = 2
    code, updated = await api.put(f"{DEPLOYS}/web?fieldManager=editor", patched)
    assert code == 200, updated
    assert entry(updated, "patcher", "Update", "status") == entry(
        patched, "patcher", "Update", "status")
    assert entry(updated, "editor", "Update")["fieldsV1"] == {"f:spec": {"f:replicas": {}}}


async def test_status_apply_to_a_missing_object_is_404(api: API):
    code, status = await apply_status(api, deployment(replicas=1), "me")
    assert code == 404, status
    assert status["reason"] == "NotFound"


async def test_a_status_that_is_not_an_object_is_a_4xx(api: API):
    await api.post(DEPLOYS, deployment())
    for bad in ("x", [1], 3):
        code, status = await apply_status(api, dict(deployment(), status=bad), "me")
        assert 400 <= code < 500, status
        assert status["kind"] == "Status"
