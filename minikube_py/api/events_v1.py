"""events.k8s.io/v1 Events as views of core/v1 Events: the two JSON shapes, converted both ways.

Kubernetes pieces: pkg/apis/events/v1/conversion.go (Convert_v1_Event_To_core_Event,
Convert_core_Event_To_v1_Event, AddFieldLabelConversionsForEvent) with the generated
conversions of zz_generated.conversion.go, and the JSON tags of k8s.io/api's core/v1 and
events/v1 `Event` structs. Upstream stores both as one internal type under
`/registry/events/<ns>/<name>` (events.k8s.io is a cohabitating resource of core events), so an
event written through either API is read, listed and watched through both with the same
resourceVersion. Here the stored form is the core/v1 JSON and these pure functions are the
conversion; the registry applies them at its edges (registry/events.py).

Why a table: the conversion is a field-by-field rename (`note` <-> `message`, `regarding` <->
`involvedObject`, `deprecatedCount` <-> `count`, ...). Go's encoder then decides presence: a
struct-typed field (`regarding`, `source`, a timestamp) is always written -- `{}` or `null` when
empty -- and an `omitempty` scalar is dropped when it holds its zero value. Both sides follow
their Go struct's field order, as upstream's JSON does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Obj = dict[str, Any]

API_VERSION = "events.k8s.io/v1"
CORE_API_VERSION = "v1"

#: (events.k8s.io/v1 field, core/v1 field), in events/v1's Go struct order
_FIELDS: tuple[tuple[str, str], ...] = (
    ("eventTime", "eventTime"),
    ("series", "series"),
    ("reportingController", "reportingComponent"),
    ("reportingInstance", "reportingInstance"),
    ("action", "action"),
    ("reason", "reason"),
    ("regarding", "involvedObject"),
    ("related", "related"),
    ("note", "message"),
    ("type", "type"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
)
#: core/v1's Go struct order
_CORE_ORDER = ("involvedObject", "reason", "message", "source", "firstTimestamp",
               "lastTimestamp", "count", "type", "eventTime", "series", "action", "related",
               "reportingComponent", "reportingInstance")

#: fields Go always writes (a struct, or a string without omitempty), with their empty value
_V1_ALWAYS: Mapping[str, Any] = {"eventTime": None, "regarding": {}, "deprecatedSource": {},
                                 "deprecatedFirstTimestamp": None,
                                 "deprecatedLastTimestamp": None}
_CORE_ALWAYS: Mapping[str, Any] = {"involvedObject": {}, "source": {}, "firstTimestamp": None,
                                   "lastTimestamp": None, "eventTime": None,
                                   "reportingComponent": "", "reportingInstance": ""}

TO_CORE: Mapping[str, str] = dict(_FIELDS)
FROM_CORE: Mapping[str, str] = {core: v1 for v1, core in _FIELDS}

#: fieldSelector labels of events.k8s.io/v1 -> the core field set the storage selects on
#: (upstream AddFieldLabelConversionsForEvent maps them onto ToSelectableFields)
FIELD_LABELS: Mapping[str, str] = {
    "metadata.name": "metadata.name",
    "metadata.namespace": "metadata.namespace",
    "reason": "reason",
    "regarding.kind": "involvedObject.kind",
    "regarding.namespace": "involvedObject.namespace",
    "regarding.name": "involvedObject.name",
    "regarding.uid": "involvedObject.uid",
    "regarding.apiVersion": "involvedObject.apiVersion",
    "regarding.resourceVersion": "involvedObject.resourceVersion",
    "regarding.fieldPath": "involvedObject.fieldPath",
    "reportingController": "reportingComponent",
    "source": "source",
    "type": "type",
}


def _copy(value: Any) -> Any:
    """Shallow copies of nested dicts: a view never aliases the stored object's parts."""
    return dict(value) if isinstance(value, dict) else value


def _convert(obj: Obj, api_version: str, names: Mapping[str, str], order: tuple[str, ...],
             always: Mapping[str, Any]) -> Obj:
    renamed = {names[k]: v for k, v in obj.items() if k in names}
    out: Obj = {"apiVersion": api_version, "kind": "Event",
                "metadata": dict(obj.get("metadata") or {})}
    for name in order:
        value = renamed.get(name)
        if value is None or value == "" or value == 0 and not isinstance(value, bool):
            if name in always:
                out[name] = _copy(always[name]) if value is None else value
            continue
        out[name] = _copy(value)
    return out


def from_core(core: Obj) -> Obj:
    """A stored core/v1 Event as events.k8s.io/v1 shows it (Convert_core_Event_To_v1_Event)."""
    return _convert(core, API_VERSION, FROM_CORE, tuple(v1 for v1, _ in _FIELDS), _V1_ALWAYS)


def to_core(event: Obj) -> Obj:
    """An events.k8s.io/v1 Event as core/v1 stores it (Convert_v1_Event_To_core_Event)."""
    return _convert(event, CORE_API_VERSION, TO_CORE, _CORE_ORDER, _CORE_ALWAYS)


def is_events_v1(obj: Any) -> bool:
    """Whether a decoded object is in the events.k8s.io/v1 shape (printers work on core's)."""
    return isinstance(obj, dict) and obj.get("apiVersion") == API_VERSION
