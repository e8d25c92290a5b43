"""The scheduler's KubeSchedulerConfiguration flag: load at start, refuse with a one-line error.

Kubernetes piece: cmd/kube-scheduler/app/options (Options.ConfigFile, LoadConfigFromFile,
ValidateKubeSchedulerConfiguration in ApplyTo) and the `configz.New("componentconfig")` of
app/server.go. `minikube-py scheduler` takes upstream's `--config FILE`; `minikube-py start`
already has a `--config` (its own settings file), so there the flag is `--scheduler-config`.
A file that does not decode, default or validate stops the command at start with upstream's
error text and exit status 1, never a traceback. The deprecated v1.x `--policy-config-file`
and a configuration file are two answers to the same question, so both at once is refused.

`write_config` is upstream's --write-config-to: the defaulted document, then exit.
`hand_off` is the one place the loaded configuration reaches the running scheduler.
/configz shows the v1 document when a file was given (as upstream, whose componentconfig is
the KubeSchedulerConfiguration; `effective_document` puts the component's effective leader
election, client and profiling settings in it), else the v1.x flags as before (`configz`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from ..kubelet.containers import go_duration
from .settings import Setting
from .storage_target import CommandError

if TYPE_CHECKING:
    from ..scheduler.framework.config.types import SchedulerConfiguration

log = structlog.get_logger(component="scheduler")

_HELP = ("a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration (YAML or JSON): "
         "profiles, plugins, pluginConfig, percentageOfNodesToScore, backoff, extenders; "
         "not with --policy-config-file")
#: `minikube-py scheduler --config FILE` (upstream's flag)
CONFIG = Setting("config", None, _HELP, metavar="FILE")
#: `minikube-py start --scheduler-config FILE` (start's --config is the cluster's settings)
START_CONFIG = Setting("scheduler-config", None, _HELP, metavar="FILE")
#: upstream's --write-config-to: print the effective configuration and exit
WRITE_CONFIG_TO = Setting("write-config-to", None, "write the configuration (--config's, "
                          "defaulted; else the defaults) to this file as YAML and exit",
                          metavar="FILE")


#: (section or None, v1 field, the component setting it feeds): the file's leader election,
#: client connection and profiling run the component; a flag given on the command line still
#: wins (upstream's ApplyLeaderElectionTo lets the leader-election flags win over the file)
FILE_SETTINGS: tuple[tuple[str | None, str, str], ...] = (
    ("leaderElection", "leaderElect", "leader_elect"),
    ("leaderElection", "leaseDuration", "leader_elect_lease_duration"),
    ("leaderElection", "renewDeadline", "leader_elect_renew_deadline"),
    ("leaderElection", "retryPeriod", "leader_elect_retry_period"),
    ("leaderElection", "resourceLock", "leader_elect_resource_lock"),
    ("leaderElection", "resourceName", "lock_object_name"),
    ("clientConnection", "kubeconfig", "kubeconfig"),
    ("clientConnection", "contentType", "kube_api_content_type"),
    ("clientConnection", "qps", "kube_api_qps"),
    ("clientConnection", "burst", "kube_api_burst"),
    (None, "enableProfiling", "profiling"),
    (None, "enableContentionProfiling", "contention_profiling"),
)


@dataclass(frozen=True)
class Loaded:
    """A loaded file: the scheduler's configuration, and the component settings the file
    sets explicitly (by setting dest; fields left out keep the component's defaults)."""

    configuration: SchedulerConfiguration
    settings: dict[str, Any]


def load(path: str | None, policy_config_file: str | None,
         flag: str = "--config") -> Loaded | None:
    """The configuration in `path` (None when no file was given), or CommandError."""
    if not path:
        return None
    if policy_config_file:
        raise CommandError(f"{flag} and --policy-config-file cannot be used together: a "
                           "KubeSchedulerConfiguration's profiles replace the v1.x Policy")
    from ..scheduler.framework.config.extenders import unsupported_fields
    from ..scheduler.framework.config.load import (
        ConfigError,
        from_document,
        read_document,
    )

    try:
        document = read_document(path)
        configuration = from_document(document)
    except ConfigError as exc:
        raise CommandError(f"{flag} {path}: {exc}") from None
    for entry in configuration.extenders:
        ignored = unsupported_fields(entry)
        if ignored:
            log.warning("extender fields the HTTP extender does not act on", config=path,
                        extender=entry.get("urlPrefix"), ignored=ignored)
    log.info("scheduler configuration loaded", config=path,
             profiles=[p.scheduler_name for p in configuration.profiles])
    return Loaded(configuration, explicit_settings(document))


def explicit_settings(document: dict[str, Any]) -> dict[str, Any]:
    """The component settings a (validated) document sets: a field left out, empty or 0
    (upstream's "unset") keeps the component's own default."""
    out: dict[str, Any] = {}
    for section, name, dest in FILE_SETTINGS:
        holder = document.get(section) if section else document
        value = holder.get(name) if isinstance(holder, dict) else None
        if isinstance(value, bool) or value not in (None, "", 0):
            out[dest] = value
    return out


def effective_document(configuration: SchedulerConfiguration,
                       settings: dict[str, Any]) -> dict[str, Any]:
    """The versioned document with the sections the component settings decide (leader
    election, client connection, profiling) showing their effective values, for /configz."""
    document = dict(configuration.versioned)
    document["leaderElection"] = {
        "leaderElect": settings["leader_elect"],
        "leaseDuration": go_duration(settings["leader_elect_lease_duration"]),
        "renewDeadline": go_duration(settings["leader_elect_renew_deadline"]),
        "retryPeriod": go_duration(settings["leader_elect_retry_period"]),
        "resourceLock": settings["leader_elect_resource_lock"],
        "resourceName": settings["lock_object_name"],
        "resourceNamespace": "kube-system",
    }
    document["clientConnection"] = {
        "kubeconfig": settings["kubeconfig"] or "", "acceptContentTypes": "",
        "contentType": settings["kube_api_content_type"], "qps": settings["kube_api_qps"],
        "burst": settings["kube_api_burst"],
    }
    document["enableProfiling"] = settings["profiling"]
    document["enableContentionProfiling"] = settings["contention_profiling"]
    return {k: document[k] for k in configuration.versioned}


def write_config(path: str | None, policy_config_file: str | None, target: str) -> int:
    """--write-config-to (upstream options.LogOrWriteConfig): the defaulted v1 document,
    keys sorted as upstream's JSON-to-YAML encoder writes them; exit status 0."""
    import yaml

    from ..scheduler.framework.config.load import default_configuration

    loaded = load(path, policy_config_file)
    configuration = loaded.configuration if loaded else default_configuration()
    text = yaml.safe_dump(configuration.versioned, sort_keys=True, default_flow_style=False)
    try:
        Path(target).write_text(text)
    except OSError as exc:
        raise CommandError(f"open {target}: {exc.strerror or exc}") from None
    log.info("wrote configuration", file=target)
    return 0


def hand_off(scheduler: Any, configuration: SchedulerConfiguration | None) -> None:
    """Give the scheduler its framework configuration: with one, the scheduling framework runs
    its profiles (one Framework per schedulerName); None keeps the v1.x algorithm the flags
    chose (--algorithm-provider, --policy-config-file)."""
    scheduler.use_configuration(configuration)


def configuration_of(loaded: Loaded | None) -> SchedulerConfiguration | None:
    return loaded.configuration if loaded else None


def chosen(configuration: SchedulerConfiguration | None, algorithm_provider: str,
           policy_config_file: str | None,
           scheduler_name: str = "default-scheduler") -> SchedulerConfiguration | None:
    """Which algorithm schedules: a configuration file's profiles; else the v1.x algorithm a
    flag named (--algorithm-provider, --policy-config-file); else, as kube-scheduler 1.31
    with no flags, the framework's default profile — serving `scheduler_name`
    (--scheduler-name, as upstream's deprecated flag did before profiles replaced it)."""
    if configuration is not None or algorithm_provider or policy_config_file:
        return configuration
    from ..scheduler.framework.config.load import default_configuration

    defaulted = default_configuration()
    defaulted.profiles[0].scheduler_name = scheduler_name
    for profile in defaulted.versioned.get("profiles") or ():
        profile["schedulerName"] = scheduler_name
    return defaulted


def configz(configuration: SchedulerConfiguration | None,
            flags_config: dict[str, Any]) -> dict[str, Any]:
    """/configz's componentconfig: the v1 document when a file was loaded, else the flags."""
    return configuration.versioned if configuration is not None else flags_config
