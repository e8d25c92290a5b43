"""kopf's walkthrough operator (docs.kopf.dev, "Walkthrough"), as a user would write it.

An `EphemeralVolumeClaim` (kopf.dev/v1, crd.yaml) gets a child `PersistentVolumeClaim`
(pvc.yaml) made with the official `kubernetes` client and adopted with `kopf.adopt`, so the
garbage collector deletes it with its parent. What the create handler returns, kopf stores in
the object's `status.create_fn`; the update handler resizes the child, the field handler
keeps its labels in sync through kopf's diffs, and the delete handler (which makes kopf put
its finalizer on every claim) runs before the claim goes away. Every step posts a core/v1
Event with `kopf.info`/`kopf.event`, so `kubectl get events` tells the story.

Apply crd.yaml and peering.yaml, then peering-default.yaml and pv.yaml (a volume of class
`standard` for the claims to bind to), and run it with peering:

    kopf run --verbose --peering=default -A ephemeral.py

Used by tests/e2e/test_kopf_operator.py; docs/kopf-walkthrough.md walks through it.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import kopf
import kubernetes
import yaml

TEMPLATE = os.path.join(os.path.dirname(__file__), "pvc.yaml")


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.posting.loggers = True  # the handlers' log lines become Events too
    settings.posting.level = logging.INFO  # ... from INFO up ("Handler 'create_fn' succeeded.")
    settings.watching.server_timeout = 60  # watches end (and are resumed) every minute
    settings.networking.request_timeout = 30
    settings.peering.lifetime = 10  # the peering object sees a heartbeat every 5 s
    settings.queueing.exit_timeout = 10  # at Ctrl-C, a handler still running may finish


@kopf.on.create("ephemeralvolumeclaims")
def create_fn(spec: kopf.Spec, name: str, namespace: str | None, body: kopf.Body,
              logger: kopf.Logger, **_: Any) -> dict[str, str]:
    size = spec.get("size")
    if not size:
        raise kopf.PermanentError(f"Size must be set. Got {size!r}.")

    with open(TEMPLATE, encoding="utf-8") as template:
        data = yaml.safe_load(template.read().format(name=name, size=size))
    kopf.adopt(data)  # owner reference, namespace and labels from the parent

    api = kubernetes.client.CoreV1Api()
    obj = api.create_namespaced_persistent_volume_claim(namespace=namespace, body=data)
    logger.info("PVC child is created: %s", obj.metadata.name)
    kopf.info(body, reason="PvcCreated", message=f"PVC {obj.metadata.name} of size {size}")
    return {"pvc-name": obj.metadata.name}


@kopf.on.update("ephemeralvolumeclaims", field="spec.size")
def update_fn(spec: kopf.Spec, status: kopf.Status, namespace: str | None, body: kopf.Body,
              old: Any, new: Any, logger: kopf.Logger, **_: Any) -> None:
    size = spec.get("size")
    if not size:
        raise kopf.PermanentError(f"Size must be set. Got {size!r}.")

    pvc_name = status["create_fn"]["pvc-name"]
    pvc_patch = {"spec": {"resources": {"requests": {"storage": size}}}}
    api = kubernetes.client.CoreV1Api()
    api.patch_namespaced_persistent_volume_claim(namespace=namespace, name=pvc_name,
                                                 body=pvc_patch)
    logger.info("PVC child is updated: %s -> %s", old, new)
    kopf.event(body, type="Normal", reason="PvcResized", message=f"{old} -> {new}")


@kopf.on.field("ephemeralvolumeclaims", field="metadata.labels")
def relabel(diff: kopf.Diff, status: kopf.Status, namespace: str | None, **_: Any) -> None:
    if "create_fn" not in status:  # the labels came with the object: create_fn copied them
        return
    # the walkthrough's diff, plus the case it skips: the first labels of an unlabelled claim
    # are one ('add', (), None, {...}) on the whole field, not one entry per key
    labels_patch: dict[str, Any] = {}
    for _op, field, _old, new in diff:
        labels_patch.update({field[0]: new} if field else dict(new or {}))
    pvc_patch = {"metadata": {"labels": labels_patch}}
    api = kubernetes.client.CoreV1Api()
    api.patch_namespaced_persistent_volume_claim(namespace=namespace,
                                                 name=status["create_fn"]["pvc-name"],
                                                 body=pvc_patch)


@kopf.on.delete("ephemeralvolumeclaims")
def delete_fn(name: str, body: kopf.Body, logger: kopf.Logger, **_: Any) -> None:
    kopf.info(body, reason="Deleting", message=f"claim {name} released; its PVC goes with it")
    logger.info("EVC %s is deleted", name)
