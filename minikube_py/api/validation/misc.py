"""Events, Endpoints and pod Bindings.

Kubernetes pieces: pkg/apis/core/validation/events.go (legacyValidateEvent: what core/v1 events
are held to; ValidateEventCreate/ValidateEventUpdate's strict rules for events.k8s.io/v1
requests, which are checked on the stored core/v1 form as upstream checks the internal type),
pkg/apis/core/validation (ValidateEndpoints, validateEndpointSubsets,
validateEndpointAddress, validateEndpointPort, ValidatePodBinding) and the generic registry's
common ObjectMeta check (ValidateObjectMetaAccessor with path-segment names), which is the only
name rule core/v1 Events get.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api import naming
from minikube_py.api.errors import invalid, not_supported, required
from minikube_py.api.validation.common import (
    name_is_dns_subdomain,
    path_segment_name,
    semantic_equal,
    validate_dns_label,
    validate_immutable,
    validate_ip,
    validate_name,
    validate_non_special_ip,
    validate_port_and_protocol,
    validate_qualified_name,
)
from minikube_py.api.validation.meta import (
    metadata,
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_dict,
    get_int,
    get_str,
    iter_dicts,
)

REPORTING_INSTANCE_LIMIT = 128
ACTION_LIMIT = 128
REASON_LIMIT = 128
NOTE_LIMIT = 1024
NAMESPACE_MISMATCH = "does not match event.namespace"
NEEDS_UNSET = "needs to be unset"
EVENT_TYPES = ("Normal", "Warning")


def validate_event(event: dict[str, Any], errs: Errs) -> None:
    """ValidateEventCreate for a core/v1 request: the legacy rules only, then the generic
    registry's ObjectMeta check (upstream BeforeCreate runs it after the strategy's, and only
    when those passed)."""
    before = len(errs)
    _legacy_event(event, errs)
    if len(errs) == before:
        validate_object_meta(event, True, path_segment_name, errs)


def validate_event_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(new, True, path_segment_name, errs)
    validate_object_meta_update(new, old, errs)
    _legacy_event(new, errs)


def validate_event_v1(event: dict[str, Any], errs: Errs) -> None:
    """ValidateEventCreate for an events.k8s.io/v1 request, on the stored core/v1 form (so the
    paths are the internal type's: `message`, `source`, `count`, as upstream reports them):
    the legacy rules, then the strict ones (DNS-subdomain names, an eventTime, a series of at
    least 2, type Normal or Warning, the deprecated core fields unset)."""
    before = len(errs)
    _legacy_event(event, errs)
    validate_object_meta(event, True, name_is_dns_subdomain, errs)
    _series(event, errs)
    if not event.get("eventTime"):
        errs.append(required("eventTime"))
    event_type = get_str(event, "type", "", errs)
    if event_type not in EVENT_TYPES:
        errs.append(invalid("type", "", f"has invalid value: {event_type}"))
    for name in ("firstTimestamp", "lastTimestamp", "count"):
        if event.get(name):
            errs.append(invalid(name, "", NEEDS_UNSET))
    source = get_dict(event, "source", "", errs) or {}
    if source.get("component") or source.get("host"):
        errs.append(invalid("source", "", NEEDS_UNSET))
    if len(errs) == before:
        validate_object_meta(event, True, path_segment_name, errs)


#: what ValidateEventUpdate holds immutable through events.k8s.io/v1 (internal field paths)
_IMMUTABLE = ("involvedObject", "reason", "message", "source", "firstTimestamp",
              "lastTimestamp", "count", "type", "eventTime", "action", "related",
              "reportingComponent", "reportingInstance")


def validate_event_v1_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """ValidateEventUpdate for an events.k8s.io/v1 request: only the series may change (the
    new event recorder's PATCH); everything else is immutable."""
    validate_object_meta(new, True, path_segment_name, errs)
    validate_object_meta_update(new, old, errs)
    _legacy_event(new, errs)
    if not semantic_equal(new.get("series"), old.get("series")):
        _series(new, errs)
    for name in _IMMUTABLE:
        # the internal ReportingController is named by its Go field, as upstream reports it
        path = "reportingController" if name == "reportingComponent" else name
        validate_immutable(new.get(name), old.get(name), path, errs)


def _series(event: dict[str, Any], errs: Errs) -> None:
    """validateV1EventSeries: a series counts at least 2 occurrences and has a last one."""
    series = get_dict(event, "series", "", errs)
    if series is None:
        return
    count = get_int(series, "count", "series", errs) or 0
    if count < 2:
        errs.append(invalid("series.count", "", "should be at least 2"))
    if not series.get("lastObservedTime"):
        errs.append(required("series.lastObservedTime"))


def _legacy_event(event: dict[str, Any], errs: Errs) -> None:
    """legacyValidateEvent: the involved object lives in the event's namespace; events carrying
    an eventTime (the events.k8s.io shape) also need reporting fields."""
    namespace = get_str(metadata(event, []), "namespace", "metadata", [])
    involved = get_dict(event, "involvedObject", "", errs) or {}
    involved_namespace = get_str(involved, "namespace", "involvedObject", errs)
    if not event.get("eventTime"):
        if not involved_namespace:
            if namespace not in ("", "default"):
                errs.append(invalid("involvedObject.namespace", involved_namespace,
                                    NAMESPACE_MISMATCH))
        elif namespace != involved_namespace:
            errs.append(invalid("involvedObject.namespace", involved_namespace,
                                NAMESPACE_MISMATCH))
    else:
        if not involved_namespace and namespace not in ("default", "kube-system"):
            errs.append(invalid("involvedObject.namespace", involved_namespace,
                                NAMESPACE_MISMATCH))
        # core/v1 spells the internal ReportingController `reportingComponent`; upstream's
        # errors name the internal field, whatever the request's version
        controller = get_str(event, "reportingComponent", "", errs)
        if not controller:
            errs.append(required("reportingController"))
        validate_qualified_name(controller, "reportingController", errs)
        for name, limit in (("reportingInstance", REPORTING_INSTANCE_LIMIT),
                            ("action", ACTION_LIMIT), ("reason", REASON_LIMIT)):
            value = get_str(event, name, "", errs, required_=True)
            if len(value) > limit:
                errs.append(invalid(name, "", f"can have at most {limit} characters"))
        if len(get_str(event, "message", "", errs)) > NOTE_LIMIT:
            errs.append(invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    for msg in naming.is_dns1123_subdomain(namespace):
        errs.append(invalid("namespace", namespace, msg))


# ---------------------------------------------------------------------------------------------
# Endpoints


def validate_endpoints(endpoints: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(endpoints, True, name_is_dns_subdomain, errs)
    for _, subset, subset_path in iter_dicts(endpoints, "subsets", "", errs):
        addresses = list(iter_dicts(subset, "addresses", subset_path, errs))
        not_ready = list(iter_dicts(subset, "notReadyAddresses", subset_path, errs))
        if not addresses and not not_ready:
            errs.append(required(subset_path, "must specify `addresses` or `notReadyAddresses`"))
        for _, address, address_path in addresses + not_ready:
            _address(address, address_path, errs)
        ports = list(iter_dicts(subset, "ports", subset_path, errs))
        for _, port, port_path in ports:
            _port(port, len(ports) > 1, port_path, errs)


def _address(address: dict[str, Any], path: str, errs: Errs) -> None:
    ip = get_str(address, "ip", path, errs)
    validate_ip(ip, child(path, "ip"), errs)
    hostname = get_str(address, "hostname", path, errs)
    if hostname:
        validate_dns_label(hostname, child(path, "hostname"), errs)
    if address.get("nodeName") is not None:
        validate_name(get_str(address, "nodeName", path, errs), child(path, "nodeName"), errs)
    validate_non_special_ip(ip, child(path, "ip"), errs)
    get_dict(address, "targetRef", path, errs)


def _port(port: dict[str, Any], require_name: bool, path: str, errs: Errs) -> None:
    name = get_str(port, "name", path, errs)
    if require_name and not name:
        errs.append(required(child(path, "name")))
    elif name:
        validate_dns_label(name, child(path, "name"), errs)
    validate_port_and_protocol(port, path, errs)
    if port.get("appProtocol") is not None:
        validate_qualified_name(get_str(port, "appProtocol", path, errs),
                                child(path, "appProtocol"), errs)


def validate_endpoints_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    validate_endpoints(new, errs)


# ---------------------------------------------------------------------------------------------
# Binding (pods/binding)


def validate_binding(binding: dict[str, Any], errs: Errs) -> None:
    """ValidatePodBinding: the target is a Node (kind may be left empty) and has a name."""
    target = get_dict(binding, "target", "", errs) or {}
    kind = get_str(target, "kind", "target", errs)
    if kind and kind != "Node":
        errs.append(not_supported("target.kind", kind, ["Node", "<empty>"]))
    if not get_str(target, "name", "target", errs):
        if target.get("name") in (None, ""):
            errs.append(required("target.name"))
