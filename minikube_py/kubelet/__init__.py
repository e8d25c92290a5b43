"""The simulated kubelet (Kubernetes v1.0 pkg/kubelet): node agents that do everything a
kubelet does through the API, except run containers."""
