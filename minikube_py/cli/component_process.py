"""How a control-plane component runs as its own process: an HTTP client to the API server,
a health/metrics listener, the component's work (directly, or only while it leads), and a
clean stop on SIGINT/SIGTERM.

Kubernetes v1.0 piece: the shared tail of plugin/cmd/kube-scheduler/app/server.go and
cmd/kube-controller-manager/app/controllermanager.go — build a client from --master or
--kubeconfig, `go http.ListenAndServe(--address:--port)` for healthz and metrics, then run
forever — plus the v1.1+ leader-election wrapper (`leaderelection.RunOrDie`) with its lock
object in kube-system (a Lease by default, client/resourcelock.py). Written once for the
scheduler and the controller manager.
"""

from __future__ import annotations

import asyncio
import socket
from typing import TYPE_CHECKING, Any, Awaitable, Callable

import structlog

from .. import loopwatch
from . import runtime
from .storage_target import CommandError

if TYPE_CHECKING:
    from aiohttp import web

    from ..client import Client


def http_client(settings: dict[str, Any], user_agent: str) -> "Client":
    """A client from --kubeconfig if given, else --master; with --kube-api-content-type,
    --kube-api-qps and --kube-api-burst when the command has them (client-go's rest.Config
    ContentType, QPS, Burst)."""
    from ..client import Client, HTTPTransport
    from ..client.flowcontrol import TokenBucket
    from ..client.wire import UnsupportedContentType, WireFormat

    wire = None
    if settings.get("kube_api_content_type"):
        try:
            wire = WireFormat(settings["kube_api_content_type"])
        except UnsupportedContentType as exc:
            raise CommandError(f"--kube-api-content-type: {exc}") from None
    qps = settings.get("kube_api_qps") or 0
    limiter = TokenBucket(qps, settings.get("kube_api_burst") or 1) if qps > 0 else None
    if settings.get("kubeconfig"):
        transport = HTTPTransport.from_kubeconfig(settings["kubeconfig"], user_agent=user_agent)
    else:
        transport = HTTPTransport(settings["master"], user_agent=user_agent)
    return Client(transport, wire=wire, rate_limiter=limiter)


def install_profiling(app: "web.Application", settings: dict[str, Any]) -> None:
    """--profiling: the API server's /debug/pprof handlers on the component's --port too (v1.5
    kube-scheduler's startHTTP and kube-controller-manager mount net/http/pprof the same way);
    --contention-profiling adds /debug/pprof/block."""
    if not settings.get("profiling"):
        return
    from ..apiserver.profiling import Profiling

    Profiling(contention=bool(settings.get("contention_profiling"))).install(app.router)


#: what each component logs when it loses its lock before it exits 1 (1.31: kube-scheduler's
#: OnStoppedLeading `logger.Error(nil, "Leaderelection lost")`, kube-controller-manager's
#: `"leaderelection lost"`; v1.5's kube-scheduler: glog.Fatalf("lost master"))
LEADERSHIP_LOST = {"scheduler": "Leaderelection lost",
                   "controller-manager": "leaderelection lost"}


class LeaderElectionLost(Exception):
    """The component stopped leading while it was not asked to stop: a fatal error."""


async def run_work(client: "Client", settings: dict[str, Any], lock_name: str,
                   work: Callable[[], Awaitable[None]]) -> None:
    """`work()` now, or under a LeaderElector when settings["leader_elect"] is set; losing
    the lock raises LeaderElectionLost (a stop signal cancels this instead)."""
    if not settings.get("leader_elect"):
        await work()
        return
    from ..client.leaderelection import LeaderElector

    elector = LeaderElector(client, name=lock_name,
                            identity=f"{socket.gethostname()}_{id(work):x}",
                            lock_type=settings.get("leader_elect_resource_lock") or "leases",
                            lease_duration=settings["leader_elect_lease_duration"],
                            renew_deadline=settings["leader_elect_renew_deadline"],
                            retry_period=settings["leader_elect_retry_period"])
    if await elector.run(work):
        raise LeaderElectionLost(lock_name)


async def run_component(name: str, client: "Client", health_app: "web.Application",
                        settings: dict[str, Any], work: Callable[[], Awaitable[None]],
                        **describe: Any) -> int:
    """Serve `health_app` on --address:--port (0: no listener), run `work` until a signal,
    then stop everything. A failure of the work is one CommandError line, not a traceback."""
    from aiohttp import web

    log = structlog.get_logger(component=name)
    stop = runtime.stop_on_signals()
    runner = None
    try:
        if settings["port"]:
            install_profiling(health_app, settings)
            runner = web.AppRunner(health_app, access_log=None)
            await runner.setup()
            try:
                await web.TCPSite(runner, settings["address"], settings["port"]).start()
            except OSError as exc:
                raise CommandError(f"cannot serve on {settings['address']}:{settings['port']}: "
                                   f"{exc.strerror or exc}") from exc
        log.info(f"{name} starting", master=getattr(client.transport, "base_url", ""),
                 port=settings["port"], leader_elect=bool(settings.get("leader_elect")),
                 **describe)
        loopwatch.mark_ready()  # from now on a stall of the loop is a warning
        task = asyncio.create_task(run_work(client, settings, settings["lock_object_name"], work))
        stopper = asyncio.create_task(stop.wait())
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        for t in (task, stopper):
            t.cancel()
        await asyncio.gather(task, stopper, return_exceptions=True)
        if task.done() and not task.cancelled() and task.exception() is not None:
            if isinstance(task.exception(), LeaderElectionLost):
                # upstream: OnStoppedLeading logs the error and exits 1 (klog.FlushAndExit)
                message = LEADERSHIP_LOST.get(name, "leaderelection lost")
                log.error(message, lock=f"kube-system/{task.exception()}")
                raise CommandError(message)
            raise CommandError(f"{name} stopped: {task.exception()}")
    finally:
        if runner is not None:
            await runner.cleanup()
        await client.close()
        runtime.restore_signals()
    log.info("stopped")
    return 0
