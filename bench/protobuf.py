"""Protobuf vs JSON: codec cost per pod, and GET of a pod over HTTP in both encodings.

Kubernetes piece: the `application/vnd.kubernetes.protobuf` serializer client-go components use.
What it measures (medians of --runs runs, every run kept):
  get_pod_inprocess_us  µs per GET of a pod through the whole server pipeline without a socket
                  (router, filters, handler, response), JSON and protobuf alternating.
  codec           per pod (bench/apiserver.py's ~1.2 KB Deployment-made pod, as stored, with a
                  status): orjson dumps/loads vs our protobuf encode_object/decode_object.
  get_pod         wrk -t1 -c32 GETs of one pod with `Accept: application/json` and with
                  client-go's `Accept: application/vnd.kubernetes.protobuf, application/json`,
                  on the same server in the order JSON, protobuf, protobuf, JSON (load drift
                  cancels out). Target: protobuf >= JSON (the protobuf GET is served from the
                  message cache keyed by resourceVersion).
  json_path       the JSON GET and CREATE of the same pod, this tree vs --baseline (a git
                  revision, default HEAD~2: before protobuf responses), extracted with
                  `git archive` into a temp dir and run with PYTHONPATH pointing at it, in the
                  same run. Target: no measurable loss.

Usage: python bench/protobuf.py [--runs 3] [--duration 5] [--baseline REV] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import orjson  # noqa: E402

from bench import common  # noqa: E402
from bench.apiserver import (  # noqa: E402
    CLIENT_CPU, CREATE_LUA, Procs, parse_wrk, pod_manifest, pod_template, pods_path,
    start_server, stop_server,
)
from minikube_py.api.protobuf import decode_object  # noqa: E402
from minikube_py.api.protobuf_encode import encode_object  # noqa: E402

PB_ACCEPT = "application/vnd.kubernetes.protobuf, application/json"
JSON_ACCEPT = "application/json"


def stored_pod() -> dict[str, Any]:
    """The bench pod as the server stores and returns it: metadata filled in, a status."""
    pod = pod_manifest("web-0", "default")
    pod["metadata"].update(uid="6f1c9a1e-0000-4000-8000-000000000001", resourceVersion="42",
                           creationTimestamp="2024-05-01T10:20:30Z")
    pod["spec"].update(nodeName="node-1", schedulerName="default-scheduler",
                       serviceAccountName="default", priority=0)
    pod["status"] = {"phase": "Running", "hostIP": "10.0.0.1", "podIP": "10.244.0.5",
                     "startTime": "2024-05-01T10:20:31Z", "qosClass": "Burstable",
                     "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None,
                                     "lastTransitionTime": "2024-05-01T10:20:35Z"}],
                     "containerStatuses": [{"name": "web", "ready": True, "restartCount": 0,
                                            "image": "nginx:1.25.3", "imageID": "",
                                            "state": {"running": {
                                                "startedAt": "2024-05-01T10:20:33Z"}},
                                            "lastState": {}, "started": True}]}
    return pod


def _per_call_us(fn: Any, arg: Any, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn(arg)
    return (time.perf_counter() - start) * 1e6 / n


def codec_costs(runs: int, n: int = 2000) -> dict[str, Any]:
    pod = stored_pod()
    as_json, as_pb = orjson.dumps(pod), encode_object(pod)
    assert decode_object(as_pb) == pod
    cases = {"json_encode_us": (orjson.dumps, pod), "json_decode_us": (orjson.loads, as_json),
             "protobuf_encode_us": (encode_object, pod),
             "protobuf_decode_us": (decode_object, as_pb)}
    out: dict[str, Any] = {"json_bytes": len(as_json), "protobuf_bytes": len(as_pb)}
    for name, (fn, arg) in cases.items():
        values = [_per_call_us(fn, arg, n) for _ in range(runs)]
        out[name] = {"median": common.median(values), "runs": values}
    return out


async def inprocess_figures(runs: int, workdir: Path, n: int = 2000) -> dict[str, Any]:
    """µs per GET of one pod through the whole server pipeline (router, filters, handler,
    response) without a socket (the in-process transport), JSON and protobuf in the order
    JSON, protobuf, protobuf, JSON per run: steadier than wrk on a shared machine, and it is
    the server's own cost that the target is about."""
    from minikube_py.apiserver.options import APIServerOptions
    from minikube_py.apiserver.server import APIServer
    from minikube_py.client.inprocess import InProcessTransport
    from minikube_py.storage import EmbeddedStore

    store = await EmbeddedStore.open(Path(tempfile.mkdtemp(prefix="pb-", dir=workdir)),
                                     fsync=False)
    server = APIServer(store, APIServerOptions(
        scheduler_health_url="http://127.0.0.1:1/healthz",
        controller_manager_health_url="http://127.0.0.1:1/healthz"))
    runner = server.make_runner()
    await runner.setup()
    transport = InProcessTransport(runner.app)
    out: dict[str, Any] = {"json": [], "protobuf": []}
    try:
        await transport.request(
            "POST", "/api/v1/namespaces/default/serviceaccounts",
            body=b'{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}')
        created = await transport.request("POST", pods_path("default"),
                                          body=orjson.dumps(pod_manifest("web-0", "default")))
        assert created.status == 201, created.body
        path = f"{pods_path('default')}/web-0"
        for _ in range(runs):
            for accept, key in ((JSON_ACCEPT, "json"), (PB_ACCEPT, "protobuf"),
                                (PB_ACCEPT, "protobuf"), (JSON_ACCEPT, "json")):
                start = time.perf_counter()
                for _ in range(n):
                    await transport.request("GET", path, accept=accept)
                out[key].append((time.perf_counter() - start) * 1e6 / n)
    finally:
        await transport.close()
        await runner.cleanup()
        await store.close()
    return {key: {"median": common.median(values), "runs": values}
            for key, values in out.items()}


async def wrk(procs: Procs, url: str, accept: str, duration: int,
              create_ns: str | None = None, workdir: Path | None = None) -> dict[str, Any]:
    argv = ["wrk", "-t1", "-c32", f"-d{duration}s", "--latency", "--timeout", "30s",
            "-H", f"Accept: {accept}"]
    if create_ns is not None and workdir is not None:
        template = workdir / "pod.json"
        template.write_text(pod_template(create_ns))
        argv += ["-s", str(CREATE_LUA), url, "--", str(template), pods_path(create_ns),
                 f"c{time.monotonic_ns()}"]
    else:
        argv.append(url)
    proc = await procs.spawn(argv, CLIENT_CPU)
    out, err = await asyncio.wait_for(proc.communicate(), duration + 60)
    if proc.returncode != 0:
        raise RuntimeError(f"wrk exited {proc.returncode}: {err.decode(errors='replace')}")
    return parse_wrk(out.decode())


async def serve(procs: Procs, tree: Path | None, workdir: Path):
    """An apiserver from this checkout, or from `tree` (PYTHONPATH) for the baseline."""
    data = Path(tempfile.mkdtemp(prefix="pb-", dir=workdir))
    argv = [sys.executable, "-m", "minikube_py.cli.main", "apiserver",
            "--insecure-port", str(common.free_port()), "--secure-port", "0",
            "--data-dir", str(data), "--fsync", "always", "--log-format", "json"]
    if tree is not None:
        argv = ["env", f"PYTHONPATH={tree}", *argv]
    return await start_server(procs, argv, 60)


def create_one(url: str) -> str:
    """The pod to GET, after the `default` ServiceAccount its admission asks for (made by the
    controller manager in a full cluster; this is an API server alone)."""
    common.http_call(url, "POST", "/api/v1/namespaces/default/serviceaccounts",
                     b'{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}',
                     {"Content-Type": "application/json"})
    body = orjson.dumps(pod_manifest("web-0", "default"))
    status, _, text = common.http_call(url, "POST", pods_path("default"), body,
                                       {"Content-Type": "application/json"})
    assert status == 201, text
    return f"{url}{pods_path('default')}/web-0"


async def http_figures(args: argparse.Namespace, workdir: Path, baseline: Path) -> dict[str, Any]:
    procs = Procs(pinned=(__import__("os").cpu_count() or 1) >= 2)
    out: dict[str, Any] = {"get_pod": {"json": [], "protobuf": []},
                           "json_path": {"get_now": [], "get_baseline": [],
                                         "create_now": [], "create_baseline": []}}
    try:
        for _ in range(args.runs):
            server = await serve(procs, None, workdir)
            try:
                pod_url = create_one(server.url)
                # JSON, protobuf, protobuf, JSON: the machine's load drifts during a run, and
                # whichever went second would otherwise carry the drift
                for accept, key in ((JSON_ACCEPT, "json"), (PB_ACCEPT, "protobuf"),
                                    (PB_ACCEPT, "protobuf"), (JSON_ACCEPT, "json")):
                    out["get_pod"][key].append(await wrk(procs, pod_url, accept, args.duration))
                out["json_path"]["get_now"].extend(out["get_pod"]["json"][-2:])
                out["json_path"]["create_now"].append(await wrk(
                    procs, server.url, JSON_ACCEPT, args.duration, "default", workdir))
            finally:
                await stop_server(procs, server)
            server = await serve(procs, baseline, workdir)
            try:
                pod_url = create_one(server.url)
                out["json_path"]["get_baseline"].append(
                    await wrk(procs, pod_url, JSON_ACCEPT, args.duration))
                out["json_path"]["create_baseline"].append(await wrk(
                    procs, server.url, JSON_ACCEPT, args.duration, "default", workdir))
            finally:
                await stop_server(procs, server)
    finally:
        await procs.stop_all()
    return out


def _rate(runs: list[dict[str, Any]]) -> float:
    return common.median(r["req_per_s"] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--baseline", default="HEAD~2")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "protobuf.json"))
    args = parser.parse_args()
    common.quiet_logs()
    loop = common.choose_loop("auto")
    result: dict[str, Any] = {"machine": common.machine_facts(loop),
                              "codec": codec_costs(args.runs)}
    codec = result["codec"]
    print(common.render_table(["per pod", "JSON (orjson)", "protobuf (ours)"], [
        ["bytes", str(codec["json_bytes"]), str(codec["protobuf_bytes"])],
        ["encode µs", common.fmt(codec["json_encode_us"]["median"]),
         common.fmt(codec["protobuf_encode_us"]["median"])],
        ["decode µs", common.fmt(codec["json_decode_us"]["median"]),
         common.fmt(codec["protobuf_decode_us"]["median"])]]))
    with tempfile.TemporaryDirectory(prefix="bench-protobuf-") as tmp:
        workdir = Path(tmp)
        baseline = workdir / "baseline"
        baseline.mkdir()
        archive = subprocess.run(["git", "archive", args.baseline, "minikube_py"], cwd=REPO,
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(baseline)], input=archive, check=True)
        result["baseline"] = args.baseline
        result["get_pod_inprocess_us"] = asyncio.run(inprocess_figures(args.runs, workdir))
        inprocess = result["get_pod_inprocess_us"]
        print(common.render_table(["GET pod in-process µs (median)", "value"], [
            ["JSON", common.fmt(inprocess["json"]["median"])],
            ["protobuf", common.fmt(inprocess["protobuf"]["median"])]]))
        result["http"] = asyncio.run(http_figures(args, workdir, baseline))
    http = result["http"]
    print(common.render_table(["wrk -t1 -c32 req/s (median)", "value"], [
        ["GET pod, JSON", common.fmt(_rate(http["get_pod"]["json"]))],
        ["GET pod, protobuf", common.fmt(_rate(http["get_pod"]["protobuf"]))],
        [f"GET pod JSON, {args.baseline}", common.fmt(_rate(http["json_path"]["get_baseline"]))],
        ["CREATE pod JSON, now", common.fmt(_rate(http["json_path"]["create_now"]))],
        [f"CREATE pod JSON, {args.baseline}",
         common.fmt(_rate(http["json_path"]["create_baseline"]))]]))
    print("written", common.write_json(args.out, result))


if __name__ == "__main__":
    main()
