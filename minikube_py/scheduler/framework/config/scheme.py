"""Strict decoding of a `kubescheduler.config.k8s.io/v1` document: known fields, right JSON types.

Kubernetes piece: k8s.io/kube-scheduler/config/v1 (types.go, types_pluginargs.go) decoded by
pkg/scheduler/apis/config/scheme's codec factory with `serializer.EnableStrict`, and the
nested `pluginConfig[].args` decoded by `PluginConfig.decodeNestedObjects` as the kind
`<plugin name>Args` (the args of out-of-tree plugins stay opaque). Upstream decodes into Go
structs, so a wrong JSON type fails in encoding/json ("json: cannot unmarshal string into Go
struct field ...") and an unknown field is a strict decoding error ("unknown field
\"profiles[0].foo\""). The Go structs are written here as data (`TYPES`), one row per field,
and one walk checks a decoded document against them. Pure.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from ....api.protobuf_tables import parse_go_duration
from .default_plugins import PLUGIN_SET_FIELDS

GROUP = "kubescheduler.config.k8s.io"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "KubeSchedulerConfiguration"
#: where upstream's scheme is built; its "no kind is registered" errors name it
SCHEME_NAME = "pkg/scheduler/apis/config/scheme/scheme.go:30"

#: a field's type: a scalar name below, a struct name in TYPES, or ("list", type)
FieldType = Any
_SCALARS = {"string", "bool", "int32", "int64", "float32", "duration", "bytes", "labels", "raw"}

_TYPE_META = {"apiVersion": "string", "kind": "string"}

TYPES: dict[str, dict[str, FieldType]] = {
    KIND: {
        **_TYPE_META, "parallelism": "int32",
        "leaderElection": "LeaderElectionConfiguration",
        "clientConnection": "ClientConnectionConfiguration",
        "enableProfiling": "bool", "enableContentionProfiling": "bool",
        "percentageOfNodesToScore": "int32", "podInitialBackoffSeconds": "int64",
        "podMaxBackoffSeconds": "int64", "profiles": ("list", "KubeSchedulerProfile"),
        "extenders": ("list", "Extender"), "delayCacheUntilActive": "bool",
    },
    "LeaderElectionConfiguration": {
        "leaderElect": "bool", "leaseDuration": "duration", "renewDeadline": "duration",
        "retryPeriod": "duration", "resourceLock": "string", "resourceName": "string",
        "resourceNamespace": "string",
    },
    "ClientConnectionConfiguration": {
        "kubeconfig": "string", "acceptContentTypes": "string", "contentType": "string",
        "qps": "float32", "burst": "int32",
    },
    "KubeSchedulerProfile": {
        "schedulerName": "string", "percentageOfNodesToScore": "int32", "plugins": "Plugins",
        "pluginConfig": ("list", "PluginConfig"),
    },
    "Plugins": {name: "PluginSet" for name in PLUGIN_SET_FIELDS},
    "PluginSet": {"enabled": ("list", "Plugin"), "disabled": ("list", "Plugin")},
    "Plugin": {"name": "string", "weight": "int32"},
    "PluginConfig": {"name": "string", "args": "raw"},
    "Extender": {
        "urlPrefix": "string", "filterVerb": "string", "preemptVerb": "string",
        "prioritizeVerb": "string", "weight": "int64", "bindVerb": "string",
        "enableHTTPS": "bool", "tlsConfig": "ExtenderTLSConfig", "httpTimeout": "duration",
        "nodeCacheCapable": "bool", "managedResources": ("list", "ExtenderManagedResource"),
        "ignorable": "bool",
    },
    "ExtenderTLSConfig": {
        "insecure": "bool", "serverName": "string", "certFile": "string", "keyFile": "string",
        "caFile": "string", "certData": "bytes", "keyData": "bytes", "caData": "bytes",
    },
    "ExtenderManagedResource": {"name": "string", "ignoredByScheduler": "bool"},
    # --- plugin args (types_pluginargs.go) ---
    "DefaultPreemptionArgs": {**_TYPE_META, "minCandidateNodesPercentage": "int32",
                              "minCandidateNodesAbsolute": "int32"},
    "InterPodAffinityArgs": {**_TYPE_META, "hardPodAffinityWeight": "int32",
                             "ignorePreferredTermsOfExistingPods": "bool"},
    "NodeResourcesFitArgs": {**_TYPE_META, "ignoredResources": ("list", "string"),
                             "ignoredResourceGroups": ("list", "string"),
                             "scoringStrategy": "ScoringStrategy"},
    "ScoringStrategy": {"type": "string", "resources": ("list", "ResourceSpec"),
                        "requestedToCapacityRatio": "RequestedToCapacityRatioParam"},
    "ResourceSpec": {"name": "string", "weight": "int64"},
    "RequestedToCapacityRatioParam": {"shape": ("list", "UtilizationShapePoint")},
    "UtilizationShapePoint": {"utilization": "int32", "score": "int32"},
    "PodTopologySpreadArgs": {**_TYPE_META,
                              "defaultConstraints": ("list", "TopologySpreadConstraint"),
                              "defaultingType": "string"},
    "TopologySpreadConstraint": {
        "maxSkew": "int32", "topologyKey": "string", "whenUnsatisfiable": "string",
        "labelSelector": "LabelSelector", "minDomains": "int32", "nodeAffinityPolicy": "string",
        "nodeTaintsPolicy": "string", "matchLabelKeys": ("list", "string"),
    },
    # --- the core/meta types the args embed ---
    "LabelSelector": {"matchLabels": "labels",
                      "matchExpressions": ("list", "LabelSelectorRequirement")},
    "LabelSelectorRequirement": {"key": "string", "operator": "string",
                                 "values": ("list", "string")},
    "NodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": "NodeSelector",
        "preferredDuringSchedulingIgnoredDuringExecution": ("list", "PreferredSchedulingTerm"),
    },
    "NodeSelector": {"nodeSelectorTerms": ("list", "NodeSelectorTerm")},
    "NodeSelectorTerm": {"matchExpressions": ("list", "NodeSelectorRequirement"),
                         "matchFields": ("list", "NodeSelectorRequirement")},
    "NodeSelectorRequirement": {"key": "string", "operator": "string",
                                "values": ("list", "string")},
    "PreferredSchedulingTerm": {"weight": "int32", "preference": "NodeSelectorTerm"},
    "NodeResourcesBalancedAllocationArgs": {**_TYPE_META, "resources": ("list", "ResourceSpec")},
    "VolumeBindingArgs": {**_TYPE_META, "bindTimeoutSeconds": "int64",
                          "shape": ("list", "UtilizationShapePoint")},
    "NodeAffinityArgs": {**_TYPE_META, "addedAffinity": "NodeAffinity"},
}

#: the in-tree args kinds (`<plugin>Args`): the plugins whose args are decoded and defaulted
ARGS_KINDS = frozenset(k for k in TYPES if k.endswith("Args"))

_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


class DecodeError(ValueError):
    """The document cannot be decoded: upstream's decoder error text."""


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return f"number {value}"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _go_type(t: FieldType) -> str:
    if isinstance(t, tuple):
        return "[]" + _go_type(t[1])
    return {"duration": "v1.Duration", "bytes": "[]uint8", "labels": "map[string]string",
            "raw": "runtime.RawExtension"}.get(t, t if t in _SCALARS else "v1." + t)


class _Walk:
    """One strict decode: type errors stop it (encoding/json does), unknown fields collect."""

    def __init__(self) -> None:
        self.unknown: list[str] = []

    def value(self, value: Any, t: FieldType, path: str, struct: str, go_path: str) -> None:
        if value is None:
            return  # null is the zero value for every Go type
        if isinstance(t, tuple):
            if not isinstance(value, list):
                raise self._mismatch(value, t, struct, go_path)
            for i, item in enumerate(value):
                if item is None and t[1] in TYPES:
                    value[i] = item = {}  # a null element decodes to the zero struct
                self.value(item, t[1], f"{path}[{i}]", struct, go_path)
            return
        if t in TYPES:
            if not isinstance(value, dict):
                raise self._mismatch(value, t, struct, go_path)
            self.struct(value, t, path, go_path)
            return
        if t == "labels" and isinstance(value, dict):  # map[string]string: check each value
            for item in value.values():
                if item is not None and not isinstance(item, str):
                    raise self._mismatch(item, "string", struct, go_path)
            return
        if not self._scalar_ok(value, t):
            raise self._mismatch(value, t, struct, go_path)
        if t == "duration" and isinstance(value, str) and value not in ("0", "") \
                and parse_go_duration(value) == 0:
            raise DecodeError(f'time: invalid duration "{value}"')

    def struct(self, obj: dict[str, Any], type_name: str, path: str, go_path: str) -> None:
        fields = TYPES[type_name]
        for name, value in obj.items():
            field_path = f"{path}.{name}" if path else name
            if name not in fields:
                self.unknown.append(field_path)
                continue
            self.value(value, fields[name], field_path, type_name,
                       f"{go_path}.{name}" if go_path else name)

    @staticmethod
    def _scalar_ok(value: Any, t: str) -> bool:
        if t in ("string", "bytes"):
            return isinstance(value, str)
        if t == "bool":
            return isinstance(value, bool)
        if t in _INT_RANGES:
            lo, hi = _INT_RANGES[t]
            return (isinstance(value, int) and not isinstance(value, bool)
                    and lo <= value <= hi)
        if t == "float32":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        if t == "duration":
            return isinstance(value, str)
        if t == "labels":
            return isinstance(value, dict)
        return True  # raw

    @staticmethod
    def _mismatch(value: Any, t: FieldType, struct: str, go_path: str) -> DecodeError:
        return DecodeError(f"json: cannot unmarshal {_json_type(value)} into Go struct field "
                           f"{struct}.{go_path} of type {_go_type(t)}")


def strict_error(unknown: list[str]) -> str:
    """runtime.NewStrictDecodingError's text."""
    return "strict decoding error: " + ", ".join(f'unknown field "{f}"' for f in unknown)


def check_kind(doc: Any) -> None:
    """The document must be a KubeSchedulerConfiguration of a version we serve."""
    if doc is None:  # an empty file
        raise DecodeError("Object 'Kind' is missing in ''")
    if not isinstance(doc, dict):
        raise DecodeError("couldn't get version/kind; json parse error: json: cannot unmarshal "
                          f"{_json_type(doc)} into Go value of type struct {{ APIVersion "
                          'string "json:\\"apiVersion,omitempty\\""; Kind string '
                          '"json:\\"kind,omitempty\\"" }')
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    if not kind:
        raise DecodeError(f"Object 'Kind' is missing in '{_compact(doc)}'")
    if api_version != API_VERSION or kind != KIND:
        raise DecodeError(f'no kind "{kind}" is registered for version "{api_version or ""}" '
                          f'in scheme "{SCHEME_NAME}"')


def decode(doc: Any) -> dict[str, Any]:
    """Check `doc` as upstream's strict decoder does; returns a copy in which null list
    elements are the empty objects Go's decoder makes of them.

    As upstream's codec: a wrong JSON type fails at once; the unknown fields of the document
    and those of each in-tree plugin's args (decoded as the `<name>Args` kind) are gathered
    into one strict decoding error; any other problem with an args object fails at once."""
    check_kind(doc)
    doc = copy.deepcopy(doc)
    walk = _Walk()
    walk.struct(doc, KIND, "", "")
    problems = [f'unknown field "{f}"' for f in walk.unknown]
    for i, profile in enumerate(doc.get("profiles") or []):
        for j, entry in enumerate((profile or {}).get("pluginConfig") or []):
            where = f"decoding .profiles[{i}].pluginConfig[{j}]: "
            unknown = _decode_args(entry or {}, where)
            if unknown:
                problems.append(f"{where}strict decoding error: decoding args for plugin "
                                f"{entry.get('name')}: {strict_error(unknown)}")
    if problems:
        raise DecodeError("strict decoding error: " + ", ".join(problems))
    return doc


def _decode_args(entry: dict[str, Any], where: str) -> list[str]:
    """PluginConfig.decodeNestedObjects for one entry: the args' unknown fields; any other
    decoding problem raises DecodeError prefixed with `where`."""
    name = entry.get("name", "")
    kind = f"{name}Args"
    args = entry.get("args")
    if kind not in ARGS_KINDS or args is None:
        return []  # out-of-tree (or no args kind): kept as given
    failed = f"{where}decoding args for plugin {name}: "
    if not isinstance(args, dict):
        raise DecodeError(f"{failed}json: cannot unmarshal {_json_type(args)} into Go value "
                          f"of type v1.{kind}")
    given_kind, given_version = args.get("kind") or kind, args.get("apiVersion") or API_VERSION
    if given_version != API_VERSION or given_kind not in ARGS_KINDS:
        raise DecodeError(f'{failed}no kind "{given_kind}" is registered for version '
                          f'"{given_version}" in scheme "{SCHEME_NAME}"')
    if given_kind != kind:
        raise DecodeError(f"{where}args for plugin {name} were not of type {kind}.{GROUP}, "
                          f"got {given_kind}.{GROUP}")
    walk = _Walk()
    try:
        walk.struct(args, kind, "", "")
    except DecodeError as exc:
        raise DecodeError(f"{failed}{exc}") from None
    return walk.unknown


def _compact(doc: dict[str, Any]) -> str:
    text = orjson.dumps(doc).decode()
    return text if len(text) <= 200 else text[:200] + "..."
