"""The data-driven description of the built-in kinds, and the loaders that read it.

Kubernetes piece: the published definitions of k8s.io/api and k8s.io/apimachinery (their
generated.proto files and Go struct tags). Why data: serving every built-in kind must not mean a
hand-typed table per kind (DESIGN.md, "API kinds are data"); each fact comes from upstream's own
artifacts through a generator in hack/, and the codecs are driven by it.

- protobuf.json: protobuf field numbers, wire types and JSON names of every message
  (hack/gen_protobuf_kinds.py); read through proto.py.
"""
