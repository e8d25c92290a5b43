"""Load a KubeSchedulerConfiguration file: decode strictly, default, validate, expand.

Kubernetes piece: cmd/kube-scheduler/app/options/configfile.go (LoadConfigFromFile: the
scheme's strict UniversalDecoder, which defaults) followed by
validation.ValidateKubeSchedulerConfiguration and, for each profile, the plugin lists
NewFramework builds (expand.py). The file is YAML or JSON, read through the API server's
bounded YAML loader (api/yamljson: aliases expanded safely, depth and size bounded), since a
config file is as untrusted as a request body. The result is the runtime's
`types.SchedulerConfiguration`, whose `versioned` field holds the defaulted document in v1
field names for /configz (as `kube-scheduler --write-config-to` prints it).

`default_configuration()` is the configuration a scheduler without --config runs: upstream's
defaults for an empty document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....api import yamljson
from ....api.errors import StatusError
from .default_plugins import PLUGIN_SET_FIELDS
from .defaults import set_defaults
from .expand import FrameworkError, PointsResolver, expand
from .scheme import API_VERSION, KIND, DecodeError, decode
from .types import Profile, SchedulerConfiguration
from .validation import aggregate, validate

Obj = dict[str, Any]

#: the top-level fields in v1's Go struct order (how the versioned output is laid out)
_TOP_ORDER = ("apiVersion", "kind", "parallelism", "leaderElection", "clientConnection",
              "enableProfiling", "enableContentionProfiling", "percentageOfNodesToScore",
              "podInitialBackoffSeconds", "podMaxBackoffSeconds", "profiles", "extenders",
              "delayCacheUntilActive")


class ConfigError(ValueError):
    """The configuration cannot be used; the message is upstream's error text."""


def load_file(path: str | Path, resolve: PointsResolver | None = None) -> SchedulerConfiguration:
    """LoadConfigFromFile + validation + framework plugin lists for the file at `path`."""
    return from_document(read_document(path), resolve)


def read_document(path: str | Path) -> Any:
    """The file's single YAML or JSON document, as decoded values (not yet checked)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"open {path}: no such file or directory") from None
    except OSError as exc:
        raise ConfigError(f"open {path}: {exc.strerror or exc}") from None
    return _yaml(data)


def parse(data: bytes | str, resolve: PointsResolver | None = None) -> SchedulerConfiguration:
    """A configuration document (YAML or JSON) as the runtime's configuration."""
    return from_document(_yaml(data), resolve)


def _yaml(data: bytes | str) -> Any:
    try:
        return yamljson.load(data)
    except StatusError as exc:
        raise ConfigError(exc.message) from None


def from_document(doc: Any, resolve: PointsResolver | None = None) -> SchedulerConfiguration:
    """Decode (strict), default, validate and expand a decoded document."""
    try:
        doc = decode(doc)
    except DecodeError as exc:
        raise ConfigError(str(exc)) from None
    defaulted = set_defaults(doc)
    errors = validate(defaulted)
    if errors:
        raise ConfigError(aggregate([e.message() for e in errors]))
    try:
        profiles = [_profile(p, resolve) for p in defaulted["profiles"]]
    except FrameworkError as exc:
        raise ConfigError(str(exc)) from None
    return SchedulerConfiguration(
        profiles=profiles,
        percentage_of_nodes_to_score=defaulted["percentageOfNodesToScore"],
        pod_initial_backoff_seconds=defaulted["podInitialBackoffSeconds"],
        pod_max_backoff_seconds=defaulted["podMaxBackoffSeconds"],
        parallelism=defaulted["parallelism"],
        extenders=list(defaulted.get("extenders") or []),
        versioned=versioned_output(defaulted),
    )


def default_configuration(resolve: PointsResolver | None = None) -> SchedulerConfiguration:
    """What runs without --config: the defaults of an empty v1 document."""
    return from_document({"apiVersion": API_VERSION, "kind": KIND}, resolve)


def _profile(profile: Obj, resolve: PointsResolver | None) -> Profile:
    name = profile["schedulerName"]
    return Profile(
        scheduler_name=name,
        plugins=expand(name, profile["plugins"], resolve),
        plugin_config={entry.get("name", ""): _internal_args(entry.get("args"))
                       for entry in profile.get("pluginConfig") or []},
        percentage_of_nodes_to_score=profile.get("percentageOfNodesToScore"),
    )


def _internal_args(args: Any) -> Obj:
    """Args as plugins read them: the versioned fields without apiVersion/kind."""
    if not isinstance(args, dict):
        return {}
    return {k: v for k, v in args.items() if k not in ("apiVersion", "kind")}


def versioned_output(defaulted: Obj) -> Obj:
    """The defaulted document as upstream writes it: every plugin set present (`{}` when
    empty), pluginConfig sorted by plugin name, fields in the Go structs' order."""
    out = {k: defaulted[k] for k in _TOP_ORDER if k in defaulted}
    out["profiles"] = [_versioned_profile(p) for p in defaulted["profiles"]]
    return out


def _versioned_profile(profile: Obj) -> Obj:
    plugins = profile.get("plugins") or {}
    out: Obj = {"schedulerName": profile["schedulerName"]}
    if profile.get("percentageOfNodesToScore") is not None:
        out["percentageOfNodesToScore"] = profile["percentageOfNodesToScore"]
    out["plugins"] = {name: _versioned_set(plugins.get(name) or {}) for name in PLUGIN_SET_FIELDS}
    out["pluginConfig"] = sorted(profile.get("pluginConfig") or [],
                                 key=lambda entry: entry.get("name", ""))
    return out


def _versioned_set(plugin_set: Obj) -> Obj:
    """A PluginSet as upstream prints it after the round trip through the internal types:
    every Plugin carries its weight, 0 when unset (internal int32 -> v1 *int32)."""
    return {k: [{"name": p.get("name", ""), "weight": p.get("weight") or 0}
                for p in plugin_set[k]]
            for k in ("enabled", "disabled") if plugin_set.get(k)}
