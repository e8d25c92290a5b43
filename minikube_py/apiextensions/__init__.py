"""apiextensions: what the API server does with a CustomResourceDefinition's schema.

Kubernetes piece: k8s.io/apiextensions-apiserver/pkg/apiserver/schema (structural schemas,
pruning, defaulting) and pkg/apiserver/validation (kube-openapi validation turned into field
errors). Pure: `schema.compile_schema` builds a tree once per CRD version, the walkers only read it.
"""
