"""What a test cluster runs: the options of `Cluster`, turned into `minikube-py start` flags.

Kubernetes piece: envtest's `Environment` fields (which binaries, CRD paths, flags) and kind's
cluster config — here a plain value object. It is pure: `start_argv()` maps it onto the same
flags `minikube-py start` parses, so a test cluster is exactly a `start` cluster (no second
wiring to drift), only with test-friendly defaults: no fsync, ports the OS picks, no health
listeners nobody probes, zero simulated image-pull and container-start time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

#: the components a cluster can leave out (start's --disable)
COMPONENTS = ("scheduler", "controller-manager", "kubelet")
#: store choices besides an etcd URL
STORES = ("tempdir", "memory")


@dataclass(frozen=True)
class ClusterOptions:
    """A test cluster's shape. `store`: "tempdir" (the embedded store in a temporary
    directory, `--fsync never`), "memory" (the same real store with its data dir on a tmpfs,
    /dev/shm, when the machine has one) or an etcd URL (`http://127.0.0.1:2379`, each cluster
    under its own key prefix). `flags`: any other `minikube-py start` flag by name, without
    dashes (`{"node-heartbeat-mode": "status"}`); a value of True is a bare switch."""

    nodes: int = 3
    components: frozenset[str] = frozenset(COMPONENTS)
    controllers: str = "*"
    secure: bool = False
    store: str = "tempdir"
    kubelet_port: bool = True
    ready_timeout: float = 30.0
    #: serve the web console (minikube_py.console) on 127.0.0.1, a port the OS picks
    console: bool = False
    flags: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.components) - set(COMPONENTS)
        if unknown:
            raise ValueError(f"unknown component {min(unknown)!r} "
                             f"(known: {', '.join(COMPONENTS)})")
        if self.nodes < 0:
            raise ValueError("nodes must be >= 0")
        if self.store not in STORES and not is_etcd_url(self.store):
            raise ValueError(f"store must be one of {', '.join(STORES)} or an etcd URL "
                             f"(http://host:port), not {self.store!r}")

    def replace(self, **changes: object) -> ClusterOptions:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    @property
    def etcd_servers(self) -> str | None:
        return etcd_servers(self.store) if is_etcd_url(self.store) else None


def is_etcd_url(store: str) -> bool:
    return store.startswith(("http://", "https://", "etcd://"))


def etcd_servers(url: str) -> str:
    """`--etcd-servers` takes host:port[,host:port]; a URL's scheme is dropped."""
    hosts = []
    for part in url.split(","):
        part = part.strip()
        for scheme in ("http://", "https://", "etcd://"):
            part = part.removeprefix(scheme)
        hosts.append(part.rstrip("/"))
    return ",".join(hosts)


def start_argv(options: ClusterOptions, data_dir: Path, *, etcd_prefix: str = "") -> list[str]:
    """The `minikube-py start` command line of this cluster (ports are placeholders that mean
    "enabled": the cluster binds port 0 and reads the real ones back)."""
    argv = ["start", "--nodes", str(options.nodes), "--fsync", "never",
            "--insecure-port", "8080",
            "--secure-port", "6443" if options.secure else "0",
            "--cert-dir", str(data_dir / "certs"),
            "--scheduler-port", "0", "--controller-manager-port", "0",
            "--kubelet-port", "10250" if options.kubelet_port else "0",
            "--kubeconfig-out", "", "--controllers", options.controllers,
            "--image-pull-duration", "0", "--container-start-duration", "0",
            "--ready-timeout", f"{options.ready_timeout:g}"]
    servers = options.etcd_servers
    if servers:
        argv += ["--etcd-servers", servers, "--etcd-key-prefix", etcd_prefix]
    else:
        argv += ["--data-dir", str(data_dir / "data")]
    argv += ["--console-port", "0"] if options.console else ["--no-console"]
    disabled = [c for c in COMPONENTS if c not in options.components]
    if disabled:
        argv += ["--disable", ",".join(disabled)]
    for name, value in options.flags.items():
        flag = f"--{name.lstrip('-')}"
        if value is True:
            argv.append(flag)
        else:
            argv += [flag, str(value).lower() if isinstance(value, bool) else str(value)]
    return argv
