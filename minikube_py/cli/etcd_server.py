"""`minikube-py etcd-server`: the embedded store as a standalone etcd v3 server.

Kubernetes v1.0 piece: the etcd process v1.0 ran beside kube-apiserver (hack/local-up-cluster.sh
started `etcd` first, then pointed `--etcd-servers` at it). Here the store is ours and the wire
is etcd's (minikube_py/etcdserver), so etcdctl, etcd client libraries and a kube-apiserver can
use it; `minikube-py start --etcd-listen` serves the same API from inside a running cluster.
"""

from __future__ import annotations

import argparse
import asyncio

import structlog

from . import runtime
from .component_settings import STORAGE
from .settings import Setting, add_flags, resolve
from .storage_target import ConfigError

log = structlog.get_logger(component="etcd-server")

_STORE_ROWS = {"data-dir", "fsync", "etcd-compaction-interval", "snapshot-count",
               "history-max-events", "watch-buffer-size"}
SETTINGS = (
    *(s for s in STORAGE if s.name in _STORE_ROWS),
    Setting("listen-client-urls", "http://127.0.0.1:2379", "where to serve etcd's v3 gRPC API "
            "(etcd's flag; port 0: any free port, printed when ready)", metavar="URL"),
    Setting("name", "minikube-py", "this member's name in `etcdctl member list`"),
)


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "etcd-server", parents=parents, help="serve the embedded store over etcd's v3 gRPC API",
        description="Open the embedded store's data dir and serve it over etcd's v3 API (KV, "
        "Watch, Lease, Maintenance) until SIGINT/SIGTERM: etcdctl and etcd clients work "
        "against it. The data dir must not be open in another process (a running `start` "
        "serves the same API with --etcd-listen).")
    add_flags(parser, SETTINGS)
    parser.set_defaults(run=run, command="etcd-server")


def run(args: argparse.Namespace) -> int:
    settings = resolve(args, SETTINGS, {}, "")
    return runtime.run(serve(settings), component="etcd-server")


async def serve(settings: dict, *, ready: asyncio.Event | None = None,
                stop: asyncio.Event | None = None) -> int:
    from pathlib import Path

    from ..etcdserver.serving import ListenError, parse_listen, serve_store
    from ..storage import EmbeddedStore

    try:
        listen = parse_listen(str(settings["listen_client_urls"]))
    except ListenError as exc:
        raise ConfigError(f"--listen-client-urls {exc}") from None
    stop = stop or runtime.stop_on_signals()
    store = await EmbeddedStore.open(
        Path(str(settings["data_dir"])).expanduser(),
        fsync=settings["fsync"] == "always",
        compaction_interval=settings["etcd_compaction_interval"],
        snapshot_count=settings["snapshot_count"],
        history_max_events=settings["history_max_events"],
        watch_buffer_size=settings["watch_buffer_size"],
    )
    try:
        try:
            server = await serve_store(store, listen, name=str(settings["name"]))
        except ListenError as exc:
            raise ConfigError(f"--listen-client-urls {exc}") from None
        except OSError as exc:
            raise ConfigError(f"--listen-client-urls {listen}: {exc}") from None
        try:
            print(f"etcd v3 API serving {store.data_dir} at {server.url} "
                  f"(etcdctl --endpoints={server.endpoint} get / --prefix --keys-only)", flush=True)
            if ready is not None:
                ready.set()
            await stop.wait()
        finally:
            await server.stop(1.0)
    finally:
        await store.close()
    return 0
