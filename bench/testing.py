"""What a test pays for a real cluster: minikube_py.testing and its pytest plugin.

Three figures (issue 22's targets), each from a fresh interpreter per run, put beside
envtest's published 5-15 s per environment (an etcd and a kube-apiserver binary started per
test environment; no controllers, no nodes):

- session fixture ready: a pytest session's first test using `kube_namespace` — its setup
  time, as pytest reports it, minus a plain test's: API server + controllers + 3 Ready nodes
  (+ the first namespace), imports included ("cold": the first cluster of the process), and
  a second Cluster started in the same process ("warm": what `@pytest.mark.kube_cluster`'s
  dedicated clusters cost);
- kube_namespace setup+teardown: the setup + teardown time pytest reports for a test using
  `kube_namespace` minus a plain test's (create the namespace and its `default`
  ServiceAccount; delete it, not waiting for the namespace controller — whose background
  work on the previous test's namespace shares the cluster's loop, so it is in the figure);
- empty-test overhead: per-test time (setup + call + teardown, as pytest reports it) of an
  empty test using `kube_namespace` minus that of an empty test using nothing, medians over
  --tests of each in the same session.

Each figure also as CPU time (`*_cpu_*`: the whole process's, every thread — the cluster's
loop and the namespace controller's background work included), which a shared machine's load
inflates far less than wall time. `--baseline DIR` runs this same script over another
checkout's code (e.g. the main branch's worktree), interleaved with this one run by run, and
prints both and their ratios.

    python -m bench.testing [--runs 3] [--tests 100] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench import common

TARGETS = {"session_ready_s": 0.5, "namespace_ms": 20.0, "empty_test_overhead_ms": 25.0}
ENVTEST = "envtest: 5-15 s per environment (etcd + kube-apiserver binaries)"
TEST_FILE = """
import pytest

@pytest.mark.parametrize("i", range({tests}))
def test_plain(i):
    pass

@pytest.mark.parametrize("i", range({tests}))
def test_kube(kube_namespace, i):
    pass
"""
#: the figures the baseline comparison shows: (key, label)
COMPARED = (("session_ready_s", "session ready (s)"),
            ("session_ready_cpu_s", "session ready, CPU (s)"),
            ("warm_ready_s", "further cluster (s)"),
            ("warm_ready_cpu_s", "further cluster, CPU (s)"),
            ("namespace_ms", "kube_namespace setup+teardown (ms)"),
            ("empty_test_overhead_ms", "empty-test overhead (ms)"),
            ("empty_test_cpu_overhead_ms", "empty-test overhead, CPU (ms)"))


class Recorder:
    """pytest's own per-phase durations of every test, and the process's CPU time from each
    test's setup to its teardown (every thread)."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, float]] = {}
        self.cpu: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        self.phases.setdefault(report.nodeid, {})[report.when] = report.duration

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: Any) -> Iterator[Any]:
        began = time.process_time()
        try:
            return (yield)
        finally:
            self.cpu[item.nodeid] = time.process_time() - began


def pytest_session(tmp: Path, tests: int) -> dict[str, Any]:
    (tmp / "test_bench.py").write_text(TEST_FILE.format(tests=tests))
    recorder = Recorder()
    code = pytest.main([str(tmp / "test_bench.py"), "-q", "-p", "no:cacheprovider",
                        "-p", "minikube_py.testing.pytest_plugin", "--kube-nodes", "3",
                        "-o", "asyncio_default_fixture_loop_scope=function",
                        "--rootdir", str(tmp)], plugins=[recorder])
    if code != 0:
        raise RuntimeError(f"the benchmark's pytest session failed ({code})")
    plain = [sum(p.values()) for k, p in recorder.phases.items() if "test_plain" in k]
    kube = [(k, p) for k, p in recorder.phases.items() if "test_kube" in k]
    plain_cpu = statistics.median(c for k, c in recorder.cpu.items() if "test_plain" in k)
    kube_cpu = [c for k, c in recorder.cpu.items() if "test_kube" in k]
    first_setup = kube[0][1]["setup"]
    kube_totals = [sum(p.values()) for _, p in kube[1:]]  # the first one starts the cluster
    plain_setup = statistics.median(p["setup"] for k, p in recorder.phases.items()
                                    if "test_plain" in k)

    def fixture_phases(phases: dict[str, float]) -> float:
        return phases["setup"] + phases["teardown"]

    plain_fixture = statistics.median(fixture_phases(p) for k, p in recorder.phases.items()
                                      if "test_plain" in k)
    kube_fixture = [fixture_phases(p) for _, p in kube[1:]]
    return {"session_ready_s": first_setup - plain_setup,
            "session_ready_cpu_s": kube_cpu[0] - plain_cpu,
            "namespace_ms": (statistics.median(kube_fixture) - plain_fixture) * 1e3,
            "namespace_p99_ms": (common.percentile(kube_fixture, 99) - plain_fixture) * 1e3,
            "plain_test_ms": statistics.median(plain) * 1e3,
            "kube_test_ms": statistics.median(kube_totals) * 1e3,
            "empty_test_overhead_ms": (statistics.median(kube_totals)
                                       - statistics.median(plain)) * 1e3,
            "empty_test_cpu_overhead_ms": (statistics.median(kube_cpu[1:]) - plain_cpu) * 1e3,
            "kube_test_p99_ms": common.percentile(kube_totals, 99) * 1e3}


def warm_start() -> dict[str, Any]:
    """Further clusters in the same process (what a marker's dedicated cluster costs)."""
    from minikube_py.testing import Cluster

    warm, warm_cpu = [], []
    for _ in range(3):
        began, began_cpu = time.perf_counter(), time.process_time()
        with Cluster(nodes=3):
            warm.append(time.perf_counter() - began)
            warm_cpu.append(time.process_time() - began_cpu)
    return {"warm_ready_s": statistics.median(warm),
            "warm_ready_cpu_s": statistics.median(warm_cpu)}


def one_run(tests: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        result = pytest_session(Path(tmp), tests)
    result.update(warm_start())
    # imports dominate the cold figure; without cached bytecode every module compiles first
    result["bytecode_cache"] = not sys.dont_write_bytecode
    return result


def baseline_run(checkout: Path, tests: int) -> dict[str, Any]:
    """This script's --one over `checkout`'s minikube_py (its bench/common.py too): the
    checkout first on the path, so its code is what the pytest session imports."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    out = subprocess.run([sys.executable, __file__, "--one", "--tests", str(tests)],
                         cwd=checkout, env=env, capture_output=True, text=True, check=False,
                         timeout=900)
    if out.returncode != 0:
        raise RuntimeError(f"baseline run in {checkout} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def summary(result: dict[str, Any]) -> str:
    return (f"session ready {result['session_ready_s']:.3f} s (CPU "
            f"{result['session_ready_cpu_s']:.3f} s, warm {result['warm_ready_s']:.3f} s); "
            f"namespace {result['namespace_ms']:.2f} ms; empty-test overhead "
            f"{result['empty_test_overhead_ms']:.2f} ms (CPU "
            f"{result['empty_test_cpu_overhead_ms']:.2f} ms)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tests", type=int, default=100, help="empty tests of each kind")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout to measure in the same run (interleaved)")
    parser.add_argument("--one", action="store_true",
                        help="(internal) measure one run in this process, print it as JSON")
    args = parser.parse_args(argv)
    if args.one:
        common.quiet_logs()
        print(json.dumps(one_run(args.tests)))
        return 0
    loop_name = "asyncio (the Cluster's loop thread)"
    runs, baseline_runs = [], []
    for i in range(args.runs):
        if args.baseline is not None:
            baseline_runs.append(baseline_run(args.baseline, args.tests))
            print(f"  baseline run {i + 1}: {summary(baseline_runs[-1])}", flush=True)
        result = common.run_fresh(["bench.testing", "--one", "--tests", str(args.tests)])
        runs.append(result)
        print(f"  run {i + 1}: {summary(result)}", flush=True)
    agg = common.aggregate(runs)

    def verdict(key: str, value: float) -> str:
        return "met" if value <= TARGETS[key] else "MISSED"

    rows = [
        ["session fixture ready, first cluster of the process (imports included)",
         f"{agg['session_ready_s']:.3f} s (CPU {agg['session_ready_cpu_s']:.3f})",
         f"<= {TARGETS['session_ready_s']} s", verdict("session_ready_s",
                                                       agg["session_ready_s"]), ENVTEST],
        ["a further cluster in the same process (marker's dedicated cluster)",
         f"{agg['warm_ready_s']:.3f} s (CPU {agg['warm_ready_cpu_s']:.3f})",
         f"<= {TARGETS['session_ready_s']} s",
         verdict("session_ready_s", agg["warm_ready_s"]), ENVTEST],
        ["kube_namespace setup + teardown", (f"{agg['namespace_ms']:.2f} ms "
         f"(p99 {agg['namespace_p99_ms']:.2f})"), f"<= {TARGETS['namespace_ms']:g} ms",
         verdict("namespace_ms", agg["namespace_ms"]), ("envtest: a namespace per test, "
         "deleted without finalization (no namespace controller)")],
        ["empty test with kube_namespace, overhead",
         (f"{agg['empty_test_overhead_ms']:.2f} ms (CPU "
          f"{agg['empty_test_cpu_overhead_ms']:.2f})"),
         f"<= {TARGETS['empty_test_overhead_ms']:g} ms",
         verdict("empty_test_overhead_ms", agg["empty_test_overhead_ms"]), ""],
    ]
    print(common.render_table(["figure (median of runs)", "value", "target", "verdict",
                               "anchor"], rows))
    print(f"note: a plain empty test costs {agg['plain_test_ms']:.2f} ms here, one with "
          f"kube_namespace {agg['kube_test_ms']:.2f} ms (p99 {agg['kube_test_p99_ms']:.2f}); "
          f"{args.tests} tests of each kind per session; {args.runs} runs, each in a fresh "
          "interpreter; 3 simulated nodes, all controllers, store in a temp dir with fsync off; "
          f"bytecode cache {'on' if agg['bytecode_cache'] else 'OFF (PYTHONDONTWRITEBYTECODE)'}")
    document: dict[str, Any] = {"machine": common.machine_facts(loop_name),
                                "settings": {"tests": args.tests, "nodes": 3},
                                "targets": TARGETS, "median": agg, "runs": runs}
    if args.baseline is not None:
        base = common.aggregate(baseline_runs)
        print(common.render_table(
            ["figure (median of runs)", f"baseline ({args.baseline})", "this checkout",
             "ratio"],
            [[label, f"{base[key]:.3f}", f"{agg[key]:.3f}",
              f"{agg[key] / base[key]:.2f}" if base[key] else "-"]
             for key, label in COMPARED]))
        document["baseline"] = {"checkout": str(args.baseline), "median": base,
                                "runs": baseline_runs}
    path = common.write_json(Path(__file__).parent / "results" / "testing.json", document)
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    if __package__ in (None, ""):  # run as a file (--baseline): the checkout's bench package
        sys.path.insert(0, os.getcwd())
    sys.exit(main())
