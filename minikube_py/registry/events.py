"""Events, served twice: core/v1 `events` and events.k8s.io/v1 `events`, over one storage.

Kubernetes pieces: pkg/registry/core/event (strategy.go: ToSelectableFields, the validation
chosen by the request's group/version, AllowCreateOnUpdate) and the storage factory line that
makes events.k8s.io events cohabit with core ones (`AddCohabitatingResources`). Both resources
use the keys `/registry/events/<ns>/<name>` and the stored core/v1 JSON; events.k8s.io/v1 is a
view converted at the registry's edges (api/events_v1.py), so an event written through either
API is read, listed and watched through both with the same resourceVersion, and the watch of
events.k8s.io shares the fan-out of core events (one store watch, encoded once per
representation). Keys carry a lease so events expire after --event-ttl.
"""

from __future__ import annotations

from typing import Any

from ..api import events_v1
from ..api.validation import EVENTS_V1 as EVENTS_V1_VALIDATION
from .strategy import StoredAs, Strategy, field_text


def event_fields(obj: dict[str, Any]) -> dict[str, str]:
    """Upstream event field set (pkg/registry/core/event/strategy.go ToSelectableFields):
    `source` is the source component, or the reporting controller when there is none."""
    meta = obj.get("metadata") or {}
    involved = obj.get("involvedObject") or {}
    source = obj.get("source") or {}
    controller = field_text(obj.get("reportingComponent"))
    return {
        "metadata.name": meta.get("name", ""),
        "metadata.namespace": meta.get("namespace", ""),
        "involvedObject.kind": field_text(involved.get("kind")),
        "involvedObject.namespace": field_text(involved.get("namespace")),
        "involvedObject.name": field_text(involved.get("name")),
        "involvedObject.uid": field_text(involved.get("uid")),
        "involvedObject.apiVersion": field_text(involved.get("apiVersion")),
        "involvedObject.resourceVersion": field_text(involved.get("resourceVersion")),
        "involvedObject.fieldPath": field_text(involved.get("fieldPath")),
        "reason": field_text(obj.get("reason")),
        "reportingComponent": controller,
        "source": field_text(source.get("component")) or controller,
        "type": field_text(obj.get("type")),
    }


EVENTS = Strategy(
    group="", version="v1", resource="events", kind="Event", namespaced=True, key_root="events",
    short_names=("ev",), spec_fields=(), field_attrs=event_fields,
    selectable_fields=tuple(k for k in event_fields({}) if not k.startswith("metadata.")),
    allow_create_on_update=True, ttl=True,
)

EVENTS_V1 = Strategy(
    group="events.k8s.io", version="v1", resource="events", kind="Event", namespaced=True,
    key_root=EVENTS.key_root, short_names=("ev",), spec_fields=(), field_attrs=event_fields,
    selectable_fields=tuple(k for k in events_v1.FIELD_LABELS if not k.startswith("metadata.")),
    allow_create_on_update=True, ttl=True, validation=EVENTS_V1_VALIDATION,
    stored_as=StoredAs(storage=EVENTS, to_storage=events_v1.to_core,
                       from_storage=events_v1.from_core, field_labels=events_v1.FIELD_LABELS),
)
