"""A real API server in every Python test: `Cluster` and the pytest plugin.

Kubernetes piece: controller-runtime's envtest (pkg/envtest) — a control plane for tests —
but the whole cluster (scheduler, controllers, Ready simulated nodes) in this process, ready
in well under a second. `from minikube_py.testing import Cluster`; the pytest plugin
(pytest_plugin.py, registered through the `pytest11` entry point) gives fixtures on top.
"""

from .clients import MissingClientLibrary
from .cluster import Cluster
from .kubectl import KubectlError, KubectlNotFound, KubectlResult
from .options import ClusterOptions
from .waiting import WaitTimeout, condition, deleted, exists, phase

__all__ = ["Cluster", "ClusterOptions", "KubectlError", "KubectlNotFound", "KubectlResult",
           "MissingClientLibrary", "WaitTimeout", "condition", "deleted", "exists", "phase"]
