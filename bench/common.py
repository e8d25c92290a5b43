"""Helpers shared by the benchmarks: event loop choice, timing statistics, machine facts,
tables and JSON output.

Conventions every benchmark follows:
- time with `time.perf_counter()`;
- each reported figure is the median of `--runs` runs, and the individual runs are kept (printed
  and written to JSON) so noise is visible;
- a figure that could not be measured is reported as missing with a reason, never filled in.
"""

from __future__ import annotations

import asyncio
import datetime
import gc
import json
import logging
import math
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Sequence, TypeVar

T = TypeVar("T")


# ------------------------------------------------------------------------------ event loop


def choose_loop(choice: str = "auto") -> str:
    """Install uvloop's policy when asked for (or, with "auto", when it is installed).
    Returns the name of the loop that will run: "uvloop" or "asyncio"."""
    if choice not in ("auto", "uvloop", "asyncio"):
        raise ValueError(f"unknown loop {choice!r}")
    if choice == "asyncio":
        return "asyncio"
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise SystemExit("--loop uvloop: uvloop is not installed")
        return "asyncio"
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    return f"uvloop {uvloop.__version__}"


def quiet_logs(level: int = logging.WARNING) -> None:
    """Drop the stores' info logs (store.opened, snapshot, ...) so they do not interleave with
    the tables; warnings and errors still show."""
    logging.basicConfig(level=level)
    try:
        import structlog
    except ImportError:
        return
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(level))


# ------------------------------------------------------------------------------ statistics


def median(values: Iterable[float]) -> float:
    values = list(values)
    return statistics.median(values) if values else math.nan


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0..100) with linear interpolation between closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def latency_summary(seconds: Sequence[float], prefix: str = "") -> dict[str, float]:
    """p50/p99/max of latencies given in seconds, as milliseconds."""
    return {
        f"{prefix}p50_ms": percentile(seconds, 50) * 1e3,
        f"{prefix}p99_ms": percentile(seconds, 99) * 1e3,
        f"{prefix}max_ms": max(seconds) * 1e3 if seconds else math.nan,
    }


def controller_syncs() -> dict[str, tuple[float, float, float]]:
    """Each controller's (syncs, wall seconds, CPU seconds) so far, from the controller
    manager's histograms in this process (controllers/metrics.py, controllers/sync_cpu.py)."""
    from prometheus_client import REGISTRY

    out: dict[str, list[float]] = {}
    columns = {"controller_sync_duration_seconds_count": 0,
               "controller_sync_duration_seconds_sum": 1, "controller_sync_cpu_seconds_sum": 2}
    for metric in REGISTRY.collect():
        if metric.name not in ("controller_sync_duration_seconds", "controller_sync_cpu_seconds"):
            continue
        for sample in metric.samples:
            column = columns.get(sample.name)
            if column is not None:
                out.setdefault(sample.labels["name"], [0.0, 0.0, 0.0])[column] = sample.value
    return {name: (v[0], v[1], v[2]) for name, v in out.items()}


def per_sync(before: dict[str, tuple[float, float, float]],
             after: dict[str, tuple[float, float, float]], prefix: str = "") -> dict[str, float]:
    """Flat result fields for every controller that synced between two controller_syncs():
    `<prefix>syncs.<name>`, `<prefix>cpu_ms_per_sync.<name>` (CPU per reconcile, including the
    in-process API work of its requests) and `<prefix>wall_ms_per_sync.<name>`."""
    fields: dict[str, float] = {}
    for name, (count, wall, cpu) in sorted(after.items()):
        c0, w0, u0 = before.get(name, (0.0, 0.0, 0.0))
        syncs = count - c0
        if syncs <= 0:
            continue
        fields[f"{prefix}syncs.{name}"] = int(syncs)
        fields[f"{prefix}cpu_ms_per_sync.{name}"] = 1000 * (cpu - u0) / syncs
        fields[f"{prefix}wall_ms_per_sync.{name}"] = 1000 * (wall - w0) / syncs
    return fields


def per_sync_rows(result: dict[str, Any], prefix: str = "") -> list[list[str]]:
    """Table rows (controller, syncs, CPU ms/sync, wall ms/sync) from per_sync() fields."""
    head = f"{prefix}syncs."
    rows = []
    for key in sorted(k for k in result if k.startswith(head)):
        name = key[len(head):]
        rows.append([name, fmt(result[key]), fmt(result[f"{prefix}cpu_ms_per_sync.{name}"]),
                     fmt(result[f"{prefix}wall_ms_per_sync.{name}"])])
    return rows


PER_SYNC_HEADER = ["controller", "syncs", "CPU ms per reconcile", "wall ms per reconcile"]


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median of every numeric field over the runs; other fields are taken from the first run
    when all runs agree, else listed."""
    if not runs:
        return {}
    out: dict[str, Any] = {}
    for key in runs[0]:
        values = [run.get(key) for run in runs]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            m = median(values)
            out[key] = int(m) if all(isinstance(v, int) for v in values) and m == int(m) else m
        elif all(v == values[0] for v in values):
            out[key] = values[0]
        else:
            out[key] = values
    return out


async def repeat(runs: int, fn: Callable[[int], Awaitable[T]]) -> list[T]:
    """Run `fn(i)` for i in range(runs), collecting garbage before each so one run's garbage
    is not collected on the next run's clock."""
    results = []
    for i in range(runs):
        gc.collect()
        results.append(await fn(i))
    return results


# --------------------------------------------------------------------------- machine facts


def machine_facts(loop_name: str) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "event_loop": loop_name,
        "cpu_model": _cpu_model(),
        "mem_total_gib": _mem_total_gib(),
        "loadavg_start": loadavg(),
    }
    return facts


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _mem_total_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def per_cpu_times() -> dict[int, tuple[int, int]]:
    """{cpu: (busy ticks, total ticks)} for every CPU, from /proc/stat (empty elsewhere).
    Busy counts everything but idle and iowait, whoever used it (any process, interrupts)."""
    out: dict[int, tuple[int, int]] = {}
    try:
        lines = Path("/proc/stat").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        name, _, rest = line.partition(" ")
        if name.startswith("cpu") and name[3:].isdigit():
            ticks = [int(x) for x in rest.split()[:8]]  # user nice system idle iowait irq softirq steal
            out[int(name[3:])] = (sum(ticks) - ticks[3] - ticks[4], sum(ticks))
    return out


def cpu_busy(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]]) -> dict[int, float]:
    """Share of each CPU's time (0..1) that was busy between two per_cpu_times() snapshots."""
    out = {}
    for cpu, (busy, total) in after.items():
        if cpu in before and total > before[cpu][1]:
            out[cpu] = (busy - before[cpu][0]) / (total - before[cpu][1])
    return out


def dir_bytes(path: Path) -> int:
    """Total size of the regular files under `path`."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


# ------------------------------------------------------------------------------ formatting


def fmt(value: Any, digits: int = 3) -> str:
    """Compact human formatting: thousands separators for big numbers, `digits` significant
    digits for small ones, "-" for missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}g}" if abs(value) >= 10 ** -(digits + 1) else f"{value:.2e}"
    return str(value)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table (readable as plain text too)."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    out = [line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out.extend(line(row) for row in rows)
    return "\n".join(out)


def write_json(path: Path | str, data: Any) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    text = json.dumps(clean_nans(data), indent=2, allow_nan=False, default=_json_default)
    tmp.write_text(text + "\n")
    os.replace(tmp, path)
    return path


def _json_default(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def clean_nans(value: Any) -> Any:
    """NaN and infinities are not JSON: turn them into null (recursively)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean_nans(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_nans(v) for v in value]
    return value


# ------------------------------------------------------------------------------ ports


def free_port() -> int:
    """A loopback port nobody listens on right now (the OS picks it); port 0 on the
    command line disables a listener, as upstream, so benchmarks pick real ports."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ------------------------------------------------------------------------------ fresh runs


def measure_here(one_run: Callable[[Path], Awaitable[dict[str, Any]]]) -> int:
    """The `--one` side of run_fresh: tune garbage collection as every minikube-py command
    does, run `one_run(<a fresh temporary directory>)` on a new event loop, print its result
    as the JSON line run_fresh reads."""
    import asyncio
    import tempfile

    from minikube_py.cli import runtime

    runtime.tune_gc()
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(one_run(Path(tmp)))
    print(json.dumps(result))
    return 0


def run_fresh(module_args: list[str], timeout: float = 900) -> dict[str, Any]:
    """`python -m <module_args>` in its own interpreter; the run's result is the JSON on its
    last stdout line. A heap that earlier runs' servers and caches grew would slow later runs
    in one process, so every measured run starts as `minikube-py start` would."""
    import subprocess

    out = subprocess.run([sys.executable, "-m", *module_args],
                         cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, check=False, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"run {' '.join(module_args)} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------ raw HTTP


def http_call(url: str, method: str, path: str, body: bytes | None = None,
              headers: dict[str, str] | None = None, *, timeout: float = 10.0,
              connection: Any = None) -> tuple[int, str, bytes]:
    """One blocking request: (status, Content-Type, body). Blocking I/O releases the GIL, so a
    caller in a thread beside an event loop never competes with that loop. A fresh connection
    unless `connection` (an http.client.HTTPConnection to reuse) is given. A server that answers
    an oversized body before reading all of it may close the socket under the send; its answer
    is still read. Raises TimeoutError (socket.timeout) when no answer comes within `timeout`."""
    import http.client
    from urllib.parse import urlsplit

    conn = connection
    if conn is None:
        parts = urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders()
        if body:
            try:
                conn.send(body)
            except (BrokenPipeError, ConnectionResetError):
                pass
        resp = conn.getresponse()
        return resp.status, resp.getheader("Content-Type", ""), resp.read()
    finally:
        if connection is None:
            conn.close()
