"""gRPC's standard health service, as etcd registers it (grpc.health.v1.Health/Check).

etcd piece: etcdserver/api/v3rpc/grpc.go registers `health.NewServer()` and reports SERVING
while the member is healthy; gRPC load balancers and some etcd clients ask it. The messages
are one-field protobufs (HealthCheckRequest{service=1}, HealthCheckResponse{status=1}), so
they are written out here instead of depending on grpcio-health-checking.
"""

from __future__ import annotations

import grpc

#: HealthCheckResponse{status: SERVING (1)}: field 1, varint, value 1
SERVING = b"\x08\x01"
#: HealthCheckResponse{status: SERVICE_UNKNOWN (3)}
SERVICE_UNKNOWN = b"\x08\x03"
#: services this server answers for: "" (the whole server) and etcd's own names
KNOWN = frozenset({"", "etcdserverpb.KV", "etcdserverpb.Watch", "etcdserverpb.Lease",
                   "etcdserverpb.Maintenance", "etcdserverpb.Cluster"})


def _service_name(request: bytes) -> str | None:
    """The `service` field of a HealthCheckRequest (field 1, length-delimited), or None when
    the bytes are not one (then the answer is SERVICE_UNKNOWN)."""
    if not request:
        return ""
    if request[0] != 0x0A or len(request) < 2 or request[1] > 0x7F or len(request) != 2 + request[1]:
        return None
    try:
        return request[2:].decode()
    except UnicodeDecodeError:
        return None


async def check(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return SERVING if _service_name(request) in KNOWN else SERVICE_UNKNOWN


def handler() -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
        "Check": grpc.unary_unary_rpc_method_handler(check),
    })
