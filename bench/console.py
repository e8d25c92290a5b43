"""Console first paint on a 100-node cluster: how soon a browser shows the console.

Issue 21's target: first paint <= 1 s on a 100-node cluster. Measured in Debian's chromium
(headless, driven by Playwright, a fresh browser context per load so nothing is cached):
- `first-contentful-paint` from the Performance API (the shell's first text and boxes),
- the time from navigation start until the nodes view lists every node (the first poll of
  /console-api/nodes answered and rendered: the page's `console:nodes-listed` performance mark,
  set once all 100 rows are in `[data-view=nodes] tbody`),
- the same for the overview's first figures (`console:overview-shown`: the store revision,
  node and pod counts shown),
- with `--pods N` (a Deployment of N pods, Running before the loads): the time until the pods
  view lists them all (`console:pods-listed`), and the server time of one /console-api/pods.
The marks are read from the page rather than timed by polling from outside: a headless
browser's requestAnimationFrame polling was measured to add 100–600 ms of detection lag.
Each figure is the median of `--loads` loads; the individual loads are kept in the JSON.

    python -m bench.console [--nodes 100] [--loads 7] [--pods 0]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from bench import common

TARGETS = {"first_contentful_paint_ms": 1000.0, "nodes_listed_ms": 1000.0}
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
FCP = ("() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime "
       "|| null")


def mark(name: str) -> str:
    """A page function: the start time of performance mark `name`, or null until it exists."""
    return f"() => (performance.getEntriesByName('{name}')[0] || {{}}).startTime || null"


def one_load(browser: Any, url: str, nodes: int, pods: int) -> dict[str, float]:
    """One cold load of #/nodes, then of #/overview (and of #/pods with pods), in a fresh
    context each."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        page = context.new_page()
        page.goto(url + "#/nodes")
        listed = page.wait_for_function(mark("console:nodes-listed"), timeout=30_000).json_value()
        rows = page.locator("[data-view=nodes] tbody tr").count()
        if rows != nodes:
            raise SystemExit(f"the nodes view listed {rows} nodes, not {nodes}")
        fcp = page.wait_for_function(FCP, timeout=10_000).json_value()
        page.close()
        page = context.new_page()
        page.goto(url + "#/overview")
        revision = page.wait_for_function(mark("console:overview-shown"),
                                          timeout=30_000).json_value()
        result = {"first_contentful_paint_ms": float(fcp), "nodes_listed_ms": float(listed),
                  "overview_figures_ms": float(revision)}
        if pods:
            page.close()
            page = context.new_page()
            page.goto(url + "#/pods")
            shown = page.wait_for_function(mark("console:pods-listed"),
                                           timeout=30_000).json_value()
            rows = page.locator("[data-view=pods] tbody tr").count()
            if rows < pods:
                raise SystemExit(f"the pods view listed {rows} pods, fewer than {pods}")
            result["pods_listed_ms"] = float(shown)
        return result
    finally:
        context.close()


def pods_answer_ms(url: str, times: int = 5) -> float:
    """The median wall time of GET /console-api/pods, as a client sees it."""
    import urllib.request

    took = []
    for _ in range(times):
        began = time.perf_counter()
        with urllib.request.urlopen(url + "console-api/pods", timeout=30) as answer:
            answer.read()
        took.append((time.perf_counter() - began) * 1000)
    return common.median(took)


def run_pods(cluster: Any, count: int) -> None:
    """A Deployment of `count` pods, waited for until all are available."""
    from minikube_py.client.resources import DEPLOYMENTS
    from minikube_py.console.actions import sample_workload

    namespace, deployment = sample_workload({"name": "bench"})
    deployment["spec"]["replicas"] = count
    cluster.run(cluster.client.create(DEPLOYMENTS, deployment, namespace))
    cluster.wait_for(DEPLOYMENTS, "bench", lambda d: ((d or {}).get("status") or {}).get(
        "availableReplicas") == count, namespace=namespace, timeout=600)


def measure(nodes: int, loads: int, pods: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from minikube_py.testing import Cluster

    began = time.perf_counter()
    with Cluster(nodes=nodes, console=True, kubelet_port=False, ready_timeout=120) as cluster, \
            sync_playwright() as playwright:
        started = time.perf_counter() - began
        if pods:
            run_pods(cluster, pods)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            one_load(browser, cluster.console_url, nodes, pods)  # warm-up
            runs = []
            for i in range(loads):
                result = one_load(browser, cluster.console_url, nodes, pods)
                runs.append(result)
                print(f"  load {i + 1}: first contentful paint "
                      f"{result['first_contentful_paint_ms']:.0f} ms, {nodes} nodes listed "
                      f"{result['nodes_listed_ms']:.0f} ms, overview figures "
                      f"{result['overview_figures_ms']:.0f} ms"
                      + (f", {pods} pods listed {result['pods_listed_ms']:.0f} ms" if pods
                         else ""), flush=True)
            answer = pods_answer_ms(cluster.console_url) if pods else None
        finally:
            browser.close()
    median = {key: common.median(r[key] for r in runs) for key in runs[0]}
    if answer is not None:
        median["pods_answer_ms"] = answer
    return {"cluster_start_s": started, "runs": runs, "median": median}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--loads", type=int, default=7)
    parser.add_argument("--pods", type=int, default=0,
                        help="run a Deployment of this many pods first (0: none)")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"not measured: {CHROMIUM} is missing (apt-get install chromium)")
        return 1
    common.quiet_logs()
    result = measure(args.nodes, args.loads, args.pods)
    med = result["median"]
    rows = [[key.removesuffix("_ms").replace("_", " "), f"{med[key]:.0f} ms",
             f"<= {TARGETS[key]:.0f} ms" if key in TARGETS else "",
             ("met" if med[key] <= TARGETS[key] else "MISSED") if key in TARGETS else ""]
            for key in med]
    print(common.render_table(["figure (median of loads)", "value", "target", "verdict"], rows))
    print(f"note: {args.nodes} simulated nodes, {args.pods} pods, {args.loads} cold loads (fresh browser context "
          f"each) after one warm-up load; Debian's chromium, headless; cluster ready in "
          f"{result['cluster_start_s']:.1f} s")
    path = common.write_json(Path(__file__).parent / "results" / "console.json",
                             {"machine": common.machine_facts("asyncio (the Cluster's loop "
                                                              "thread)"),
                              "settings": {"nodes": args.nodes, "loads": args.loads,
                                           "pods": args.pods},
                              "targets": TARGETS, **result})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
