"""Every component's settings, in v1.0 flag names, grouped by component.

Kubernetes v1.0 piece: the options structs of cmd/kube-apiserver (APIServer), plugin/cmd/
kube-scheduler (SchedulerServer), cmd/kube-controller-manager (CMServer) and cmd/kubelet
(KubeletServer). `minikube-py start` takes all groups; `minikube-py apiserver`,
`controller-manager`, `scheduler` and `kubelet` each take their own, so a flag means the same
thing everywhere. In `start`, a component's own port is prefixed with its name
(`--scheduler-port`, `--controller-manager-port`, `--kubelet-port`), because there is only one
`--port`. Every port 0 disables that listener, as upstream.
"""

from __future__ import annotations

from typing import Any

from ..client.resourcelock import LEASES_LOCK, LOCK_TYPES
from ..controllers.options import ControllerOptions
from .settings import (
    Resolved,
    Setting,
    boolean,
    duration,
    integer,
    number,
    options_from,
    port,
)
from .storage_target import DEFAULT_DATA_DIR, DEFAULT_ETCD_KEY_PREFIX

_CM = ControllerOptions()

#: how a separate component (or a client command) reaches the API server (v1.0's --master)
API_CLIENT = (
    Setting("master", "http://127.0.0.1:8080", "the API server's URL", aliases=("server",)),
    Setting("kubeconfig", None, "kubeconfig with the server and credentials (overrides "
            "--master)", metavar="FILE"),
)

STORAGE = (
    Setting("data-dir", DEFAULT_DATA_DIR, "the embedded store's data directory", metavar="DIR"),
    Setting("etcd-servers", None, "store data in this etcd cluster instead of --data-dir",
            metavar="HOST:PORT[,...]"),
    Setting("etcd-key-prefix", DEFAULT_ETCD_KEY_PREFIX, "namespace prepended to every key in "
            "etcd, so clusters can share one etcd (keys already start with /registry)",
            metavar="PREFIX"),
    Setting("fsync", "always", "fsync the WAL before acknowledging a write (never: tests only)",
            choices=("always", "never")),
    Setting("etcd-compaction-interval", 300.0, "compact the store's history this often, keeping "
            "at least one interval (0 disables)", duration, metavar="DURATION"),
    Setting("snapshot-count", 10_000, "WAL records between snapshots, at least", integer),
    Setting("history-max-events", 50_000, "watch history kept at most, in events", integer),
    Setting("watch-buffer-size", 1024, "events buffered per watcher before it is caught up "
            "from history", integer),
)

APISERVER = (
    Setting("insecure-bind-address", "127.0.0.1", "address of the insecure port (no "
            "authentication: keep it on loopback)", metavar="IP"),
    Setting("insecure-port", 8080, "the API server's insecure port (0 disables it)", port,
            aliases=("port",)),
    Setting("etcd-prefix", "/registry", "the root of every key in the store", metavar="PREFIX"),
    Setting("service-cluster-ip-range", "10.0.0.0/24", "services' cluster IPs come from here",
            metavar="CIDR"),
    Setting("service-node-port-range", "30000-32767", "NodePorts come from here",
            metavar="LOW-HIGH"),
    Setting("event-ttl", 3600.0, "events are deleted this long after they are written", duration,
            metavar="DURATION"),
    Setting("max-requests-inflight", 400, "read requests served at once before 429 (0 = no "
            "limit; watches and logs are exempt)", integer),
    Setting("max-mutating-requests-inflight", 200, "write requests served at once before 429",
            integer),
    Setting("min-request-timeout", 1800, "watches without timeoutSeconds last between this and "
            "twice this many seconds", integer),
    Setting("watch-cache-size", 10_000, "events per resource kept in memory to resume watches",
            integer),
    Setting("secure-port", 6443, "the API server's HTTPS port: TLS, authentication, "
            "authorization (0 disables it)", port),
    Setting("bind-address", "0.0.0.0", "address of the secure port", metavar="IP"),
    Setting("cert-dir", "~/.minikube-py/certs", "where a self-signed CA, serving cert and "
            "admin token are generated on first start and reused (unless --tls-cert-file)",
            metavar="DIR"),
    Setting("tls-cert-file", None, "serving certificate (PEM) for the secure port",
            metavar="FILE"),
    Setting("tls-private-key-file", None, "its private key (PEM)", metavar="FILE"),
    Setting("client-ca-file", None, "CA bundle that signs client certificates (CN = user, "
            "O = groups)", metavar="FILE"),
    Setting("token-auth-file", None, "CSV token,user,uid[,\"group1,group2\"] (default on "
            "the secure port: an admin token generated into --cert-dir)", metavar="FILE"),
    Setting("basic-auth-file", None, "CSV password,user,uid[,groups]", metavar="FILE"),
    Setting("authorization-mode", "AlwaysAllow", "AlwaysAllow, AlwaysDeny, ABAC, RBAC, Node; a comma "
            "list allows what any allows", metavar="MODES"),
    Setting("authorization-policy-file", None, "ABAC policy: one JSON object per line",
            metavar="FILE"),
    Setting("kubelet-client-certificate", None, "client certificate the API server presents "
            "to kubelets; with it or --kubelet-certificate-authority kubelets are dialled over "
            "https (start: generated into --cert-dir)", metavar="FILE"),
    Setting("kubelet-client-key", None, "its private key", metavar="FILE"),
    Setting("kubelet-certificate-authority", None, "CA that signs the kubelets' serving "
            "certificates", metavar="FILE"),
    Setting("proxy-client-cert-file", None, "client certificate the API server presents to "
            "aggregated API servers (APIServices) with the X-Remote-User/-Group headers (start: "
            "CN front-proxy-client, generated into --cert-dir)", metavar="FILE"),
    Setting("proxy-client-key-file", None, "its private key", metavar="FILE"),
    Setting("enable-metrics-server", False, "serve metrics.k8s.io/v1beta1 (kubectl top, the "
            "HPA) from a built-in metrics-server that scrapes the kubelets' /metrics/resource "
            "(start: on)", boolean),
    Setting("metric-resolution", 15.0, "the built-in metrics-server scrapes kubelets at most "
            "this often", duration, metavar="DURATION"),
    Setting("service-account-issuer", "", "issuer (`iss`) of service-account tokens; a comma "
            "list accepts them all, the first is put in new tokens (start on the secure port: "
            "https://kubernetes.default.svc.cluster.local)", metavar="URL"),
    Setting("service-account-key-file", "", "PEM files (comma list) whose keys verify "
            "service-account tokens (default: the signing key)", metavar="FILES"),
    Setting("service-account-signing-key-file", None, "private key service-account tokens "
            "are signed with (start on the secure port: sa.key, generated into --cert-dir)",
            metavar="FILE"),
    Setting("api-audiences", "", "audiences (comma list) a token must name to authenticate "
            "(default: the issuers)", metavar="LIST"),
    Setting("service-account-max-token-expiration", 0.0, "longest TokenRequest expiration; "
            "longer requests are shortened (0: no maximum)", duration, metavar="DURATION"),
    Setting("admission-control", None, "v1.0's way: exactly these admission plugins, in this "
            "order (e.g. NamespaceLifecycle, v1.0's default); overrides the two flags below. "
            "Known: AlwaysAdmit, AlwaysDeny, NamespaceLifecycle, NamespaceExists, "
            "NamespaceAutoProvision, LimitRanger, ResourceQuota, ServiceAccount, "
            "SecurityContextDeny, Priority, DefaultTolerationSeconds", metavar="LIST"),
    Setting("enable-admission-plugins", "", "admission plugins to run besides 1.31's default "
            "ones (NamespaceLifecycle, LimitRanger, ServiceAccount, Priority, "
            "DefaultTolerationSeconds, ResourceQuota); they run in upstream's fixed order",
            metavar="LIST"),
    Setting("disable-admission-plugins", "", "default admission plugins not to run",
            metavar="LIST"),
    Setting("default-not-ready-toleration-seconds", 300, "tolerationSeconds of the "
            "node.kubernetes.io/not-ready:NoExecute toleration DefaultTolerationSeconds adds "
            "to every pod", integer),
    Setting("default-unreachable-toleration-seconds", 300, "tolerationSeconds of the "
            "node.kubernetes.io/unreachable:NoExecute toleration added to every pod", integer),
    Setting("request-timeout", 60.0, "requests other than watches and logs end with 504 "
            "after this long (a client trickling its body in too)", duration, metavar="DURATION"),
    Setting("max-watches-per-client", 2000, "open watches per client address or user before "
            "429 (0 = no limit)", integer),
    Setting("enable-garbage-collector", True, "Orphan and Foreground deletes wait for the "
            "garbage collector (false: they delete at once, dependents untouched)", boolean,
            metavar="BOOL"),
    Setting("advertise-address", None, "address the `kubernetes` service's endpoints give "
            "clients (default: --bind-address; 0.0.0.0 = the host's default-route interface)",
            metavar="IP"),
    Setting("cors-allowed-origins", "", "comma list of origin regexes browsers may call the "
            "API from (CORS; empty: none)", metavar="REGEXES"),
    Setting("profiling", True, "serve /debug/pprof/ (CPU profile, asyncio task dump)", boolean,
            metavar="BOOL"),
    Setting("runtime-config", "", "API versions/resources on or off: e.g. apps/v1=false, "
            "api/all=false,api/v1=true, apps/v1/deployments=false; versions 1.31 removed are "
            "off unless enabled: policy/v1beta1=true, or legacy/v1.20=true for every one "
            "v1.20's scheduler and controller manager watch", metavar="LIST"),
)

SCHEDULER = (
    # the names are scheduler/factory.py's PROVIDERS (a test keeps them in step; importing
    # the scheduler here would load numpy for every command)
    Setting("algorithm-provider", "", "a v1.x scheduling algorithm provider instead of the "
            "framework's default profile (unset, as kube-scheduler 1.31), one of: "
            "ClusterAutoscalerProvider | DefaultProvider | V1.0Provider "
            "(DefaultProvider: v1.5's predicates and priorities; V1.0Provider: v1.0's)"),
    Setting("policy-config-file", None, "a v1.0 Policy JSON file (overrides "
            "--algorithm-provider)", metavar="FILE"),
    Setting("percentage-of-nodes-to-score", 100, "stop scoring after this share of nodes fit",
            integer),
    Setting("bind-pods-qps", 0.0, "pod bindings per second, at most (v1.0's "
            "BindPodsRateLimiter, where it was 50; 0 = no limit, as after upstream dropped it)", number),
    Setting("bind-pods-burst", 100, "pod bindings in a burst", integer),
    Setting("hard-pod-affinity-symmetric-weight", 1, "weight (0-100) of the implicit preferred "
            "affinity every required pod affinity term gives pods it selects", integer),
    Setting("failure-domains", "kubernetes.io/hostname,failure-domain.beta.kubernetes.io/zone,"
            "failure-domain.beta.kubernetes.io/region", "the topology keys an empty "
            "topologyKey means (preferred pod anti-affinity)", metavar="KEYS"),
    Setting("max-ebs-volumes", None, "AWS EBS volumes per node (MaxEBSVolumeCount; default "
            "$KUBE_MAX_PD_VOLS, else 39)", integer, metavar="N"),
    Setting("max-gce-pd-volumes", None, "GCE PD volumes per node (MaxGCEPDVolumeCount; default "
            "$KUBE_MAX_PD_VOLS, else 16)", integer, metavar="N"),
    Setting("max-azure-disk-volumes", None, "Azure disks per node (MaxAzureDiskVolumeCount; "
            "default $KUBE_MAX_PD_VOLS, else 16)", integer, metavar="N"),
)

def _slice_size(value: object) -> int:
    """EndpointSliceControllerOptions.Validate: between 1 and 1000 (a slice's validation
    limit)."""
    number = integer(value)
    if number < 1:
        raise ValueError(f"must be at least 1, got {number}")
    if number > 1000:
        raise ValueError(f"must be less than or equal to 1000, got {number}")
    return number


CONTROLLER_MANAGER = (
    Setting("controllers", "*", "controllers to run: * = all, name enables, -name disables "
            "(replicationcontroller, replicaset, deployment, endpoint, nodelifecycle, namespace, "
            "garbagecollector, serviceaccount, resourcequota, persistentvolume-binder, "
            "taint-eviction-controller, root-ca-cert-publisher, serviceaccount-token, "
            "csrsigning, csrapproving, csrcleaner, job, cronjob, ttl-after-finished, podgc, "
            "disruption, horizontalpodautoscaling, daemonset, statefulset, endpointslice, "
            "endpointslicemirroring, attachdetach, csi-hostpath-provisioner, "
            "csi-hostpath-attacher)",
            metavar="LIST"),
    Setting("concurrent-rc-syncs", _CM.concurrent_rc_syncs, "replication controllers synced "
            "at once", integer),
    Setting("concurrent-replicaset-syncs", _CM.concurrent_replicaset_syncs,
            "replica sets synced at once", integer),
    Setting("concurrent-deployment-syncs", _CM.concurrent_deployment_syncs,
            "deployments synced at once", integer),
    Setting("concurrent-daemonset-syncs", _CM.concurrent_daemonset_syncs,
            "daemon sets synced at once", integer),
    Setting("concurrent-statefulset-syncs", _CM.concurrent_statefulset_syncs,
            "stateful sets synced at once", integer),
    Setting("concurrent-endpoint-syncs", _CM.concurrent_endpoint_syncs,
            "services' endpoints synced at once", integer),
    Setting("concurrent-service-endpoint-syncs", _CM.concurrent_service_endpoint_syncs,
            "services' EndpointSlices synced at once", integer),
    Setting("max-endpoints-per-slice", _CM.max_endpoints_per_slice, "endpoints the "
            "endpointslice controller puts in one EndpointSlice (1-1000)", _slice_size),
    Setting("mirroring-concurrent-service-endpoint-syncs",
            _CM.mirroring_concurrent_service_endpoint_syncs, "Endpoints mirrored to "
            "EndpointSlices at once", integer),
    Setting("mirroring-max-endpoints-per-subset", _CM.mirroring_max_endpoints_per_subset,
            "addresses of one Endpoints subset mirrored to an EndpointSlice (1-1000)",
            _slice_size),
    Setting("concurrent-namespace-syncs", _CM.concurrent_namespace_syncs,
            "namespaces emptied at once", integer),
    Setting("concurrent-gc-syncs", _CM.concurrent_gc_syncs, "garbage collector workers", integer),
    Setting("pvclaimbinder-sync-period", _CM.pvclaimbinder_sync_period, "how often the claim "
            "binder re-examines every claim and volume", duration, metavar="DURATION"),
    Setting("concurrent-resource-quota-syncs", _CM.concurrent_resource_quota_syncs,
            "resource quotas recalculated at once", integer),
    Setting("concurrent-job-syncs", _CM.concurrent_job_syncs, "jobs synced at once", integer),
    Setting("concurrent-cron-job-syncs", _CM.concurrent_cron_job_syncs,
            "cron jobs synced at once", integer),
    Setting("concurrent-ttl-after-finished-syncs", _CM.concurrent_ttl_after_finished_syncs,
            "finished jobs checked for their TTL at once", integer),
    Setting("terminated-pod-gc-threshold", _CM.terminated_pod_gc_threshold, "terminated pods "
            "kept before podgc deletes the oldest (0: no limit)", integer),
    Setting("resource-quota-sync-period", _CM.resource_quota_sync_period, "how often every "
            "quota's usage is recalculated", duration, metavar="DURATION"),
    Setting("horizontal-pod-autoscaler-sync-period",
            _CM.horizontal_pod_autoscaler_sync_period, "how often every HorizontalPodAutoscaler "
            "is reconciled", duration, metavar="DURATION"),
    Setting("horizontal-pod-autoscaler-downscale-stabilization",
            _CM.horizontal_pod_autoscaler_downscale_stabilization, "the scale-down "
            "stabilization window of HPAs that do not set their own", duration,
            metavar="DURATION"),
    Setting("horizontal-pod-autoscaler-tolerance", _CM.horizontal_pod_autoscaler_tolerance,
            "the least change of the usage ratio the HPA acts on", number),
    Setting("node-monitor-period", _CM.node_monitor_period, "how often node status is checked",
            duration, metavar="DURATION"),
    Setting("node-monitor-grace-period", _CM.node_monitor_grace_period, "a node silent this "
            "long is marked Ready=Unknown", duration, metavar="DURATION"),
    Setting("node-startup-grace-period", _CM.node_startup_grace_period, "a new node may stay "
            "silent this long before it is marked Unknown", duration, metavar="DURATION"),
    Setting("pod-eviction-timeout", _CM.pod_eviction_timeout, "with "
            "--enable-taint-manager=false (v1.0): pods of a node not Ready this long are "
            "deleted", duration, metavar="DURATION"),
    Setting("root-ca-file", None, "CA certificate published in every namespace's "
            "kube-root-ca.crt ConfigMap (start: the secure port's generated CA)",
            metavar="FILE"),
    Setting("cluster-signing-cert-file", None, "PEM CA certificate csrsigning issues "
            "certificates with (start: the secure port's generated CA)", metavar="FILE"),
    Setting("cluster-signing-key-file", None, "PEM private key of --cluster-signing-cert-file",
            metavar="FILE"),
    Setting("cluster-signing-duration", _CM.cluster_signing_duration, "the longest validity "
            "of a certificate csrsigning issues (a CSR's expirationSeconds may ask for less)",
            duration, metavar="DURATION"),
    Setting("legacy-service-account-token-secrets", _CM.legacy_service_account_token_secrets,
            "give every ServiceAccount a kubernetes.io/service-account-token Secret "
            "<account>-token-xxxxx listed in its secrets, as before 1.24 (clients older than "
            "1.24 wait for it)", boolean, switch=True),
    Setting("service-account-private-key-file", None, "private key the serviceaccount-token "
            "controller signs token Secrets' JWTs with (start on the secure port: the API "
            "server's sa.key); unset: an opaque token no authenticator accepts",
            metavar="FILE"),
    Setting("enable-taint-manager", _CM.enable_taint_manager, "a node not Ready is tainted "
            "node.kubernetes.io/not-ready or unreachable:NoExecute and pods are evicted when "
            "their tolerationSeconds run out (false: v1.0's --pod-eviction-timeout)", boolean,
            metavar="BOOL"),
    Setting("deleting-pods-qps", _CM.deleting_pods_qps, "pod evictions per second", number),
    Setting("deleting-pods-burst", _CM.deleting_pods_burst, "pod evictions in a burst", integer),
)

LEADER_ELECTION = (
    Setting("leader-elect", False, "take part in leader election; only the leader works",
            boolean, switch=True),
    Setting("leader-elect-lease-duration", 15.0, "how long a lease lasts unrenewed", duration,
            metavar="DURATION"),
    Setting("leader-elect-renew-deadline", 10.0, "a leader that cannot renew for this long "
            "stops leading", duration, metavar="DURATION"),
    Setting("leader-elect-retry-period", 2.0, "between acquire/renew attempts", duration,
            metavar="DURATION"),
    Setting("leader-elect-resource-lock", LEASES_LOCK, "the lock object: a Lease (upstream's "
            "default), v1.3's leader annotation on an Endpoints or ConfigMap, or both "
            "(endpointsleases, configmapsleases: the 1.17-1.25 migration locks)",
            choices=LOCK_TYPES),
)

def kube_api_client(upstream_qps: float, burst: int) -> tuple[Setting, ...]:
    """How a separate component's client talks to the API server (v1.5 SchedulerServer /
    CMServer ContentType, KubeAPIQPS, KubeAPIBurst; 1.31 ClientConnectionConfiguration).
    The QPS limit is off unless asked for, as --bind-pods-qps: upstream's 50 (scheduler) and
    20 (controller manager) made the separate-process cluster of the e2e tests miss its
    deadlines (the controller manager's informers, events and status writes queue behind
    each other); the burst keeps upstream's value."""
    return (
        Setting("kube-api-content-type", "application/json", "content type of requests sent "
                "to the API server: application/json (the default here) or "
                "application/vnd.kubernetes.protobuf (upstream's default; watches then stream "
                "protobuf frames too)", metavar="TYPE"),
        Setting("kube-api-qps", 0.0, "requests per second to the API server, at most "
                f"(client-side; 0 = no limit; upstream's default: {upstream_qps:g})", number),
        Setting("kube-api-burst", burst, "requests to the API server in a burst (with "
                "--kube-api-qps)", integer),
    )


#: a separate component's /debug/pprof on its --port (v1.5 EnableProfiling and
#: EnableContentionProfiling)
PROFILING = (
    Setting("profiling", True, "serve /debug/pprof/ on --port (CPU profile, asyncio task dump)",
            boolean, metavar="BOOL"),
    Setting("contention-profiling", False, "with --profiling: also serve /debug/pprof/block, "
            "the tasks waiting on a lock, semaphore, event, condition or queue",
            boolean, metavar="BOOL"),
)

KUBELET = (
    Setting("node-status-update-frequency", 10.0, "how often each kubelet computes its node's "
            "status (and posts it, with --node-heartbeat-mode=status)", duration,
            metavar="DURATION"),
    # kubelet/node_lease.py's LEASE_MODE, HEARTBEAT_MODES and DEFAULT_LEASE_DURATION_SECONDS,
    # spelled out: importing the kubelet package here would load it for every command
    Setting("node-heartbeat-mode", "lease", "lease: renew a Lease in kube-node-lease and "
            "post the status only on change or every --node-status-report-frequency (upstream "
            "1.17+); status: post the full status every --node-status-update-frequency (v1.0)",
            choices=("lease", "status")),
    Setting("node-lease-duration-seconds", 40, "the node Lease's "
            "leaseDurationSeconds", integer),
    Setting("node-lease-renew-interval", 10.0, "how often each kubelet renews its node Lease "
            "(upstream: a quarter of the lease duration)", duration, metavar="DURATION"),
    Setting("node-status-report-frequency", 300.0, "lease mode: post the node status at least "
            "this often even when it has not changed", duration, metavar="DURATION"),
    Setting("image-pull-duration", 0.2, "simulated image pull per container", duration,
            metavar="DURATION"),
    Setting("container-start-duration", 0.1, "simulated container start", duration,
            metavar="DURATION"),
    Setting("max-termination-grace-period", None, "cap on a deleted pod's grace period (default: "
            "the pod's own)", duration, metavar="DURATION"),
)


def kubelet_heartbeat(values: Resolved) -> dict[str, Any]:
    """The KubeletConfig fields of the heartbeat settings (ConfigError when out of range:
    upstream's ValidateKubeletConfiguration wants a positive lease duration)."""
    if values["node_lease_duration_seconds"] <= 0:
        from .storage_target import ConfigError

        raise ConfigError(f"{values.where('node_lease_duration_seconds')}: must be greater "
                          "than 0")
    for name in ("node_lease_renew_interval", "node_status_report_frequency"):
        if values[name] <= 0:
            from .storage_target import ConfigError

            raise ConfigError(f"{values.where(name)}: must be positive")
    return {"heartbeat_mode": values["node_heartbeat_mode"],
            "node_lease_duration_seconds": values["node_lease_duration_seconds"],
            "node_lease_renew_interval": values["node_lease_renew_interval"],
            "node_status_report_frequency": values["node_status_report_frequency"]}


def controller_options(values: Resolved) -> ControllerOptions:
    """ControllerOptions from resolved CONTROLLER_MANAGER settings."""
    from ..controllers.manager import parse_controllers

    try:
        controllers = parse_controllers(str(values["controllers"]))
    except ValueError as exc:
        from .storage_target import ConfigError

        raise ConfigError(f"{values.where('controllers')}: {exc}") from None
    return options_from(ControllerOptions, values, controllers=controllers)
