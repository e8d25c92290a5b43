"""etcd v3 API message classes, built at import from the descriptor set in proto/etcd.fds.

etcd piece: the generated Go types of api/etcdserverpb, api/mvccpb and api/authpb (etcd v3.5).
The descriptors are package data compiled from the trimmed upstream .proto files beside them
(hack/gen_etcd_descriptors.py); they are loaded into a *private* DescriptorPool so that an etcd
client in the same process (aetcd registers its own `etcdserverpb` in protobuf's default pool)
cannot collide with ours, and so installing minikube_py needs no protoc.

Use `pb.RangeRequest`, `pb.KeyValue`, ...: every message of the three packages by short name
(names are unique across them), plus `METHODS`, each service method with its streaming shape.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, NamedTuple

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGES = ("etcdserverpb", "mvccpb", "authpb")


class Method(NamedTuple):
    """One RPC: `/etcdserverpb.<service>/<name>`, its message classes and streaming shape."""

    service: str
    name: str
    request: type
    response: type
    client_streaming: bool
    server_streaming: bool

    @property
    def path(self) -> str:
        return f"/etcdserverpb.{self.service}/{self.name}"


@cache
def _load() -> tuple[dict[str, type], dict[str, Method]]:
    data = resources.files(__package__).joinpath("proto/etcd.fds").read_bytes()
    files = descriptor_pb2.FileDescriptorSet.FromString(data)
    pool = descriptor_pool.DescriptorPool()
    for file_proto in files.file:
        pool.Add(file_proto)
    classes: dict[str, type] = {}
    methods: dict[str, Method] = {}
    for file_proto in files.file:
        file_desc = pool.FindFileByName(file_proto.name)
        for name, desc in file_desc.message_types_by_name.items():
            classes[name] = message_factory.GetMessageClass(desc)
        for service in file_desc.services_by_name.values():
            for m in service.methods:
                request = message_factory.GetMessageClass(m.input_type)
                response = message_factory.GetMessageClass(m.output_type)
                method = Method(service.name, m.name, request, response,
                                m.client_streaming, m.server_streaming)
                methods[method.path] = method
    return classes, methods


class _Messages:
    """Attribute access to the message classes (`pb.PutRequest`)."""

    def __getattr__(self, name: str) -> Any:
        classes, _ = _load()
        try:
            return classes[name]
        except KeyError:
            raise AttributeError(name) from None


pb = _Messages()


def methods() -> dict[str, Method]:
    """Every RPC of the six services, keyed by its gRPC path."""
    return _load()[1]
