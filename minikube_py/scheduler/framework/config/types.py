"""The scheduler's configuration after loading, defaulting and validation — what the runtime reads.

Kubernetes piece: pkg/scheduler/apis/config/types.go (the internal KubeSchedulerConfiguration,
Profile, Plugins, PluginSet, Plugin, PluginConfig). Upstream decodes the versioned
`kubescheduler.config.k8s.io/v1` file, defaults it (the default plugin set through MultiPoint)
and validates it; the runtime then only sees these internal types, with every extension
point's enabled plugins already expanded and ordered, and every plugin's args defaulted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: the extension points a profile lists plugins for, in upstream's Plugins field order
EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore",
                    "score", "reserve", "permit", "preBind", "bind", "postBind")


@dataclass(frozen=True)
class PluginRef:
    """upstream config.Plugin: a plugin by name; `weight` only matters at Score."""

    name: str
    weight: int = 0


@dataclass
class Profile:
    """upstream config.KubeSchedulerProfile after defaulting: `plugins` maps each extension
    point (EXTENSION_POINTS) to its enabled plugins in run order; `plugin_config` maps a plugin
    name to its defaulted args (a plain dict in the versioned field names)."""

    scheduler_name: str = "default-scheduler"
    plugins: dict[str, list[PluginRef]] = field(default_factory=dict)
    plugin_config: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: None: use the configuration's (upstream's profile-level override, 1.25+)
    percentage_of_nodes_to_score: int | None = None

    def enabled(self, point: str) -> list[PluginRef]:
        return self.plugins.get(point, [])

    def args(self, plugin: str) -> dict[str, Any]:
        return self.plugin_config.get(plugin, {})


@dataclass
class SchedulerConfiguration:
    """upstream config.KubeSchedulerConfiguration (the fields the scheduler acts on)."""

    profiles: list[Profile] = field(default_factory=lambda: [Profile()])
    #: None or 0: upstream's adaptive default (50 - nodes/125 %, floor 5 %)
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    parallelism: int = 16
    #: extender entries as versioned dicts (urlPrefix, filterVerb, ...), built by scheduler.extender
    extenders: list[dict[str, Any]] = field(default_factory=list)
    #: the whole defaulted configuration in versioned form, for /configz
    versioned: dict[str, Any] = field(default_factory=dict)

    def profile(self, scheduler_name: str) -> Profile | None:
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)
