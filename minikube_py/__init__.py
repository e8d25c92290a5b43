"""minikube_py: a mini Kubernetes control plane in one asyncio process.

Laid out like Kubernetes v1.0 (see docs/architecture.md for the package map):
storage (pkg/storage + etcd), registry, apiserver, client, scheduler, controllers,
kubelet and cli (cmd/*/app).
"""

__version__ = "0.1.0"
