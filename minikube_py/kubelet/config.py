"""The settings of one pool of simulated nodes, named after the kubelet's flags.

Kubernetes v1.0 piece: cmd/kubelet/app/server.go's KubeletServer (--node-status-update-frequency,
--max-pods, --node-labels, --register-with-taints, ...; from 1.17's KubeletConfiguration the
node lease settings) plus the machine facts cAdvisor would report (cores, memory, disk), which
a simulated node takes from here instead. The timings of
the simulated runtime (image pull, container start) and the restart back-off (upstream's
10 s doubling to 300 s) are knobs so tests can run in milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class KubeletConfig:
    """One pool's node shape and timings (every node of an `add_nodes` call shares one)."""

    cpu: str = "4"
    memory: str = "8Gi"
    pods: int = 110                                  # --max-pods
    ephemeral_storage: str = "100Gi"
    labels: Mapping[str, str] = field(default_factory=dict)   # --node-labels
    taints: tuple[dict, ...] = ()                    # --register-with-taints
    node_status_update_frequency: float = 10.0       # --node-status-update-frequency
    #: --node-heartbeat-mode: "lease" (upstream 1.17+: a Lease renewed every
    #: node_lease_renew_interval, the status written on change or every
    #: node_status_report_frequency) or "status" (v1.0: the full status every
    #: node_status_update_frequency)
    heartbeat_mode: str = "lease"
    node_lease_duration_seconds: int = 40            # upstream nodeLeaseDurationSeconds
    node_lease_renew_interval: float = 10.0          # upstream: 0.25 x the lease duration
    node_status_report_frequency: float = 300.0      # --node-status-report-frequency
    image_pull_seconds: float = 0.2                  # simulated "Pulling" -> "Pulled"
    container_start_seconds: float = 0.1             # simulated "Created" -> "Started"
    #: shortens graceful deletion (None: honour the pod's deletionGracePeriodSeconds)
    max_termination_grace_seconds: float | None = None
    restart_backoff_seconds: float = 10.0            # CrashLoopBackOff base (doubles)
    restart_backoff_max_seconds: float = 300.0       # ... capped here (upstream MaxContainerBackOff)
    kubelet_version: str = "v1.20.0-minikube-py"
    record_events: bool = True
