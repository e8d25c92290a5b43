"""events.k8s.io/v1 Events over the core/v1 Events' storage, on the wire (issue 15, item 5).

One stored object, two representations: an event written through either API is read, listed,
watched, patched and deleted through both with the same resourceVersion; field selectors,
validation and discovery as upstream's."""

from __future__ import annotations

import asyncio
from typing import Any

from minikube_py.api.protobuf import PROTOBUF_CONTENT_TYPE, decode_object
from minikube_py.api.protobuf_encode import encode_object
from tests.apiserver.conftest import API

CORE = "/api/v1/namespaces/default/events"
V1 = "/apis/events.k8s.io/v1/namespaces/default/events"
NOW = "2024-05-01T10:00:00.000000Z"


def v1_event(name: str = "web.1", **extra: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name},
        "eventTime": NOW, "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1", "action": "Scheduling", "reason": "Scheduled",
        "regarding": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u-1"},
        "note": "assigned default/web to node-1", "type": "Normal",
    }
    body.update(extra)
    return body


def core_event(name: str = "web.2", **extra: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web"},
        "reason": "Pulled", "message": "image pulled", "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2024-05-01T10:00:00Z", "lastTimestamp": "2024-05-01T10:00:05Z",
        "count": 3,
    }
    body.update(extra)
    return body


async def test_an_events_v1_event_is_a_core_event(api: API) -> None:
    code, created = await api.post(V1, v1_event())
    assert code == 201, created
    rv = created["metadata"]["resourceVersion"]
    assert created["apiVersion"] == "events.k8s.io/v1"
    assert created["regarding"]["name"] == "web" and created["note"].startswith("assigned")
    # Go's encoder writes struct fields always: an empty source and unset timestamps
    assert created["deprecatedSource"] == {} and created["deprecatedFirstTimestamp"] is None
    code, core = await api.get(f"{CORE}/web.1")
    assert code == 200
    assert core["apiVersion"] == "v1" and core["metadata"]["resourceVersion"] == rv
    assert core["involvedObject"] == created["regarding"]
    assert core["message"] == created["note"]
    assert core["reportingComponent"] == "example.com/ctl"
    assert core["eventTime"] == NOW and core["firstTimestamp"] is None
    assert "regarding" not in core and "note" not in core
    assert core["metadata"]["uid"] == created["metadata"]["uid"]


async def test_a_core_event_is_an_events_v1_event(api: API) -> None:
    code, created = await api.post(CORE, core_event())
    assert code == 201, created
    code, seen = await api.get(f"{V1}/web.2")
    assert code == 200, seen
    assert seen["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert seen["kind"] == "Event" and seen["apiVersion"] == "events.k8s.io/v1"
    assert seen["deprecatedSource"] == {"component": "kubelet", "host": "node-1"}
    assert seen["deprecatedCount"] == 3
    assert seen["deprecatedFirstTimestamp"] == "2024-05-01T10:00:00Z"
    assert seen["eventTime"] is None  # no omitempty on events.k8s.io's eventTime
    assert "involvedObject" not in seen and "message" not in seen
    code, listed = await api.get(V1)
    assert code == 200 and listed["kind"] == "EventList"
    assert listed["apiVersion"] == "events.k8s.io/v1"
    assert [i["note"] for i in listed["items"]] == ["image pulled"]


async def test_list_field_selectors_use_events_v1_labels(api: API) -> None:
    await api.post(V1, v1_event("a", regarding={"kind": "Pod", "namespace": "default",
                                                "name": "a"}))
    await api.post(V1, v1_event("b", type="Warning", regarding={
        "kind": "Node", "namespace": "default", "name": "b"}))
    await api.post(CORE, core_event("c"))
    cases = {
        "regarding.name=a": ["a"], "regarding.kind=Node": ["b"], "type=Warning": ["b"],
        "reportingController=example.com/ctl": ["a", "b"],
        # `source` is the source component, else the reporting controller (ToSelectableFields)
        "source=kubelet": ["c"], "source=example.com/ctl": ["a", "b"],
        "metadata.name=c": ["c"], "reason!=Scheduled": ["c"],
    }
    for selector, names in cases.items():
        code, listed = await api.get(f"{V1}?fieldSelector={selector}")
        assert code == 200, (selector, listed)
        assert [i["metadata"]["name"] for i in listed["items"]] == names, selector
    # core's labels are not events.k8s.io's, and the other way round
    code, status = await api.get(f"{V1}?fieldSelector=involvedObject.name%3Da")
    assert code == 400 and status["message"] == "field label not supported: involvedObject.name"
    code, status = await api.get(f"{CORE}?fieldSelector=regarding.name%3Da")
    assert code == 400 and status["message"] == "field label not supported: regarding.name"
    code, listed = await api.get(f"{CORE}?fieldSelector=source%3Dexample.com/ctl")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a", "b"]


async def test_one_watch_two_representations(api: API) -> None:
    core_watch = asyncio.create_task(api.watch_lines(f"{CORE}?watch=true&resourceVersion=1", 3))
    v1_watch = asyncio.create_task(api.watch_lines(
        f"{V1}?watch=true&resourceVersion=1&fieldSelector=regarding.name%3Dweb", 3))
    await asyncio.sleep(0.2)
    await api.post(V1, v1_event("a"))
    await api.post(CORE, core_event("b"))
    code, patched = await api.patch(
        f"{V1}/a", {"series": {"count": 2, "lastObservedTime": "2024-05-01T10:01:00.000000Z"}},
        content_type="application/strategic-merge-patch+json")
    assert code == 200, patched
    core_events, v1_events = await core_watch, await v1_watch
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in core_events] == [
        ("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a")]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in v1_events] == [
        ("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a")]
    assert all(e["object"]["apiVersion"] == "v1" for e in core_events)
    assert all(e["object"]["apiVersion"] == "events.k8s.io/v1" for e in v1_events)
    assert v1_events[1]["object"]["note"] == "image pulled"
    assert v1_events[2]["object"]["series"]["count"] == 2
    assert core_events[2]["object"]["series"]["count"] == 2
    assert [e["object"]["metadata"]["resourceVersion"] for e in core_events] == \
        [e["object"]["metadata"]["resourceVersion"] for e in v1_events]
    # both representations ride the one fan-out of the stored resource
    assert api.server.cachers["events", "events.k8s.io"] is api.server.cachers["events", ""]


async def test_synthetic_added_events_are_converted(api: API) -> None:
    await api.post(CORE, core_event("old"))
    events = await api.watch_lines(f"{V1}?watch=true&timeoutSeconds=1", 1)
    assert events[0]["type"] == "ADDED"
    assert events[0]["object"]["apiVersion"] == "events.k8s.io/v1"
    assert events[0]["object"]["note"] == "image pulled"


async def test_events_v1_validation_is_strict(api: API) -> None:
    body = v1_event("bad", type="Sometimes", deprecatedCount=2)
    del body["eventTime"]
    del body["reportingController"]
    code, status = await api.post(V1, body)
    assert code == 422, status
    assert status["details"] == {
        "name": "bad", "group": "events.k8s.io", "kind": "Event", "causes": status[
            "details"]["causes"]}
    assert status["message"] == (
        'Event.events.k8s.io "bad" is invalid: [eventTime: Required value, type: Invalid '
        'value: "": has invalid value: Sometimes, count: Invalid value: "": needs to be unset]')
    # core/v1 stays lenient (legacy rules only)
    code, _ = await api.post(CORE, core_event("fine", type="Sometimes"))
    assert code == 201
    code, status = await api.post(V1, v1_event("Upper.Case"))
    assert code == 422
    assert status["details"]["causes"][0]["field"] == "metadata.name"
    code, status = await api.post(V1, v1_event("long", note="x" * 1025))
    assert code == 422
    assert "message: Invalid value: \"\": can have at most 1024 characters" in status["message"]
    code, status = await api.post(V1, v1_event("s", series={"count": 1}))
    assert code == 422
    assert status["message"] == (
        'Event.events.k8s.io "s" is invalid: [series.count: Invalid value: "": should be at '
        'least 2, series.lastObservedTime: Required value]')


async def test_events_v1_updates_may_only_touch_the_series(api: API) -> None:
    await api.post(V1, v1_event("e"))
    code, status = await api.patch(f"{V1}/e", {"note": "changed", "action": "Other"})
    assert code == 422, status
    assert status["message"].startswith('Event.events.k8s.io "e" is invalid: [')
    assert "message: Invalid value: \"changed\": field is immutable" in status["message"]
    assert "action: Invalid value: \"Other\": field is immutable" in status["message"]
    code, status = await api.patch(f"{V1}/e", {"series": {"count": 1, "lastObservedTime": NOW}},
                                   content_type="application/strategic-merge-patch+json")
    assert code == 422
    assert "series.count" in status["message"]
    code, got = await api.patch(f"{V1}/e", {"metadata": {"labels": {"seen": "yes"}}})
    assert code == 200 and got["metadata"]["labels"] == {"seen": "yes"}
    # core/v1 updates keep upstream's legacy leniency
    code, got = await api.patch(f"{CORE}/e", {"message": "changed through core"})
    assert code == 200 and got["message"] == "changed through core"
    code, got = await api.get(f"{V1}/e")
    assert got["note"] == "changed through core"


async def test_put_and_delete_through_events_v1(api: API) -> None:
    await api.post(CORE, core_event("p"))
    code, current = await api.get(f"{V1}/p")
    current["metadata"]["labels"] = {"a": "b"}
    code, updated = await api.put(f"{V1}/p", current)
    assert code == 200, updated
    assert updated["deprecatedCount"] == 3 and updated["metadata"]["labels"] == {"a": "b"}
    _, core = await api.get(f"{CORE}/p")
    assert core["count"] == 3 and core["metadata"]["labels"] == {"a": "b"}
    assert core["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]
    code, unchanged = await api.put(f"{V1}/p", updated)
    assert code == 200
    assert unchanged["metadata"]["resourceVersion"] == updated["metadata"]["resourceVersion"]
    code, deleted = await api.delete(f"{V1}/p")
    # events have no ReturnDeletedObject upstream: a Success Status naming the group's resource
    assert code == 200 and deleted["kind"] == "Status" and deleted["status"] == "Success"
    assert deleted["details"] == {"name": "p", "group": "events.k8s.io", "kind": "events",
                                  "uid": updated["metadata"]["uid"]}
    code, status = await api.get(f"{CORE}/p")
    assert code == 404
    code, status = await api.get(f"{V1}/p")
    assert code == 404 and status["message"] == 'events.events.k8s.io "p" not found'


async def test_discovery_lists_events_k8s_io(api: API) -> None:
    code, groups = await api.get("/apis")
    assert code == 200
    names = [g["name"] for g in groups["groups"]]
    assert "events.k8s.io" in names
    assert names.index("apps") < names.index("events.k8s.io")
    code, resources = await api.get("/apis/events.k8s.io/v1")
    assert code == 200
    [events] = resources["resources"]
    assert events["name"] == "events" and events["kind"] == "Event"
    assert events["namespaced"] is True and events["shortNames"] == ["ev"]
    assert sorted(events["verbs"]) == sorted(
        ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"])


async def test_table_rows_are_core_columns(api: API) -> None:
    await api.post(V1, v1_event("t"))
    code, table = await api.get(V1, headers={
        "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert code == 200, table
    columns = [c["name"] for c in table["columnDefinitions"]]
    assert columns[:5] == ["Last Seen", "Type", "Reason", "Object", "Subobject"]
    [row] = table["rows"]
    assert row["cells"][1:4] == ["Normal", "Scheduled", "pod/web"]
    assert row["cells"][6] == "assigned default/web to node-1"


async def test_protobuf_get_and_list(api: API) -> None:
    await api.post(V1, v1_event("pb"))
    async with api.session.get(api.url + f"{V1}/pb",
                               headers={"Accept": PROTOBUF_CONTENT_TYPE}) as resp:
        assert resp.status == 200
        assert resp.content_type == PROTOBUF_CONTENT_TYPE
        seen = decode_object(await resp.read())
    assert seen["apiVersion"] == "events.k8s.io/v1" and seen["note"] == "assigned default/web to node-1"
    # the same key and revision in the other representation: the message cache keeps both
    async with api.session.get(api.url + f"{CORE}/pb",
                               headers={"Accept": PROTOBUF_CONTENT_TYPE}) as resp:
        core = decode_object(await resp.read())
    assert core["apiVersion"] == "v1" and core["message"] == seen["note"]
    assert core["metadata"]["resourceVersion"] == seen["metadata"]["resourceVersion"]
    async with api.session.get(api.url + V1, headers={"Accept": PROTOBUF_CONTENT_TYPE}) as resp:
        assert resp.status == 200
        assert b"EventList" in await resp.read()


async def test_a_protobuf_post_and_series_patch_as_client_go_sends_them(api: API) -> None:
    """client-go's events.Recorder (kube-scheduler, kube-controller-manager) posts protobuf
    and then PATCHes the series with a strategic merge patch."""
    body = encode_object(v1_event("cg.1"))
    code, created = await api.post(V1, raw=body, content_type=PROTOBUF_CONTENT_TYPE)
    assert code == 201, created
    assert created["regarding"]["uid"] == "u-1" and created["eventTime"] == NOW
    code, patched = await api.patch(
        f"{V1}/cg.1", {"series": {"count": 2, "lastObservedTime": "2024-05-01T10:05:00.000000Z"}},
        content_type="application/strategic-merge-patch+json")
    assert code == 200, patched
    _, core = await api.get(f"{CORE}/cg.1")
    assert core["series"] == {"count": 2, "lastObservedTime": "2024-05-01T10:05:00.000000Z"}
    assert int(core["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
