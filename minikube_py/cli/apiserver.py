"""`minikube-py apiserver`: only the store and kube-apiserver, for the separate-process layout.

Kubernetes v1.0 piece: cmd/kube-apiserver (APIServer: --etcd-servers, --etcd-prefix,
--insecure-bind-address, --insecure-port, --service-cluster-ip-range, ...). The scheduler,
controller manager and kubelets then run as their own processes against --master, as the
seeds start them with systemctl. The same serving code as `start`, with no other component.
"""

from __future__ import annotations

import argparse
import dataclasses

from . import runtime
from .component_settings import APISERVER, STORAGE
from .settings import Setting, add_flags, resolve
from .start_options import APISERVER_COMMAND_SETTINGS, APISERVERS, COMPONENTS, StartOptions

#: v1.0's apiserver probed 127.0.0.1:10251 and :10252 for componentstatuses, hard-coded;
#: these let a scheduler or controller manager on another port be probed too.
PROBES = (
    Setting("scheduler-health-url", "http://127.0.0.1:10251/healthz", "where componentstatuses "
            "probes the scheduler", metavar="URL"),
    Setting("controller-manager-health-url", "http://127.0.0.1:10252/healthz", "where "
            "componentstatuses probes the controller manager", metavar="URL"),
)


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "apiserver", parents=parents, help="run only the store and the API server",
        description="Run kube-apiserver (and its store) until SIGINT/SIGTERM; start the "
        "scheduler, controller-manager and kubelet commands against it.")
    parser.add_argument("--config", metavar="FILE", help="YAML file of settings named like "
                        "these flags; flags win over it")
    add_flags(parser.add_argument_group("storage"), STORAGE)
    add_flags(parser.add_argument_group("kube-apiserver"), (*APISERVER, *PROBES, APISERVERS))
    add_flags(parser, runtime.LOOP_WATCH)
    parser.set_defaults(run=run, command="apiserver")


def options_of(args: argparse.Namespace) -> StartOptions:
    options = StartOptions.from_args(args, APISERVER_COMMAND_SETTINGS)
    probes = resolve(args, PROBES, {})
    apiserver = dataclasses.replace(
        options.apiserver, scheduler_health_url=probes["scheduler_health_url"],
        controller_manager_health_url=probes["controller_manager_health_url"])
    return dataclasses.replace(options, apiserver=apiserver, disabled=frozenset(COMPONENTS),
                               node_pools=(), kubeconfig_out=None)


def run(args: argparse.Namespace) -> int:
    from .start import serve

    options = options_of(args)
    return runtime.run(serve(options), component="apiserver",
                       stall_threshold=options.loop_stall_threshold)
