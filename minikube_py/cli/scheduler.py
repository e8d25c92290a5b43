"""`minikube-py scheduler`: run kube-scheduler as its own process, against an API server.

Kubernetes v1.0 piece: plugin/cmd/kube-scheduler/app/server.go (SchedulerServer: --master,
--kubeconfig, --port 10251, --address, --algorithm-provider, --policy-config-file,
--scheduler-name, --leader-elect). The scheduler reaches the cluster only through the API
server (HTTP transport), exactly as the v1.0 component did.
"""

from __future__ import annotations

import argparse
import asyncio
import socket

import structlog

from . import runtime
from .storage_target import CommandError

log = structlog.get_logger(component="scheduler")

DEFAULT_PORT = 10251


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "scheduler", parents=parents, help="run the scheduler against an API server",
        description="Run kube-scheduler (v1.0 layout) against an API server until SIGINT/SIGTERM.")
    parser.add_argument("--master", default="http://127.0.0.1:8080",
                        help="the API server's URL (default http://127.0.0.1:8080)")
    parser.add_argument("--kubeconfig", help="kubeconfig with the server and credentials "
                        "(overrides --master)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help="healthz/metrics/debug port (default 10251; 0 disables)")
    parser.add_argument("--address", default="127.0.0.1", help="address to serve --port on")
    parser.add_argument("--scheduler-name", default="default-scheduler",
                        help="schedule only pods whose spec.schedulerName is this")
    parser.add_argument("--algorithm-provider", default="DefaultProvider",
                        help="predicates and priorities by provider name (default DefaultProvider)")
    parser.add_argument("--policy-config-file", help="a v1.0 Policy JSON file (overrides "
                        "--algorithm-provider)")
    parser.add_argument("--percentage-of-nodes-to-score", type=int, default=100,
                        help="stop looking after this share of nodes fit (default 100: all)")
    parser.add_argument("--leader-elect", action="store_true",
                        help="take part in leader election; only the leader schedules")
    parser.add_argument("--leader-elect-lease-duration", type=float, default=15.0,
                        metavar="SECONDS", help="how long a lease lasts unrenewed (default 15)")
    parser.add_argument("--leader-elect-renew-deadline", type=float, default=10.0,
                        metavar="SECONDS", help="a leader that cannot renew for this long "
                        "stops leading (default 10)")
    parser.add_argument("--leader-elect-retry-period", type=float, default=2.0,
                        metavar="SECONDS", help="between acquire/renew attempts (default 2)")
    parser.add_argument("--lock-object-name", default="kube-scheduler",
                        help="the Endpoints object in kube-system used as the lock")
    parser.set_defaults(run=run, command="scheduler")


def run(args: argparse.Namespace) -> int:
    return runtime.run(serve(args))


async def serve(args: argparse.Namespace) -> int:
    from aiohttp import web

    from ..client import Client, HTTPTransport
    from ..client.leaderelection import LeaderElector
    from ..scheduler.factory import PolicyError, from_provider, load_policy
    from ..scheduler.scheduler import Scheduler
    from ..scheduler.server import build_app

    try:
        algorithm = (load_policy(args.policy_config_file) if args.policy_config_file
                     else from_provider(args.algorithm_provider))
    except PolicyError as exc:
        raise CommandError(str(exc)) from None
    transport = (HTTPTransport.from_kubeconfig(args.kubeconfig, user_agent="kube-scheduler")
                 if args.kubeconfig else HTTPTransport(args.master, user_agent="kube-scheduler"))
    client = Client(transport)
    scheduler = Scheduler(client, algorithm, scheduler_name=args.scheduler_name,
                          percentage_of_nodes_to_score=args.percentage_of_nodes_to_score)
    stop = runtime.stop_on_signals()
    runner = None
    try:
        if args.port:
            runner = web.AppRunner(build_app(scheduler), access_log=None)
            await runner.setup()
            try:
                await web.TCPSite(runner, args.address, args.port).start()
            except OSError as exc:
                raise CommandError(f"cannot serve on {args.address}:{args.port}: "
                                   f"{exc.strerror or exc}") from exc
        log.info("scheduler starting", master=getattr(transport, "base_url", ""),
                 scheduler=args.scheduler_name, port=args.port,
                 predicates=list(algorithm.predicates),
                 priorities=[f"{p.name}={p.weight}" for p in algorithm.priorities])
        if args.leader_elect:
            elector = LeaderElector(client, name=args.lock_object_name,
                                    identity=f"{socket.gethostname()}_{id(scheduler):x}",
                                    lease_duration=args.leader_elect_lease_duration,
                                    renew_deadline=args.leader_elect_renew_deadline,
                                    retry_period=args.leader_elect_retry_period)
            work = asyncio.create_task(elector.run(scheduler.run))
        else:
            work = asyncio.create_task(scheduler.run())
        stopper = asyncio.create_task(stop.wait())
        await asyncio.wait({work, stopper}, return_when=asyncio.FIRST_COMPLETED)
        for task in (work, stopper):
            task.cancel()
        await asyncio.gather(work, stopper, return_exceptions=True)
        if work.done() and not work.cancelled() and work.exception() is not None:
            raise CommandError(f"scheduler stopped: {work.exception()}")
    finally:
        if runner is not None:
            await runner.cleanup()
        await client.close()
        runtime.restore_signals()
    log.info("stopped")
    return 0
