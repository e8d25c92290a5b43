"""`minikube-py kubelet`: run simulated kubelets as their own process, against an API server.

Kubernetes v1.0 piece: cmd/kubelet/app/server.go (KubeletServer: --api-servers, later
--kubeconfig; --hostname-override, --address, --port 10250, --node-ip,
--node-status-update-frequency, --node-labels, --register-with-taints, --pod-cidr,
--max-pods). The simulated node's machine (--cpu, --memory), how long its runtime takes
(--image-pull-duration, --container-start-duration) and how many nodes one process simulates
(--nodes) are this project's additions. The kubelets reach the cluster only through the API
server (HTTP transport), exactly as the v1.0 component did.
"""

from __future__ import annotations

import argparse
import socket

import structlog

from . import runtime
from .component_settings import KUBELET
from .node_pools import TAINT_EFFECTS
from .settings import add_flags, resolve
from .storage_target import CommandError, ConfigError

log = structlog.get_logger(component="kubelet")

DEFAULT_PORT = 10250


def parse_labels(text: str) -> dict[str, str]:
    """--node-labels `k=v,k2=v2` (upstream's mapStringString flag)."""
    labels: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"invalid --node-labels entry {item!r}: use key=value")
        labels[key.strip()] = value.strip()
    return labels


def parse_taints(text: str) -> tuple[dict[str, str], ...]:
    """--register-with-taints `key=value:Effect,key2:Effect` (upstream ParseTaints)."""
    taints = []
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        spec, sep, effect = item.rpartition(":")
        if not sep or effect not in TAINT_EFFECTS:
            raise ConfigError(f"invalid taint {item!r}: use key=value:Effect with Effect one "
                               f"of {', '.join(TAINT_EFFECTS)}")
        key, _, value = spec.partition("=")
        if not key:
            raise ConfigError(f"invalid taint {item!r}: the key is empty")
        taint = {"key": key, "effect": effect}
        if value:
            taint["value"] = value
        taints.append(taint)
    return tuple(taints)


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "kubelet", parents=parents, help="run simulated kubelets against an API server",
        description="Run simulated kubelets (node agents without containers) against an API "
                    "server until SIGINT/SIGTERM.")
    parser.add_argument("--master", default="http://127.0.0.1:8080",
                        help="the API server's URL (default http://127.0.0.1:8080)")
    parser.add_argument("--kubeconfig", help="kubeconfig with the server and credentials "
                        "(overrides --master)")
    parser.add_argument("--hostname-override", default=None,
                        help="the node's name (default: this machine's hostname)")
    parser.add_argument("--nodes", type=int, default=0, metavar="N",
                        help="simulate N nodes named <hostname-override>-0..N-1 instead of one")
    parser.add_argument("--address", default="127.0.0.1",
                        help="address to serve --port on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help="the kubelet port: logs, /pods, /healthz, /nodes (default 10250; "
                             "0 = a free port)")
    parser.add_argument("--node-ip", default=None,
                        help="the nodes' InternalIP (default: --address)")
    parser.add_argument("--node-labels", default="", help="labels to add: key=value,...")
    parser.add_argument("--register-with-taints", default="",
                        help="taints to register with: key=value:Effect,...")
    parser.add_argument("--pod-cidr", default=None,
                        help="the node's pod CIDR (one node only; a pool allocates "
                             "10.<244+i/256>.<i%%256>.0/24)")
    parser.add_argument("--cpu", default="4", help="cores each node reports (default 4)")
    parser.add_argument("--memory", default="8Gi", help="memory each node reports (default 8Gi)")
    parser.add_argument("--max-pods", type=int, default=110,
                        help="pods each node accepts (default 110)")
    add_flags(parser.add_argument_group("simulation (shared with minikube-py start)"), KUBELET)
    parser.set_defaults(run=run, command="kubelet")


def run(args: argparse.Namespace) -> int:
    return runtime.run(serve(args))


def _config(args: argparse.Namespace):
    from ..kubelet import KubeletConfig

    if args.max_pods < 0:
        raise ConfigError("--max-pods must not be negative")
    timings = resolve(args, KUBELET, {})
    return KubeletConfig(
        cpu=args.cpu, memory=args.memory, pods=args.max_pods,
        labels=parse_labels(args.node_labels), taints=parse_taints(args.register_with_taints),
        node_status_update_frequency=timings["node_status_update_frequency"],
        image_pull_seconds=timings["image_pull_duration"],
        container_start_seconds=timings["container_start_duration"],
        max_termination_grace_seconds=timings["max_termination_grace_period"])


async def serve(args: argparse.Namespace) -> int:
    from ..kubelet import KubeletPool
    from .component_process import http_client

    config = _config(args)
    if config.node_status_update_frequency <= 0:
        raise ConfigError("--node-status-update-frequency must be positive")
    if args.nodes < 0:
        raise ConfigError("--nodes must not be negative")
    if args.pod_cidr and args.nodes > 1:
        raise CommandError("--pod-cidr names one node's range; with --nodes each node gets "
                           "10.<244+i/256>.<i%256>.0/24")
    name = args.hostname_override or socket.gethostname().lower()
    client = http_client({"master": args.master, "kubeconfig": args.kubeconfig}, "kubelet")
    pool = KubeletPool(client, address=args.address, port=args.port,
                       node_ip=args.node_ip or (args.address if args.address not in
                                                ("0.0.0.0", "::", "") else "127.0.0.1"))
    if args.nodes:
        pool.add_nodes(name, args.nodes, config)
    else:
        pool.add_node(name, config, pod_cidr=args.pod_cidr)
    stop = runtime.stop_on_signals()
    try:
        try:
            await pool.start()
        except OSError as exc:
            raise CommandError(f"cannot serve on {args.address}:{args.port}: "
                               f"{exc.strerror or exc}") from exc
        log.info("kubelet starting", master=getattr(client.transport, "base_url", ""),
                 nodes=len(pool.kubelets), port=pool.port)
        await stop.wait()
    finally:
        await pool.stop()
        await client.close()
        runtime.restore_signals()
    log.info("stopped")
    return 0
