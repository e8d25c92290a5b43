"""The console's buttons as pure request shaping: what a sample workload is.

Kubernetes piece: `kubectl create deployment NAME --image=IMAGE --replicas=N` (its generated
Deployment: labels app=NAME on the template and selector, one container named after the
image). The API server validates the rest and its Status reaches the page as it came.
"""

from __future__ import annotations

import re
from typing import Any

from ..api import errors

Obj = dict[str, Any]
DEFAULT_IMAGE = "registry.k8s.io/pause:3.9"
#: what each sample pod asks for, so the nodes view shows requests filling allocatable
SAMPLE_REQUESTS = {"cpu": "100m", "memory": "64Mi"}
#: a console button is not a load generator: larger workloads go through kubectl
MAX_REPLICAS = 500


def _text(body: Obj, key: str, default: str) -> str:
    raw = body.get(key, default)
    if not isinstance(raw, str):
        raise errors.bad_request(f"{key}: must be a string")
    return raw or default


def sample_workload(body: Obj) -> tuple[str, Obj]:
    """(namespace, Deployment) from `{"namespace", "name", "replicas", "image"}` (each
    optional); a wrong type or an out-of-range replica count is a 400 Status."""
    namespace = _text(body, "namespace", "default")
    name = _text(body, "name", "sample")
    image = _text(body, "image", DEFAULT_IMAGE)
    replicas = body.get("replicas", 3)
    if isinstance(replicas, bool) or not isinstance(replicas, int):
        raise errors.bad_request("replicas: must be an integer")
    if not 0 <= replicas <= MAX_REPLICAS:
        raise errors.bad_request(f"replicas: must be between 0 and {MAX_REPLICAS}")
    container = re.sub(r"[^a-z0-9-]", "-", image.rsplit("/", 1)[-1].split(":")[0].split("@")[0]
                       .lower()).strip("-") or "app"
    labels = {"app": name}
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {"containers": [{"name": container, "image": image,
                                         "resources": {"requests": dict(SAMPLE_REQUESTS)}}]},
            },
        },
    }
    return namespace, deployment
