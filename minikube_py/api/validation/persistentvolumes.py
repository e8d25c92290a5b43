"""PersistentVolumes and PersistentVolumeClaims: create, update and status-update rules.

Kubernetes pieces: pkg/apis/core/validation (ValidatePersistentVolume, ValidatePersistentVolumeSpec,
ValidatePersistentVolumeUpdate, ValidatePersistentVolumeStatusUpdate, ValidatePersistentVolumeClaim,
ValidatePersistentVolumeClaimSpec, ValidatePersistentVolumeClaimUpdate,
ValidatePersistentVolumeClaimStatusUpdate, validateVolumeNodeAffinity, validateLocalVolumeSource,
validateCSIPersistentVolumeSource). Paths and messages are upstream's, quirks included: a claim's
missing storage request is reported at `spec.resources[storage]`, an immutable volume source at
`spec.persistentvolumesource`, an immutable volumeMode at `volumeMode`. Upstream appends a
`cmp.Diff` of the two specs to the "immutable" messages; we leave the diff out.

The sources a PersistentVolume shares with pod volumes (hostPath, nfs) are checked by the pod
volume validators in `volumes`; `local` and `csi` are checked here; the cloud sources are
recognised (exactly one source) but not looked into.
"""

from __future__ import annotations

import posixpath
from typing import Any

from minikube_py.api.errors import forbidden, invalid, not_supported, required
from minikube_py.api.validation.common import (
    IMMUTABLE,
    name_is_dns_subdomain,
    semantic_equal,
    sub,
    validate_label_selector,
)
from minikube_py.api.validation.meta import (
    metadata,
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.resources import parse_at, show
from minikube_py.api.validation.scheduling import validate_node_selector_term
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_dict,
    get_str,
    get_str_list,
    get_str_map,
    iter_dicts,
    key,
)
from minikube_py.api.validation.volumes import validate_source_body

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
VOLUME_MODES = ("Block", "Filesystem")
STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
#: PersistentVolumeSource members, in upstream's order of checking
PV_SOURCES = (
    "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd",
    "quobyte", "cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume",
    "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi",
)
NOT_POSITIVE = "must be greater than zero"
CLAIM_SPEC_IMMUTABLE = ("spec is immutable after creation except resources.requests and "
                        "volumeAttributesClassName for bound claims")


# ---------------------------------------------------------------------------------------------
# Shared pieces


def _access_modes(spec: dict[str, Any], path: str, errs: Errs, missing: str) -> None:
    modes = get_str_list(spec, "accessModes", path, errs)
    modes_path = child(path, "accessModes")
    if not modes:
        errs.append(required(modes_path, missing))
    once_pod = other = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(not_supported(modes_path, mode, ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            once_pod = True
        else:
            other = True
    if once_pod and other:
        errs.append(forbidden(modes_path, "may not use ReadWriteOncePod with other access modes"))


def _class_name(spec: dict[str, Any], name: str, path: str, errs: Errs) -> None:
    value = get_str(spec, name, path, errs)
    if value:
        for msg in name_is_dns_subdomain(value, False):
            errs.append(invalid(child(path, name), value, msg))


def _volume_mode(spec: dict[str, Any], path: str, errs: Errs) -> None:
    mode = spec.get("volumeMode")
    if mode is not None and mode not in VOLUME_MODES:
        errs.append(not_supported(child(path, "volumeMode"), mode, VOLUME_MODES))


def _positive_quantity(raw: Any, path: str, errs: Errs) -> None:
    q = parse_at(raw, path, errs)
    if q is not None and q.value <= 0:
        errs.append(invalid(path, show(q), NOT_POSITIVE))


# ---------------------------------------------------------------------------------------------
# PersistentVolume


def validate_persistent_volume(pv: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(pv, False, name_is_dns_subdomain, errs)
    spec = get_dict(pv, "spec", "", errs) or {}
    _pv_spec(spec, "spec", errs)


def _pv_spec(spec: dict[str, Any], path: str, errs: Errs) -> None:
    _access_modes(spec, path, errs, "")
    capacity = get_dict(spec, "capacity", path, errs) or {}
    cap_path = child(path, "capacity")
    if not capacity:
        errs.append(required(cap_path))
    if "storage" not in capacity or len(capacity) > 1:
        errs.append(not_supported(cap_path, capacity, ("storage",)))
    for resource, raw in capacity.items():
        _positive_quantity(raw, key(cap_path, resource), errs)
    policy = get_str(spec, "persistentVolumeReclaimPolicy", path, errs)
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(not_supported(child(path, "persistentVolumeReclaimPolicy"), policy,
                                  RECLAIM_POLICIES))
    has_affinity = _node_affinity(spec, path, errs)
    count = 0
    for source in PV_SOURCES:
        if spec.get(source) is None:
            continue
        source_path = child(path, source)
        if count:
            errs.append(forbidden(source_path, "may not specify more than 1 volume type"))
            continue
        count += 1
        body = get_dict(spec, source, path, errs)
        if body is None:
            continue
        if source == "local":
            _local(body, source_path, errs)
            if not has_affinity:
                errs.append(required(child(path, "nodeAffinity"),
                                     "Local volume requires node affinity"))
        elif source == "csi":
            _csi(body, source_path, errs)
        else:
            validate_source_body(source, body, source_path, errs)
    if not count:
        errs.append(required(path, "must specify a volume type"))
    host_path = sub(spec, "hostPath", "path")
    if isinstance(host_path, str) and host_path and posixpath.normpath(host_path) in ("/", "//") \
            and policy == "Recycle":
        errs.append(forbidden(child(path, "persistentVolumeReclaimPolicy"),
                              "may not be 'recycle' for a hostPath mount of '/'"))
    _class_name(spec, "storageClassName", path, errs)
    _volume_mode(spec, path, errs)


def _node_affinity(spec: dict[str, Any], path: str, errs: Errs) -> bool:
    """validateVolumeNodeAffinity; True when nodeAffinity is present."""
    affinity = get_dict(spec, "nodeAffinity", path, errs)
    if affinity is None:
        return False
    aff_path = child(path, "nodeAffinity")
    selector = get_dict(affinity, "required", aff_path, errs)
    req_path = child(aff_path, "required")
    if selector is None:
        errs.append(required(req_path, "must specify required node constraints"))
        return True
    terms = list(iter_dicts(selector, "nodeSelectorTerms", req_path, errs))
    if not terms:
        errs.append(required(child(req_path, "nodeSelectorTerms"),
                             "must have at least one node selector term"))
    for _, term, term_path in terms:
        validate_node_selector_term(term, term_path, errs, check_values=True)
    return True


def _local(src: dict[str, Any], path: str, errs: Errs) -> None:
    local_path = get_str(src, "path", path, errs, required_=True)
    if local_path and ".." in local_path.split("/"):
        errs.append(invalid(child(path, "path"), local_path, "must not contain '..'"))


def _csi(src: dict[str, Any], path: str, errs: Errs) -> None:
    get_str(src, "driver", path, errs, required_=True)
    get_str(src, "volumeHandle", path, errs, required_=True)


def validate_persistent_volume_update(new: dict[str, Any], old: dict[str, Any],
                                      errs: Errs) -> None:
    validate_persistent_volume(new, errs)
    validate_object_meta_update(new, old, errs)
    new_spec, old_spec = sub(new, "spec") or {}, sub(old, "spec") or {}
    if any(not semantic_equal(new_spec.get(s), old_spec.get(s)) for s in PV_SOURCES):
        errs.append(forbidden("spec.persistentvolumesource",
                              "spec.persistentvolumesource is immutable after creation"))
    if not semantic_equal(new_spec.get("volumeMode"), old_spec.get("volumeMode")):
        errs.append(invalid("volumeMode", new_spec.get("volumeMode"), IMMUTABLE))


def validate_persistent_volume_status_update(new: dict[str, Any], old: dict[str, Any],
                                             errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)


# ---------------------------------------------------------------------------------------------
# PersistentVolumeClaim


def validate_persistent_volume_claim(pvc: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(pvc, True, name_is_dns_subdomain, errs)
    spec = get_dict(pvc, "spec", "", errs) or {}
    _pvc_spec(spec, "spec", errs)


def pvc_template_spec(spec: dict[str, Any], path: str, errs: Errs) -> None:
    """The spec of a claim template (a StatefulSet's volumeClaimTemplates[i].spec), checked
    as a claim's spec is."""
    _pvc_spec(spec, path, errs)


def _pvc_spec(spec: dict[str, Any], path: str, errs: Errs) -> None:
    _access_modes(spec, path, errs, "at least 1 access mode is required")
    selector = get_dict(spec, "selector", path, errs)
    if selector is not None:
        validate_label_selector(selector, child(path, "selector"), errs)
    resources = get_dict(spec, "resources", path, errs) or {}
    requests = get_dict(resources, "requests", child(path, "resources"), errs) or {}
    storage_path = key(child(path, "resources"), "storage")
    if requests.get("storage") is None:
        errs.append(required(storage_path))
    else:
        _positive_quantity(requests["storage"], storage_path, errs)
    _class_name(spec, "storageClassName", path, errs)
    _volume_mode(spec, path, errs)
    get_str(spec, "volumeName", path, errs)
    for name in ("dataSource", "dataSourceRef"):
        source = get_dict(spec, name, path, errs)
        if source is None:
            continue
        source_path = child(path, name)
        get_str(source, "name", source_path, errs, required_=True)
        kind = get_str(source, "kind", source_path, errs, required_=True)
        if not get_str(source, "apiGroup", source_path, errs) and kind != \
                "PersistentVolumeClaim":
            errs.append(invalid(source_path, kind, "must be 'PersistentVolumeClaim' when "
                                                   "referencing the default apiGroup"))


def _storage_class_annotation(obj: dict[str, Any]) -> str | None:
    annotations = get_str_map(metadata(obj, []), "annotations", "metadata", [])
    return annotations.get(STORAGE_CLASS_ANNOTATION)


def validate_persistent_volume_claim_update(new: dict[str, Any], old: dict[str, Any],
                                            errs: Errs) -> None:
    """Claims are immutable (quota and limit ranges rely on it) except: `volumeName` may be set
    once (the binder does it), `storageClassName` may be set once when neither it nor the
    beta annotation was, and a bound claim's storage request may grow (expansion)."""
    validate_object_meta_update(new, old, errs)
    validate_persistent_volume_claim(new, errs)
    new_spec = dict(sub(new, "spec") or {})
    old_spec = dict(sub(old, "spec") or {})
    if not old_spec.get("volumeName"):
        old_spec["volumeName"] = new_spec.get("volumeName")
    new_class, old_class = _storage_class_annotation(new), _storage_class_annotation(old)
    if new_class != old_class:
        errs.append(invalid(f"metadata.annotations.{STORAGE_CLASS_ANNOTATION}", new_class or "",
                            IMMUTABLE))
    if old_spec.get("storageClassName") is None and (
            old_class is None or new_spec.get("storageClassName") == old_class):
        old_spec["storageClassName"] = new_spec.get("storageClassName")
    new_size = sub(new_spec, "resources", "requests", "storage")
    old_size = sub(old_spec, "resources", "requests", "storage")
    if sub(new, "status", "phase") == "Bound" and isinstance(new_spec.get("resources"), dict):
        resources = dict(new_spec["resources"])
        if isinstance(resources.get("requests"), dict):
            resources["requests"] = dict(resources["requests"], storage=old_size)
        new_spec["resources"] = resources
    new_spec["volumeAttributesClassName"] = old_spec.get("volumeAttributesClassName")
    if not semantic_equal(new_spec, old_spec):
        errs.append(forbidden("spec", CLAIM_SPEC_IMMUTABLE))
    scratch: Errs = []
    new_q, old_q = parse_at(new_size, "", scratch), parse_at(old_size, "", scratch)
    if not scratch and new_q is not None and old_q is not None and new_q.value < old_q.value:
        errs.append(forbidden("spec.resources.requests.storage",
                              "field can not be less than previous value"))
    if not semantic_equal(sub(new, "spec", "volumeMode"), sub(old, "spec", "volumeMode")):
        errs.append(invalid("volumeMode", sub(new, "spec", "volumeMode"), IMMUTABLE))


def validate_persistent_volume_claim_status_update(new: dict[str, Any], old: dict[str, Any],
                                                   errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    if not sub(new, "spec", "accessModes"):
        errs.append(required("Spec.accessModes"))
    status = get_dict(new, "status", "", errs) or {}
    capacity = get_dict(status, "capacity", "status", errs) or {}
    for resource, raw in capacity.items():
        q = parse_at(raw, key("status.capacity", resource), errs)
        if q is not None and q.value < 0:
            errs.append(invalid(key("status.capacity", resource), show(q),
                                "must be a valid resource quantity"))
