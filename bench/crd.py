"""Custom resources vs ConfigMaps: what serving a CRD costs over a built-in kind.

Kubernetes piece: apiextensions-apiserver's customresource_handler (a CR's request path adds a
structural-schema prune, default and validate step to the generic registry's).
What it measures, against one `minikube-py apiserver` process per run (fsync always, the
server pinned to CPU 0, wrk on CPU 1), medians of --runs runs:
  establish_ms    POST of a CRD until its resource answers a LIST with 200 (servable) and
                  until its status says Established, polled every millisecond on a keep-alive
                  connection; --crds distinct CRDs per run. Target: <= 50 ms.
  create          wrk -t1 -c32 POSTs of distinct ~1.2 KB objects: a ConfigMap (its data) and a
                  custom resource (the same content as a typed spec: ints, strings, an enum, a
                  pattern, a list of maps, defaults to apply) in the order CM, CR, CR, CM.
  get             wrk GETs of one object of each.
  list            wrk GETs of a list of --list objects of each.
Target for create/get/list: the custom resource within 1.3x of the ConfigMap (ratio of rates).

Usage: python -m bench.crd [--runs 3] [--duration 5] [--list 1000] [--crds 10] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import aiohttp  # noqa: E402
import orjson  # noqa: E402

from bench import common  # noqa: E402
from bench.apiserver import (  # noqa: E402
    CLIENT_CPU, CREATE_LUA, Procs, parse_wrk, start_server, stop_server,
)

GROUP = "bench.example.com"
JSON = {"Content-Type": "application/json", "Accept": "application/json"}
NAMESPACE = "default"


def crd_manifest(plural: str, kind: str) -> dict[str, Any]:
    """A CRD whose schema exercises every step: types, enum, pattern, bounds, a list of
    objects, a default, and a status subresource."""
    env_item = {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string", "pattern": "^[A-Z_][A-Z0-9_]*$", "maxLength": 64},
        "value": {"type": "string", "maxLength": 256}}}
    spec = {"type": "object", "required": ["image"], "properties": {
        "image": {"type": "string", "minLength": 1},
        "replicas": {"type": "integer", "minimum": 0, "maximum": 1000, "default": 1},
        "tier": {"type": "string", "enum": ["frontend", "backend", "batch"]},
        "paused": {"type": "boolean", "default": False},
        "env": {"type": "array", "maxItems": 64, "items": env_item},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "resources": {"type": "object", "properties": {
            "cpu": {"x-kubernetes-int-or-string": True},
            "memory": {"x-kubernetes-int-or-string": True}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                       "spec": spec, "status": {
                                           "type": "object",
                                           "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


def _content() -> dict[str, Any]:
    env = [{"name": f"VARIABLE_{i:02d}", "value": f"value-number-{i:02d}-" + "x" * 40}
           for i in range(12)]
    labels = {f"example.com/label-{i}": f"value-{i}" for i in range(4)}
    return {"image": "registry.example.com/team/app:1.2.3", "replicas": 3, "tier": "backend",
            "env": env, "labels": labels, "resources": {"cpu": "500m", "memory": "256Mi"}}


def widget(name: str) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "bench"}},
            "spec": _content()}


def configmap(name: str) -> dict[str, Any]:
    """The same content as the widget's spec, as ConfigMap data (strings)."""
    content = _content()
    data = {e["name"]: e["value"] for e in content.pop("env")}
    data.update({k: str(v) if not isinstance(v, dict) else orjson.dumps(v).decode()
                 for k, v in content.items()})
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": "bench"}},
            "data": data}


KINDS = {
    "configmap": (f"/api/v1/namespaces/{NAMESPACE}/configmaps", configmap),
    "widget": (f"/apis/{GROUP}/v1/namespaces/{NAMESPACE}/widgets", widget),
}


async def _post(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> int:
    async with session.post(url, data=orjson.dumps(body), headers=JSON) as response:
        await response.read()
        return response.status


async def establish_times(base: str, count: int, run: int) -> dict[str, list[float]]:
    """ms from the CRD create's answer until its resource is servable / Established."""
    servable, established = [], []
    async with aiohttp.ClientSession() as session:
        for i in range(count):
            plural = f"gadgets{run}x{i}"
            crd = crd_manifest(plural, f"Gadget{run}x{i}")
            status = await _post(session, f"{base}/apis/apiextensions.k8s.io/v1/"
                                          "customresourcedefinitions", crd)
            assert status == 201, status
            started = time.perf_counter()
            served_at = established_at = None
            while served_at is None or established_at is None:
                now = time.perf_counter()
                if now - started > 10:
                    raise RuntimeError(f"CRD {plural} not established in 10 s")
                if served_at is None:
                    async with session.get(f"{base}/apis/{GROUP}/v1/{plural}") as response:
                        await response.read()
                        if response.status == 200:
                            served_at = time.perf_counter()
                if established_at is None:
                    async with session.get(f"{base}/apis/apiextensions.k8s.io/v1/"
                                           f"customresourcedefinitions/{plural}.{GROUP}") as r:
                        conditions = (orjson.loads(await r.read()).get("status") or {}).get(
                            "conditions") or []
                        if any(c.get("type") == "Established" and c.get("status") == "True"
                               for c in conditions):
                            established_at = time.perf_counter()
                await asyncio.sleep(0.001)
            servable.append((served_at - started) * 1e3)
            established.append((established_at - started) * 1e3)
    return {"servable": servable, "established": established}


async def fill(base: str, kind: str, count: int, prefix: str) -> None:
    path, make = KINDS[kind]
    async with aiohttp.ClientSession() as session:
        for start in range(0, count, 64):
            statuses = await asyncio.gather(*(
                _post(session, base + path, make(f"{prefix}-{i}"))
                for i in range(start, min(count, start + 64))))
            assert all(s == 201 for s in statuses), statuses


async def wrk(procs: Procs, url: str, duration: int, create: tuple[Path, str, str] | None = None
              ) -> dict[str, Any]:
    argv = ["wrk", "-t1", "-c32", f"-d{duration}s", "--latency", "--timeout", "30s",
            "-H", "Accept: application/json"]
    if create is not None:
        template, path, prefix = create
        argv += ["-s", str(CREATE_LUA), url, "--", str(template), path, prefix]
    else:
        argv.append(url)
    proc = await procs.spawn(argv, CLIENT_CPU)
    out, err = await asyncio.wait_for(proc.communicate(), duration + 60)
    if proc.returncode != 0:
        raise RuntimeError(f"wrk exited {proc.returncode}: {err.decode(errors='replace')}")
    result = parse_wrk(out.decode())
    if create is not None and "FIRST_ERROR" in out.decode():
        raise RuntimeError("creates failed: " + out.decode())
    return result


async def one_run(args: argparse.Namespace, procs: Procs, workdir: Path, run: int
                  ) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix="crd-", dir=workdir))
    server = await start_server(procs, [
        sys.executable, "-m", "minikube_py.cli.main", "apiserver", "--insecure-port",
        str(common.free_port()), "--secure-port", "0", "--data-dir", str(data),
        "--fsync", "always", "--log-format", "json",
        # an API server alone has no controller manager to make the `default` ServiceAccount;
        # neither kind needs it, and the built-in admission chain is the same for both
    ], 60)
    base = server.url
    out: dict[str, Any] = {}
    try:
        out["establish_ms"] = await establish_times(base, args.crds, run)
        async with aiohttp.ClientSession() as session:
            assert await _post(session, f"{base}/apis/apiextensions.k8s.io/v1/"
                                        "customresourcedefinitions",
                               crd_manifest("widgets", "Widget")) == 201
            for _ in range(2000):
                async with session.get(f"{base}{KINDS['widget'][0]}") as response:
                    if response.status == 200:
                        break
                await asyncio.sleep(0.005)
        for kind in KINDS:
            await fill(base, kind, args.list, "listed")
        for kind in ("configmap", "widget", "widget", "configmap"):
            path, make = KINDS[kind]
            template = workdir / f"{kind}.json"
            template.write_text(orjson.dumps(make("__NAME__")).decode())
            created = await wrk(procs, base, args.duration,
                                (template, path, f"c{time.monotonic_ns()}"))
            got = await wrk(procs, f"{base}{path}/listed-0", args.duration)
            listed = await wrk(procs, f"{base}{path}?limit={args.list}", args.duration)
            for name, figure in (("create", created), ("get", got), ("list", listed)):
                out.setdefault(name, {}).setdefault(kind, []).append(figure)
    finally:
        await stop_server(procs, server)
    return out


def _rate(figures: list[dict[str, Any]]) -> float:
    return common.median(f["ok"] / f["duration_s"] for f in figures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--list", type=int, default=1000, help="objects in each LIST")
    parser.add_argument("--crds", type=int, default=10, help="CRDs timed per run")
    parser.add_argument("--out", default=str(REPO / "bench" / "results" / "crd.json"))
    args = parser.parse_args()
    common.quiet_logs()
    loop = common.choose_loop("auto")
    runs: list[dict[str, Any]] = []

    async def all_runs() -> None:
        procs = Procs(pinned=(os.cpu_count() or 1) >= 2)
        try:
            with tempfile.TemporaryDirectory(prefix="bench-crd-") as tmp:
                for run in range(args.runs):
                    runs.append(await one_run(args, procs, Path(tmp), run))
        finally:
            await procs.stop_all()

    asyncio.run(all_runs())
    servable = [ms for r in runs for ms in r["establish_ms"]["servable"]]
    established = [ms for r in runs for ms in r["establish_ms"]["established"]]
    summary: dict[str, Any] = {
        "establish_ms": {"servable_median": common.median(servable),
                         "servable_max": max(servable),
                         "established_median": common.median(established),
                         "established_max": max(established), "target": 50}}
    rows = []
    for op in ("create", "get", "list"):
        cm = _rate([f for r in runs for f in r[op]["configmap"]])
        cr = _rate([f for r in runs for f in r[op]["widget"]])
        summary[op] = {"configmap_per_s": cm, "widget_per_s": cr, "ratio": cm / cr,
                       "target_ratio": 1.3}
        rows.append([op, common.fmt(cm), common.fmt(cr), common.fmt(cm / cr)])
    print(common.render_table(["wrk -t1 -c32 (median ok/s)", "ConfigMap", "Widget (CR)",
                               "CM/CR (target <= 1.3)"], rows))
    est = summary["establish_ms"]
    print(common.render_table(["CRD create -> (ms)", "median", "max", "target"], [
        ["servable (LIST 200)", common.fmt(est["servable_median"]), common.fmt(est["servable_max"]),
         "50"],
        ["Established=True", common.fmt(est["established_median"]),
         common.fmt(est["established_max"]), "50"]]))
    result = {"machine": common.machine_facts(loop), "args": vars(args), "summary": summary,
              "runs": runs}
    print("written", common.write_json(args.out, result))


if __name__ == "__main__":
    main()
