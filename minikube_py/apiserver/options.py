"""kube-apiserver settings (v1.0 cmd/kube-apiserver/app/server.go's APIServer struct).

Kept apart from server.py so the CLI can parse flags without importing aiohttp.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class APIServerOptions:
    """kube-apiserver flags (same names, same defaults, where v1.0 had them)."""

    etcd_prefix: str = "/registry"
    service_cluster_ip_range: str = "10.0.0.0/24"
    service_node_port_range: str = "30000-32767"
    event_ttl: float = 3600.0
    max_requests_inflight: int = 400
    max_mutating_requests_inflight: int = 200
    min_request_timeout: float = 1800.0
    watch_cache_size: int = 10_000
    watch_buffer_events: int = 10_000
    bookmark_interval: float = 60.0
    #: a watch connection with more than this unsent is a slow client: its stream is closed
    watch_max_unsent_bytes: int = 8 * 1024 * 1024
    #: non-long-running requests end with 504 after this many seconds (--request-timeout)
    request_timeout: float = 60.0
    #: a connection that has not sent complete request headers this long after it opened or
    #: after its last response is closed (ReadHeaderTimeout); see connection.py
    read_header_timeout: float = 32.0
    #: open watches per client before 429 (0 = no limit; in-process components are exempt)
    max_watches_per_client: int = 2000
    scheduler_health_url: str = "http://127.0.0.1:10251/healthz"
    controller_manager_health_url: str = "http://127.0.0.1:10252/healthz"
    etcd_health_urls: tuple[str, ...] = ()  # empty: probe the embedded store itself
    advertise_address: str = "127.0.0.1:8080"
    backend: str = "embedded"
    #: --enable-garbage-collector: Orphan/Foreground deletes add the `orphan` /
    #: `foregroundDeletion` finalizer for the garbage collector to finish
    enable_garbage_collector: bool = True
    #: the admission chain, in order (admission/registry.py PLUGINS). The CLI fills it from
    #: --enable/--disable-admission-plugins (1.31's default chain, admission/order.py) or v1.0's
    #: --admission-control; an APIServer built directly gets v1.0's NamespaceLifecycle alone
    admission_control: tuple[str, ...] = ("NamespaceLifecycle",)
    #: DefaultTolerationSeconds: --default-not-ready-toleration-seconds and
    #: --default-unreachable-toleration-seconds
    default_not_ready_toleration_seconds: int = 300
    default_unreachable_toleration_seconds: int = 300
    extra_version: dict[str, str] = field(default_factory=dict)
    # -- the secure port (TLS requests only; the insecure port stays unauthenticated) ----------
    #: --token-auth-file: CSV token,user,uid[,"group1,group2"]
    token_auth_file: str | None = None
    #: --basic-auth-file: CSV password,user,uid[,"group1,group2"]
    basic_auth_file: str | None = None
    #: --client-ca-file: client certificates signed by this CA authenticate (CN user, O groups)
    client_ca_file: str | None = None
    #: --authorization-mode: comma list of AlwaysAllow, AlwaysDeny, ABAC, RBAC, Node (union)
    authorization_mode: str = "AlwaysAllow"
    #: --authorization-policy-file: ABAC policy, one JSON object per line
    authorization_policy_file: str | None = None
    # -- service-account tokens (serviceaccount/): off unless a key or issuer is given ------
    #: --service-account-issuer: comma list; the first goes into new tokens' `iss`, all are
    #: accepted (`start` on the secure port: https://kubernetes.default.svc.cluster.local)
    service_account_issuer: str = ""
    #: --service-account-key-file: comma list of PEM files whose keys verify tokens (default:
    #: the signing key's public half)
    service_account_key_file: str = ""
    #: --service-account-signing-key-file: the private key TokenRequest signs with (`start` on
    #: the secure port: <cert-dir>/sa.key, generated)
    service_account_signing_key_file: str | None = None
    #: --api-audiences: comma list of audiences tokens must name (default: the issuers)
    api_audiences: str = ""
    #: --service-account-max-token-expiration, seconds: TokenRequest clamps to it (0: none)
    service_account_max_token_expiration: float = 0.0
    # -- how the API server reaches kubelets (kubelet_client.py): any of these set, https ----
    #: --kubelet-client-certificate / --kubelet-client-key: presented to kubelets
    kubelet_client_certificate: str | None = None
    kubelet_client_key: str | None = None
    #: --kubelet-certificate-authority: verifies the kubelets' serving certificates
    kubelet_certificate_authority: str | None = None
    # -- API aggregation (aggregator/) --------------------------------------------------------
    #: --proxy-client-cert-file / --proxy-client-key-file: presented to aggregated API servers
    #: (the front proxy's identity; `start` generates CN front-proxy-client into --cert-dir)
    proxy_client_cert_file: str | None = None
    proxy_client_key_file: str | None = None
    #: how often every non-local APIService is probed (upstream's 30 s resync; not a flag)
    apiservice_resync_seconds: float = 30.0
    #: --enable-metrics-server (not upstream's: metrics-server is a separate server there):
    #: serve metrics.k8s.io/v1beta1 from the built-in scraper (metrics_server/); `start` sets it
    enable_metrics_server: bool = False
    #: --metric-resolution (metrics-server's flag): the shortest time between kubelet scrapes
    metric_resolution: float = 15.0
    # -- the v1.0 APIServer struct's extras (bootstrap.py, cors.py, profiling.py,
    # runtime_config.py) ------------------------------------------------------------------
    #: --cors-allowed-origins: comma list of origin regexes (empty: no CORS headers at all)
    cors_allowed_origins: str = ""
    #: --profiling: /debug/pprof/ (CPU profile, task dump) on the API server's ports
    profiling: bool = True
    #: --runtime-config: `group/version[/resource]=true|false`, `api/all=false`, ...
    runtime_config: str = ""
    #: where clients reach this API server: the `kubernetes` service's endpoints (v1.0's
    #: Config.PublicAddress and ReadWritePort); "" or 0.0.0.0: the address of the host's
    #: default-route interface (upstream ChooseHostInterface). See public_endpoint().
    public_address: str = ""
    public_port: int = 6443
    #: how often the `kubernetes` service and its endpoints are reconciled (upstream's
    #: EndpointReconcilerInterval, 10 s; not a flag upstream either)
    endpoint_reconciler_interval: float = 10.0
    #: how often the API Priority and Fairness bootstrap objects are re-ensured (upstream's
    #: config producer: every minute; not a flag upstream either)
    apf_config_interval: float = 60.0


def public_endpoint(advertise_address: str | None, bind_address: str, secure_port: int,
                    insecure_bind_address: str, insecure_port: int) -> tuple[str, int]:
    """The address and port the `kubernetes` service's endpoints name (upstream: the
    --advertise-address, else the secure port's --bind-address, and the secure port); with
    --secure-port 0, the insecure port and its address. An unspecified address (0.0.0.0, ::)
    is resolved to the host's interface by the bootstrap controller, as upstream does."""
    if secure_port:
        return advertise_address or bind_address, secure_port
    return advertise_address or insecure_bind_address, insecure_port
