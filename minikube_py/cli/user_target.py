"""Which API server the user's own commands (`node`, `status`, `trace`) talk to.

Kubernetes piece: kubectl's loading rules (clientcmd.NewDefaultClientConfigLoadingRules): an
explicit --server or --kubeconfig first, else $KUBECONFIG. The README's walkthrough exports
KUBECONFIG once for kubectl; `minikube-py node stop` must then reach the same cluster — on a
machine where another cluster owns 127.0.0.1:8080 the old default (--master) reached the wrong
one. The components (scheduler, controller manager, kubelet) keep upstream's flags only.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from .component_settings import API_CLIENT
from .settings import resolve


def user_client_settings(args: argparse.Namespace) -> dict[str, Any]:
    """API_CLIENT's settings; $KUBECONFIG (its first file) when neither flag is given."""
    settings = resolve(args, API_CLIENT, {})
    from_env = os.environ.get("KUBECONFIG", "").split(os.pathsep)[0]
    if getattr(args, "master", None) is None and getattr(args, "kubeconfig", None) is None \
            and from_env:
        settings["kubeconfig"] = from_env
    return settings


def describe(settings: dict[str, Any]) -> str:
    """Where the command connects, for its error messages."""
    return f"the server in {settings['kubeconfig']}" if settings.get("kubeconfig") \
        else str(settings["master"])
