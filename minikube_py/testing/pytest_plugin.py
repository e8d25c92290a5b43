"""The pytest plugin: a real cluster per test session, a fresh namespace per test.

Kubernetes piece: what controller-runtime users write by hand around envtest (a suite-level
`testEnv.Start()` in BeforeSuite, a namespace per spec) — as fixtures. Registered through the
`pytest11` entry point, so installing minikube_py is enough.

- `kube_session_cluster` (session scope): one Cluster per session — per xdist worker, since
  each worker is its own process. Options: command line (`--kube-nodes`, ...) over ini keys
  (`kube_nodes`, ... in pytest.ini / `[tool.pytest.ini_options]`) over ClusterOptions' defaults.
- `kube_cluster`: that cluster, or — for a test marked `@pytest.mark.kube_cluster(nodes=5,
  ...)` (ClusterOptions fields) — a dedicated cluster started for that test and stopped after.
- `kube_namespace`: a fresh namespace's name; deleted after the test without waiting for the
  namespace controller to empty it (that happens in the background, as on a real cluster).
- `kubeconfig`: the cluster's kubeconfig file, for tools run as subprocesses.
- `kube_client` (official client ApiClient), `kube_lightkube_client`, and with pytest-asyncio
  `kube_asyncio_client` (kubernetes_asyncio ApiClient).
- a failed test that used `kube_namespace` gets a "minikube-py cluster" report section: the
  namespace's Events and the trace timeline of its objects while the test ran (requests,
  store writes, scheduling, kubelet, reconciles: trace_history.py); the trace ring records
  only while such a test runs.
- KubectlNotFound raised in a test becomes a skip.

The cluster runs on its own thread (the sync Cluster), so every test style works with it:
plain, pytest-asyncio (any loop scope), anyio.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .cluster import Cluster
    from .options import ClusterOptions

MARKER = "kube_cluster"
REPORT_TITLE = "minikube-py cluster"
#: (option, ini key, help, ini type) of the session cluster's settings
SETTINGS = (
    ("--kube-nodes", "kube_nodes", "simulated nodes of the session cluster (default 3)", "string"),
    ("--kube-store", "kube_store", ("tempdir (default), memory (a tmpfs data dir) or an etcd "
     "URL"), "string"),
    ("--kube-controllers", "kube_controllers", ("controllers to run, start's --controllers "
     "syntax (default *)"), "string"),
    ("--kube-disable", "kube_disable", ("components not to run: scheduler, "
     "controller-manager, kubelet (comma-separated)"), "string"),
    ("--kube-secure", "kube_secure", ("serve TLS with a token (the kubeconfig's server is the "
     "secure port)"), "bool"),
    ("--kube-flag", "kube_flags", ("any other `minikube-py start` flag as name=value "
     "(repeatable; ini: one per line)"), "linelist"),
)
NAMESPACE_KEY = pytest.StashKey[tuple["Cluster", str, int]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("minikube-py", "minikube_py test clusters")
    for option, ini, help_text, kind in SETTINGS:
        if kind == "bool":
            group.addoption(option, action="store_true", default=None, dest=ini, help=help_text)
        elif kind == "linelist":
            group.addoption(option, action="append", default=None, dest=ini, help=help_text)
        else:
            group.addoption(option, default=None, dest=ini, help=help_text)
        parser.addini(ini, help_text, type=kind, default=None)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Keep pytest from rewriting the asserts of all of minikube_py. pytest marks every
    module of a distribution that declares a pytest11 entry point for assertion rewriting;
    for this package that is hundreds of modules parsed and recompiled by pytest on import
    (measured: +4-7 s per pytest process where bytecode is not cached), for asserts that are
    internal invariants, not test assertions. Best effort over pytest internals: if they
    change, rewriting simply stays on."""
    hook = getattr(getattr(early_config, "_assertstate", None), "hook", None)
    marked = getattr(hook, "_must_rewrite", None)
    if isinstance(marked, set) and "minikube_py" in marked:
        marked.discard("minikube_py")
        cache = getattr(hook, "_marked_for_rewrite_cache", None)
        if isinstance(cache, dict):
            cache.clear()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}(**options): run the test on a dedicated minikube_py cluster "
        "with these ClusterOptions (nodes=5, secure=True, flags={...}, ...)")


def setting(config: pytest.Config, name: str) -> Any:
    """The command line wins over the ini file."""
    value = config.getoption(name, default=None)
    return value if value is not None else config.getini(name)


def options_from_config(config: pytest.Config) -> ClusterOptions:
    """The session cluster's ClusterOptions from options and ini keys (pure over `config`)."""
    from .options import COMPONENTS, ClusterOptions

    fields: dict[str, Any] = {}
    if (nodes := setting(config, "kube_nodes")) not in (None, ""):
        fields["nodes"] = int(nodes)
    if store := setting(config, "kube_store"):
        fields["store"] = str(store)
    if controllers := setting(config, "kube_controllers"):
        fields["controllers"] = str(controllers)
    if disable := setting(config, "kube_disable"):
        off = {c.strip() for c in str(disable).split(",") if c.strip()}
        fields["components"] = frozenset(COMPONENTS) - off | (off - set(COMPONENTS))
    if setting(config, "kube_secure"):
        fields["secure"] = True
    flags = {}
    for line in setting(config, "kube_flags") or ():
        name, sep, value = str(line).partition("=")
        if not sep:
            raise pytest.UsageError(f"kube_flags: {line!r} is not name=value")
        flags[name.strip().lstrip("-")] = value.strip()
    if flags:
        fields["flags"] = flags
    try:
        return ClusterOptions(**fields)
    except ValueError as exc:
        raise pytest.UsageError(f"minikube-py cluster options: {exc}") from None


@pytest.fixture(scope="session")
def kube_session_cluster(pytestconfig: pytest.Config) -> Iterator[Cluster]:
    """One cluster for the session (for each xdist worker: one per worker process)."""
    from .cluster import Cluster

    with Cluster(options_from_config(pytestconfig)) as cluster:
        yield cluster


@pytest.fixture
def kube_cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """The session cluster, or the dedicated cluster a `kube_cluster` marker asks for."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        yield request.getfixturevalue("kube_session_cluster")
        return
    if marker.args:
        raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keyword arguments only "
                                "(ClusterOptions fields)")
    from .cluster import Cluster

    base = options_from_config(request.config)
    try:
        options = base.replace(**marker.kwargs)
    except (TypeError, ValueError) as exc:
        raise pytest.UsageError(f"@pytest.mark.{MARKER}: {exc}") from None
    with Cluster(options) as cluster:
        yield cluster


@pytest.fixture
def kube_namespace(request: pytest.FixtureRequest, kube_cluster: Cluster) -> Iterator[str]:
    """A fresh namespace for this test; deleted afterwards (its contents are removed by the
    namespace controller in the background, as on a real cluster — nothing waits for it).
    The process's trace ring records while the test runs (from the namespace's creation to
    its deletion), for the failure report."""
    with kube_cluster.trace_recording() as since_seq:
        namespace = kube_cluster.create_namespace()
        name = namespace["metadata"]["name"]
        request.node.stash[NAMESPACE_KEY] = (kube_cluster, name, since_seq)
        yield name
        kube_cluster.delete_namespace(name)


@pytest.fixture
def kubeconfig(kube_cluster: Cluster) -> str:
    """The kubeconfig file's path (for subprocesses: `KUBECONFIG=...`)."""
    return str(kube_cluster.kubeconfig_path)


@pytest.fixture
def kube_client(kube_cluster: Cluster) -> Iterator[Any]:
    """The official `kubernetes` client's ApiClient for the cluster."""
    api = kube_cluster.kubernetes_client()
    yield api
    api.close()


@pytest.fixture
def kube_lightkube_client(kube_cluster: Cluster) -> Any:
    """A lightkube Client for the cluster (its AsyncClient: kube_cluster.lightkube_client(
    asynchronous=True))."""
    return kube_cluster.lightkube_client()


try:
    import pytest_asyncio
except ImportError:  # without pytest-asyncio: `await kube_cluster.kubernetes_asyncio_client()`
    pass
else:
    @pytest_asyncio.fixture
    async def kube_asyncio_client(kube_cluster: Cluster) -> Any:
        """A kubernetes_asyncio ApiClient for the cluster, closed after the test."""
        api = await kube_cluster.kubernetes_asyncio_client()
        try:
            yield api
        finally:
            await api.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test that needs kubectl where there is none is skipped, not failed."""
    from .kubectl import KubectlNotFound

    try:
        return (yield)
    except KubectlNotFound as exc:
        pytest.skip(str(exc))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Iterator[pytest.TestReport]:
    report: pytest.TestReport = yield
    if report.failed and call.when == "call":
        held = item.stash.get(NAMESPACE_KEY, None)
        if held is not None:
            report.sections.append((REPORT_TITLE, failure_report(*held)))
    return report


def failure_report(cluster: Cluster, namespace: str, since_seq: int) -> str:
    began = time.perf_counter()
    try:
        text = cluster.report(namespace, since_seq=since_seq)
    except Exception as exc:  # noqa: BLE001 - a report must never hide the test's failure
        return f"(no cluster report: {type(exc).__name__}: {exc})"
    return f"{text}\n(report made in {1000 * (time.perf_counter() - began):.0f} ms)"
