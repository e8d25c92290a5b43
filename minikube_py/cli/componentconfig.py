"""A component's resolved settings as its v1.x ComponentConfiguration, for /configz.

Kubernetes piece: pkg/apis/componentconfig (v1.2+: KubeSchedulerConfiguration,
KubeControllerManagerConfiguration) — the flags of a component as one JSON object, field names
in lowerCamelCase (`algorithmProvider`, `concurrentRCSyncs`, `nodeMonitorGracePeriod`),
durations as Go duration strings (`40s`, `5m0s`), and the leader-election flags nested under
`leaderElection` (`leaderElect`, `leaseDuration`, `renewDeadline`, `retryPeriod`). Built from
the same Setting rows the flags come from (settings.py), so /configz shows exactly the
effective values: flag, else config file, else default. Client credentials (--kubeconfig's
contents) are never included; only the settings' own values are. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..kubelet.containers import go_duration
from .settings import Setting, duration

#: words upstream's field names spell in capitals (concurrentRCSyncs, kubeAPIQPS)
ACRONYMS = frozenset({"api", "cidr", "gc", "ip", "qps", "rc", "tls", "ttl", "url"})
LEADER_ELECTION_PREFIX = "leader-elect"
#: flags whose componentconfig field is not their camelCase (v1.5 KubeSchedulerConfiguration /
#: KubeControllerManagerConfiguration: ContentType, EnableProfiling, EnableContentionProfiling)
FIELD_NAMES = {"kube-api-content-type": "contentType", "profiling": "enableProfiling",
               "contention-profiling": "enableContentionProfiling"}


def camel(name: str) -> str:
    """`bind-pods-qps` -> `bindPodsQPS`, `concurrent-rc-syncs` -> `concurrentRCSyncs`."""
    words = [w for w in name.split("-") if w]
    out = [words[0]]
    out += [w.upper() if w in ACRONYMS else w.capitalize() for w in words[1:]]
    return "".join(out)


def render(setting: Setting, value: Any) -> Any:
    if value is None:
        return None
    if setting.parse is duration and isinstance(value, (int, float)):
        return go_duration(float(value)) if value else "0s"
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    return value


def component_config(settings: Iterable[Setting], values: Mapping[str, Any]) -> dict[str, Any]:
    """The settings present in `values` (by dest) as one componentconfig object."""
    config: dict[str, Any] = {}
    leader: dict[str, Any] = {}
    for s in settings:
        if s.dest not in values:
            continue
        value = render(s, values[s.dest])
        if s.name == LEADER_ELECTION_PREFIX:
            leader["leaderElect"] = value
        elif s.name.startswith(LEADER_ELECTION_PREFIX + "-"):
            leader[camel(s.name[len(LEADER_ELECTION_PREFIX) + 1:])] = value
        else:
            config[FIELD_NAMES.get(s.name) or camel(s.name)] = value
    if leader:
        config["leaderElection"] = leader
    return config
