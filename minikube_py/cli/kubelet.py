"""`minikube-py kubelet`: run simulated kubelets as their own process, against an API server.

Kubernetes v1.0 piece: cmd/kubelet/app/server.go (KubeletServer: --api-servers, later
--kubeconfig; --hostname-override, --address, --port 10250, --node-ip,
--node-status-update-frequency, --node-labels, --register-with-taints, --pod-cidr,
--max-pods). The simulated node's machine (--cpu, --memory), how long its runtime takes
(--image-pull-duration, --container-start-duration) and how many nodes one process simulates
(--nodes) are this project's additions. The kubelets reach the cluster only through the API
server (HTTP transport), exactly as the v1.0 component did.

The kubelet API (--port) is secured as upstream's: --tls-cert-file/--tls-private-key-file
make it HTTPS, --client-ca-file authenticates client certificates (the API server's
--kubelet-client-certificate), --anonymous-auth and --authorization-mode (Webhook: only
`system:masters`; see kubelet/auth.py) decide the rest. Without --tls-cert-file it is plain HTTP
and open, as v1.0's was, and says so at startup. Bearer tokens need a TokenReview API this
project does not serve, so a separate kubelet authenticates client certificates only.
"""

from __future__ import annotations

import argparse
import socket

import structlog

from .. import loopwatch
from . import runtime
from .component_settings import KUBELET, kubelet_heartbeat
from .node_pools import TAINT_EFFECTS
from .settings import add_flags, boolean, resolve
from .storage_target import CommandError, ConfigError

#: kubelet/auth.py's modes, named here so `--help` does not import aiohttp
#: (tests/unit/kubelet/test_auth.py checks the two agree)
AUTHORIZATION_MODES = ("Webhook", "AlwaysAllow")

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
    secure = parser.add_argument_group("the kubelet API's TLS and authentication")
    secure.add_argument("--tls-cert-file", default=None, metavar="FILE",
                        help="serving certificate: the port serves HTTPS (default: plain HTTP, "
                             "no authentication)")
    secure.add_argument("--tls-private-key-file", default=None, metavar="FILE",
                        help="its private key")
    secure.add_argument("--client-ca-file", default=None, metavar="FILE",
                        help="client certificates signed by this CA authenticate (CN user, "
                             "O groups), e.g. the API server's kubelet-client certificate")
    secure.add_argument("--anonymous-auth", default=None, type=boolean, metavar="BOOL",
                        help="requests without credentials are system:anonymous instead of "
                             "401 (default false with --tls-cert-file)")
    secure.add_argument("--authorization-mode", default=None, choices=AUTHORIZATION_MODES,
                        help="Webhook (only system:masters may use the API; the default with "
                             "--tls-cert-file) or AlwaysAllow")
    add_flags(parser.add_argument_group("simulation (shared with minikube-py start)"), KUBELET)
    add_flags(parser, runtime.LOOP_WATCH)
    parser.set_defaults(run=run, command="kubelet")


def run(args: argparse.Namespace) -> int:
    watch = resolve(args, runtime.LOOP_WATCH, {})
    return runtime.run(serve(args), component="kubelet",
                       stall_threshold=watch["loop_stall_threshold"])


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
        max_termination_grace_seconds=timings["max_termination_grace_period"],
        **kubelet_heartbeat(timings))


def serving_of(args: argparse.Namespace):
    """The pool's server.Serving from the TLS/auth flags; None: plain HTTP, open."""
    if not args.tls_cert_file:
        if args.tls_private_key_file or args.client_ca_file or args.anonymous_auth is False \
                or args.authorization_mode == "Webhook":
            raise ConfigError("--tls-private-key-file, --client-ca-file, --anonymous-auth=false "
                              "and --authorization-mode Webhook need --tls-cert-file (the "
                              "kubelet port is plain HTTP and open without it)")
        return None
    if not args.tls_private_key_file:
        raise ConfigError("--tls-cert-file and --tls-private-key-file go together")
    from pathlib import Path

    from .kubelet_tls import auth_settings, serving

    anonymous = bool(args.anonymous_auth)
    if not anonymous and not args.client_ca_file:
        raise ConfigError("--tls-cert-file without --client-ca-file: no request could "
                          "authenticate (give --client-ca-file, or --anonymous-auth=true)")
    auth = auth_settings(token_auth_file=None, client_certificates=bool(args.client_ca_file),
                         anonymous=anonymous,
                         authorization_mode=args.authorization_mode or "Webhook")
    cas = [Path(args.client_ca_file)] if args.client_ca_file else []
    return serving(Path(args.tls_cert_file), Path(args.tls_private_key_file), cas, auth)


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
                                                ("0.0.0.0", "::", "") else "127.0.0.1"),
                       serving=serving_of(args))
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
        loopwatch.mark_ready()  # from now on a stall of the loop is a warning
        await stop.wait()
    finally:
        await pool.stop()
        await client.close()
        runtime.restore_signals()
    log.info("stopped")
    return 0
