"""/configz on the scheduler and the controller manager, and the scheduler's
--bind-pods-qps/--bind-pods-burst limiter (v1.0's BindPodsRateLimiter), in a cluster built
the way `minikube-py start` builds it (running_cluster over parsed `start` flags)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from minikube_py.cli.componentconfig import camel, component_config
from minikube_py.cli.component_settings import LEADER_ELECTION, SCHEDULER
from minikube_py.cli.main import build_parser
from minikube_py.cli.start import running_cluster
from minikube_py.cli.start_options import StartOptions
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.flowcontrol import TokenBucket
from minikube_py.client.resources import PODS
from tests.etcd_server import free_port


def start_options(tmp: Path, *extra: str) -> StartOptions:
    args = ["start", "--data-dir", str(tmp / "data"), "--fsync", "never", "--nodes", "2",
            "--insecure-port", str(free_port()), "--secure-port", "0",
            "--scheduler-port", str(free_port()), "--controller-manager-port", str(free_port()),
            "--kubelet-port", "0", "--kubeconfig-out", "", "--image-pull-duration", "0",
            "--container-start-duration", "0", *extra]
    return StartOptions.from_args(build_parser().parse_args(args))


async def get_json(url: str) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        return response.status, await response.json()


# -- pure ------------------------------------------------------------------------------------
def test_token_bucket_reservations_queue_in_call_order():
    now = [0.0]
    bucket = TokenBucket(qps=20, burst=1, clock=lambda: now[0])
    assert bucket.reserve() == 0.0                 # the burst
    assert bucket.reserve() == pytest.approx(0.05)  # then one every 1/qps, in order
    assert bucket.reserve() == pytest.approx(0.10)
    assert not bucket.try_accept()
    now[0] = 0.20                                  # all three due; the bucket is empty again
    assert bucket.reserve() == pytest.approx(0.0, abs=1e-9)
    assert not bucket.try_accept()


def test_component_config_shape():
    values = {"algorithm_provider": "DefaultProvider", "bind_pods_qps": 20.0,
              "bind_pods_burst": 1, "leader_elect": True, "leader_elect_lease_duration": 15.0,
              "leader_elect_renew_deadline": 10.0, "leader_elect_retry_period": 2.0}
    config = component_config((*SCHEDULER, *LEADER_ELECTION), values)
    assert config["algorithmProvider"] == "DefaultProvider"
    assert config["bindPodsQPS"] == 20.0 and config["bindPodsBurst"] == 1
    assert "policyConfigFile" not in config  # only what `values` has
    assert config["leaderElection"] == {"leaderElect": True, "leaseDuration": "15s",
                                        "renewDeadline": "10s", "retryPeriod": "2s"}
    assert camel("concurrent-rc-syncs") == "concurrentRCSyncs"


# -- a running cluster -------------------------------------------------------------------------
async def test_configz_and_bind_rate_limit(tmp_path: Path):
    # v1.0's BindPodsRateLimiter belongs to the v1.x algorithm: name its provider
    options = start_options(tmp_path, "--algorithm-provider", "DefaultProvider",
                            "--bind-pods-qps", "20", "--bind-pods-burst", "1",
                            "--node-monitor-grace-period", "45s")
    async with running_cluster(options) as cluster:
        scheduler_url = cluster.component("scheduler").url
        cm_url = cluster.component("controller-manager").url
        code, body = await get_json(f"{scheduler_url}/configz")
        assert code == 200
        config = body["componentconfig"]
        assert (config["bindPodsQPS"], config["bindPodsBurst"]) == (20.0, 1)
        assert config["algorithmProvider"] == "DefaultProvider"
        assert config["port"] == options.scheduler_port
        assert config["schedulerName"] == "default-scheduler"
        code, body = await get_json(f"{cm_url}/configz")
        assert code == 200
        config = body["componentconfig"]
        assert config["nodeMonitorGracePeriod"] == "45s"
        assert config["podEvictionTimeout"] == "5m0s"
        assert config["concurrentRCSyncs"] == options.controllers.concurrent_rc_syncs
        assert "endpoint" in config["controllers"]

        client = Client(InProcessTransport(cluster.runner.app))
        try:
            started = time.monotonic()
            for i in range(10):
                await client.create(PODS, {
                    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, "default")

            async def all_bound() -> bool:
                pods = (await client.list(PODS, "default"))["items"]
                return len(pods) == 10 and all(p["spec"].get("nodeName") for p in pods)

            deadline = time.monotonic() + 20
            while not await all_bound():
                assert time.monotonic() < deadline, "pods not bound within 20 s"
                await asyncio.sleep(0.02)
            elapsed = time.monotonic() - started
        finally:
            await client.close()
        # one token at once (burst 1), then 9 more at 20/s: at least 0.45 s
        assert elapsed >= 0.4, elapsed


async def test_unlimited_when_qps_is_zero(tmp_path: Path):
    options = start_options(tmp_path, "--algorithm-provider", "DefaultProvider",
                            "--bind-pods-qps", "0")
    async with running_cluster(options) as cluster:
        scheduler = cluster.component("scheduler")
        code, body = await get_json(f"{scheduler.url}/configz")
        assert code == 200 and body["componentconfig"]["bindPodsQPS"] == 0.0
