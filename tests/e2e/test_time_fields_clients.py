"""Time and MicroTime fields from the official Python client, read back by kubectl (issue 15).

The official client sends a datetime as `isoformat()`: `+02:00` offsets, and no fraction at all
when the microseconds are 0. Upstream re-encodes each metav1.Time in UTC to the second and each
MicroTime in UTC with six digits, and refuses a MicroTime without them (RFC3339Micro), so what
kubectl (Go) reads back always parses. Fixtures (server, api, namespace): tests/e2e/conftest.py.
"""

from __future__ import annotations

import datetime
import glob
import json
import os
import subprocess

import pytest

kubernetes = pytest.importorskip(
    "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.apiserver_thread import ServerThread

PLUS_TWO = datetime.timezone(datetime.timedelta(hours=2))
#: the newest kubectl here (`kubectl events` exists since 1.26)
KUBECTL = max(glob.glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*"),
              key=lambda p: int(p.rsplit(".", 1)[1]), default=None)


def core_event(namespace: str, name: str, **times: datetime.datetime) -> client.CoreV1Event:
    return client.CoreV1Event(
        metadata=client.V1ObjectMeta(name=name, namespace=namespace),
        involved_object=client.V1ObjectReference(kind="Pod", namespace=namespace, name="web",
                                                   api_version="v1", uid="0000-1"),
        reason="Pulled", message="image pulled", type="Normal", count=1,
        source=client.V1EventSource(component="kubelet", host="node-1"),
        reporting_component="kubelet", reporting_instance="node-1", action="Pulling", **times)


def raw(api: client.ApiClient, namespace: str, name: str) -> dict:
    response = client.CoreV1Api(api).read_namespaced_event(name, namespace, _preload_content=False)
    return json.loads(response.data)


def test_offsets_are_stored_in_utc(api: client.ApiClient, namespace: str) -> None:
    client.CoreV1Api(api).create_namespaced_event(namespace, core_event(
        namespace, "web.1",
        first_timestamp=datetime.datetime(2024, 5, 1, 12, 0, 0, tzinfo=PLUS_TWO),
        last_timestamp=datetime.datetime(2024, 5, 1, 12, 0, 5, 250000, tzinfo=PLUS_TWO),
        event_time=datetime.datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=PLUS_TWO)))
    stored = raw(api, namespace, "web.1")
    assert stored["firstTimestamp"] == "2024-05-01T10:00:00Z"
    assert stored["lastTimestamp"] == "2024-05-01T10:00:05Z"  # a Time keeps no fraction
    assert stored["eventTime"] == "2024-05-01T10:00:00.123456Z"
    read = client.CoreV1Api(api).read_namespaced_event("web.1", namespace)
    assert read.first_timestamp == datetime.datetime(2024, 5, 1, 10, 0, tzinfo=datetime.UTC)


def test_event_time_without_microseconds_is_refused_as_upstream(api: client.ApiClient,
                                                                 namespace: str) -> None:
    """isoformat() of a datetime whose microseconds are 0 has no fraction: not RFC3339Micro."""
    event = client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="web.2", namespace=namespace),
        event_time=datetime.datetime(2024, 5, 1, 10, 0, 0, tzinfo=datetime.UTC),
        reporting_controller="example.com/ctl", reporting_instance="ctl-1", action="Binding",
        reason="Scheduled", type="Normal", note="assigned",
        regarding=client.V1ObjectReference(kind="Pod", namespace=namespace, name="web"))
    with pytest.raises(ApiException) as caught:
        client.EventsV1Api(api).create_namespaced_event(namespace, event)
    assert caught.value.status == 400
    assert json.loads(caught.value.body)["message"] == (
        'Event in version "v1" cannot be handled as a Event: parsing time '
        '"2024-05-01T10:00:00+00:00" as "2006-01-02T15:04:05.000000Z07:00": cannot parse '
        '"+00:00" as ".000000"')


@pytest.mark.skipif(KUBECTL is None, reason="no kubectl binary on this machine "
                                           "(/usr/lib/google-cloud-sdk/bin/kubectl.1.*)")
def test_kubectl_reads_the_events_back(server: ServerThread, api: client.ApiClient,
                                       namespace: str, tmp_path) -> None:
    client.CoreV1Api(api).create_namespaced_event(namespace, core_event(
        namespace, "web.3",
        first_timestamp=datetime.datetime(2024, 5, 1, 12, 0, 0, tzinfo=PLUS_TWO),
        last_timestamp=datetime.datetime(2024, 5, 1, 12, 0, 0, tzinfo=PLUS_TWO),
        event_time=datetime.datetime(2024, 5, 1, 12, 0, 0, 500000, tzinfo=PLUS_TWO)))

    def kubectl(*args: str) -> str:
        result = subprocess.run(
            [KUBECTL, "-s", server.url, "--cache-dir", str(tmp_path / "cache"), "-n", namespace,
             *args], capture_output=True, text=True, timeout=60, check=False,
            env={"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")})
        assert result.returncode == 0, (args, result.stdout, result.stderr)
        return result.stdout

    items = json.loads(kubectl("get", "events.v1.events.k8s.io", "-o", "json"))["items"]
    assert [(e["eventTime"], e["deprecatedFirstTimestamp"]) for e in items] == [
        ("2024-05-01T10:00:00.500000Z", "2024-05-01T10:00:00Z")]
    header, row = kubectl("events", "--for", "pod/web").strip().splitlines()
    assert header.split()[:4] == ["LAST", "SEEN", "TYPE", "REASON"]
    assert "Pulled" in row and "Pod/web" in row
