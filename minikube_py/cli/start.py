"""`minikube-py start`: run the control plane in this process, until SIGINT or SIGTERM.

Kubernetes v1.0 piece: cmd/kube-apiserver/app/server.go's Run — build the storage from
--etcd-servers, serve, block forever — folded with the all-in-one wiring of a
local cluster. `start` opens the store (embedded on --data-dir, or a real etcd) and serves the
API server on the insecure port (127.0.0.1:8080, v1.0's default). Components will be started
here, in order, as they arrive, and stopped in reverse.

Stopping is the part that matters for data: a signal only sets an event; the server then
leaves through its clean-up, so the HTTP site closes, the store flushes its WAL and the data
dir's lock is released before the process exits 0. A second `start` on the same data dir fails
at once with the holder's pid (datadir.DataDirLockedError).
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from ..apiserver.options import APIServerOptions
from ..storage import EmbeddedStore, Store
from . import runtime
from .config import load_config, parse_duration
from .storage_target import (
    DEFAULT_DATA_DIR,
    DEFAULT_ETCD_KEY_PREFIX,
    CommandError,
    connect_etcd,
    parse_servers,
)

if TYPE_CHECKING:
    from aiohttp import web

log = structlog.get_logger(component="minikube-py")

DEFAULT_PORT = 8080  # v1.0 kube-apiserver --insecure-port
ADDRESS = "127.0.0.1"


#: Built-in defaults of every `start` setting; a config file or a flag overrides them.
DEFAULTS = {
    "data_dir": DEFAULT_DATA_DIR,
    "etcd_servers": None,
    "etcd_key_prefix": DEFAULT_ETCD_KEY_PREFIX,
    "fsync": "always",
    "port": DEFAULT_PORT,
    "etcd_compaction_interval": "5m0s",
    "snapshot_count": 10_000,
    "history_max_events": 50_000,
    "watch_buffer_size": 1024,
    "etcd_prefix": "/registry",
    "service_cluster_ip_range": "10.0.0.0/24",
    "service_node_port_range": "30000-32767",
    "event_ttl": "1h0m0s",
    "max_requests_inflight": 400,
    "max_mutating_requests_inflight": 200,
    "min_request_timeout": 1800,
    "watch_cache_size": 10_000,
    "scheduler_port": 10251,
}


@dataclass(frozen=True)
class StartOptions:
    data_dir: Path
    etcd_servers: tuple[str, ...]
    etcd_key_prefix: str
    fsync: bool
    port: int
    compaction_interval: float
    snapshot_count: int
    history_max_events: int
    watch_buffer_size: int
    apiserver: APIServerOptions
    scheduler_port: int

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "StartOptions":
        """Flags given on the command line, else the --config file, else DEFAULTS."""
        from_file = load_config(args.config, DEFAULTS) if args.config else {}

        def setting(name: str):
            value = getattr(args, name)
            return value if value is not None else from_file.get(name, DEFAULTS[name])

        if setting("etcd_servers") and (args.data_dir or "data_dir" in from_file):
            raise CommandError("use either --data-dir or --etcd-servers, not both")
        if setting("fsync") not in ("always", "never"):
            raise CommandError(f"fsync must be always or never, not {setting('fsync')!r}")
        try:
            return cls(
                data_dir=Path(str(setting("data_dir"))).expanduser(),
                etcd_servers=parse_servers(str(setting("etcd_servers"))) if setting("etcd_servers") else (),
                etcd_key_prefix=str(setting("etcd_key_prefix") or ""),
                fsync=setting("fsync") == "always",
                port=int(setting("port")),
                compaction_interval=parse_duration(setting("etcd_compaction_interval")),
                snapshot_count=int(setting("snapshot_count")),
                history_max_events=int(setting("history_max_events")),
                watch_buffer_size=int(setting("watch_buffer_size")),
                scheduler_port=int(setting("scheduler_port")),
                apiserver=APIServerOptions(
                    etcd_prefix=str(setting("etcd_prefix")),
                    service_cluster_ip_range=str(setting("service_cluster_ip_range")),
                    service_node_port_range=str(setting("service_node_port_range")),
                    event_ttl=parse_duration(setting("event_ttl")),
                    max_requests_inflight=int(setting("max_requests_inflight")),
                    max_mutating_requests_inflight=int(setting("max_mutating_requests_inflight")),
                    min_request_timeout=float(setting("min_request_timeout")),
                    watch_cache_size=int(setting("watch_cache_size")),
                    etcd_health_urls=tuple(
                        f"http://{server}/health" for server in
                        (parse_servers(str(setting("etcd_servers"))) if setting("etcd_servers") else ())
                    ),
                    backend="etcd" if setting("etcd_servers") else "embedded",
                ),
            )
        except (TypeError, ValueError) as exc:
            raise CommandError(f"invalid setting: {exc}") from exc


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "start",
        parents=parents,
        help="run the control plane (for now: the store and the API server)",
        description="Run the control plane in this process until SIGINT or SIGTERM.",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="YAML file of settings named like these flags (see configs/cluster.yaml); flags win",
    )
    parser.add_argument(
        "--data-dir",
        metavar="DIR",
        help=f"the embedded store's data directory (default {DEFAULT_DATA_DIR})",
    )
    parser.add_argument(
        "--etcd-servers", metavar="HOST:PORT[,...]", help="store data in this etcd cluster instead"
    )
    parser.add_argument(
        "--etcd-key-prefix",
        metavar="PREFIX",
        help="namespace prepended to every key in etcd, so clusters can share one etcd "
        "(default: none; the keys themselves already start with /registry)",
    )
    parser.add_argument(
        "--fsync",
        choices=("always", "never"),
        help="fsync the WAL before acknowledging a write (default always; never is for tests)",
    )
    parser.add_argument(
        "--insecure-port", "--port", dest="port", type=int,
        help=f"the API server's insecure port on {ADDRESS}: no authentication, like v1.0's "
        f"(default {DEFAULT_PORT}; 0 picks a free port)",
    )
    parser.add_argument("--etcd-prefix", metavar="PREFIX",
                        help="the root of every key in the store (default /registry)")
    parser.add_argument("--service-cluster-ip-range", metavar="CIDR",
                        help="services' cluster IPs come from here (default 10.0.0.0/24)")
    parser.add_argument("--service-node-port-range", metavar="LOW-HIGH",
                        help="NodePorts come from here (default 30000-32767)")
    parser.add_argument("--event-ttl", metavar="DURATION",
                        help="events are deleted this long after they are written (default 1h0m0s)")
    parser.add_argument("--max-requests-inflight", type=int,
                        help="read requests served at once before 429 (default 400; 0 = no limit)")
    parser.add_argument("--max-mutating-requests-inflight", type=int,
                        help="write requests served at once before 429 (default 200; 0 = no limit)")
    parser.add_argument("--min-request-timeout", type=int, metavar="SECONDS",
                        help="watches without timeoutSeconds last between this and twice this "
                        "(default 1800)")
    parser.add_argument("--scheduler-port", type=int,
                        help="run the scheduler in this process with its healthz/metrics/debug "
                        "on this port (default 10251; 0 picks a free port; -1 runs no scheduler)")
    parser.add_argument("--watch-cache-size", type=int,
                        help="events per resource kept in memory to resume watches (default 10000)")
    parser.add_argument(
        "--etcd-compaction-interval",
        metavar="DURATION",
        help="compact the store's history this often, keeping at least one interval "
        "(default 5m0s; 0 disables)",
    )
    parser.add_argument(
        "--snapshot-count",
        type=int,
        help="WAL records between snapshots, at least (default 10000; the store also waits "
        "for as many records as it has keys)",
    )
    parser.add_argument(
        "--history-max-events",
        type=int,
        help="watch history kept at most, in events (default 50000)",
    )
    parser.add_argument(
        "--watch-buffer-size",
        type=int,
        help="events buffered per watcher before it is caught up from history (default 1024)",
    )
    parser.set_defaults(run=run, command="start")


def run(args: argparse.Namespace) -> int:
    return runtime.run(serve(StartOptions.from_args(args)))


async def open_store(options: StartOptions) -> tuple[Store, str]:
    """The store and a name of its backend for /version."""
    if options.etcd_servers:
        return await connect_etcd(options.etcd_servers, options.etcd_key_prefix), "etcd"
    store = await EmbeddedStore.open(
        options.data_dir,
        fsync=options.fsync,
        compaction_interval=options.compaction_interval,
        snapshot_count=options.snapshot_count,
        history_max_events=options.history_max_events,
        watch_buffer_size=options.watch_buffer_size,
    )
    return store, "embedded"


def inspect_hint(options: StartOptions) -> str:
    if options.etcd_servers:
        servers = ",".join(options.etcd_servers)
        hint = f"minikube-py storage ls --etcd-servers {servers}"
        return hint + (f" --etcd-key-prefix {options.etcd_key_prefix}" if options.etcd_key_prefix else "")
    return f"minikube-py storage ls --data-dir {options.data_dir}"


async def serve(options: StartOptions) -> int:
    # Imported here, not at the top: aiohttp costs a quarter of a second to import, which
    # every `minikube-py storage ...` command would otherwise pay for nothing.
    from aiohttp import web

    from ..apiserver.server import APIServer

    stop = runtime.stop_on_signals()
    try:
        store, backend = await open_store(options)
        try:
            apiserver = APIServer(store, options.apiserver)
            runner = web.AppRunner(apiserver.build_app(), access_log=None)
            await runner.setup()
            scheduler: _InProcessScheduler | None = None
            try:
                site = web.TCPSite(runner, ADDRESS, options.port)
                try:
                    await site.start()
                except OSError as exc:
                    reason = exc.strerror or exc
                    raise CommandError(f"cannot serve on {ADDRESS}:{options.port}: {reason}") from exc
                api_url = f"http://{ADDRESS}:{_bound_port(runner, options.port)}"
                scheduler = await _start_scheduler(apiserver, runner.app, options.scheduler_port)
                page = await store.range("", limit=1)
                where = (
                    {"etcd_servers": ",".join(options.etcd_servers), "etcd_key_prefix": options.etcd_key_prefix}
                    if options.etcd_servers
                    else {"data_dir": str(options.data_dir)}
                )
                log.info(
                    "ready",
                    url=api_url,
                    scheduler=scheduler.url if scheduler else None,
                    storage=backend,
                    revision=page.revision,
                    keys=len(page.kvs) + page.remaining,
                    **where,
                    inspect=inspect_hint(options),
                )
                await stop.wait()
                log.info("stopping")
            finally:
                if scheduler is not None:
                    await scheduler.stop()
                await runner.cleanup()
        finally:
            await store.close()
    finally:
        runtime.restore_signals()
    log.info("stopped")
    return 0


class _InProcessScheduler:
    """The all-in-one scheduler: the same component `minikube-py scheduler` runs, talking to
    this process's API server through the in-process transport (the same handler pipeline
    as HTTP, no socket), with its healthz/metrics/debug server."""

    def __init__(self, task: "asyncio.Task", runner: "web.AppRunner", url: str, client) -> None:
        self.task, self.runner, self.url, self.client = task, runner, url, client

    async def stop(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        await self.runner.cleanup()
        await self.client.close()


async def _start_scheduler(apiserver, app: "web.Application",
                           port: int) -> _InProcessScheduler | None:
    """Start kube-scheduler beside the API server (-1 = don't); `port` 0 picks a free one."""
    if port < 0:
        return None
    from aiohttp import web

    from ..client import Client, InProcessTransport
    from ..scheduler.factory import from_provider
    from ..scheduler.scheduler import Scheduler
    from ..scheduler.server import build_app

    client = Client(InProcessTransport(app, user_agent="kube-scheduler"))
    scheduler = Scheduler(client, from_provider("DefaultProvider"))
    runner = web.AppRunner(build_app(scheduler), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, ADDRESS, port).start()
    except OSError as exc:
        await runner.cleanup()
        await client.close()
        raise CommandError(f"cannot serve the scheduler on {ADDRESS}:{port}: "
                           f"{exc.strerror or exc} (use --scheduler-port)") from exc
    url = f"http://{ADDRESS}:{_bound_port(runner, port)}"
    apiserver.set_component_url("scheduler", f"{url}/healthz")
    task = asyncio.create_task(scheduler.run(), name="scheduler")
    return _InProcessScheduler(task, runner, url, client)


def _bound_port(runner: "web.AppRunner", requested: int) -> int:
    """The port actually bound (differs from the requested one when that is 0)."""
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return address[1]
    return requested
