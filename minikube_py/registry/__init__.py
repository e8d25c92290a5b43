"""Registries (Kubernetes v1.0 pkg/registry): the generic REST storage over the Store, and one
strategy per resource."""
