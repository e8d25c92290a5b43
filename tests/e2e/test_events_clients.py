"""events.k8s.io/v1 with clients nobody here wrote: the official `kubernetes` client and kubectl.

The official client's EventsV1Api does create/read/list/patch (a series update, as client-go's
new event recorder sends it)/delete/watch, and CoreV1Api reads the same stored event; kubectl
prints events.k8s.io events with core's columns, as YAML, and through `kubectl events`.
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
import yaml
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from tests.apiserver_thread import ServerThread

#: an old and the newest kubectl (`kubectl events` exists since 1.26)
KUBECTLS = sorted(glob.glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*"),
                  key=lambda p: int(p.rsplit(".", 1)[1]))
KUBECTLS = KUBECTLS[:1] + KUBECTLS[-1:] if len(KUBECTLS) > 1 else KUBECTLS
#: with microseconds: the client sends `isoformat()`, and a MicroTime without its six digits is
#: a decode error upstream (RFC3339Micro), which kubectl's parser shares
T0 = datetime.datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=datetime.UTC)


def new_event(namespace: str, name: str, pod: str = "web") -> client.EventsV1Event:
    """What client-go's events.Recorder posts (tools/events/event_recorder.go makeEvent)."""
    return client.EventsV1Event(
        metadata=client.V1ObjectMeta(name=name, namespace=namespace),
        event_time=T0, reporting_controller="example.com/scheduler",
        reporting_instance="scheduler-1", action="Binding", reason="Scheduled", type="Normal",
        regarding=client.V1ObjectReference(kind="Pod", namespace=namespace, name=pod,
                                           api_version="v1", uid="0000-1"),
        note=f"Successfully assigned {namespace}/{pod} to node-1")


def test_events_v1_api_round_trip(api: client.ApiClient, namespace: str) -> None:
    events = client.EventsV1Api(api)
    core = client.CoreV1Api(api)
    created = events.create_namespaced_event(namespace, new_event(namespace, "web.1"))
    assert created.regarding.name == "web" and created.event_time == T0
    assert created.deprecated_source is not None and created.deprecated_count is None
    read = events.read_namespaced_event("web.1", namespace)
    assert read.metadata.resource_version == created.metadata.resource_version
    as_core = core.read_namespaced_event("web.1", namespace)
    assert as_core.involved_object.name == "web"
    assert as_core.message == created.note
    assert as_core.reporting_component == "example.com/scheduler"
    assert as_core.metadata.resource_version == created.metadata.resource_version
    listed = events.list_namespaced_event(namespace, field_selector="regarding.name=web")
    assert [e.metadata.name for e in listed.items] == ["web.1"]
    assert events.list_namespaced_event(
        namespace, field_selector="regarding.name=other").items == []
    # the series update client-go's recorder sends for a repeated event (a strategic merge
    # patch computed between the event without and with its series)
    later = T0 + datetime.timedelta(minutes=1)
    patched = events.patch_namespaced_event("web.1", namespace, {
        "series": {"count": 2, "lastObservedTime": later.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}})
    assert patched.series.count == 2 and patched.series.last_observed_time == later
    assert core.read_namespaced_event("web.1", namespace).series.count == 2
    with pytest.raises(ApiException) as info:
        events.patch_namespaced_event("web.1", namespace, {"note": "rewritten"})
    assert info.value.status == 422
    assert 'message: Invalid value: "rewritten": field is immutable' in \
        json.loads(info.value.body)["message"]
    events.delete_namespaced_event("web.1", namespace)
    with pytest.raises(ApiException) as info:
        core.read_namespaced_event("web.1", namespace)
    assert info.value.status == 404


def test_events_v1_watch_sees_core_writes(api: client.ApiClient, namespace: str) -> None:
    events = client.EventsV1Api(api)
    core = client.CoreV1Api(api)
    rv = events.list_namespaced_event(namespace).metadata.resource_version
    core.create_namespaced_event(namespace, client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="pulled.1"), event_time=T0,
        involved_object=client.V1ObjectReference(kind="Pod", namespace=namespace, name="web"),
        reason="Pulled", message="image pulled", type="Normal", action="Pulling",
        reporting_component="kubelet", reporting_instance="node-1"))
    seen = []
    for item in watch.Watch().stream(events.list_namespaced_event, namespace,
                                     resource_version=rv, timeout_seconds=5):
        seen.append((item["type"], item["object"]))
        break
    [(kind, event)] = seen
    assert kind == "ADDED" and isinstance(event, client.EventsV1Event)
    assert event.note == "image pulled" and event.reporting_controller == "kubelet"
    assert event.regarding.name == "web"


def test_events_v1_strict_validation(api: client.ApiClient, namespace: str) -> None:
    events = client.EventsV1Api(api)
    body = new_event(namespace, "bad")
    body.type = "Sometimes"
    with pytest.raises(ApiException) as info:
        events.create_namespaced_event(namespace, body)
    status = json.loads(info.value.body)
    assert info.value.status == 422
    assert status["message"] == ('Event.events.k8s.io "bad" is invalid: type: Invalid value: '
                                 '"": has invalid value: Sometimes')
    assert status["details"]["group"] == "events.k8s.io"


@pytest.fixture(scope="module", params=KUBECTLS, ids=[p.rsplit("kubectl.", 1)[1] for p in KUBECTLS])
def kubectl(request: pytest.FixtureRequest, server: ServerThread, api: client.ApiClient,
            tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("home")
    ns = "ev-" + request.param.rsplit(".", 1)[1]
    client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    client.EventsV1Api(api).create_namespaced_event(ns, new_event(ns, "web.1"))

    def run(*args: str) -> str:
        result = subprocess.run(
            [request.param, "-s", server.url, "--cache-dir", str(home / "cache"), "-n", ns, *args],
            capture_output=True, text=True, timeout=60, check=False,
            env={"HOME": str(home), "PATH": os.environ.get("PATH", "")})
        assert result.returncode == 0, (args, result.stdout, result.stderr)
        return result.stdout

    return run


pytestmark_kubectl = pytest.mark.skipif(not KUBECTLS, reason="no kubectl binary on this machine "
                                        "(/usr/lib/google-cloud-sdk/bin/kubectl.1.*)")


@pytestmark_kubectl
def test_kubectl_get_events_in_both_groups(kubectl) -> None:
    core = kubectl("get", "events")
    v1 = kubectl("get", "events.v1.events.k8s.io")
    for out in (core, v1):
        header, row = out.strip().splitlines()
        assert header.split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
        assert row.split()[2:5] == ["Scheduled", "pod/web", "Successfully"]


@pytestmark_kubectl
def test_kubectl_get_events_k8s_io_as_yaml(kubectl) -> None:
    doc = yaml.safe_load(kubectl("get", "events.v1.events.k8s.io", "web.1", "-o", "yaml"))
    assert doc["apiVersion"] == "events.k8s.io/v1" and doc["kind"] == "Event"
    assert doc["regarding"]["name"] == "web" and doc["reportingController"] == "example.com/scheduler"
    assert doc["note"].startswith("Successfully assigned")
    core = yaml.safe_load(kubectl("get", "events", "web.1", "-o", "yaml"))
    assert core["apiVersion"] == "v1" and core["involvedObject"] == doc["regarding"]
    assert core["metadata"]["resourceVersion"] == doc["metadata"]["resourceVersion"]


@pytestmark_kubectl
def test_kubectl_events(kubectl) -> None:
    out = kubectl("events", "--for", "pod/web")
    header, row = out.strip().splitlines()
    assert header.split()[:4] == ["LAST", "SEEN", "TYPE", "REASON"]
    assert "Scheduled" in row and "Pod/web" in row
