"""`minikube-py start`'s settings: every component's, resolved into one value object.

Kubernetes piece: what local-up-cluster.sh / hyperkube did by passing each binary its flags —
here one parse of flags + config file (see settings.py) yields the options of the store, the
API server, the scheduler, the controller manager and the simulated nodes.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..apiserver.options import APIServerOptions, public_endpoint
from ..controllers.options import ControllerOptions
from . import scheduler_config
from .component_settings import (
    APISERVER as APISERVER_DEFAULTS,
    CONTROLLER_MANAGER,
    KUBELET,
    SCHEDULER,
    STORAGE,
    controller_options,
    kubelet_heartbeat,
)
from .config import load_config
from .node_pools import NodePool, default_pools, parse_pools
from .runtime import LOOP_WATCH
from .settings import (
    Resolved,
    Setting,
    add_flags,
    as_is,
    boolean,
    config_keys,
    integer,
    options_from,
    port,
    resolve,
)
from .storage_target import ConfigError, parse_servers

if TYPE_CHECKING:
    from ..scheduler.framework.config.types import SchedulerConfiguration

COMPONENTS = ("scheduler", "controller-manager", "kubelet")
#: where `start` differs from `minikube-py apiserver` (which keeps kube-apiserver's own
#: defaults): the secure port authorizes like a 1.31 cluster built by kubeadm — the Node
#: authorizer for kubelets, RBAC for everyone else (the admin kubeconfig is in system:masters,
#: which the bootstrap policy binds to cluster-admin)
START_DEFAULTS = {"authorization-mode": "Node,RBAC", "enable-metrics-server": True}
APISERVER = tuple(dataclasses.replace(s, default=START_DEFAULTS[s.name])
                  if s.name in START_DEFAULTS else s for s in APISERVER_DEFAULTS)
DEFAULT_KUBECONFIG = "~/.minikube-py/kubeconfig"

def apiserver_count(value: Any) -> int:
    """--apiservers: a count, or `auto` for one per core this process may run on."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else os.cpu_count() or 1
    try:
        return integer(value)
    except ValueError:
        raise ValueError(f"{value!r} is neither a number of processes nor 'auto'") from None


#: --apiservers (cli/apiserver_fleet.py), also a flag of `minikube-py apiserver`
APISERVERS = Setting(
    "apiservers", 1, "API server processes behind the one API port (auto: one per core): the "
    "store's process runs #0 (and the components), N-1 more reach the store through a local "
    "socket, each with its own watch caches (docs/architecture.md)", apiserver_count,
    metavar="N|auto")

ALL_IN_ONE = (
    Setting("scheduler-port", 10251, "the scheduler's healthz/metrics/debug port (0 disables "
            "the listener)", port),
    scheduler_config.START_CONFIG,
    Setting("controller-manager-port", 10252, "the controller manager's healthz/metrics port "
            "(0 disables the listener)", port),
    Setting("kubelet-port", 10250, "the simulated kubelets' port: logs, /pods, the node "
            "stop/start toggle (0 disables the listener)", port),
    Setting("kubelet-anonymous-auth", False, "with the secure port on, let requests without "
            "credentials reach the kubelet port as system:anonymous (the kubelet's "
            "--anonymous-auth)", boolean, metavar="BOOL"),
    Setting("kubelet-authorization-mode", "Webhook", "with the secure port on, who may use the "
            "kubelet port: Webhook (system:masters only) or AlwaysAllow (the kubelet's "
            "--authorization-mode)", choices=("Webhook", "AlwaysAllow")),
    Setting("nodes", None, "simulated nodes named node-0..node-N-1 (replaces the config's "
            "node-pools; default 1)", integer, metavar="N"),
    Setting("node-pools", None, "pools of simulated nodes (config file only)", as_is, flag=False),
    Setting("disable", "", "components not to run: scheduler, controller-manager, kubelet",
            metavar="LIST"),
    Setting("kubeconfig-out", DEFAULT_KUBECONFIG, "write a kubeconfig for this cluster here "
            "(empty: do not write one)", metavar="FILE"),
    Setting("ready-timeout", 60, "seconds to wait for nodes Ready and components Healthy",
            integer),
    Setting("ingress", False, "run the simulated ingress controller (IngressClass "
            "minikube-py): fills Ingress status and routes HTTP by Host and path to the "
            "backend Services' pods", boolean, switch=True),
    Setting("ingress-port", 8081, "the simulated ingress controller's HTTP port (with "
            "--ingress)", port),
    Setting("etcd-listen", None, "also serve the embedded store over etcd's v3 gRPC API at "
            "HOST:PORT or http://HOST:PORT (port 0: any free port), for etcdctl and etcd "
            "clients (minikube_py/etcdserver)", metavar="HOST:PORT"),
    APISERVERS,
    Setting("default-storage-class", True, "create the default StorageClass `standard` "
            "(provisioner hostpath.csi.minikube-py.io), as minikube's and kind's clusters ship "
            "one", boolean, metavar="BOOL"),
    Setting("ports", "fixed", "fixed: every listener on its flag's port; auto: every enabled "
            "listener on a free port the kernel picks (read back into the summary and the "
            "kubeconfig), for a machine where another cluster holds the defaults",
            choices=("fixed", "auto")),
    Setting("trace", False, "keep the trace ring (/debug/trace, `minikube-py trace`) "
            "recording from the start, not only while a viewer is attached", boolean,
            switch=True),
    # the web console (minikube_py.console, issue 21)
    Setting("console-port", 0, "the web console's port (0: a port the OS picks; the summary "
            "prints the console's URL)", port),
    Setting("console-address", "127.0.0.1", "the web console's address; on a non-loopback "
            "one it asks for a cluster-admin's bearer token (the secure port's credentials)",
            metavar="IP"),
    Setting("no-console", False, "do not serve the web console", boolean, switch=True),
)

SETTINGS = (*STORAGE, *APISERVER, *SCHEDULER, *CONTROLLER_MANAGER, *KUBELET, *ALL_IN_ONE,
            *LOOP_WATCH)
#: the same settings with kube-apiserver's own defaults, for `minikube-py apiserver`
APISERVER_COMMAND_SETTINGS = (*STORAGE, *APISERVER_DEFAULTS, *SCHEDULER, *CONTROLLER_MANAGER,
                              *KUBELET, *ALL_IN_ONE, *LOOP_WATCH)


@dataclass(frozen=True)
class StartOptions:
    data_dir: Path
    etcd_servers: tuple[str, ...]
    etcd_key_prefix: str
    fsync: bool
    address: str
    port: int
    secure_port: int
    bind_address: str
    cert_dir: Path
    tls_cert_file: str | None
    tls_private_key_file: str | None
    compaction_interval: float
    snapshot_count: int
    history_max_events: int
    watch_buffer_size: int
    apiserver: APIServerOptions
    scheduler_port: int
    algorithm_provider: str
    policy_config_file: str | None
    #: --scheduler-config, loaded and validated while the options are read (before anything
    #: listens), so a bad file stops `start` at once
    scheduler_configuration: SchedulerConfiguration | None
    percentage_of_nodes_to_score: int
    bind_pods_qps: float
    bind_pods_burst: int
    hard_pod_affinity_symmetric_weight: int
    failure_domains: str
    max_ebs_volumes: int | None
    max_gce_pd_volumes: int | None
    max_azure_disk_volumes: int | None
    controller_manager_port: int
    controllers: ControllerOptions
    kubelet_port: int
    node_pools: tuple[NodePool, ...]
    node_status_update_frequency: float
    image_pull_duration: float
    container_start_duration: float
    max_termination_grace_period: float | None
    disabled: frozenset[str]
    kubeconfig_out: Path | None
    ready_timeout: float
    loop_stall_threshold: float = LOOP_WATCH[0].default
    kubelet_anonymous_auth: bool = False
    kubelet_authorization_mode: str = "Webhook"
    ingress: bool = False
    ingress_port: int = 8081
    default_storage_class: bool = True
    #: --etcd-listen: serve the embedded store over etcd's v3 API there too (None: do not)
    etcd_listen: str | None = None
    #: KubeletConfig's heartbeat fields (component_settings.kubelet_heartbeat)
    node_heartbeat: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: --trace: the trace ring records with no viewer attached (minikube_py.trace)
    trace: bool = False
    #: --ports: "fixed" (the flags' ports) or "auto" (port 0 for every enabled listener)
    ports: str = "fixed"
    #: not a flag (minikube_py.testing sets it): every enabled API-server listener and the
    #: kubelet port bind port 0, and RunningCluster reports the port the OS chose — on a
    #: shared machine a port picked beforehand can be taken before it is bound
    ephemeral_ports: bool = False
    #: not a flag (minikube_py.testing sets it): the controllers' wall clock
    #: (ControllerContext.clock), a clock a test can advance; None: time.time
    controller_clock: Callable[[], float] | None = None
    #: the web console (--no-console, --console-address, --console-port)
    console: bool = True
    console_address: str = "127.0.0.1"
    console_port: int = 0
    #: --apiservers: API server processes sharing the API port (cli/apiserver_fleet.py)
    apiservers: int = 1

    def runs(self, component: str) -> bool:
        return component not in self.disabled

    @classmethod
    def from_args(cls, args: argparse.Namespace,
                  settings: tuple[Setting, ...] = SETTINGS) -> "StartOptions":
        """Flags given on the command line, else the --config file, else the defaults of
        `settings` (start's; `minikube-py apiserver` passes APISERVER_COMMAND_SETTINGS)."""
        source = getattr(args, "config", None)
        from_file = load_config(source, config_keys(settings)) if source else {}
        v = resolve(args, settings, from_file, source or "")
        if v["etcd_servers"] and (getattr(args, "data_dir", None) or "data_dir" in from_file):
            raise ConfigError("use either --data-dir or --etcd-servers, not both")
        servers = parse_servers(str(v["etcd_servers"])) if v["etcd_servers"] else ()
        disabled = frozenset(p.strip() for p in str(v["disable"]).split(",") if p.strip())
        unknown = disabled - set(COMPONENTS)
        if unknown:
            raise ConfigError(f"{v.where('disable')}: unknown component {sorted(unknown)[0]!r} "
                              f"(known: {', '.join(COMPONENTS)})")
        if v["nodes"] is not None:
            if v["nodes"] < 0:
                raise ConfigError(f"{v.where('nodes')}: must be >= 0")
            pools = default_pools(v["nodes"])
        elif v["node_pools"] is not None:
            pools = parse_pools(v["node_pools"], f"config {source}: node-pools")
        else:
            pools = default_pools(1)
        if v["insecure_port"] == 0 and v["secure_port"] == 0:
            raise ConfigError("--insecure-port 0 and --secure-port 0: the API server would "
                              "have no listener")
        if bool(v["tls_cert_file"]) != bool(v["tls_private_key_file"]):
            raise ConfigError("--tls-cert-file and --tls-private-key-file go together")
        if v["etcd_listen"] and servers:
            raise ConfigError("--etcd-listen serves the embedded store; with --etcd-servers, "
                              "point etcd clients at that etcd instead")
        if v["apiservers"] < 1:
            raise ConfigError(f"{v.where('apiservers')}: must be >= 1")
        if v["apiservers"] > 1 and servers:
            raise ConfigError("--apiservers N > 1 serves the embedded store to its API "
                              "servers; with --etcd-servers, start one per process instead")
        admission = admission_plugins(v)
        return cls(
            etcd_listen=v["etcd_listen"] or None,
            data_dir=Path(str(v["data_dir"])).expanduser(),
            etcd_servers=servers,
            etcd_key_prefix=str(v["etcd_key_prefix"] or ""),
            fsync=v["fsync"] == "always",
            address=str(v["insecure_bind_address"]),
            port=v["insecure_port"],
            secure_port=v["secure_port"],
            bind_address=str(v["bind_address"]),
            cert_dir=Path(str(v["cert_dir"])).expanduser(),
            tls_cert_file=v["tls_cert_file"],
            tls_private_key_file=v["tls_private_key_file"],
            compaction_interval=v["etcd_compaction_interval"],
            snapshot_count=v["snapshot_count"],
            history_max_events=v["history_max_events"],
            watch_buffer_size=v["watch_buffer_size"],
            apiserver=apiserver_options(v, servers, admission),
            scheduler_port=v["scheduler_port"],
            algorithm_provider=str(v["algorithm_provider"]),
            policy_config_file=v["policy_config_file"],
            scheduler_configuration=scheduler_config.configuration_of(scheduler_config.load(
                v["scheduler_config"], v["policy_config_file"], "--scheduler-config")),
            percentage_of_nodes_to_score=v["percentage_of_nodes_to_score"],
            bind_pods_qps=v["bind_pods_qps"],
            bind_pods_burst=v["bind_pods_burst"],
            hard_pod_affinity_symmetric_weight=v["hard_pod_affinity_symmetric_weight"],
            failure_domains=str(v["failure_domains"]),
            max_ebs_volumes=v["max_ebs_volumes"],
            max_gce_pd_volumes=v["max_gce_pd_volumes"],
            max_azure_disk_volumes=v["max_azure_disk_volumes"],
            controller_manager_port=v["controller_manager_port"],
            controllers=controller_options(v),
            kubelet_port=v["kubelet_port"],
            node_pools=pools,
            node_status_update_frequency=v["node_status_update_frequency"],
            image_pull_duration=v["image_pull_duration"],
            container_start_duration=v["container_start_duration"],
            max_termination_grace_period=v["max_termination_grace_period"],
            disabled=disabled,
            kubeconfig_out=Path(v["kubeconfig_out"]).expanduser() if v["kubeconfig_out"] else None,
            ready_timeout=float(v["ready_timeout"]),
            loop_stall_threshold=v["loop_stall_threshold"],
            kubelet_anonymous_auth=bool(v["kubelet_anonymous_auth"]),
            kubelet_authorization_mode=str(v["kubelet_authorization_mode"]),
            ingress=bool(v["ingress"]),
            ingress_port=v["ingress_port"],
            default_storage_class=bool(v["default_storage_class"]),
            node_heartbeat=kubelet_heartbeat(v),
            trace=bool(v["trace"]),
            ports=str(v["ports"]),
            console=not v["no_console"],
            console_address=str(v["console_address"]),
            console_port=v["console_port"],
            apiservers=v["apiservers"],
        )


def _names(text: object) -> list[str]:
    return [name.strip() for name in str(text or "").split(",") if name.strip()]


def admission_plugins(v: Resolved) -> tuple[str, ...]:
    """v1.0's --admission-control list as written, else 1.31's default chain with
    --enable-admission-plugins / --disable-admission-plugins applied (in upstream's order)."""
    from ..apiserver.admission import PLUGINS, check_names
    from ..apiserver.admission.order import enabled

    if v["admission_control"] is not None:
        admission = tuple(_names(v["admission_control"]))
        try:
            check_names(admission)
        except ValueError as exc:
            raise ConfigError(f"{v.where('admission_control')}: {exc}") from None
        return admission
    try:
        return enabled(PLUGINS, _names(v["enable_admission_plugins"]),
                       _names(v["disable_admission_plugins"]))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def apiserver_options(v: dict, etcd_servers: tuple[str, ...],
                      admission: tuple[str, ...]) -> APIServerOptions:
    """APIServerOptions from resolved STORAGE + APISERVER settings."""
    public_address, public_port = public_endpoint(
        v["advertise_address"], str(v["bind_address"]), v["secure_port"],
        str(v["insecure_bind_address"]), v["insecure_port"])
    return options_from(
        APIServerOptions, v,
        admission_control=admission,
        min_request_timeout=float(v["min_request_timeout"]),
        etcd_health_urls=tuple(f"http://{server}/health" for server in etcd_servers),
        advertise_address=f"{v['insecure_bind_address']}:{v['insecure_port']}",
        backend="etcd" if etcd_servers else "embedded",
        public_address=public_address,
        public_port=public_port,
    )


def add_start_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="YAML file of settings named like these "
                        "flags (see configs/cluster.yaml); flags win over it")
    for title, group in (("storage", STORAGE), ("kube-apiserver", APISERVER),
                         ("kube-scheduler", SCHEDULER),
                         ("kube-controller-manager", CONTROLLER_MANAGER),
                         ("kubelets (simulated nodes)", KUBELET), ("all-in-one", ALL_IN_ONE),
                         ("event-loop watchdog", LOOP_WATCH)):
        add_flags(parser.add_argument_group(title), group)
