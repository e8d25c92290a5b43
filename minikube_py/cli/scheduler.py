"""`minikube-py scheduler`: run kube-scheduler as its own process, against an API server.

Kubernetes v1.0 piece: plugin/cmd/kube-scheduler/app/server.go (SchedulerServer: --master,
--kubeconfig, --port 10251, --address, --algorithm-provider, --policy-config-file,
--scheduler-name, --leader-elect). The scheduler reaches the cluster only through the API
server (HTTP transport), exactly as the v1.0 component did.
"""

from __future__ import annotations

import argparse

import structlog

from . import runtime, scheduler_config
from .component_settings import (
    API_CLIENT,
    LEADER_ELECTION,
    PROFILING,
    SCHEDULER,
    kube_api_client,
)
from .settings import Setting, add_flags, options_from, port, resolve
from .storage_target import CommandError

log = structlog.get_logger(component="scheduler")

DEFAULT_PORT = 10251

OWN = (
    Setting("port", DEFAULT_PORT, "healthz/metrics/debug port (0 disables it)", port),
    Setting("address", "127.0.0.1", "address to serve --port on", metavar="IP"),
    Setting("scheduler-name", "default-scheduler", "schedule only pods whose "
            "spec.schedulerName is this"),
    Setting("lock-object-name", "kube-scheduler", "the object in kube-system used as the "
            "leader-election lock (a Lease, or the Endpoints/ConfigMap of "
            "--leader-elect-resource-lock)"),
)
#: client-go rest.Config for this component (upstream's QPS in the help, its burst)
CLIENT = kube_api_client(50.0, 100)
SETTINGS = (*API_CLIENT, *CLIENT, *OWN, *SCHEDULER, scheduler_config.CONFIG,
            scheduler_config.WRITE_CONFIG_TO, *LEADER_ELECTION, *PROFILING, *runtime.LOOP_WATCH)


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "scheduler", parents=parents, help="run the scheduler against an API server",
        description="Run kube-scheduler (v1.0 layout) against an API server until SIGINT/SIGTERM.")
    add_flags(parser, SETTINGS)
    parser.set_defaults(run=run, command="scheduler")


def run(args: argparse.Namespace) -> int:
    if args.write_config_to:
        return scheduler_config.write_config(args.config, args.policy_config_file,
                                             args.write_config_to)
    # the file's leader election, client and profiling settings, under the flags given
    loaded = scheduler_config.load(args.config, args.policy_config_file)
    settings = resolve(args, SETTINGS, loaded.settings if loaded else {}, args.config or "")
    return runtime.run(serve(settings, loaded), component="scheduler",
                       stall_threshold=settings["loop_stall_threshold"])


async def serve(settings: dict, loaded: scheduler_config.Loaded | None = None) -> int:
    from ..scheduler.factory import (
        DEFAULT_PROVIDER,
        AlgorithmArgs,
        PolicyError,
        from_provider,
        load_policy,
    )
    from ..scheduler.scheduler import Scheduler
    from ..scheduler.server import build_app
    from .component_process import http_client, run_component
    from .componentconfig import component_config

    configuration = scheduler_config.chosen(loaded.configuration if loaded else None,
                                            settings["algorithm_provider"],
                                            settings["policy_config_file"],
                                            settings["scheduler_name"])
    try:
        args = options_from(AlgorithmArgs, settings)
        algorithm = (load_policy(settings["policy_config_file"], args=args)
                     if settings["policy_config_file"]
                     else from_provider(settings["algorithm_provider"] or DEFAULT_PROVIDER, args))
    except PolicyError as exc:
        raise CommandError(str(exc)) from None
    client = http_client(settings, "kube-scheduler")
    scheduler = Scheduler(client, algorithm, scheduler_name=settings["scheduler_name"],
                          percentage_of_nodes_to_score=settings["percentage_of_nodes_to_score"],
                          bind_pods_qps=settings["bind_pods_qps"],
                          bind_pods_burst=settings["bind_pods_burst"])
    scheduler_config.hand_off(scheduler, configuration)
    config = (scheduler_config.effective_document(configuration, settings) if configuration
              else component_config((*CLIENT, *OWN, *SCHEDULER, *LEADER_ELECTION, *PROFILING),
                                    settings))
    return await run_component(
        "scheduler", client, build_app(scheduler, config), settings, scheduler.run,
        scheduler=settings["scheduler_name"], predicates=list(algorithm.predicates),
        priorities=[f"{p.name}={p.weight}" for p in algorithm.priorities])
