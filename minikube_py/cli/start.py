"""`minikube-py start`: the whole cluster in this process, until SIGINT or SIGTERM.

Kubernetes v1.0 piece: what the seeds do with systemctl on one machine — start etcd,
kube-apiserver, kube-controller-manager, kube-scheduler and a kubelet per node — folded into
one process: the embedded store (or --etcd-servers), the API server on the insecure port, and
then the scheduler, the controller manager and the simulated kubelets, each talking to the API
server through the in-process transport (the same handler pipeline as HTTP, no socket), each
with its own health port so componentstatuses probes them for real. Each acts as its upstream
identity (apiserver/authn/identities.py) — system:kube-scheduler, each controller's kube-system
service account, system:node:<name> per kubelet — so the secure port's authorizer (Node,RBAC
by default) judges them as it would the real components.

`start` says "ready" only when it is: every node Ready and every component Healthy. Stopping
is the part that matters for data: a signal only sets an event; the components stop in reverse
order, the HTTP site closes, the store flushes its WAL and the data dir's lock is released
before the process exits 0. A second `start` on the same data dir resumes the cluster; one
started while the first runs fails at once with the holder's pid.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import ipaddress
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Callable

import structlog

from .. import loopwatch
from ..apiserver.authn import identities
from ..pausing import REGISTRY as PAUSES
from ..pausing import PauseRegistry
from ..storage import EmbeddedStore, Store
from ..trace import TRACE
from . import listeners, runtime
from .console import serving_console
from .start_options import StartOptions, add_start_flags
from .start_progress import Lines, Silent
from .storage_target import CommandError, ConfigError, connect_etcd

if TYPE_CHECKING:
    import socket
    import ssl
    from pathlib import Path

    from aiohttp import web

    from ..apiserver.authn import UserInfo
    from ..apiserver.server import APIServer
    from ..client import Client
    from ..client.cache import InformerFactory
    from .apiserver_fleet import Fleet
    from .secure_serving import SecureServing
    from .start_progress import Progress

log = structlog.get_logger(component="minikube-py")


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "start", parents=parents,
        help="run the whole cluster: store, API server, scheduler, controller manager, nodes",
        description="Run the cluster in this process until SIGINT or SIGTERM. Every "
        "component's flags are accepted; a --config file sets the same names.")
    add_start_flags(parser)
    parser.set_defaults(run=run, command="start")


def run(args: argparse.Namespace) -> int:
    options = StartOptions.from_args(args)
    return runtime.run(serve(options), component="minikube-py",
                       stall_threshold=options.loop_stall_threshold)


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


class Component:
    """A started component: where it answers, and how to stop it."""

    def __init__(self, name: str, url: str | None, stop: Callable[[], Awaitable[None]],
                 detail: str = "", *, listed: bool = True,
                 pending: Callable[[], list[str]] | None = None,
                 handle: object = None) -> None:
        self.name, self.url, self._stop, self.detail = name, url, stop, detail
        self.listed = listed  # shown in the ready line and the summary
        self.pending = pending  # what it still waits for before it is ready (none: ready)
        #: the running object (Scheduler, ControllerManager, KubeletPool) for in-process
        #: drivers such as minikube_py.testing (stop a node, advance the controllers' clock)
        self.handle = handle

    async def stop(self) -> None:
        await self._stop()


@dataclass
class RunningCluster:
    """What `running_cluster` yields: the store, the API server and where it answers, and
    the started components (benchmarks and tests drive a cluster through this too)."""

    store: Store
    backend: str
    apiserver: "APIServer"
    runner: "web.AppRunner"
    url: str                        # the insecure port's URL, else the secure port's
    components: list[Component]
    secure_url: str | None = None
    secure: "SecureServing | None" = None
    #: the pause gates of this cluster's scheduler and controllers (minikube_py/pausing.py;
    #: what /debug/components and the console flip)
    pauses: PauseRegistry | None = None
    #: the web console's URL (cli/console.py), None with --no-console
    console_url: str | None = None
    #: --etcd-listen: where etcd's v3 API serves the store (None: not served)
    etcd_url: str | None = None

    def component(self, name: str) -> Component:
        return next(c for c in self.components if c.name == name)


def data_dir_problems(options: StartOptions) -> list[str]:
    """The data dir held by another process (named, with its command line), as a preflight
    problem; the store's own lock still decides (a start racing this one loses there)."""
    from ..storage.datadir import DataDir, DataDirLockedError

    if options.etcd_servers:
        return []
    data_dir = DataDir(options.data_dir)
    if not data_dir.is_locked():
        return []
    return [str(DataDirLockedError(options.data_dir, data_dir.holder_pid()))]


@contextlib.asynccontextmanager
async def running_cluster(options: StartOptions, stop: asyncio.Event | None = None,
                          progress: "Progress | None" = None, *,
                          pauses: PauseRegistry | None = None) -> AsyncIterator[RunningCluster]:
    """The whole cluster, ready (nodes Ready, components Healthy), for the `with` block;
    afterwards the components stop in reverse order, then the API server, then the store.
    Every listener is bound (and every conflict reported) before the store opens
    (listeners.py); `progress` hears of each step (start_progress.py; default: silent).
    `pauses`: where the scheduler and the controllers register their pause gates; default a
    registry of this cluster's own (several clusters in one process never share a gate —
    `minikube-py start`, one cluster per process, passes the process's REGISTRY)."""
    pauses = pauses if pauses is not None else PauseRegistry()
    # Imported here, not at the top: the API server (aiohttp) costs a quarter of a second to
    # import, which every `minikube-py storage ...` command would otherwise pay for nothing.
    from ..apiserver.server import APIServer
    from . import front_proxy_tls, kubelet_tls
    from .secure_serving import prepare
    from .service_account_key import with_service_account_key

    options, secure = prepare(options)
    options = kubelet_tls.with_kubelet_client(options)  # the API server's identity to kubelets
    options = front_proxy_tls.with_proxy_client(options)  # ... and to aggregated APIs
    options = with_service_account_key(options)  # TokenRequest's signing key, sa.key
    progress = progress or Silent()
    if secure is not None:
        progress.step(f"certificates and admin token in {options.cert_dir}")
    bound = listeners.bind_all(listeners.plan(options, secure is not None),
                               data_dir_problems(options),
                               reuseport=listeners.API if options.apiservers > 1 else ())
    progress.step(f"{len(bound.sockets)} ports bound"
                  + (" (free ones: --ports auto)" if options.ports == listeners.AUTO else ""))
    try:
        store, backend = await open_store(options)
    except BaseException:
        bound.close()
        raise
    progress.step(f"store: {backend}" + ("" if options.etcd_servers
                                          else f" in {options.data_dir}"))
    if options.trace:
        TRACE.hold()  # --trace: record from the start, not only while someone watches
    etcd = fleet = None
    shared: dict[str, list] = {"insecure": [], "secure": []}  # --apiservers' sockets
    try:
        if options.apiservers > 1:  # every write then publishes its revision (apiserver_fleet)
            from .apiserver_fleet import Fleet

            fleet = Fleet(options, store)
            shared = _join_shared(options, bound)
            # spawned now, they import while this process builds API server #0
            await fleet.spawn(shared["insecure"], shared["secure"])
        served = fleet.store if fleet is not None else store
        etcd = await _serve_etcd(options, served)
        try:
            apiserver = APIServer(served, options.apiserver, pauses=pauses)
        except ValueError as exc:  # an unreadable token/policy file, an unknown mode
            raise ConfigError(str(exc)) from None
        runner = apiserver.make_runner()
        if options.apiservers > 1:
            from .apiserver_child import add_identity

            add_identity(runner.app, 0)
        await runner.setup()
        components: list[Component] = []
        try:
            url = secure_url = None
            sock = bound.take("apiserver")
            if sock is not None:
                if not ipaddress.ip_address(options.address).is_loopback:
                    log.warning("the insecure port serves everyone who can reach it, with no "
                                "authentication", address=options.address, port=options.port)
                url = f"http://{options.address}:{await _serve(runner, sock)}"
            sock = bound.take("secure")
            if sock is not None and secure is not None:
                port = await _serve(runner, sock, secure.ssl_context)
                host = "127.0.0.1" if options.bind_address in ("0.0.0.0", "::") \
                    else options.bind_address
                secure_url = f"https://{host}:{port}"
            progress.step("API server serving " + " and ".join(u for u in (url, secure_url) if u))
            if fleet is not None:
                components.append(await start_fleet(fleet, stop))
            components += await start_components(options, apiserver, runner.app, bound, progress,
                                                pauses)
            await wait_ready(options, runner.app, components, stop or asyncio.Event(), progress)
            cluster = RunningCluster(store, backend, apiserver, runner, url or secure_url or "",
                                     components, secure_url, secure, pauses,
                                     etcd_url=etcd.url if etcd is not None else None)
            async with serving_console(options, cluster, bound.take("console")):
                yield cluster
        finally:
            for component in reversed(components):
                await component.stop()
            await runner.cleanup()
    finally:
        bound.close()
        if options.trace:
            TRACE.release()
        if etcd is not None:
            await etcd.stop(1.0)
        if fleet is not None:
            await fleet.stop()  # a no-op when it stopped with the components
        for sock in (*shared["insecure"], *shared["secure"]):
            sock.close()
        await store.close()


async def _serve_etcd(options: StartOptions, store: Store):
    """--etcd-listen: the store over etcd's v3 API (minikube_py/etcdserver), or None."""
    if not options.etcd_listen:
        return None
    from ..etcdserver.serving import ListenError, serve_store

    try:
        server = await serve_store(store, options.etcd_listen)
    except ListenError as exc:
        raise ConfigError(f"--etcd-listen {exc}") from None
    except OSError as exc:
        raise ConfigError(f"--etcd-listen {options.etcd_listen}: {exc}") from None
    log.info("etcd v3 API serving the store", url=server.url,
             hint=f"etcdctl --endpoints={server.endpoint} get /registry --prefix --keys-only")
    return server


async def serve(options: StartOptions) -> int:
    began = time.monotonic()
    stop = runtime.stop_on_signals()
    failed = None
    print(starting_line(options), flush=True)
    try:
        async with running_cluster(options, stop, Lines(), pauses=PAUSES) as cluster:
            if options.kubeconfig_out is not None:
                write_kubeconfig(options.kubeconfig_out, cluster)
            page = await cluster.store.range("", limit=1)
            where = ({"etcd_servers": ",".join(options.etcd_servers),
                      "etcd_key_prefix": options.etcd_key_prefix}
                     if options.etcd_servers else {"data_dir": str(options.data_dir)})
            seconds = time.monotonic() - began
            listed = [c for c in cluster.components if c.listed]
            log.info("ready", url=cluster.url, secure_url=cluster.secure_url,
                     seconds=round(seconds, 3),
                     storage=cluster.backend, revision=page.revision,
                     keys=len(page.kvs) + page.remaining,
                     **{c.name.replace("-", "_"): c.url for c in listed},
                     kubeconfig=str(options.kubeconfig_out or ""), **where,
                     console=cluster.console_url or "",
                     **({"etcd_url": cluster.etcd_url} if cluster.etcd_url else {}),
                     inspect=inspect_hint(options))
            print_summary(options, cluster, seconds)
            loopwatch.mark_ready()  # from now on a stall of the loop is a warning
            await stop.wait()
            failed = next((c.handle.failed for c in cluster.components
                           if c.name == "apiservers"), None)
            log.info("stopping")
    finally:
        runtime.restore_signals()
    log.info("stopped")
    if failed:
        raise CommandError(f"stopped: {failed}")
    return 0


def _join_shared(options: StartOptions, bound: listeners.Bound) -> dict[str, list]:
    """--apiservers N: the API ports were bound with SO_REUSEPORT (listeners.bind_all); more
    sockets join each, CHILD_SHARE per child (apiserver_listeners.py). [0] is API server #0's."""
    from .apiserver_listeners import join_port, shares

    shared: dict[str, list] = {"insecure": [], "secure": []}
    try:
        for name, key in (("insecure", "apiserver"), ("secure", "secure")):
            first = bound.sockets.get(key)
            if first is not None:
                host, port = first.getsockname()[:2]
                # the children's: bound now, listening once each child serves
                shared[name] = [first, *join_port(host, port,
                                                     sum(shares(options.apiservers)) - 1,
                                                     listen=False)]
    except OSError as exc:
        for sock in (*shared["insecure"][1:], *shared["secure"][1:]):
            sock.close()
        raise CommandError(f"cannot share the API port between API servers: {exc}") from exc
    return shared


async def start_fleet(fleet: "Fleet", stop: asyncio.Event | None) -> Component:
    """--apiservers N: API server #0 is up (bootstrap done): hand the spawned children their
    assignments. `start` does not wait for them: each joins the shared port when it serves
    (apiserver_listeners.py), and `Fleet.serving` tells who waits for all of them."""

    def failed(_reason: str) -> None:
        if stop is not None:
            stop.set()

    await fleet.start(failed)
    return Component("apiservers", None, fleet.stop,
                     f"{fleet.options.apiservers} API server processes on one port",
                     listed=False, handle=fleet)


def starting_line(options: StartOptions) -> str:
    """The first line `start` prints: what it is about to run."""
    parts = ["store", "API server"] + [
        name.replace("-", " ") for name in ("controller-manager", "scheduler")
        if options.runs(name)]
    if options.runs("kubelet"):
        parts.append(f"{sum(p.count for p in options.node_pools)} simulated node(s)")
    return "Starting minikube-py: " + ", ".join(parts)


async def start_components(options: StartOptions, apiserver: "APIServer",
                           app: "web.Application", bound: listeners.Bound,
                           progress: "Progress",
                           pauses: PauseRegistry | None = None) -> list[Component]:
    """The components, sharing one informer per resource (DESIGN.md's scale mechanic: one
    watch and one decoded copy of each pod for the whole process, not one per component).
    The shared informers stop last, after every component that reads them."""
    from ..client.cache import InformerFactory

    # one watch per resource for every component: it lists and watches as the controller
    # manager, the one upstream identity allowed to list and watch everything
    informers = InformerFactory(in_process_client(app, "minikube-py-informers",
                                                  identities.KUBE_CONTROLLER_MANAGER))

    async def stop_informers() -> None:
        await informers.stop()
        await informers.client.close()

    started: list[Component] = [Component("informers", None, stop_informers, listed=False,
                                          handle=informers)]  # the console reads them too
    try:
        await install_storage(options, app)
        if options.runs("controller-manager"):
            started.append(await start_controller_manager(options, apiserver, app, informers,
                                                          bound, pauses))
        if options.runs("scheduler"):
            started.append(await start_scheduler(options, apiserver, app, informers, bound,
                                                 pauses))
        if options.runs("kubelet") and options.node_pools:
            started.append(await start_kubelets(options, app, informers, bound))
        if options.ingress:
            started.append(await start_ingress(options, app, bound))
        informers.start()
        for component in started:
            if component.listed:
                progress.step(f"{component.name} started"
                              + (f": {component.detail}" if component.detail else ""))
    except BaseException:
        for component in reversed(started):
            await component.stop()
        raise
    return started


async def install_storage(options: StartOptions, app: "web.Application") -> None:
    """minikube's storage addons (storage_addon.py), as the API server's trusted loopback."""
    from . import storage_addon

    client = in_process_client(app, "minikube-py-addons")
    try:
        await storage_addon.install(client, default_class=options.default_storage_class)
    finally:
        await client.close()


def in_process_client(app: "web.Application", user_agent: str,
                      user: "UserInfo | None" = None) -> "Client":
    """A client over the API server's own handler pipeline; `user`: the component identity
    its requests carry (authn/identities.py), authorized like that user on the secure port.
    Without one, the API server's trusted loopback."""
    from ..client import Client, InProcessTransport

    return Client(InProcessTransport(app, user_agent=user_agent, user=user))


class InProcessClients:
    """Clients acting as other identities, made on first use and closed together: upstream's
    ClientBuilder (`--use-service-account-credentials`: one service account per controller;
    one `system:node:<name>` credential per kubelet)."""

    def __init__(self, app: "web.Application", user_agent: str,
                 user_of: Callable[[str], "UserInfo"]) -> None:
        self.app = app
        self.user_agent = user_agent
        self.user_of = user_of
        self.clients: dict[str, Client] = {}

    def __call__(self, name: str) -> "Client":
        client = self.clients.get(name)
        if client is None:
            client = self.clients[name] = in_process_client(
                self.app, f"{self.user_agent}/{name}", self.user_of(name))
        return client

    async def close(self) -> None:
        for client in self.clients.values():
            await client.close()


async def serve_health(app: "web.Application", address: str,
                       sock: "socket.socket | None") -> tuple["web.AppRunner | None", str | None]:
    """A component's health/metrics listener on its bound socket; none when the listener is
    off (port 0: upstream's 0 disables)."""
    if sock is None:
        return None, None
    from aiohttp import web

    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        port = await _serve(runner, sock)
    except BaseException:
        await runner.cleanup()
        raise
    return runner, f"http://{address}:{port}"


async def start_scheduler(options: StartOptions, apiserver: "APIServer",
                          app: "web.Application", informers: "InformerFactory",
                          bound: listeners.Bound,
                          pauses: PauseRegistry | None = None) -> Component:
    from ..scheduler.factory import (
        DEFAULT_PROVIDER,
        AlgorithmArgs,
        PolicyError,
        from_provider,
        load_policy,
    )
    from ..scheduler.scheduler import Scheduler
    from ..scheduler.server import build_app
    from . import scheduler_config as framework_config
    from .settings import options_from

    configuration = framework_config.chosen(options.scheduler_configuration,
                                            options.algorithm_provider,
                                            options.policy_config_file)
    try:
        args = options_from(AlgorithmArgs, vars(options))
        algorithm = (load_policy(options.policy_config_file, args=args)
                     if options.policy_config_file
                     else from_provider(options.algorithm_provider or DEFAULT_PROVIDER, args))
    except PolicyError as exc:
        raise CommandError(str(exc)) from None
    client = in_process_client(app, "kube-scheduler", identities.KUBE_SCHEDULER)
    scheduler = Scheduler(client, algorithm,
                          percentage_of_nodes_to_score=options.percentage_of_nodes_to_score,
                          informers=informers, bind_pods_qps=options.bind_pods_qps,
                          bind_pods_burst=options.bind_pods_burst, pauses=pauses)
    framework_config.hand_off(scheduler, configuration)
    runner, url = await serve_health(build_app(scheduler, framework_config.configz(
                                         configuration, scheduler_config(options))),
                                     options.address, bound.take("scheduler"))
    if url:
        apiserver.set_component_url("scheduler", f"{url}/healthz")
    task = asyncio.create_task(scheduler.run(), name="scheduler")
    return Component("scheduler", url, _stopper(task, runner, client), handle=scheduler)


async def start_controller_manager(options: StartOptions, apiserver: "APIServer",
                                   app: "web.Application", informers: "InformerFactory",
                                   bound: listeners.Bound,
                                   pauses: PauseRegistry | None = None) -> Component:
    from ..controllers.manager import ControllerManager, build_app

    client = in_process_client(app, "kube-controller-manager",
                               identities.KUBE_CONTROLLER_MANAGER)
    # each controller as its kube-system service account (--use-service-account-credentials)
    accounts = InProcessClients(app, "kube-controller-manager",
                                functools.partial(identities.service_account_user,
                                                  "kube-system"))
    manager = ControllerManager(client, options.controllers, informers=informers,
                                clients=accounts, pauses=pauses)
    if options.controller_clock is not None:  # before run() builds the controllers
        manager.ctx.clock = options.controller_clock
    runner, url = await serve_health(build_app(manager, controller_manager_config(options)),
                                     options.address, bound.take("controller-manager"))
    if url:
        apiserver.set_component_url("controller-manager", f"{url}/healthz")
    task = asyncio.create_task(manager.run(), name="controller-manager")
    return Component("controller-manager", url, _stopper(task, runner, client, accounts),
                     f"{len(options.controllers.controllers)} controllers", handle=manager)


async def start_ingress(options: StartOptions, app: "web.Application",
                        bound: listeners.Bound) -> Component:
    """--ingress: install the simulated ingress controller's IngressClass and RBAC (as an
    addon manifest would, with the loopback identity), then run it as its service account."""
    from ..controllers.ingress import SERVICE_ACCOUNT, IngressController, install

    admin = in_process_client(app, "minikube-py-addons")
    try:
        await install(admin)
    finally:
        await admin.close()
    client = in_process_client(app, "ingress-controller",
                               identities.service_account_user("kube-system", SERVICE_ACCOUNT))
    controller = IngressController(client, address=options.address,
                                   port=options.ingress_port, sock=bound.take("ingress"))
    try:
        await controller.start()
    except OSError as exc:
        await controller.stop()
        await client.close()
        raise CommandError(f"the ingress controller cannot listen on {options.address}:"
                           f"{options.ingress_port} ({exc.strerror}); see --ingress-port") from None

    async def stop() -> None:
        await controller.stop()
        await client.close()

    return Component("ingress", f"http://{options.address}:{controller.port}", stop,
                     "IngressClass minikube-py")


def scheduler_config(options: StartOptions) -> dict:
    """/configz of the scheduler `start` runs (its flags as KubeSchedulerConfiguration)."""
    from . import scheduler
    from .component_settings import SCHEDULER
    from .componentconfig import component_config

    values = {"port": options.scheduler_port, "address": options.address,
              **{s.dest: getattr(options, s.dest) for s in SCHEDULER if hasattr(options, s.dest)},
              "scheduler_name": "default-scheduler"}
    return component_config((*scheduler.OWN, *SCHEDULER), values)


def controller_manager_config(options: StartOptions) -> dict:
    """/configz of the controller manager `start` runs (KubeControllerManagerConfiguration)."""
    import dataclasses

    from . import controller_manager
    from .component_settings import CONTROLLER_MANAGER
    from .componentconfig import component_config

    values = {"port": options.controller_manager_port, "address": options.address,
              **dataclasses.asdict(options.controllers)}
    return component_config((*controller_manager.OWN, *CONTROLLER_MANAGER), values)


async def start_kubelets(options: StartOptions, app: "web.Application",
                         informers: "InformerFactory", bound: listeners.Bound) -> Component:
    from ..kubelet.config import KubeletConfig
    from ..kubelet.pool import KubeletPool

    from .kubelet_tls import pool_serving

    serving = pool_serving(options)  # HTTPS + authn/authz with the secure port, else open HTTP
    client = in_process_client(app, "kubelet")
    nodes = InProcessClients(app, "kubelet", identities.node_user)  # system:node:<name>
    sock = bound.take("kubelet")
    pool = KubeletPool(client, address=options.address, port=-1 if sock is None else 0,
                       sock=sock, node_ip=options.address, informers=informers,
                       serving=serving, node_clients=nodes)
    for spec in options.node_pools:
        config = KubeletConfig(
            cpu=spec.cpu, memory=spec.memory, pods=spec.pods, labels=dict(spec.labels),
            taints=spec.taint_dicts(),
            node_status_update_frequency=options.node_status_update_frequency,
            image_pull_seconds=options.image_pull_duration,
            container_start_seconds=options.container_start_duration,
            max_termination_grace_seconds=options.max_termination_grace_period,
            **options.node_heartbeat)
        pool.add_nodes(spec.name, spec.count, config)
    try:
        await pool.start()
    except BaseException:
        await pool.stop()
        await nodes.close()
        await client.close()
        raise

    async def stop() -> None:
        await pool.stop()
        await nodes.close()
        await client.close()

    def pending() -> list[str]:
        return [name for name, k in pool.kubelets.items() if not k.ready_event.is_set()]

    count = sum(p.count for p in options.node_pools)
    url = pool.url if options.kubelet_port else None
    detail = f"{count} node{'s' if count != 1 else ''}" + (
        "; TLS, authentication" if serving is not None and serving.secured
        else "; no authentication" if url else "")
    return Component("kubelet", url, stop, detail, pending=pending, handle=pool)


def _stopper(task: asyncio.Task, runner: "web.AppRunner | None", client: "Client",
             clients: InProcessClients | None = None) -> Callable[[], Awaitable[None]]:
    async def stop() -> None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if runner is not None:
            await runner.cleanup()
        if clients is not None:
            await clients.close()
        await client.close()
    return stop


async def wait_ready(options: StartOptions, app: "web.Application",
                     components: list[Component], stop: asyncio.Event,
                     progress: "Progress | None" = None) -> None:
    """Until every simulated node is Ready (each kubelet has had its Ready status
    acknowledged — known in memory, no need to list thousands of nodes) and every probed
    component Healthy; a timeout is an error that says what is still missing."""
    from ..client.resources import COMPONENTSTATUSES
    from .status import condition_status

    client = in_process_client(app, "minikube-py")
    probed = {c.name for c in components if c.url and c.name != "kubelet"}
    deadline = time.monotonic() + options.ready_timeout
    progress = progress or Silent()
    total = sum(p.count for p in options.node_pools) if options.runs("kubelet") else 0
    try:
        while not stop.is_set():
            missing = []
            not_ready = 0
            for c in components:
                waiting = c.pending() if c.pending is not None else []
                if waiting:
                    not_ready += len(waiting)
                    missing.append(f"{len(waiting)} node(s) not Ready (e.g. {min(waiting)})")
            if probed and not missing:
                statuses = await client.list(COMPONENTSTATUSES)
                for item in statuses.get("items", ()):
                    name = item["metadata"]["name"]
                    if name in probed and condition_status(item, "Healthy") != "True":
                        missing.append(f"{name} not Healthy")
            # the count says it while nodes register; then what is not Healthy yet
            progress.nodes(total - not_ready, total, "" if not_ready else "; ".join(missing))
            if not missing:
                progress.done()
                return
            if time.monotonic() > deadline:
                raise CommandError(f"not ready after {options.ready_timeout:g} s: "
                                   f"{'; '.join(missing)} (see --ready-timeout)")
            await asyncio.sleep(0.02)
    finally:
        await client.close()


def write_kubeconfig(path: Path, cluster: RunningCluster) -> None:
    """The secure port with its CA and the generated admin token when there is one; else the
    insecure port (a token file of your own: add your user's credentials yourself)."""
    from .kubeconfig import write

    secure = cluster.secure
    if cluster.secure_url and secure is not None and secure.admin_token:
        ca = secure.ca_path.read_bytes() if secure.ca_path is not None else None
        write(path, cluster.secure_url, ca_data=ca, token=secure.admin_token)
    else:
        write(path, cluster.url)


def print_summary(options: StartOptions, cluster: RunningCluster, seconds: float) -> None:
    """What runs where, and how to point kubectl at it (on stdout, for people)."""
    where = (f"etcd {','.join(options.etcd_servers)}" if options.etcd_servers
             else f"embedded store in {options.data_dir}")
    lines = [f"minikube-py is ready ({seconds:.2f} s)"]
    if cluster.url.startswith("http:"):
        lines.append(f"  {'apiserver':<20}{cluster.url}  ({where}; no authentication)")
    if cluster.secure_url:
        lines.append(f"  {'apiserver (secure)':<20}{cluster.secure_url}  (TLS, "
                     f"authentication, --authorization-mode {options.apiserver.authorization_mode})")
    fleet = next((c.handle for c in cluster.components if c.name == "apiservers"), None)
    if fleet is not None:
        pids = ", ".join(str(c.process.pid) for c in fleet.children if c.process is not None)
        lines.append(f"  {'apiservers':<20}{options.apiservers} processes on the API port "
                     f"(#0 here with the components; pids {pids})")
    for c in (c for c in cluster.components if c.listed):
        target = c.url or "(no listener)"
        lines.append(f"  {c.name:<20}{target}" + (f"  ({c.detail})" if c.detail else ""))
    if cluster.console_url:
        lines.append(f"  {'console':<20}{cluster.console_url}  (the web console)")
    if cluster.etcd_url:
        endpoint = cluster.etcd_url.removeprefix("http://")
        lines.append(f"  {'etcd v3 API':<20}{cluster.etcd_url}  (etcdctl --endpoints={endpoint} "
                     "get /registry --prefix --keys-only)")
    if options.kubeconfig_out is not None:
        lines.append(f"  {'kubeconfig':<20}{options.kubeconfig_out}")
        lines.append(f"Point kubectl at it:  export KUBECONFIG={options.kubeconfig_out}"
                     + (f"   (or: kubectl -s {cluster.url} get nodes)"
                        if cluster.url.startswith("http:") else ""))
    elif cluster.url.startswith("http:"):
        lines.append(f"Point kubectl at it:  kubectl -s {cluster.url} get nodes")
    lines.append(f"Inspect the store:    {inspect_hint(options)}")
    print("\n".join(lines), flush=True)
    sys.stdout.flush()


async def _serve(runner: "web.AppRunner", sock: "socket.socket",
                 ssl_context: "ssl.SSLContext | None" = None) -> int:
    """Serve `runner` on a socket listeners.bind_all bound; returns its port."""
    from aiohttp import web

    await web.SockSite(runner, sock, ssl_context=ssl_context).start()
    return sock.getsockname()[1]


