"""A small kopf operator on built-in resources, run by tests/e2e/test_clients_kopf.py.

Loaded by `kopf run` (through kopf.testing.KopfRunner), never imported by pytest. It does what
kopf's walkthrough does, on ConfigMaps and Pods instead of a custom resource so that it needs
no CRD: creation, update and deletion handlers (deletion through kopf's finalizer), events
posted with `kopf.info`/`kopf.warn`, annotations patched through the `patch` kwarg, a field
handler on `status.phase`, and kopf's own log lines posted as Events (settings.posting).
Everything it does is observable in the cluster, so the test asserts on the server's state.
"""

from __future__ import annotations

import logging
from typing import Any

import kopf

#: only objects carrying this label are handled, so the operator ignores system objects
SELECTOR = {"kopf-test": "yes"}
PREFIX = "kopf-test.example.com"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.peering.standalone = True  # no kopf.dev peering CRDs: built-in resources only
    settings.posting.enabled = True
    settings.posting.loggers = True  # log lines ("Handler ... succeeded.") become Events too
    settings.posting.level = logging.INFO
    settings.watching.server_timeout = 30
    settings.networking.request_timeout = 15


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    """kopf's own kubeconfig reader (reads `KUBECONFIG` when called). The default,
    login_via_client, asks the `kubernetes` library, which reads `KUBECONFIG` once at import:
    in a shared pytest process that was before the test set it."""
    return kopf.login_with_kubeconfig(**kwargs)


@kopf.on.create("configmaps", labels=SELECTOR)
def created(body: kopf.Body, name: str, patch: kopf.Patch, logger: logging.Logger,
            **_: Any) -> None:
    kopf.info(body, reason="Created", message=f"configmap {name} has {len(body.get('data') or {})} keys")
    patch.metadata.annotations[f"{PREFIX}/created"] = "yes"
    logger.info("created handler ran for %s", name)


@kopf.on.update("configmaps", labels=SELECTOR, field="data")
def updated(body: kopf.Body, old: Any, new: Any, patch: kopf.Patch, **_: Any) -> None:
    kopf.info(body, reason="Updated", message=f"data {dict(old or {})} -> {dict(new or {})}")
    patch.metadata.annotations[f"{PREFIX}/updated"] = ",".join(sorted(new or {}))


@kopf.on.delete("configmaps", labels=SELECTOR)
def deleted(body: kopf.Body, name: str, logger: logging.Logger, **_: Any) -> None:
    kopf.warn(body, reason="Deleting", message=f"configmap {name} is going away")
    logger.info("deleted handler ran for %s", name)


@kopf.on.field("pods", field="status.phase", labels=SELECTOR)
def phase_changed(body: kopf.Body, old: Any, new: Any, patch: kopf.Patch, **_: Any) -> None:
    kopf.info(body, reason="Phase", message=f"{old} -> {new}")
    patch.metadata.annotations[f"{PREFIX}/phase"] = str(new)


@kopf.on.delete("pods", labels=SELECTOR)
def pod_deleted(body: kopf.Body, name: str, logger: logging.Logger, **_: Any) -> None:
    kopf.info(body, reason="Released", message=f"pod {name} released by the operator")
    logger.info("pod deleted handler ran for %s", name)
