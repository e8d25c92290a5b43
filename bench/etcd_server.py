"""etcd-protocol benchmark: puts/s through one etcd client against our etcd server and etcd 3.4.

Issue 23's target: "etcd-protocol puts through the facade >= 3x Debian's etcd 3.4 through the
same client in the same run". In one run, the same aetcd client code (the client our own etcd
backend uses) drives:
  (a) `minikube-py etcd-server` — the embedded store served over etcd's v3 API
      (minikube_py/etcdserver), its own process, durable (fsync on), listening on port 0 and
      read back from its ready line;
  (b) Debian's etcd (/usr/bin/etcd, 3.4), its own process, on free loopback ports with retry
      when another process takes one first (tests/etcd_server.py), data dir in a temp dir;
  (c) the floor: a grpcio asyncio server whose Put handler returns an empty PutResponse at
      once (no store), its own process — what grpcio's Python server costs per RPC before any
      work, the part of (a)'s CPU per put that no change to our code can remove.

Workloads (1 KiB values, fresh keys):
  put_sequential    one task, one put at a time: latency-bound (each put waits for an fsync)
  put_concurrent_N  N tasks putting at once: throughput (both servers batch fsyncs)
  get_concurrent_N  N tasks reading one 1 KiB key (linearizable Range): the read side

Each figure is the median of --runs runs (individual runs kept); the ratio is ours/etcd's.
CPU per put (server and client processes, from /proc and process_time) is reported too: it
moves far less than puts/s when other processes share the cores, and the client's own CPU per
put bounds how fast any server can be driven through this (Python) client.
Both servers and the client share this machine's cores, so absolute figures are noisy; the
ratio from one run is the figure to quote.

    python -m bench.etcd_server              # full run
    python -m bench.etcd_server --quick      # smoke run, a few seconds
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import common

VALUE = b"x" * 1024
READY_TIMEOUT = 30.0


class OurServer:
    """`minikube-py etcd-server` in its own process; the endpoint is read from its ready line.
    With `floor`, this module's own empty-handler gRPC server instead (see serve_floor)."""

    def __init__(self, data_dir: Path, *, floor: bool = False) -> None:
        self.data_dir = data_dir
        self.floor = floor
        self.proc: subprocess.Popen[str] | None = None
        self.endpoint = ""

    def start(self) -> None:
        command = ([sys.executable, "-m", "bench.etcd_server", "--serve-floor"] if self.floor else
                   [sys.executable, "-c",
                    "from minikube_py.cli.main import main; raise SystemExit(main())",
                    "etcd-server", "--data-dir", str(self.data_dir), "--listen-client-urls",
                    "http://127.0.0.1:0", "--log-level", "warning",
                    "--etcd-compaction-interval", "0"])
        self.proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
            cwd=str(Path(__file__).resolve().parent.parent),
        )
        deadline = time.monotonic() + READY_TIMEOUT
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            found = re.search(r"--endpoints=(\S+)", line)
            if found:
                self.endpoint = found.group(1).rstrip(")")
                return
        self.stop()
        raise RuntimeError("minikube-py etcd-server did not print its endpoint")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


async def serve_floor() -> None:
    """An etcd KV service whose Put does nothing: grpcio's own cost per unary RPC."""
    import grpc

    from minikube_py.etcdserver.messages import methods, pb
    from minikube_py.etcdserver.server import handlers

    class NothingKV:
        async def Put(self, request: Any, context: Any) -> Any:
            return pb.PutResponse(header=pb.ResponseHeader(revision=1))

        async def Range(self, request: Any, context: Any) -> Any:
            return pb.RangeResponse(header=pb.ResponseHeader(revision=1))

    assert methods()
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(handlers({"KV": NothingKV()}))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"floor server (etcdctl --endpoints=127.0.0.1:{port})", flush=True)
    await server.wait_for_termination()


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used (from /proc), for the per-put CPU cost:
    unlike puts/s, that figure barely moves when other processes share the cores."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def op_rate(endpoint: str, *, tasks: int, ops: int, prefix: str, get: bool = False,
                  server_pid: int | None = None) -> dict[str, Any]:
    import aetcd

    host, port = endpoint.rsplit(":", 1)
    client = aetcd.Client(host=host, port=int(port), timeout=30)
    try:
        await client.put(f"{prefix}/warmup".encode(), VALUE)
        per_task = max(1, ops // tasks)
        latencies: list[float] = []

        async def writer(t: int) -> None:
            for i in range(per_task):
                began = time.perf_counter()
                if get:
                    await client.get(f"{prefix}/warmup".encode())
                else:
                    await client.put(f"{prefix}/{t}/{i}".encode(), VALUE)
                latencies.append(time.perf_counter() - began)

        server_cpu = process_cpu_seconds(server_pid) if server_pid else None
        client_cpu = time.process_time()
        began = time.perf_counter()
        await asyncio.gather(*(writer(t) for t in range(tasks)))
        elapsed = time.perf_counter() - began
        client_cpu = time.process_time() - client_cpu
        if server_pid:
            server_cpu = process_cpu_seconds(server_pid) - server_cpu
    finally:
        await client.close()
    n = len(latencies)
    return {"ops_per_s": n / elapsed, "ops": n,
            "server_cpu_ms_per_op": server_cpu / n * 1e3 if server_pid else None,
            "client_cpu_ms_per_op": client_cpu / n * 1e3,
            **common.latency_summary(latencies)}


async def measure(endpoint: str, label: str, runs: int, seq: int, conc: int, tasks: int,
                  pid: int) -> dict:
    out: dict[str, Any] = {}
    workloads = (("put_sequential", 1, seq, False), (f"put_concurrent_{tasks}", tasks, conc, False),
                 (f"get_concurrent_{tasks}", tasks, conc, True))
    for name, n_tasks, n, get in workloads:
        results = [await op_rate(endpoint, tasks=n_tasks, ops=n, server_pid=pid, get=get,
                                 prefix=f"/bench/{label}/{name}/{r}")
                   for r in range(runs)]
        out[name] = {"median_ops_per_s": common.median(r["ops_per_s"] for r in results),
                     "median_server_cpu_ms_per_op": common.median(
                         r["server_cpu_ms_per_op"] for r in results),
                     "median_client_cpu_ms_per_op": common.median(
                         r["client_cpu_ms_per_op"] for r in results),
                     "runs": results}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sequential-puts", type=int, default=1000)
    parser.add_argument("--concurrent-puts", type=int, default=8000)
    parser.add_argument("--tasks", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="1 run, few puts")
    parser.add_argument("--json", default="bench/results/etcd_server.json")
    parser.add_argument("--serve-floor", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_floor:
        asyncio.run(serve_floor())
        return 0
    if args.quick:
        args.runs, args.sequential_puts, args.concurrent_puts = 1, 200, 2000
    common.quiet_logs()
    loop_name = common.choose_loop("asyncio")

    from tests import etcd_server as real_etcd

    tmp = Path(tempfile.mkdtemp(prefix="bench-etcd-server-"))
    ours = OurServer(tmp / "ours")
    floor = OurServer(tmp / "floor", floor=True)
    etcd = None
    report: dict[str, Any] = {"machine": common.machine_facts(loop_name), "value_bytes": len(VALUE),
                              "tasks": args.tasks}
    try:
        ours.start()
        assert ours.proc is not None
        report["ours"] = asyncio.run(measure(ours.endpoint, "ours", args.runs, args.sequential_puts,
                                             args.concurrent_puts, args.tasks, ours.proc.pid))
        ours.stop()
        floor.start()
        assert floor.proc is not None
        report["grpc_floor"] = asyncio.run(measure(floor.endpoint, "floor", args.runs,
                                                   args.sequential_puts, args.concurrent_puts,
                                                   args.tasks, floor.proc.pid))
        floor.stop()
        if real_etcd.etcd_binary() is None:
            report["etcd"] = {"missing": "etcd binary not found (Debian's etcd-server)"}
        else:
            etcd = real_etcd.start_single(tmp / "etcd")
            assert etcd._proc is not None
            report["etcd"] = asyncio.run(measure(etcd.endpoint, "etcd", args.runs,
                                                 args.sequential_puts, args.concurrent_puts,
                                                 args.tasks, etcd._proc.pid))
    finally:
        ours.stop()
        floor.stop()
        if etcd is not None:
            etcd.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    rows = []
    for name in report["ours"]:
        mine = report["ours"][name]
        theirs = report["etcd"].get(name, {})
        ratio = (mine["median_ops_per_s"] / theirs["median_ops_per_s"]
                 if theirs.get("median_ops_per_s") else None)
        report.setdefault("ratios", {})[name] = ratio
        nothing = report["grpc_floor"][name]
        rows.append([name, common.fmt(mine["median_ops_per_s"]),
                     common.fmt(theirs.get("median_ops_per_s")), common.fmt(ratio),
                     common.fmt(mine["median_server_cpu_ms_per_op"]),
                     common.fmt(theirs.get("median_server_cpu_ms_per_op")),
                     common.fmt(nothing["median_server_cpu_ms_per_op"]),
                     common.fmt(mine["median_client_cpu_ms_per_op"]),
                     common.fmt(theirs.get("median_client_cpu_ms_per_op")),
                     common.fmt(1000 / theirs["median_client_cpu_ms_per_op"]
                                if theirs.get("median_client_cpu_ms_per_op") else None),
                     " ".join(common.fmt(r["ops_per_s"]) for r in mine["runs"])])
    print(common.render_table(
        ["workload", "ours ops/s", "etcd 3.4 ops/s", "ours/etcd", "ours server CPU ms/op",
         "etcd CPU ms/op", "empty grpcio handler CPU ms/op", "client CPU ms/op (ours)",
         "client CPU ms/op (etcd)", "client ceiling ops/s/core", "ours runs"], rows))
    print("client ceiling: the ops/s one core of the client process can issue at its CPU cost "
          "per op measured against etcd — no server can be driven faster through this client")
    print(f"load average: {common.loadavg()}  (cores: {os.cpu_count()})")
    path = common.write_json(args.json, report)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
