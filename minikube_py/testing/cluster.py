"""`Cluster`: a whole minikube_py cluster for a test, as a sync or an async context manager.

Kubernetes piece: controller-runtime's envtest `Environment` (Start/Stop, a rest.Config), but
with the whole control plane — scheduler, controller manager, Ready simulated nodes — and in
this process: it is `minikube-py start`'s own `running_cluster` over the same flags
(options.start_argv), with ports the OS picks and a temporary data directory.

Two ways to hold it:
- `with Cluster(nodes=3) as c:` runs the cluster's event loop on a background thread, so sync
  code (the official `kubernetes` client, subprocesses, plain asserts) can block freely; the
  helpers (`c.wait_for`, `c.stop_node`, ...) block until done and return the result.
- `async with Cluster(nodes=3) as c:` runs it on the caller's loop (pytest-asyncio, anyio);
  the same helpers then return awaitables (`await c.wait_for(...)`). Never call a blocking
  client from that loop: the cluster serves on it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import io
import shutil
import tempfile
import time
import uuid
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from ..api.errors import StatusError
from . import clients
from . import kubectl as kubectl_runner
from .clock import AdjustableClock, nudge
from .options import ClusterOptions, start_argv
from .waiting import Predicate, deleted, exists, wait_for
from .waiting import condition as has_condition

if TYPE_CHECKING:
    from ..cli.start import RunningCluster
    from ..client import Client
    from ..client.resources import Resource
    from .loop_thread import LoopThread

Obj = dict[str, Any]
TMPFS = Path("/dev/shm")


@functools.cache
def start_parser() -> argparse.ArgumentParser:
    """`minikube-py`'s parser, built once per process (building it costs ~70 ms)."""
    from ..cli.main import build_parser

    return build_parser()


def parse_start(argv: list[str]) -> argparse.Namespace:
    """`start`'s flags parsed; a bad flag is a ValueError with argparse's message (argparse
    itself would print the usage and exit the test process)."""
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            return start_parser().parse_args(argv)
    except SystemExit:
        message = errors.getvalue().strip().splitlines()
        raise ValueError(f"minikube-py start flags: {message[-1] if message else argv}") \
            from None


class Cluster:
    """A running test cluster; see the module docstring. Keyword arguments are
    ClusterOptions fields (`nodes`, `components`, `controllers`, `secure`, `store`,
    `flags`, ...)."""

    def __init__(self, options: ClusterOptions | None = None, **fields: Any) -> None:
        self.options = (options or ClusterOptions()).replace(**fields) if fields \
            else (options or ClusterOptions())
        self.clock = AdjustableClock()
        self.started_seconds: float | None = None
        self._thread: LoopThread | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._running: RunningCluster | None = None
        self._client: Client | None = None
        self._dir: Path | None = None

    # -- lifecycle ----------------------------------------------------------------------
    async def _start(self) -> None:
        from ..cli.start import in_process_client, running_cluster, write_kubeconfig
        from ..cli.start_options import StartOptions

        began = time.perf_counter()
        base = TMPFS if self.options.store == "memory" and TMPFS.is_dir() else None
        self._dir = Path(tempfile.mkdtemp(prefix="minikube-py-test-", dir=base))
        argv = start_argv(self.options, self._dir,
                          etcd_prefix=f"/minikube-py-test-{uuid.uuid4().hex[:12]}")
        try:
            options = dataclasses.replace(StartOptions.from_args(parse_start(argv)),
                                          ephemeral_ports=True, controller_clock=self.clock)
        except BaseException:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise
        self._stack = contextlib.AsyncExitStack()
        try:
            self._running = await self._stack.enter_async_context(running_cluster(options))
            write_kubeconfig(self.kubeconfig_path, self._running)
            self._client = in_process_client(self._running.runner.app, "minikube-py-testing")
            self._stack.push_async_callback(self._client.close)
        except BaseException:
            await self._stack.aclose()
            shutil.rmtree(self._dir, ignore_errors=True)
            raise
        self.started_seconds = time.perf_counter() - began

    async def _stop(self) -> None:
        try:
            if self._stack is not None:
                await self._stack.aclose()
        finally:
            self._running = self._client = self._stack = None
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)

    async def __aenter__(self) -> Self:
        await self._start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stop()

    def __enter__(self) -> Self:
        from .loop_thread import LoopThread

        self._thread = LoopThread()
        try:
            self._thread.call(self._start())
        except BaseException:
            self._thread.close()
            self._thread = None
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        try:
            thread.call(self._stop(), 60)
        finally:
            thread.close()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run `coro` on the cluster's loop: its result (sync Cluster), else `coro` itself to
        be awaited (async Cluster). Every helper below goes through here."""
        if self._thread is None:
            return coro
        return self._thread.call(coro)

    # -- where it is ---------------------------------------------------------------------
    @property
    def running(self) -> RunningCluster:
        if self._running is None:
            raise RuntimeError("the cluster is not running (use it inside `with`/`async with`)")
        return self._running

    @property
    def url(self) -> str:
        """The URL the kubeconfig points at: the secure port with `secure=True`, else the
        insecure one (no authentication)."""
        running = self.running
        return running.secure_url if self.options.secure and running.secure_url \
            else running.url

    @property
    def console_url(self) -> str:
        """The web console's URL (`Cluster(console=True)`)."""
        url = self.running.console_url
        if url is None:
            raise RuntimeError("this cluster serves no console (Cluster(console=True))")
        return url

    @property
    def kubeconfig_path(self) -> Path:
        if self._dir is None:
            raise RuntimeError("the cluster is not running")
        return self._dir / "kubeconfig"

    @property
    def token(self) -> str | None:
        secure = self.running.secure
        return secure.admin_token if self.options.secure and secure is not None else None

    @property
    def ca_data(self) -> bytes | None:
        secure = self.running.secure
        if self.options.secure and secure is not None and secure.ca_path is not None:
            return secure.ca_path.read_bytes()
        return None

    @property
    def client(self) -> Client:
        """minikube_py's own client over the API server's handler pipeline (no socket), for
        coroutines run on the cluster's loop (`c.run(c.client.get(...))`)."""
        if self._client is None:
            raise RuntimeError("the cluster is not running")
        return self._client

    # -- clients of other libraries (made lazily; see clients.py) -----------------------
    def kubernetes_client(self) -> Any:
        return clients.kubernetes_client(self.kubeconfig_path)

    def kubernetes_asyncio_client(self) -> Coroutine[Any, Any, Any]:
        """A coroutine: `api = await c.kubernetes_asyncio_client()` on any loop."""
        return clients.kubernetes_asyncio_client(self.kubeconfig_path)

    def lightkube_client(self, *, asynchronous: bool = False, **kwargs: Any) -> Any:
        return clients.lightkube_client(self.kubeconfig_path, asynchronous=asynchronous,
                                        **kwargs)

    def http_session(self) -> Any:
        """An aiohttp ClientSession at the API server (create it inside a running loop)."""
        return clients.http_session(self.url, token=self.token, ca_data=self.ca_data)

    # -- kubectl -------------------------------------------------------------------------
    def kubectl(self, *args: str, input: str | None = None, check: bool = True,
                timeout: float = 60.0) -> Any:
        """The real kubectl with this cluster's kubeconfig; a KubectlResult (awaitable with
        an async Cluster). KubectlNotFound without a kubectl (the pytest plugin skips)."""
        home = self.kubeconfig_path.parent / "home"
        home.mkdir(exist_ok=True)
        if self._thread is None:
            return kubectl_runner.run_async(self.kubeconfig_path, home, args, input=input,
                                            check=check, timeout=timeout)
        return kubectl_runner.run(self.kubeconfig_path, home, args, input=input, check=check,
                                  timeout=timeout)

    # -- objects -------------------------------------------------------------------------
    def wait_for(self, resource: str | Resource, name: str,
                 condition: str | Predicate = "Ready", *, namespace: str | None = None,
                 timeout: float = 10.0) -> Any:
        """Until the object meets `condition`: a condition type ("Ready", "Available",
        "Complete"), "deleted", "exists", or a predicate of the object (None when absent); see
        waiting.py. Returns the object; raises WaitTimeout."""
        if isinstance(condition, str):
            predicate = {"deleted": deleted, "exists": exists}.get(condition) \
                or has_condition(condition)
        else:
            predicate = condition
        return self.run(wait_for(self.client, resource, name, predicate,
                                 namespace=namespace, timeout=timeout))

    def create_namespace(self, name: str | None = None, labels: dict[str, str] | None = None
                         ) -> Any:
        """Create a namespace (default name: `test-<random>`); returns the Namespace once
        pods can be created in it. Until its `default` ServiceAccount exists the
        ServiceAccount admission plugin rejects pods, as upstream's does; when the
        serviceaccount controller runs (it would make that account a moment later), it is
        created here in the same step, which saves waiting for the controller's turn."""
        from ..client.resources import NAMESPACES, SERVICEACCOUNTS

        body: Obj = {"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": name or f"test-{uuid.uuid4().hex[:10]}",
                                  "labels": dict(labels or {})}}

        async def create() -> Obj:
            namespace = await self.client.create(NAMESPACES, body)
            if self._runs_controller("serviceaccount"):
                account = {"apiVersion": "v1", "kind": "ServiceAccount",
                           "metadata": {"name": "default"}}
                try:
                    await self.client.create(SERVICEACCOUNTS, account,
                                             namespace["metadata"]["name"])
                except StatusError as exc:
                    if exc.code != 409:  # the controller was quicker: the same account
                        raise
            return namespace
        return self.run(create())

    def _runs_controller(self, name: str) -> bool:
        try:
            manager = self.running.component("controller-manager").handle
        except StopIteration:
            return False
        return name in manager.options.controllers

    def delete_namespace(self, name: str) -> Any:
        """Delete it (gone already, e.g. the test deleted it: nothing to do) and return once
        the API server has accepted that: the namespace controller empties and removes it in
        the background — nothing waits for that. (Not waiting even for the DELETE's answer
        was measured slower for back-to-back tests: the deletions' work piles up.)"""
        from ..client.resources import NAMESPACES

        async def delete() -> None:
            try:
                await self.client.delete(NAMESPACES, name)
            except StatusError as exc:
                if exc.code != 404:
                    raise
        return self.run(delete())

    def revision(self) -> Any:
        """The store's current revision (the resourceVersion the next write exceeds)."""
        async def current() -> int:
            return (await self.running.store.range("/", limit=1)).revision
        return self.run(current())

    # -- nodes and time --------------------------------------------------------------------
    @property
    def node_names(self) -> list[str]:
        return sorted(self._component("kubelet").handle.kubelets)

    def stop_node(self, name: str) -> Any:
        """Kill a node's kubelet (no heartbeats, pods left alone): the node lifecycle
        controller marks it NotReady after --node-monitor-grace-period, then evicts."""
        return self.run(self._component("kubelet").handle.stop_node(name))

    def start_node(self, name: str) -> Any:
        """Start the kubelet again: the node posts Ready and re-syncs its pods."""
        return self.run(self._component("kubelet").handle.start_node(name))

    def advance_clock(self, seconds: float) -> Any:
        """Move the controllers' wall clock forward (clock.py says which decisions it moves)
        and make the clock-driven controllers look again; returns their names."""
        self.clock.advance(seconds)
        manager = self._component("controller-manager").handle

        async def poke() -> list[str]:
            return nudge(manager.controllers)
        return self.run(poke())

    def report(self, namespace: str, since_revision: int = 1,
               since_seq: int | None = None) -> Any:
        """The failure-report text for `namespace`: its Events, then — when the process's
        trace ring recorded from `since_seq` on (`trace_recording`) — the timeline of its
        objects (trace_history.py), else the writes its objects saw since `since_revision`
        (the store's history, history.py)."""
        if since_seq is not None:
            from ..trace import TRACE
            from .trace_history import trace_report

            return self.run(trace_report(self.client, TRACE, namespace, since_seq))
        from .history import StoreHistory, report

        history = StoreHistory(self.running.store, self.running.apiserver.options.etcd_prefix)
        return self.run(report(self.client, history, namespace, since_revision))

    @staticmethod
    @contextlib.contextmanager
    def trace_recording() -> Iterator[int]:
        """Hold the process's trace ring on (it records what every component does) for the
        block; yields the sequence number to read from (`report(..., since_seq=)`, inside the
        block). Leaving it empties the ring unless someone else still records (a viewer,
        `start --trace`, an enclosing block): a session of tests then keeps no records from
        test to test, whatever its length."""
        from ..trace import TRACE

        since = TRACE.last_seq  # read first: every record made while held comes after it
        TRACE.hold()
        try:
            yield since
        finally:
            TRACE.release()
            if not TRACE.active:
                TRACE.clear()

    def _component(self, name: str) -> Any:
        try:
            return self.running.component(name)
        except StopIteration:
            raise RuntimeError(f"this cluster does not run the {name} (ClusterOptions."
                               "components)") from None
