"""Store transports, per operation: our etcd v3 gRPC server vs the local socket (storage/remote).

What `start --apiservers N` must choose: how an API server in another process reaches the
store. Both candidates serve the same embedded store from one server process (this file in
`_serve` mode: fsync off, so the disk is not what is measured); this process is the client,
with 32 calls in flight, through the Store contract in both cases (EtcdStore over aetcd for
gRPC, RemoteStore for the socket). Per transport and operation: calls/s, the server process's
CPU per call (what the store process — which also runs API server #0 and the components — pays
for each remote API server's call) and the client's CPU per call (what each API server pays).

    /work/main/.venv-test/bin/python bench/store_transport.py [--calls 4000]

Operations: create (1.2 KB values), get (one key), range (100 keys of 1.2 KB: a LIST page).
The machine is shared: the load average is printed; compare the two rows of one run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench import common

CONCURRENCY = 32
VALUE = b"x" * 1200


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def serve(data_dir: str) -> None:
    """The server process: one embedded store behind both transports until stdin closes."""
    from minikube_py.etcdserver.server import EtcdServer
    from minikube_py.storage import EmbeddedStore
    from minikube_py.storage.remote import StoreServer

    store = await EmbeddedStore.open(Path(data_dir) / "data", fsync=False)
    etcd = await EtcdServer.start(store, "127.0.0.1:0")
    local = await StoreServer.start(store, Path(data_dir) / "s.sock")
    print(json.dumps({"etcd": etcd.endpoint, "socket": str(local.path)}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await local.stop()
    await etcd.stop(None)
    await store.close()


async def run_op(store: Any, op: str, prefix: str, calls: int) -> float:
    """`calls` of `op` with CONCURRENCY in flight; returns the wall seconds."""
    names = iter(range(calls))

    async def worker() -> None:
        for i in names:
            if op == "create":
                await store.create(f"{prefix}/c/{i:06d}", VALUE)
            elif op == "get":
                await store.get(f"{prefix}/r/{i % 100:03d}")
            else:
                await store.range(f"{prefix}/r/")

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return time.perf_counter() - started


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    from minikube_py.storage.etcd_backend import EtcdStore
    from minikube_py.storage.remote import RemoteStore

    tmp = tempfile.mkdtemp(prefix="bench-transport-")
    server = await asyncio.create_subprocess_exec(
        sys.executable, __file__, "_serve", tmp, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, cwd=REPO)
    try:
        where = json.loads(await asyncio.wait_for(server.stdout.readline(), 60))
        results: dict[str, Any] = {}
        for run in range(args.runs):
            for name in ("etcd-grpc", "local-socket"):
                store = (await EtcdStore.connect([where["etcd"]]) if name == "etcd-grpc"
                         else await RemoteStore.connect(Path(where["socket"])))
                prefix = f"/{name}/{run}"
                for i in range(100):
                    await store.create(f"{prefix}/r/{i:03d}", VALUE)
                for op, calls in (("create", args.calls), ("get", args.calls),
                                  ("range", max(args.calls // 10, 100))):
                    cpu_server, cpu_client = process_cpu(server.pid), time.process_time()
                    seconds = await run_op(store, op, prefix, calls)
                    cpu_server = process_cpu(server.pid) - cpu_server
                    cpu_client = time.process_time() - cpu_client
                    row = results.setdefault(name, {}).setdefault(op, {"runs": []})
                    row["runs"].append({"calls_per_s": calls / seconds,
                                        "server_cpu_us": cpu_server / calls * 1e6,
                                        "client_cpu_us": cpu_client / calls * 1e6})
                await store.close()
        for ops in results.values():
            for row in ops.values():
                row["median"] = common.aggregate(row["runs"])
        return results
    finally:
        server.stdin.close()
        await asyncio.wait_for(server.wait(), 30)


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "_serve":
        common.quiet_logs()
        asyncio.run(serve(sys.argv[2]))
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=4000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--json", default=str(REPO / "bench" / "results" / "store_transport.json"))
    args = p.parse_args()
    common.quiet_logs()
    load_start = common.loadavg()
    results = asyncio.run(measure(args))
    rows = []
    for name, ops in results.items():
        for op, row in ops.items():
            m = row["median"]
            rows.append([name, op, f"{m['calls_per_s']:,.0f}", f"{m['server_cpu_us']:,.0f}",
                         f"{m['client_cpu_us']:,.0f}"])
    print(f"store transports, {CONCURRENCY} calls in flight, medians of {args.runs} runs; "
          f"load average {load_start} -> {common.loadavg()}")
    print(common.render_table(["transport", "op", "calls/s", "server CPU µs/call",
                               "client CPU µs/call"], rows))
    for op in ("create", "get", "range"):
        grpc, local = results["etcd-grpc"][op]["median"], results["local-socket"][op]["median"]
        print(f"  {op}: local socket costs the store process "
              f"{grpc['server_cpu_us'] / local['server_cpu_us']:.1f}x less CPU per call, "
              f"{local['calls_per_s'] / grpc['calls_per_s']:.1f}x the calls/s")
    path = common.write_json(args.json, {"benchmark": "store_transport", "machine": common.machine_facts("asyncio"),
                                         "load_start": load_start, "load_end": common.loadavg(),
                                         "results": results})
    print(f"JSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
