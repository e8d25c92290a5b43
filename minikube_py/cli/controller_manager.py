"""`minikube-py controller-manager`: run kube-controller-manager as its own process.

Kubernetes v1.0 piece: cmd/kube-controller-manager/app/controllermanager.go (CMServer:
--master, --kubeconfig, --port 10252, --address, the controllers' flags) with the later
--controllers and --leader-elect. It reaches the cluster only through the API server (HTTP
transport), exactly as the v1.0 component did.
"""

from __future__ import annotations

import argparse

import structlog

from . import runtime
from .component_settings import (
    API_CLIENT,
    CONTROLLER_MANAGER,
    LEADER_ELECTION,
    PROFILING,
    controller_options,
    kube_api_client,
)
from .settings import Setting, add_flags, port, resolve

log = structlog.get_logger(component="controller-manager")

OWN = (
    Setting("port", 10252, "healthz/metrics port (0 disables it)", port),
    Setting("address", "127.0.0.1", "address to serve --port on", metavar="IP"),
    Setting("lock-object-name", "kube-controller-manager",
            "the object in kube-system used as the leader-election lock (a Lease, or the "
            "Endpoints/ConfigMap of --leader-elect-resource-lock)"),
)
#: client-go rest.Config for this component (upstream's QPS in the help, its burst)
CLIENT = kube_api_client(20.0, 30)
SETTINGS = (*API_CLIENT, *CLIENT, *OWN, *CONTROLLER_MANAGER,
            *LEADER_ELECTION, *PROFILING, *runtime.LOOP_WATCH)


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "controller-manager", parents=parents,
        help="run the controller manager against an API server",
        description="Run kube-controller-manager (v1.0 layout) against an API server until "
        "SIGINT/SIGTERM.")
    add_flags(parser, SETTINGS)
    parser.set_defaults(run=run, command="controller-manager")


def run(args: argparse.Namespace) -> int:
    settings = resolve(args, SETTINGS, {})
    return runtime.run(serve(settings), component="controller-manager",
                       stall_threshold=settings["loop_stall_threshold"])


async def serve(settings: dict) -> int:
    from ..controllers.manager import ControllerManager, build_app
    from .component_process import http_client, run_component
    from .componentconfig import component_config

    options = controller_options(settings)
    client = http_client(settings, "kube-controller-manager")
    manager = ControllerManager(client, options)
    config = component_config((*CLIENT, *OWN, *CONTROLLER_MANAGER, *LEADER_ELECTION, *PROFILING),
                              settings)
    return await run_component("controller-manager", client, build_app(manager, config), settings,
                               manager.run, controllers=list(options.controllers))
