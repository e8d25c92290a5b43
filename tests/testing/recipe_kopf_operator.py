"""The kopf operator of the testing recipe (docs/testing.md): run by `kopf run` through
kopf.testing.KopfRunner in tests/testing/test_recipes.py, never imported by pytest.

It stamps every ConfigMap labelled `greet=yes` with a greeting annotation and posts an Event.
"""

from __future__ import annotations

from typing import Any

import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.peering.standalone = True  # built-in resources only: no peering CRD needed
    settings.watching.server_timeout = 30


@kopf.on.login()
def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    # read KUBECONFIG now (the `kubernetes` library read it once, at its import)
    return kopf.login_with_kubeconfig(**kwargs)


@kopf.on.create("configmaps", labels={"greet": "yes"})
def greet(body: kopf.Body, name: str, patch: kopf.Patch, **_: Any) -> None:
    patch.metadata.annotations["example.com/greeting"] = f"hello {name}"
    kopf.info(body, reason="Greeted", message=f"said hello to {name}")
