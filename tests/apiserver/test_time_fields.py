"""metav1.Time and MicroTime fields on the wire (issue 15, wire fidelity).

Upstream decodes every time field of a write into Go's time.Time and encodes it back: RFC 3339
in UTC, Time to the second, MicroTime with six digits; a value it cannot parse is the decode
error (400 on create/update, 422 on a patch's result). Here over a real socket."""

from __future__ import annotations

from typing import Any

import orjson

from tests.apiserver.conftest import API, pod

PODS = "/api/v1/namespaces/default/pods"
EVENTS = "/api/v1/namespaces/default/events"
V1_EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"
LAYOUT = '"2006-01-02T15:04:05Z07:00"'
MICRO = '"2006-01-02T15:04:05.000000Z07:00"'
#: a core/v1 Event with an eventTime must say who reported it (upstream's event validation)
REPORTED = {"reportingComponent": "example.com/ctl", "reportingInstance": "ctl-1",
            "action": "Pulling"}


def core_event(name: str, **extra: Any) -> dict[str, Any]:
    body = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web"},
            "reason": "Pulled", "message": "image pulled", "type": "Normal",
            "source": {"component": "kubelet", "host": "node-1"}}
    body.update(extra)
    return body


def v1_event(name: str, event_time: str) -> dict[str, Any]:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "eventTime": event_time, "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-1", "action": "Pulling", "reason": "Pulled",
            "regarding": {"kind": "Pod", "namespace": "default", "name": "web"},
            "note": "pulled", "type": "Normal"}


async def test_status_update_condition_time_with_offset_is_stored_in_utc(api: API) -> None:
    status, created = await api.post(PODS, pod("web"))
    assert status == 201, created
    created["status"]["conditions"] = [
        {"type": "Ready", "status": "False", "lastProbeTime": "0001-01-01T00:00:00Z",
         "lastTransitionTime": "2024-05-01T12:00:00+02:00"}]
    created["status"]["startTime"] = "2024-05-01T10:00:00.750+00:00"
    status, updated = await api.put(f"{PODS}/web/status", created)
    assert status == 200, updated
    status, got = await api.get(f"{PODS}/web")
    condition = got["status"]["conditions"][0]
    assert condition["lastTransitionTime"] == "2024-05-01T10:00:00Z"
    assert condition["lastProbeTime"] is None  # Go's zero time is written as null
    assert got["status"]["startTime"] == "2024-05-01T10:00:00Z"  # truncated to the second
    assert updated["status"] == got["status"]


async def test_create_with_unparsable_time_is_upstreams_decode_error(api: API) -> None:
    body = pod("web")
    body["status"] = {"startTime": "yesterday"}
    status, answer = await api.post(PODS, body)
    assert status == 400
    assert answer["reason"] == "BadRequest"
    assert answer["message"] == (
        f'Pod in version "v1" cannot be handled as a Pod: parsing time "yesterday" as {LAYOUT}: '
        f'cannot parse "yesterday" as "2006"')
    status, _ = await api.get(f"{PODS}/web")
    assert status == 404


async def test_a_time_that_is_a_number_is_refused(api: API) -> None:
    status, answer = await api.post(EVENTS, core_event("e.num", firstTimestamp=1714557600))
    assert status == 400
    assert answer["message"] == ('Event in version "v1" cannot be handled as a Event: json: '
                                 'cannot unmarshal number into Go value of type string')


async def test_core_event_times(api: API) -> None:
    status, created = await api.post(EVENTS, core_event(
        "e.1", firstTimestamp="2024-05-01T12:00:00+02:00", lastTimestamp="2024-05-01T10:00:05Z",
        eventTime="2024-05-01T12:00:00.123456+02:00", **REPORTED))
    assert status == 201, created
    assert created["firstTimestamp"] == "2024-05-01T10:00:00Z"
    assert created["lastTimestamp"] == "2024-05-01T10:00:05Z"
    assert created["eventTime"] == "2024-05-01T10:00:00.123456Z"


async def test_micro_time_without_six_digits_is_refused(api: API) -> None:
    """The Python client's isoformat() of a datetime whose microseconds are 0."""
    status, answer = await api.post(EVENTS, core_event("e.2", eventTime="2024-05-01T10:00:00+00:00",
                                                    **REPORTED))
    assert status == 400
    assert answer["message"] == (
        f'Event in version "v1" cannot be handled as a Event: parsing time '
        f'"2024-05-01T10:00:00+00:00" as {MICRO}: cannot parse "+00:00" as ".000000"')
    status, answer = await api.post(V1_EVENTS, v1_event("e.3", "2024-05-01T10:00:00Z"))
    assert status == 400
    assert answer["message"] == (
        f'Event in version "v1" cannot be handled as a Event: parsing time '
        f'"2024-05-01T10:00:00Z" as {MICRO}: cannot parse "Z" as ".000000"')


async def test_events_v1_event_time_read_back_in_utc_through_both_groups(api: API) -> None:
    status, created = await api.post(V1_EVENTS, v1_event("e.4", "2024-05-01T12:00:00.500000+02:00"))
    assert status == 201, created
    assert created["eventTime"] == "2024-05-01T10:00:00.500000Z"
    status, core = await api.get(f"{EVENTS}/e.4")
    assert core["eventTime"] == "2024-05-01T10:00:00.500000Z"


async def test_merge_patch_result_with_bad_time_is_422_on_patch(api: API) -> None:
    status, _ = await api.post(EVENTS, core_event("e.5", firstTimestamp="2024-05-01T10:00:00Z"))
    assert status == 201
    status, answer = await api.patch(f"{EVENTS}/e.5", {"lastTimestamp": "2024-05-01"})
    assert status == 422, answer
    assert answer["reason"] == "Invalid"
    detail = (f'parsing time "2024-05-01" as {LAYOUT}: cannot parse "" as "T"')
    cause = answer["details"]["causes"][0]
    assert cause["field"] == "patch" and cause["reason"] == "FieldValueInvalid"
    shown = orjson.loads(cause["message"][len("Invalid value: "):-len(": " + detail)])
    assert orjson.loads(shown)["lastTimestamp"] == "2024-05-01"  # the patched object, as JSON
    assert answer["message"].startswith(' "" is invalid: patch: Invalid value: "{')
    assert answer["message"].endswith(detail)


async def test_strategic_patch_with_bad_time_shows_the_patch_as_go_prints_it(api: API) -> None:
    status, _ = await api.post(EVENTS, core_event("e.6"))
    assert status == 201
    status, answer = await api.patch(f"{EVENTS}/e.6", {"firstTimestamp": "2024-05-01T10:00:00"},
                                     content_type="application/strategic-merge-patch+json")
    assert status == 422, answer
    assert answer["message"] == (
        ' "" is invalid: patch: Invalid value: "map[firstTimestamp:2024-05-01T10:00:00]": '
        f'parsing time "2024-05-01T10:00:00" as {LAYOUT}: cannot parse "" as "Z07:00"')


async def test_json_patch_result_is_reencoded(api: API) -> None:
    status, _ = await api.post(EVENTS, core_event("e.7"))
    assert status == 201
    ops = [{"op": "add", "path": "/lastTimestamp", "value": "2024-05-01T10:00:00-01:30"}]
    status, patched = await api.patch(f"{EVENTS}/e.7", ops,
                                      content_type="application/json-patch+json")
    assert status == 200, patched
    assert patched["lastTimestamp"] == "2024-05-01T11:30:00Z"


async def test_apply_result_is_reencoded(api: API) -> None:
    applied = core_event("e.8", firstTimestamp="2024-05-01T10:00:00.9+00:00")
    status, answer = await api.patch(f"{EVENTS}/e.8?fieldManager=test", applied,
                                     content_type="application/apply-patch+yaml")
    assert status == 201, answer
    assert answer["firstTimestamp"] == "2024-05-01T10:00:00Z"
    applied["firstTimestamp"] = "soon"
    status, answer = await api.patch(f"{EVENTS}/e.8?fieldManager=test", applied,
                                     content_type="application/apply-patch+yaml")
    assert status == 400, answer
    assert answer["message"].endswith('parsing time "soon" as ' + LAYOUT + ': cannot parse '
                                      '"soon" as "2006"')
