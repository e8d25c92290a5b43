"""metadata.managedFields sent by clients, through a real server: junk is never stored, whatever
the headers (no User-Agent, no fieldManager), valid entries are kept as upstream keeps them, and
hostile FieldsV1 trees get a 2xx without the junk, never a 500.

Upstream: the field manager decodes the managedFields of every create/update/patch (falling back
to the live object's when they do not decode) and re-encodes them; a write naming no manager is
recorded as "unknown"; ValidateManagedFields then judges what decoded (422 Invalid).
"""

from __future__ import annotations

from typing import Any

import orjson

from tests.apiserver.conftest import API, pod

PODS = "/api/v1/namespaces/default/pods"
JUNK = [{"manager": "junk-writer", "operation": "Bogus", "apiVersion": "v1",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]


async def bare(api: API, method: str, path: str, body: Any,
               content_type: str = "application/json") -> tuple[int, Any]:
    """A request with no User-Agent header at all (aiohttp adds one unless told not to)."""
    async with api.session.request(method, api.url + path, data=orjson.dumps(body),
                                   headers={"Content-Type": content_type},
                                   skip_auto_headers=("User-Agent",)) as resp:
        return resp.status, orjson.loads(await resp.read())


def managers(obj: dict) -> list[tuple[str, str]]:
    return [(e.get("manager", ""), e["operation"]) for e in obj["metadata"]["managedFields"]]


async def test_create_without_user_agent_drops_junk_and_records_unknown(api: API):
    body = pod("p")
    body["metadata"]["managedFields"] = JUNK
    code, created = await bare(api, "POST", PODS, body)
    assert code == 201, created
    assert managers(created) == [("unknown", "Update")]
    _, stored = await api.get(f"{PODS}/p")
    assert stored["metadata"]["managedFields"] == created["metadata"]["managedFields"]
    assert "junk-writer" not in orjson.dumps(stored).decode()


async def test_update_and_patch_without_user_agent_keep_the_live_entries(api: API):
    code, created = await api.post(PODS, pod("p"))
    assert code == 201 and managers(created) == [("Python", "Update")]
    created["metadata"]["managedFields"] = JUNK
    created["metadata"]["labels"] = {"app": "p", "x": "1"}
    code, updated = await bare(api, "PUT", f"{PODS}/p", created)
    assert code == 200, updated
    assert managers(updated) == [("Python", "Update"), ("unknown", "Update")]
    unknown = updated["metadata"]["managedFields"][1]
    assert unknown["fieldsV1"] == {"f:metadata": {"f:labels": {"f:x": {}}}}
    patch = {"metadata": {"managedFields": JUNK, "labels": {"y": "2"}}}
    code, patched = await bare(api, "PATCH", f"{PODS}/p", patch, "application/merge-patch+json")
    assert code == 200, patched
    assert "junk-writer" not in orjson.dumps(patched).decode()
    assert managers(patched) == [("Python", "Update"), ("unknown", "Update")]


async def test_valid_entries_a_client_edits_are_kept(api: API):
    """Upstream lets a client rewrite managedFields directly: an entry that decodes is stored
    (re-encoded), not replaced by the live object's."""
    _, created = await api.post(PODS, pod("p"))
    entry = dict(created["metadata"]["managedFields"][0], manager="someone-else",
                 time="2024-05-01T12:00:00+02:00", extra="dropped")
    created["metadata"]["managedFields"] = [entry]
    code, updated = await bare(api, "PUT", f"{PODS}/p", created)
    assert code == 200, updated
    (stored,) = updated["metadata"]["managedFields"]
    assert stored["manager"] == "someone-else" and stored["time"] == "2024-05-01T10:00:00Z"
    assert "extra" not in stored and stored["fieldsV1"] == entry["fieldsV1"]
    created = updated
    created["metadata"]["managedFields"] = []  # a reset; the writer still records its change
    created["metadata"]["labels"] = {"app": "p", "z": "3"}
    code, reset = await bare(api, "PUT", f"{PODS}/p", created)
    assert code == 200 and managers(reset) == [("unknown", "Update")]
    assert reset["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:metadata": {"f:labels": {"f:z": {}}}}


async def test_an_entry_that_decodes_but_is_invalid_is_422(api: API):
    body = pod("p")
    body["metadata"]["managedFields"] = [{
        "manager": "m" * 129, "operation": "Update", "apiVersion": "v1",
        "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {}}}}]
    code, status = await bare(api, "POST", PODS, body)
    assert code == 422 and status["reason"] == "Invalid"
    assert status["message"] == (
        'Pod "p" is invalid: metadata.managedFields[0].manager: Too long: may not be more than '
        "128 bytes")


async def test_a_long_user_agent_is_cut_as_upstream_does(api: API):
    """prefixFromUserAgent: the product, unprintable characters dropped, at most 128 bytes;
    it used to be recorded whole (and would now fail validation)."""
    async with api.session.post(api.url + PODS, data=orjson.dumps(pod("p")),
                                headers={"Content-Type": "application/json",
                                         "User-Agent": "x" * 300 + "/1.0"}) as resp:
        assert resp.status == 201
        created = await resp.json()
    assert managers(created) == [("x" * 128, "Update")]


def _chain(depth: int, leaves: dict) -> dict:
    tree = leaves
    for level in range(depth):
        tree = {f"f:l{level}": tree}
    return tree


async def test_hostile_fieldsv1_is_never_stored_nor_a_500(api: API):
    _, created = await api.post(PODS, pod("p"))
    live_entries = created["metadata"]["managedFields"]
    trees = [
        _chain(90, {"bogus-key": {}}),
        _chain(90, {"k:{not json": {}}),
        _chain(90, {f"f:leaf{i}": {} for i in range(15000)}),  # 1.35 M path elements
        _chain(90, {"f:x": "not an object"}),
    ]
    for tree in trees:
        entry = {"manager": "hostile", "operation": "Update", "apiVersion": "v1",
                 "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": tree}}
        created["metadata"]["managedFields"] = [entry]
        code, updated = await bare(api, "PUT", f"{PODS}/p", created)
        assert code == 200, updated
        assert updated["metadata"]["managedFields"] == live_entries
        assert "hostile" not in orjson.dumps(updated).decode()
        created = updated


async def test_unknown_element_types_are_dropped_not_refused(api: API):
    """`x:...` keys may be a future path element type: upstream skips them."""
    _, created = await api.post(PODS, pod("p"))
    entry = dict(created["metadata"]["managedFields"][0], manager="other")
    entry["fieldsV1"] = {"f:metadata": {"f:annotations": {"x:future": {"f:y": {}}}}}
    created["metadata"]["managedFields"] = [entry]
    code, updated = await api.put(f"{PODS}/p", created)
    assert code == 200, updated
    (stored,) = updated["metadata"]["managedFields"]
    assert stored["fieldsV1"] == {"f:metadata": {"f:annotations": {}}}


async def test_a_status_write_cannot_rewrite_managed_fields(api: API):
    _, created = await api.post(PODS, pod("p"))
    entry = dict(created["metadata"]["managedFields"][0], manager="forged")
    created["metadata"]["managedFields"] = [entry]
    created["status"]["phase"] = "Running"
    code, updated = await bare(api, "PUT", f"{PODS}/p/status", created)
    assert code == 200, updated
    # the forged entry is dropped; the status writer's own entry is recorded beside the live one
    assert managers(updated) == [("Python", "Update"), ("unknown", "Update")]
    status_entry = updated["metadata"]["managedFields"][1]
    assert status_entry["subresource"] == "status"
    assert status_entry["fieldsV1"] == {"f:status": {"f:phase": {}}}
