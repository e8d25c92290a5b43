"""The official `kubernetes` client's AppsV1Api on DaemonSets, StatefulSets and
ControllerRevisions, against our API server over a real socket (no controllers run here: this
is the API — defaults, validation Status, the scale and status subresources, typed decoding).
"""

from __future__ import annotations

import json

import pytest

kubernetes = pytest.importorskip(
    "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")
from kubernetes import client
from kubernetes.client.rest import ApiException


def template(app: str) -> client.V1PodTemplateSpec:
    return client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels={"app": app}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]))


def daemon_set(name: str) -> client.V1DaemonSet:
    return client.V1DaemonSet(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1DaemonSetSpec(selector=client.V1LabelSelector(match_labels={"app": name}),
                                    template=template(name)))


def stateful_set(name: str) -> client.V1StatefulSet:
    claim = client.V1PersistentVolumeClaim(
        metadata=client.V1ObjectMeta(name="data"),
        spec=client.V1PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"],
            resources=client.V1VolumeResourceRequirements(requests={"storage": "1Gi"})))
    return client.V1StatefulSet(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1StatefulSetSpec(
            service_name=name, replicas=2,
            selector=client.V1LabelSelector(match_labels={"app": name}),
            template=template(name), volume_claim_templates=[claim]))


def test_daemon_set_defaults_status_and_validation(api: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api)
    created = apps.create_namespaced_daemon_set(namespace, daemon_set("logs"))
    strategy = created.spec.update_strategy
    assert (strategy.type, strategy.rolling_update.max_unavailable,
            strategy.rolling_update.max_surge) == ("RollingUpdate", 1, 0)
    assert created.spec.revision_history_limit == 10
    assert created.metadata.annotations["deprecated.daemonset.template.generation"] == "1"
    assert created.status.desired_number_scheduled == 0
    # a template change bumps the template generation the controller labels pods with
    created.spec.template.spec.containers[0].image = "nginx:2"
    updated = apps.replace_namespaced_daemon_set("logs", namespace, created)
    assert updated.metadata.annotations["deprecated.daemonset.template.generation"] == "2"
    assert updated.metadata.generation == 2
    status = apps.read_namespaced_daemon_set_status("logs", namespace)
    assert status.status.number_misscheduled == 0
    listed = apps.list_namespaced_daemon_set(namespace)
    assert [d.metadata.name for d in listed.items] == ["logs"]

    bad = daemon_set("bad")
    bad.spec.update_strategy = client.V1DaemonSetUpdateStrategy(
        type="RollingUpdate", rolling_update=client.V1RollingUpdateDaemonSet(
            max_unavailable=1, max_surge=1))
    with pytest.raises(ApiException) as info:
        apps.create_namespaced_daemon_set(namespace, bad)
    assert info.value.status == 422
    assert json.loads(info.value.body)["message"] == (
        'DaemonSet.apps "bad" is invalid: spec.updateStrategy.rollingUpdate.maxSurge: Invalid '
        'value: 1: may not be set when maxUnavailable is non-zero')


def test_stateful_set_defaults_scale_and_immutable_fields(api: client.ApiClient,
                                                          namespace: str) -> None:
    apps = client.AppsV1Api(api)
    created = apps.create_namespaced_stateful_set(namespace, stateful_set("db"))
    spec = created.spec
    assert spec.pod_management_policy == "OrderedReady"
    assert spec.update_strategy.rolling_update.partition == 0
    retention = spec.persistent_volume_claim_retention_policy
    assert (retention.when_deleted, retention.when_scaled) == ("Retain", "Retain")
    assert spec.volume_claim_templates[0].spec.volume_mode == "Filesystem"

    scale = apps.read_namespaced_stateful_set_scale("db", namespace)
    assert (scale.spec.replicas, scale.status.selector) == (2, "app=db")
    apps.patch_namespaced_stateful_set_scale("db", namespace, {"spec": {"replicas": 5}})
    assert apps.read_namespaced_stateful_set("db", namespace).spec.replicas == 5

    with pytest.raises(ApiException) as info:
        apps.patch_namespaced_stateful_set("db", namespace, {"spec": {"serviceName": "other"}})
    assert info.value.status == 422
    assert "updates to statefulset spec for fields other than 'replicas'" in json.loads(
        info.value.body)["message"]


def test_controller_revisions_round_trip(api: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api)
    revision = client.V1ControllerRevision(
        metadata=client.V1ObjectMeta(name="db-abc"), revision=1,
        data={"spec": {"template": {"$patch": "replace"}}})
    created = apps.create_namespaced_controller_revision(namespace, revision)
    assert created.revision == 1 and created.data == {"spec": {"template": {"$patch": "replace"}}}
    created.data = {"spec": {}}
    with pytest.raises(ApiException) as info:
        apps.replace_namespaced_controller_revision("db-abc", namespace, created)
    assert info.value.status == 422 and "data: Invalid value" in json.loads(
        info.value.body)["message"]
    listed = apps.list_namespaced_controller_revision(namespace)
    assert [r.revision for r in listed.items] == [1]
