"""The etcd v3 gRPC server on a TxnStore: wiring of the services onto one grpc.aio server.

etcd piece: etcdserver/api/v3rpc/grpc.go (Server: registers KV, Watch, Lease, Cluster, Auth,
Maintenance). The server runs on the caller's event loop beside the store, so a request costs
no thread hop; handlers are generic (method path -> coroutine) over the message classes built
from etcd's descriptors (messages.py), so no generated *_pb2_grpc code is needed. A method we
do not serve answers gRPC's Unimplemented.
"""

from __future__ import annotations

import contextlib
from typing import Any

import grpc
import structlog

from ..storage import TxnStore
from . import health, metrics
from .identity import Identity
from .kv import Headers, KVService
from .lease import LeaseService
from .maintenance import AuthService, ClusterService, MaintenanceService
from .messages import Method, methods
from .watch import PROGRESS_INTERVAL, WatchService

log = structlog.get_logger(component="etcdserver")

#: etcd's --max-request-bytes (1.5 MiB) plus gRPC overhead headroom, as etcd allows.
MAX_RECV_BYTES = 1536 * 1024 + 512 * 1024
MAX_SEND_BYTES = 2**31 - 1


def _handler(method: Method, fn: Any) -> grpc.RpcMethodHandler:
    request_deserializer = method.request.FromString
    response_serializer = method.response.SerializeToString
    if method.client_streaming and method.server_streaming:
        build, fn = grpc.stream_stream_rpc_method_handler, _counted_stream(method, fn)
    elif method.server_streaming:
        build, fn = grpc.unary_stream_rpc_method_handler, _counted_stream(method, fn)
    else:
        build, fn = grpc.unary_unary_rpc_method_handler, _counted_unary(method, fn)
    return build(fn, request_deserializer=request_deserializer,
                 response_serializer=response_serializer)


def _code(context: grpc.aio.ServicerContext) -> str:
    code = context.code()
    return code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"


def _counted_unary(method: Method, fn: Any) -> Any:
    name = f"{method.service}/{method.name}"

    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            response = await fn(request, context)
        except BaseException:
            metrics.HANDLED[name, _code(context)] += 1
            raise
        metrics.HANDLED[name, "OK"] += 1
        return response

    return call


def _counted_stream(method: Method, fn: Any) -> Any:
    name = f"{method.service}/{method.name}"

    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        code = "OK"
        try:
            # aclosing: when the client goes, the service's own `finally` (cancel its store
            # watches) runs now, not whenever the generator is collected
            async with contextlib.aclosing(fn(request, context)) as responses:
                async for response in responses:
                    yield response
        except BaseException:
            code = _code(context)
            raise
        finally:
            metrics.HANDLED[name, code] += 1

    return call


def handlers(services: dict[str, Any]) -> list[grpc.GenericRpcHandler]:
    """One generic handler per service, with every method its servicer defines."""
    by_service: dict[str, dict[str, grpc.RpcMethodHandler]] = {}
    for method in methods().values():
        servicer = services.get(method.service)
        fn = getattr(servicer, method.name, None) if servicer is not None else None
        if fn is not None:
            by_service.setdefault(method.service, {})[method.name] = _handler(method, fn)
    return [grpc.method_handlers_generic_handler(f"etcdserverpb.{service}", table)
            for service, table in by_service.items()]


class EtcdServer:
    """Serve `store` over etcd's v3 gRPC API. `await EtcdServer.start(store, "127.0.0.1:0")`;
    `.port` and `.endpoint` give the bound address (port 0 picks a free one)."""

    def __init__(self, server: grpc.aio.Server, host: str, port: int) -> None:
        self._server = server
        self.host = host
        self.port = port

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.endpoint}"

    @classmethod
    async def start(
        cls,
        store: TxnStore,
        address: str = "127.0.0.1:2379",
        *,
        name: str = "minikube-py",
        progress_interval: float = PROGRESS_INTERVAL,
    ) -> EtcdServer:
        host, _, port_text = address.rpartition(":")
        host = host.strip("[]") or "127.0.0.1"
        server = grpc.aio.server(options=[
            ("grpc.max_receive_message_length", MAX_RECV_BYTES),
            ("grpc.max_send_message_length", MAX_SEND_BYTES),
            ("grpc.so_reuseport", 0),
        ])
        bind_host = f"[{host}]" if ":" in host else host
        port = server.add_insecure_port(f"{bind_host}:{port_text}")
        if not port:
            raise OSError(f"etcd server: cannot listen on {address}")
        identity = Identity.create(name, (f"http://{bind_host}:{port}",))
        headers = Headers(identity)
        services = {
            "KV": KVService(store, headers),
            "Watch": WatchService(store, headers, progress_interval=progress_interval),
            "Lease": LeaseService(store, headers),
            "Maintenance": MaintenanceService(store, headers, identity),
            "Cluster": ClusterService(store, headers, identity),
            "Auth": AuthService(headers),
        }
        server.add_generic_rpc_handlers([*handlers(services), health.handler()])
        await server.start()
        log.info("etcd_server.listening", endpoint=f"{bind_host}:{port}",
                 member_id=hex(identity.member_id))
        return cls(server, bind_host, port)

    async def stop(self, grace: float | None = 1.0) -> None:
        await self._server.stop(grace)
