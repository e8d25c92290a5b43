"""A `kopf` operator on built-in resources, run with `kopf.testing.KopfRunner` as kopf's
testing docs show (`['run', '-A', '--standalone', '--verbose', operator.py]`).

The operator (tests/e2e/client_kopf_operator.py) handles labelled ConfigMaps and Pods: its
create/update/delete handlers run, patch annotations, and post core/v1 Events (`kopf.info`,
`kopf.warn`, and its own log lines through settings.posting); deletion goes through kopf's
finalizer. kopf finds the cluster through `KUBECONFIG` (the HTTPS + token kubeconfig), lists
and watches cluster-wide, and needs no CRD in standalone mode.
"""

# ruff: noqa: F811 -- the shared fixtures are imported from client_cluster and named as parameters
from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("kopf", reason="kopf is not installed: pip install -e '.[test]'")
from kopf.testing import KopfRunner

from tests.e2e.client_cluster import (  # noqa: F401
    CALL_TIMEOUT,
    cluster,
    deadline,
    events_for,
    kubeconfig,
    kubeconfig_env,
    namespace,
    send,
    sleeper,
)
from tests.e2e.client_kopf_operator import PREFIX
from tests.e2e.cluster_process import ClusterProcesses, running

OPERATOR = str(Path(__file__).with_name("client_kopf_operator.py"))
LABELS = {"kopf-test": "yes"}


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """`kopf run` configures logging process-wide (a root handler on the runner's captured
    stream, root level DEBUG, asyncio's logger silenced): undo it for the tests after this."""
    root, aio = logging.getLogger(), logging.getLogger("asyncio")
    saved = (root.handlers[:], root.level, aio.handlers[:], aio.propagate)
    try:
        yield
    finally:
        root.handlers[:], aio.handlers[:] = saved[0], saved[2]
        root.setLevel(saved[1])
        aio.propagate = saved[3]


def annotations(cluster: ClusterProcesses, path: str) -> dict[str, str]:
    return cluster.get(path)["metadata"].get("annotations") or {}


@pytest.mark.usefixtures("kubeconfig_env", "restore_logging")
def test_operator_handles_built_in_resources(cluster: ClusterProcesses, namespace: str):
    cm_path = f"/api/v1/namespaces/{namespace}/configmaps/settings"
    pod_path = f"/api/v1/namespaces/{namespace}/pods/worker"
    with KopfRunner(["run", "-A", "--standalone", "--verbose", OPERATOR],
                    timeout=CALL_TIMEOUT) as runner:
        send(cluster, "POST", f"/api/v1/namespaces/{namespace}/configmaps", {
            "metadata": {"name": "settings", "labels": LABELS}, "data": {"a": "1"}})
        cluster.wait(lambda: annotations(cluster, cm_path).get(f"{PREFIX}/created") == "yes",
                     CALL_TIMEOUT, "the create handler's annotation")
        # kopf's delete handler made it add its finalizer
        assert "kopf.zalando.org/KopfFinalizerMarker" in cluster.get(cm_path)["metadata"][
            "finalizers"]

        send(cluster, "PATCH", cm_path, {"data": {"b": "2"}})
        cluster.wait(lambda: annotations(cluster, cm_path).get(f"{PREFIX}/updated") == "a,b",
                     CALL_TIMEOUT, "the update handler's annotation")

        pod = sleeper("worker")
        pod["metadata"]["labels"] = LABELS
        send(cluster, "POST", f"/api/v1/namespaces/{namespace}/pods", pod)
        cluster.wait(lambda: running(cluster.get(pod_path)), CALL_TIMEOUT, "pod running")
        cluster.wait(lambda: annotations(cluster, pod_path).get(f"{PREFIX}/phase") == "Running",
                     CALL_TIMEOUT, "the field handler's annotation")

        assert "kopf.zalando.org/KopfFinalizerMarker" in cluster.get(pod_path)["metadata"][
            "finalizers"]
        send(cluster, "DELETE", pod_path)  # graceful: the kubelet stops it, kopf releases it
        cluster.wait(lambda: pod_path.rsplit("/", 1)[1] not in {
            p["metadata"]["name"] for p in cluster.pods(namespace)}, CALL_TIMEOUT,
            "the Pod gone once kopf removed its finalizer")

        send(cluster, "DELETE", cm_path)
        cluster.wait(lambda: not [c for c in cluster.get(
            f"/api/v1/namespaces/{namespace}/configmaps")["items"]
            if c["metadata"]["name"] == "settings"], CALL_TIMEOUT,
            "the ConfigMap gone once kopf removed its finalizer")

    assert runner.exit_code == 0 and runner.exception is None
    assert "created handler ran for settings" in runner.output
    assert "deleted handler ran for settings" in runner.output
    assert "pod deleted handler ran for worker" in runner.output
    assert "Handler 'updated/data' succeeded." in runner.output
    assert "Failed to post an event" not in runner.output  # every Event was accepted
    assert "Merge-patching finished with inconsistencies" not in runner.output

    cm_events = events_for(cluster, namespace, "settings")
    by_reason = {e["reason"]: e for e in cm_events}
    assert by_reason["Created"]["message"] == "configmap settings has 1 keys"
    assert by_reason["Created"]["type"] == "Normal"
    assert by_reason["Updated"]["message"] == "data {'a': '1'} -> {'a': '1', 'b': '2'}"
    assert by_reason["Deleting"]["type"] == "Warning"
    assert by_reason["Created"]["source"]["component"] == "kopf"
    assert by_reason["Created"]["involvedObject"]["kind"] == "ConfigMap"
    assert by_reason["Created"]["involvedObject"]["uid"]
    # settings.posting: kopf's own INFO log lines are posted as "Logging" events
    assert any(e["reason"] == "Logging" and "succeeded" in e["message"] for e in cm_events)
    pod_events = {(e["reason"], e["message"]) for e in events_for(cluster, namespace, "worker")}
    assert any(r == "Phase" and m.endswith("-> Running") for r, m in pod_events)
    assert ("Released", "pod worker released by the operator") in pod_events
    assert "Killing" in {reason for reason, _ in pod_events}  # the kubelet's, before kopf's
