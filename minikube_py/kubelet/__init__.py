"""The simulated kubelet (Kubernetes v1.0 pkg/kubelet): node agents that do everything a
kubelet does through the API — register the Node, post its status, admit the pods bound to
it, walk them through pull/create/start, report their status, restart or complete their
containers, finish graceful deletions, serve their logs — except run containers.

Many simulated nodes share one event loop, one pod watch and one HTTP server (`pool.py`)."""

from .config import KubeletConfig
from .pool import Kubelet, KubeletPool

__all__ = ["Kubelet", "KubeletConfig", "KubeletPool"]
