"""Console first paint on a 100-node cluster: how soon a browser shows the console.

Issue 21's target: first paint <= 1 s on a 100-node cluster. Measured in Debian's chromium
(headless, driven by Playwright, a fresh browser context per load so nothing is cached):
- `first-contentful-paint` from the Performance API (the shell's first text and boxes),
- the time from navigation start until the nodes view lists every node (the first poll of
  /console-api/nodes answered and rendered: 100 rows in `[data-view=nodes] tbody`),
- the same for the overview's first figures (the store revision shown).
Each figure is the median of `--loads` loads; the individual loads are kept in the JSON.

    python -m bench.console [--nodes 100] [--loads 7]
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


def one_load(browser: Any, url: str, nodes: int) -> dict[str, float]:
    """One cold load of #/nodes, then of #/overview, in a fresh context."""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    try:
        page = context.new_page()
        page.goto(url + "#/nodes")
        listed = page.wait_for_function(
            f"() => document.querySelectorAll('[data-view=nodes] tbody tr').length === {nodes}"
            " && performance.now()", polling="raf", timeout=30_000).json_value()
        page.wait_for_function(f"{FCP} !== null", timeout=10_000)
        fcp = page.evaluate(FCP)
        page.close()
        page = context.new_page()
        page.goto(url + "#/overview")
        revision = page.wait_for_function(
            "() => Number((document.querySelector('[data-view=overview]') || {dataset: {}})"
            ".dataset.revision) > 0 && performance.now()", polling="raf",
            timeout=30_000).json_value()
        return {"first_contentful_paint_ms": float(fcp), "nodes_listed_ms": float(listed),
                "overview_figures_ms": float(revision)}
    finally:
        context.close()


def measure(nodes: int, loads: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from minikube_py.testing import Cluster

    began = time.perf_counter()
    with Cluster(nodes=nodes, console=True, kubelet_port=False, ready_timeout=120) as cluster, \
            sync_playwright() as playwright:
        started = time.perf_counter() - began
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            one_load(browser, cluster.console_url, nodes)  # warm: the console's informers sync
            runs = []
            for i in range(loads):
                result = one_load(browser, cluster.console_url, nodes)
                runs.append(result)
                print(f"  load {i + 1}: first contentful paint "
                      f"{result['first_contentful_paint_ms']:.0f} ms, {nodes} nodes listed "
                      f"{result['nodes_listed_ms']:.0f} ms, overview figures "
                      f"{result['overview_figures_ms']:.0f} ms", flush=True)
        finally:
            browser.close()
    return {"cluster_start_s": started, "runs": runs,
            "median": {key: common.median(r[key] for r in runs) for key in runs[0]}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--loads", type=int, default=7)
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"not measured: {CHROMIUM} is missing (apt-get install chromium)")
        return 1
    common.quiet_logs()
    result = measure(args.nodes, args.loads)
    med = result["median"]
    rows = [[key.removesuffix("_ms").replace("_", " "), f"{med[key]:.0f} ms",
             f"<= {TARGETS[key]:.0f} ms" if key in TARGETS else "",
             ("met" if med[key] <= TARGETS[key] else "MISSED") if key in TARGETS else ""]
            for key in med]
    print(common.render_table(["figure (median of loads)", "value", "target", "verdict"], rows))
    print(f"note: {args.nodes} simulated nodes, {args.loads} cold loads (fresh browser context "
          f"each) after one warm-up load; Debian's chromium, headless; cluster ready in "
          f"{result['cluster_start_s']:.1f} s")
    path = common.write_json(Path(__file__).parent / "results" / "console.json",
                             {"machine": common.machine_facts("asyncio (the Cluster's loop "
                                                              "thread)"),
                              "settings": {"nodes": args.nodes, "loads": args.loads},
                              "targets": TARGETS, **result})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
