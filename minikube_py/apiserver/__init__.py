"""The API server (Kubernetes v1.0 pkg/apiserver + pkg/master): HTTP, filters, watch fan-out,
discovery and admission over the registries."""
