"""The pytest plugin, run by pytester on generated test files: fixtures, options and ini
keys, the marker, the failure report, kubectl skips, pytest-asyncio, anyio and xdist."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from minikube_py.testing.pytest_plugin import options_from_config

PLUGIN = ("-p", "minikube_py.testing.pytest_plugin")


@pytest.fixture(scope="module", autouse=True)
def _loaded_once() -> None:
    """pytester's in-process runs drop the modules an inner run imported; numpy (the
    scheduler's) cannot be imported twice in a process, and the rest would be imported again
    by every run, so load every module a cluster and the clients use here first, where the
    inner runs' clean-up leaves them alone."""
    import kubernetes.config  # noqa: F401
    import kubernetes_asyncio.config  # noqa: F401

    # hypothesis's pytest plugin imports this at every session's end (seconds, rewritten)
    with contextlib.suppress(ImportError):
        import hypothesis.internal.observability  # noqa: F401

    from minikube_py.testing import Cluster

    with Cluster(nodes=1, secure=True) as c:
        c.create_namespace()
        c.kubernetes_client().close()


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess(*PLUGIN, "-p", "no:cacheprovider", "-o",
                                        "asyncio_default_fixture_loop_scope=function", *args)


def test_fixtures_share_the_session_cluster_and_give_each_test_its_own_namespace(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import json, pathlib
        from minikube_py.client.resources import NAMESPACES

        seen = []

        def test_one(kube_cluster, kube_namespace, kubeconfig):
            assert pathlib.Path(kubeconfig).read_text().count(kube_cluster.url) == 1
            ns = kube_cluster.run(kube_cluster.client.get(NAMESPACES, kube_namespace))
            assert ns["status"]["phase"] == "Active"
            seen.append((kube_cluster.url, kube_namespace))

        def test_two(kube_cluster, kube_namespace):
            url, first = seen[0]
            assert kube_cluster.url == url and kube_namespace != first
            kube_cluster.wait_for(  # the first test's teardown deleted it
                NAMESPACES, first,
                lambda ns: ns is None or bool(ns["metadata"].get("deletionTimestamp")),
                timeout=5)
            assert len(kube_cluster.node_names) == 3

        def test_deleting_its_own_namespace_is_fine(kube_cluster, kube_namespace):
            kube_cluster.delete_namespace(kube_namespace)
            kube_cluster.wait_for(NAMESPACES, kube_namespace, "deleted", timeout=10)
    """)
    run(pytester).assert_outcomes(passed=3)


def test_command_line_wins_over_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("""
        [pytest]
        kube_nodes = 2
        kube_controllers = *,-cronjob
        kube_flags =
            node-heartbeat-mode=status
    """)
    pytester.makepyfile("""
        def test_nodes(kube_cluster, request):
            assert len(kube_cluster.node_names) == int(request.config.getoption("kube_nodes")
                                                      or request.config.getini("kube_nodes"))
            manager = kube_cluster.running.component("controller-manager").handle
            assert "cronjob" not in manager.options.controllers
            assert kube_cluster.options.flags == {"node-heartbeat-mode": "status"}
    """)
    run(pytester).assert_outcomes(passed=1)
    run(pytester, "--kube-nodes", "1").assert_outcomes(passed=1)


def test_options_reach_cluster_options(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig(*PLUGIN, "--kube-nodes", "4", "--kube-disable",
                                  "scheduler", "--kube-secure", "--kube-store", "memory",
                                  "--kube-flag", "ingress=true")
    options = options_from_config(config)
    assert options.nodes == 4 and options.secure and options.store == "memory"
    assert options.components == frozenset({"controller-manager", "kubelet"})
    assert options.flags == {"ingress": "true"}


def test_bad_options_are_usage_errors(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(kube_cluster): pass")
    result = run(pytester, "--kube-store", "nowhere")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*store must be one of tempdir, memory or an etcd URL*"])


def test_marker_gives_a_dedicated_cluster(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest
        urls = []

        def test_session(kube_cluster):
            urls.append(kube_cluster.url)
            assert len(kube_cluster.node_names) == 1

        @pytest.mark.kube_cluster(nodes=4, secure=True)
        def test_dedicated(kube_cluster, kube_namespace):
            assert len(kube_cluster.node_names) == 4
            assert kube_cluster.url.startswith("https://") and kube_cluster.url not in urls

        @pytest.mark.kube_cluster(colour="blue")
        def test_bad_marker(kube_cluster):
            pass
    """)
    result = run(pytester, "--kube-nodes", "1")
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*kube_cluster*colour*"])


def test_failure_report_shows_the_namespaces_events_and_trace(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        from minikube_py.client.resources import CONFIGMAPS, PODS
        from minikube_py.trace import TRACE

        def test_fails(kube_cluster, kube_namespace):
            assert TRACE.active  # the ring records while the test runs
            c = kube_cluster
            c.run(c.client.create(CONFIGMAPS, {"metadata": {"name": "evidence"}},
                                  kube_namespace))
            c.run(c.client.create(PODS, {"metadata": {"name": "witness"}, "spec": {
                "containers": [{"name": "c", "image": "busybox"}]}}, kube_namespace))
            c.wait_for("pods", "witness", "Ready", namespace=kube_namespace)
            assert False, "on purpose"

        def test_passes(kube_namespace):
            pass

        def test_not_recording_between_tests():
            assert not TRACE.active
    """)
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=1)
    out = result.stdout.str()
    assert out.count("minikube-py cluster") == 1  # only the failed test gets the section
    result.stdout.fnmatch_lines([
        "*minikube-py cluster*",
        "namespace test-*: * event(s)",
        "*Normal*Scheduled*Pod/witness: Successfully assigned test-*/witness to node-*",
        "trace of objects in test-* while the test ran (* record(s)):",
        "* ms  namespaces/test-*  *created  *rv=* /registry/namespaces/test-*",
        "* ms  configmaps/evidence  *created  *rv=* /registry/configmaps/test-*/evidence",
        "* ms  configmaps/evidence  *request  *create -> 201 in * ms by minikube-py-testing",
        "* ms  pods/witness  *created  *rv=* /registry/pods/test-*/witness",
        "* ms  pods/witness  *bound  *create binding -> 201 in * ms by kube-scheduler",
        "* ms  pods/witness  *scheduled  *-> node-* (*/* nodes fit; best node-*=*)",
        "* ms  pods/witness  *running  *node-*: Running ip *",
        "(report made in * ms)",
    ])
    section = out[out.index("trace of objects"):out.index("(report made in")]
    assert " events" not in section  # not the report's own list, nor the Events (listed above)
    assert not re.search(r" ms  \S+ +watch ", section)  # watch deliveries are left out


def test_tests_needing_kubectl_skip_without_one(pytester: pytest.Pytester,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("KUBECTL", raising=False)
    pytester.makepyfile("""
        def test_uses_kubectl(kube_cluster):
            kube_cluster.kubectl("get", "nodes")
    """)
    result = run(pytester, "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no kubectl on PATH*"])


def test_pytest_asyncio_and_anyio_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import pytest

        @pytest.mark.asyncio
        async def test_asyncio(kube_asyncio_client, kube_namespace):
            from kubernetes_asyncio import client
            ns = await client.CoreV1Api(kube_asyncio_client).read_namespace(kube_namespace)
            assert ns.status.phase == "Active"

        @pytest.mark.anyio
        async def test_anyio(kube_cluster, kube_namespace):
            from kubernetes_asyncio import client
            api = await kube_cluster.kubernetes_asyncio_client()
            try:
                nodes = await client.CoreV1Api(api).list_node()
                assert len(nodes.items) == 3
            finally:
                await api.close()

        @pytest.fixture
        def anyio_backend():
            return "asyncio"
    """)
    run(pytester).assert_outcomes(passed=2)


def test_xdist_gives_each_worker_its_own_cluster(pytester: pytest.Pytester, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xdist", reason="pytest-xdist is not installed: pip install pytest-xdist")
    out = tmp_path / "seen"
    out.mkdir()
    pytester.makepyfile(f"""
        import json, os, pathlib
        import pytest

        @pytest.mark.parametrize("i", range(4))
        def test_where(kube_cluster, kube_namespace, i):
            worker = os.environ["PYTEST_XDIST_WORKER"]
            pathlib.Path({str(out)!r}, f"{{i}}").write_text(json.dumps([worker, kube_cluster.url]))
    """)
    # the worker processes import this checkout's minikube_py (pytester runs them elsewhere)
    root = str(Path(__file__).resolve().parents[2])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p))
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", "-n", "2",
                                           timeout=120)
    result.assert_outcomes(passed=4)
    seen = [json.loads(p.read_text()) for p in out.iterdir()]
    by_worker: dict[str, set[str]] = {}
    for worker, url in seen:
        by_worker.setdefault(worker, set()).add(url)
    assert len(by_worker) == 2
    assert all(len(urls) == 1 for urls in by_worker.values())  # one cluster per worker
    assert len(set().union(*by_worker.values())) == 2


def test_the_entry_point_is_declared() -> None:
    import tomllib

    pyproject = tomllib.loads(Path(__file__).parents[2].joinpath("pyproject.toml").read_text())
    plugins = pyproject["project"]["entry-points"]["pytest11"]
    assert plugins == {"minikube_py.testing.pytest_plugin": "minikube_py.testing.pytest_plugin"}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl")
def test_kubeconfig_fixture_works_for_subprocesses(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
        import os, subprocess

        def test_kubectl(kubeconfig, tmp_path):
            out = subprocess.run(["kubectl", "get", "nodes", "-o", "name"], check=True,
                                 capture_output=True, text=True,
                                 env={**os.environ, "KUBECONFIG": kubeconfig,
                                      "HOME": str(tmp_path)}).stdout
            assert out.split() == ["node/node-0", "node/node-1", "node/node-2"]
    """)
    run(pytester).assert_outcomes(passed=1)
