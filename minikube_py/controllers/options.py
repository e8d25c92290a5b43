"""The controller manager's settings, named after kube-controller-manager's flags.

Kubernetes v1.0 piece: cmd/kube-controller-manager/app/controllermanager.go's
CMServer (NodeMonitorPeriod 5 s, NodeMonitorGracePeriod 40 s, NodeStartupGracePeriod 60 s,
PodEvictionTimeout 5 m, ConcurrentRCSyncs 5, ...). One frozen value object is handed to every
controller, so `minikube-py start` and `minikube-py controller-manager` configure them alike.
"""

from __future__ import annotations

from dataclasses import dataclass

#: controllers run by default, by the names `--controllers` takes (upstream's names)
ALL_CONTROLLERS = ("replicationcontroller", "replicaset", "deployment", "endpoint",
                   "nodelifecycle", "namespace", "garbagecollector", "serviceaccount",
                   "resourcequota", "persistentvolume-binder", "taint-eviction-controller",
                   "root-ca-cert-publisher", "serviceaccount-token", "csrsigning",
                   "csrapproving", "csrcleaner", "job", "cronjob", "ttl-after-finished",
                   "podgc", "disruption", "horizontalpodautoscaling", "daemonset",
                   "statefulset", "endpointslice", "endpointslicemirroring",
                   # storage (issue 19): upstream's attach/detach controller, and the
                   # simulated CSI driver's provisioner and attacher sidecars
                   "attachdetach", "csi-hostpath-provisioner", "csi-hostpath-attacher")


@dataclass(frozen=True)
class ControllerOptions:
    controllers: tuple[str, ...] = ALL_CONTROLLERS
    concurrent_rc_syncs: int = 5                 # --concurrent-rc-syncs
    concurrent_replicaset_syncs: int = 5         # --concurrent-replicaset-syncs
    concurrent_deployment_syncs: int = 5         # --concurrent-deployment-syncs
    concurrent_daemonset_syncs: int = 2          # --concurrent-daemonset-syncs
    concurrent_statefulset_syncs: int = 5        # --concurrent-statefulset-syncs
    concurrent_endpoint_syncs: int = 5           # --concurrent-endpoint-syncs
    #: the EndpointSlice controllers (endpointslice.py, endpointslicemirroring.py)
    concurrent_service_endpoint_syncs: int = 5   # --concurrent-service-endpoint-syncs
    max_endpoints_per_slice: int = 100           # --max-endpoints-per-slice
    mirroring_concurrent_service_endpoint_syncs: int = 5  # --mirroring-concurrent-service-...
    mirroring_max_endpoints_per_subset: int = 1000  # --mirroring-max-endpoints-per-subset
    concurrent_namespace_syncs: int = 2          # --concurrent-namespace-syncs
    concurrent_gc_syncs: int = 20                # --concurrent-gc-syncs
    concurrent_serviceaccount_syncs: int = 5     # --concurrent-serviceaccount-token-syncs
    concurrent_resource_quota_syncs: int = 5     # --concurrent-resource-quota-syncs
    concurrent_job_syncs: int = 5                # --concurrent-job-syncs
    concurrent_cron_job_syncs: int = 5           # --concurrent-cron-job-syncs
    concurrent_ttl_after_finished_syncs: int = 5  # --concurrent-ttl-after-finished-syncs
    #: --terminated-pod-gc-threshold: podgc deletes the oldest terminated pods above it
    #: (0 disables that part)
    terminated_pod_gc_threshold: int = 12500
    resource_quota_sync_period: float = 10.0     # --resource-quota-sync-period (v1.0: 10 s)
    #: the HPA controller (hpa.py): upstream's flags and defaults
    horizontal_pod_autoscaler_sync_period: float = 15.0             # 15 s
    horizontal_pod_autoscaler_downscale_stabilization: float = 300.0  # 5 m
    horizontal_pod_autoscaler_tolerance: float = 0.1
    node_monitor_period: float = 5.0             # --node-monitor-period
    node_monitor_grace_period: float = 40.0      # --node-monitor-grace-period
    node_startup_grace_period: float = 60.0      # --node-startup-grace-period
    pod_eviction_timeout: float = 300.0          # --pod-eviction-timeout (v1.0 eviction only)
    #: --enable-taint-manager: a node that is not Ready gets a NoExecute taint and the
    #: taint-eviction-controller evicts what does not tolerate it (1.31's only way); false:
    #: v1.0's eviction of every pod after --pod-eviction-timeout
    enable_taint_manager: bool = True
    #: --root-ca-file: the CA root-ca-cert-publisher puts in every namespace's kube-root-ca.crt
    #: (and serviceaccount-token in every token Secret's ca.crt)
    root_ca_file: str | None = None
    #: --cluster-signing-cert-file/--cluster-signing-key-file: the CA csrsigning signs approved
    #: CSRs with (start: the secure port's generated CA); unset = nothing is signed
    cluster_signing_cert_file: str | None = None
    cluster_signing_key_file: str | None = None
    #: --cluster-signing-duration: the longest certificate csrsigning issues (upstream 1 year)
    cluster_signing_duration: float = 8760 * 3600.0
    #: --legacy-service-account-token-secrets: serviceaccount-token also gives every account a
    #: `<account>-token-xxxxx` Secret, as before 1.24 (off, as 1.31 generates none)
    legacy_service_account_token_secrets: bool = False
    #: --service-account-private-key-file: serviceaccount-token signs Secrets' tokens with it
    #: (legacy JWTs the API server's authenticator accepts); unset: an opaque random token
    service_account_private_key_file: str | None = None
    deleting_pods_qps: float = 0.1               # --deleting-pods-qps (v1.0 eviction limiter)
    deleting_pods_burst: int = 10                # --deleting-pods-burst
    namespace_sync_period: float = 300.0         # --namespace-sync-period
    min_resync_period: float = 43200.0           # --min-resync-period (12 h)
    pvclaimbinder_sync_period: float = 15.0      # --pvclaimbinder-sync-period
