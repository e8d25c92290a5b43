"""What a request through the simulated ingress controller costs, next to the same request
through the API server's services proxy, and what the API Priority and Fairness bootstrap
costs the API server.

Kubernetes piece: none upstream for the ingress controller (controllers/ingress.py is a
teaching stand-in for ingress-nginx); the APF part is the `priority-and-fairness-config-producer`
post-start hook (apiserver/flowcontrol_bootstrap.py).
What it measures, in one `start --ingress` cluster (in-process, one simulated node, a
Deployment of 2 behind a Service and an Ingress): latency of sequential HTTP GETs
(a) to the ingress port with the rule's Host header, (b) to
`/api/v1/namespaces/default/services/web:80/proxy/` on the API server (the hop the ingress
controller makes), and the requests per second of --concurrency concurrent clients on (a);
then ms for one re-ensure pass of the 21 bootstrap flowcontrol objects (nothing to write) and
for a pass that recreates all of them.

Usage: python -m bench.ingress [--requests 500] [--concurrency 8] [--runs 3]
       [--json bench/results/ingress.json]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import aiohttp

from bench import common
from minikube_py.apiserver.flowcontrol_bootstrap import ensure_configuration
from minikube_py.cli.main import build_parser
from minikube_py.cli.start import running_cluster
from minikube_py.cli.start_options import StartOptions
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.resources import DEPLOYMENTS, INGRESSES, SERVICES

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
    "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                 {"name": "web", "image": "nginx", "ports": [{"containerPort": 80}]}]}}}}
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 80}]}}
INGRESS = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
           "spec": {"rules": [{"host": "web.example.com", "http": {"paths": [
               {"path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}
HOST = {"Host": "web.example.com"}


def options(data: Path) -> StartOptions:
    args = ["start", "--data-dir", str(data), "--fsync", "never", "--nodes", "1",
            "--insecure-port", str(common.free_port()), "--secure-port", "0",
            "--scheduler-port", "0", "--controller-manager-port", "0",
            "--kubelet-port", str(common.free_port()), "--kubeconfig-out", "",
            "--image-pull-duration", "0", "--container-start-duration", "0",
            "--ingress", "--ingress-port", "0"]
    return StartOptions.from_args(build_parser().parse_args(args))


async def _sequential(session: aiohttp.ClientSession, url: str, count: int,
                      headers: dict[str, str] | None = None) -> list[float]:
    latencies = []
    for _ in range(count):
        start = time.perf_counter()
        async with session.get(url, headers=headers) as resp:
            await resp.read()
            if resp.status != 200:
                raise RuntimeError(f"{url}: {resp.status}")
        latencies.append(time.perf_counter() - start)
    return latencies


async def _concurrent(session: aiohttp.ClientSession, url: str, count: int,
                      concurrency: int) -> float:
    per_client = max(1, count // concurrency)
    start = time.perf_counter()
    await asyncio.gather(*(_sequential(session, url, per_client, HOST)
                           for _ in range(concurrency)))
    return per_client * concurrency / (time.perf_counter() - start)


async def _wait_serving(session: aiohttp.ClientSession, url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        async with session.get(url, headers=HOST) as resp:
            if resp.status == 200:
                return
        await asyncio.sleep(0.1)
    raise RuntimeError("the ingress never answered 200")


async def one_run(requests: int, concurrency: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        async with running_cluster(options(Path(tmp) / "data")) as cluster:
            client = Client(InProcessTransport(cluster.runner.app))
            try:
                await client.create(DEPLOYMENTS, DEPLOYMENT, "default")
                await client.create(SERVICES, SERVICE, "default")
                await client.create(INGRESSES, INGRESS, "default")
                ingress_url = cluster.component("ingress").url + "/"
                proxy_url = f"{cluster.url}/api/v1/namespaces/default/services/web:80/proxy/"
                async with aiohttp.ClientSession() as session:
                    await _wait_serving(session, ingress_url)
                    via_ingress = await _sequential(session, ingress_url, requests, HOST)
                    via_proxy = await _sequential(session, proxy_url, requests)
                    rate = await _concurrent(session, ingress_url, requests, concurrency)
                registries = cluster.apiserver.registries
                levels = registries["flowcontrol.apiserver.k8s.io", "v1",
                                    "prioritylevelconfigurations"]
                schemas = registries["flowcontrol.apiserver.k8s.io", "v1", "flowschemas"]
                start = time.perf_counter()
                await ensure_configuration(levels, schemas)
                steady_ms = (time.perf_counter() - start) * 1e3
                for registry in (schemas, levels):
                    for obj in (await registry.list("")).decoded():
                        await registry.delete("", obj["metadata"]["name"])
                start = time.perf_counter()
                done = await ensure_configuration(levels, schemas)
                fresh_ms = (time.perf_counter() - start) * 1e3
            finally:
                await client.close()
    return {**common.latency_summary(via_ingress, "ingress_"),
            **common.latency_summary(via_proxy, "services_proxy_"),
            "ingress_requests_per_s": rate, "apf_ensure_steady_ms": steady_ms,
            "apf_ensure_fresh_ms": fresh_ms, "apf_objects_created": len(done["created"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--loop", default="auto")
    parser.add_argument("--json", default=str(REPO / "bench" / "results" / "ingress.json"))
    args = parser.parse_args()
    loop = common.choose_loop(args.loop)
    common.quiet_logs()

    async def run(_i: int) -> dict[str, float]:
        return await one_run(args.requests, args.concurrency)

    runs = asyncio.run(common.repeat(args.runs, run))
    result = common.aggregate(runs)
    rows = [[key, common.fmt(value)] for key, value in result.items()]
    print(common.render_table(["figure (median of runs)", "value"], rows))
    path = common.write_json(args.json, {"machine": common.machine_facts(loop), "args":
                                         vars(args), "result": result, "runs": runs})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
