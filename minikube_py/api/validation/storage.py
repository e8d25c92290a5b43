"""storage.k8s.io/v1: StorageClass, CSIDriver, CSINode, VolumeAttachment, CSIStorageCapacity.

Kubernetes piece: pkg/apis/storage/validation/validation.go (ValidateStorageClass and
...Update, ValidateCSIDriver, ValidateCSINode, ValidateVolumeAttachment and its status,
ValidateCSIStorageCapacity) with core's ValidateCSIDriverName and ValidateTopologySelectorTerm.
The registry strategies (pkg/registry/storage/*/strategy.go) run the create rules again on
update, then the update rules: a class's parameters, provisioner, reclaimPolicy and binding mode
never change, a VolumeAttachment's spec never changes, a CSINode driver keeps its nodeID and
topology keys.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api import naming
from minikube_py.api.errors import (
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from minikube_py.api.storage import BINDING_MODES, RECLAIM_POLICIES
from minikube_py.api.validation.common import (
    IMMUTABLE,
    name_is_dns_subdomain,
    semantic_equal,
    validate_immutable,
    validate_label_selector,
    validate_qualified_name,
)
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.resources import parse_at
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_bool,
    get_dict,
    get_int,
    get_str,
    get_str_list,
    index,
    iter_dicts,
)

MAX_PARAMETERS = 512  # maxProvisionerParameterLen
MAX_PARAMETERS_SIZE = 256 * 1024  # maxProvisionerParameterSize
CSI_NODE_ID_MAX_LENGTH = 192
MAX_ATTACHED_VOLUME_METADATA_SIZE = 256 * 1024
MAX_VOLUME_ERROR_MESSAGE_SIZE = 1024
FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_MODES = ("Ephemeral", "Persistent")


def validate_csi_driver_name(name: Any, path: str, errs: Errs) -> None:
    """core ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain (lower-cased
    first)."""
    if not isinstance(name, str):
        name = ""
    if not name:
        errs.append(required(path))
    if len(name) > 63:
        errs.append(too_long(path, 63))
    for msg in naming.is_dns1123_subdomain(name.lower()):
        errs.append(invalid(path, name, msg))


# -- StorageClass --------------------------------------------------------------------------


def _provisioner(sc: dict[str, Any], errs: Errs) -> None:
    provisioner = get_str(sc, "provisioner", "", errs)
    if not provisioner:
        errs.append(required("provisioner"))
    else:
        validate_qualified_name(provisioner.lower(), "provisioner", errs)


def _parameters(sc: dict[str, Any], errs: Errs) -> None:
    params = get_dict(sc, "parameters", "", errs) or {}
    if len(params) > MAX_PARAMETERS:
        errs.append(invalid("parameters", "Provisioner Parameters exceeded max allowed",
                            f"must have at most {MAX_PARAMETERS} parameters"))
        return
    total = 0
    for k, v in params.items():
        if not k:
            errs.append(invalid("parameters", k, "field can not be empty."))
        if not isinstance(v, str):
            errs.append(invalid(child("parameters", k), v, "must be a string"))
            continue
        total += len(k) + len(v)
    if total > MAX_PARAMETERS_SIZE:
        errs.append(too_long("parameters", MAX_PARAMETERS_SIZE))


def _topology_term(term: dict[str, Any], path: str, errs: Errs) -> dict[str, frozenset[str]]:
    """ValidateTopologySelectorTerm: each expression names a label and at least one value, no
    key twice; returns the term as key -> values for the duplicate-term check."""
    exprs: dict[str, frozenset[str]] = {}
    for _, req, req_path in iter_dicts(term, "matchLabelExpressions", path, errs):
        key = get_str(req, "key", req_path, errs)
        values = get_str_list(req, "values", req_path, errs)
        values_path = child(req_path, "values")
        if not values:
            errs.append(required(values_path, "must specify as least one value"))
        seen: set[str] = set()
        for i, value in enumerate(values):
            if value in seen:
                errs.append(duplicate(index(values_path, i), value))
            seen.add(value)
        validate_qualified_name(key, child(req_path, "key"), errs)
        if key in exprs:
            errs.append(duplicate(child(req_path, "key"), key))
        exprs[key] = frozenset(seen)
    return exprs


def validate_allowed_topologies(sc: dict[str, Any], errs: Errs) -> None:
    seen: list[dict[str, frozenset[str]]] = []
    for i, term, term_path in iter_dicts(sc, "allowedTopologies", "", errs):
        exprs = _topology_term(term, term_path, errs)
        if exprs in seen:
            errs.append(duplicate(child(index("allowedTopologies", i), "matchLabelExpressions"),
                                  ""))
        seen.append(exprs)


def validate_storage_class(sc: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(sc, False, name_is_dns_subdomain, errs)
    _provisioner(sc, errs)
    _parameters(sc, errs)
    policy = get_str(sc, "reclaimPolicy", "", errs)
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(not_supported("reclaimPolicy", policy, RECLAIM_POLICIES))
    get_bool(sc, "allowVolumeExpansion", "", errs)
    get_str_list(sc, "mountOptions", "", errs)
    mode = sc.get("volumeBindingMode")
    if mode is None:
        errs.append(required("volumeBindingMode"))
    elif mode not in BINDING_MODES:
        errs.append(not_supported("volumeBindingMode", mode, BINDING_MODES))
    validate_allowed_topologies(sc, errs)


def validate_storage_class_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_storage_class(new, errs)
    validate_object_meta_update(new, old, errs)
    if not semantic_equal(new.get("parameters") or {}, old.get("parameters") or {}):
        errs.append(forbidden("parameters", "updates to parameters are forbidden."))
    if new.get("provisioner") != old.get("provisioner"):
        errs.append(forbidden("provisioner", "updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        errs.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    validate_immutable(new.get("volumeBindingMode"), old.get("volumeBindingMode"),
                       "volumeBindingMode", errs)


# -- CSIDriver -------------------------------------------------------------------------------


def _csi_driver_spec(driver: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(driver, "spec", "", errs) or {}
    for name in ("attachRequired", "podInfoOnMount", "storageCapacity", "requiresRepublish"):
        if get_bool(spec, name, "spec", errs) is None and name != "requiresRepublish":
            errs.append(required(child("spec", name)))
    policy = get_str(spec, "fsGroupPolicy", "spec", errs)
    if spec.get("fsGroupPolicy") is not None and policy not in FS_GROUP_POLICIES:
        errs.append(not_supported("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
    modes_path = "spec.volumeLifecycleModes"
    for i, mode in enumerate(get_str_list(spec, "volumeLifecycleModes", "spec", errs)):
        if mode not in LIFECYCLE_MODES:
            errs.append(not_supported(index(modes_path, i), mode, LIFECYCLE_MODES))
    audiences: set[str] = set()
    for _, request, req_path in iter_dicts(spec, "tokenRequests", "spec", errs):
        audience = get_str(request, "audience", req_path, errs)
        if audience in audiences:
            errs.append(duplicate(child(req_path, "audience"), audience))
        audiences.add(audience)
        seconds = get_int(request, "expirationSeconds", req_path, errs)
        if seconds is not None and seconds < 600:
            errs.append(invalid(child(req_path, "expirationSeconds"), seconds,
                                "may not specify a duration less than 10 minutes"))
        if seconds is not None and seconds > 1 << 32:
            errs.append(invalid(child(req_path, "expirationSeconds"), seconds,
                                "may not specify a duration larger than 2^32 seconds"))


def validate_csi_driver(driver: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(driver, False, name_is_dns_subdomain, errs)
    name = (driver.get("metadata") or {}).get("name") if isinstance(driver.get("metadata"),
                                                                      dict) else ""
    validate_csi_driver_name(name, "metadata.name", errs)
    _csi_driver_spec(driver, errs)


def validate_csi_driver_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_csi_driver(new, errs)
    validate_object_meta_update(new, old, errs)
    new_spec = new.get("spec") if isinstance(new.get("spec"), dict) else {}
    old_spec = old.get("spec") if isinstance(old.get("spec"), dict) else {}
    for name in ("attachRequired", "volumeLifecycleModes"):
        validate_immutable(new_spec.get(name), old_spec.get(name), child("spec", name), errs)


# -- CSINode ---------------------------------------------------------------------------------


def _csi_node_driver(driver: dict[str, Any], path: str, errs: Errs) -> None:
    validate_csi_driver_name(driver.get("name"), child(path, "name"), errs)
    node_id = get_str(driver, "nodeID", path, errs)
    if not node_id:
        errs.append(required(child(path, "nodeID"), "nodeID of driver: "
                             f"{driver.get('name', '')} must be set"))
    elif len(node_id) > CSI_NODE_ID_MAX_LENGTH:
        errs.append(invalid(child(path, "nodeID"), node_id,
                            f"must be {CSI_NODE_ID_MAX_LENGTH} characters or less"))
    keys_path = child(path, "topologyKeys")
    seen: set[str] = set()
    for i, key in enumerate(get_str_list(driver, "topologyKeys", path, errs)):
        if not key:
            errs.append(required(keys_path, key))
        if key in seen:
            errs.append(duplicate(index(keys_path, i), key))
        seen.add(key)
        validate_qualified_name(key, keys_path, errs)
    allocatable = get_dict(driver, "allocatable", path, errs)
    if allocatable is not None:
        count = get_int(allocatable, "count", child(path, "allocatable"), errs)
        if count is not None and count < 0:
            errs.append(invalid(child(child(path, "allocatable"), "count"), count,
                                "must be greater than or equal to 0"))


def validate_csi_node(node: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(node, False, name_is_dns_subdomain, errs)
    spec = get_dict(node, "spec", "", errs) or {}
    names: set[str] = set()
    for _, driver, path in iter_dicts(spec, "drivers", "spec", errs):
        _csi_node_driver(driver, path, errs)
        name = driver.get("name")
        if isinstance(name, str):
            if name in names:
                errs.append(duplicate(child(path, "name"), name))
            names.add(name)


def validate_csi_node_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    validate_csi_node(new, errs)
    validate_object_meta_update(new, old, errs)
    old_drivers = {d.get("name"): d for d in ((old.get("spec") or {}).get("drivers") or [])
                   if isinstance(d, dict)}
    new_spec = new.get("spec") if isinstance(new.get("spec"), dict) else {}
    for i, driver in enumerate(new_spec.get("drivers") or []):
        if not isinstance(driver, dict) or driver.get("name") not in old_drivers:
            continue
        before = old_drivers[driver.get("name")]
        path = index("spec.drivers", i)
        for name in ("nodeID", "topologyKeys", "allocatable"):
            if not semantic_equal(driver.get(name), before.get(name)):
                errs.append(invalid(child(path, name), driver.get(name), IMMUTABLE))


# -- VolumeAttachment ------------------------------------------------------------------------


def _volume_attachment_spec(va: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(va, "spec", "", errs) or {}
    validate_csi_driver_name(spec.get("attacher"), "spec.attacher", errs)
    source = get_dict(spec, "source", "spec", errs) or {}
    pv_name = get_str(source, "persistentVolumeName", "spec.source", errs)
    inline = get_dict(source, "inlineVolumeSpec", "spec.source", errs)
    if bool(pv_name) == (inline is not None):
        errs.append(invalid("spec.source", _source_text(source),
                            "must specify exactly one of inlineVolumeSpec and "
                            "persistentVolumeName"))
    node = get_str(spec, "nodeName", "spec", errs)
    if not node:
        errs.append(required("spec.nodeName"))
    else:
        for msg in naming.is_dns1123_subdomain(node):
            errs.append(invalid("spec.nodeName", node, msg))


def _source_text(source: dict[str, Any]) -> str:
    return "storage.VolumeAttachmentSource{PersistentVolumeName:" + (
        f'"{source.get("persistentVolumeName")}"' if source.get("persistentVolumeName")
        else "nil") + ", InlineVolumeSpec:" + (
        "{...}" if source.get("inlineVolumeSpec") else "nil") + "}"


def _volume_attachment_status(va: dict[str, Any], errs: Errs) -> None:
    status = get_dict(va, "status", "", errs) or {}
    get_bool(status, "attached", "status", errs)
    metadata = get_dict(status, "attachmentMetadata", "status", errs) or {}
    size = sum(len(k) + (len(v) if isinstance(v, str) else 0) for k, v in metadata.items())
    if size > MAX_ATTACHED_VOLUME_METADATA_SIZE:
        errs.append(too_long("status.attachmentMetadata", MAX_ATTACHED_VOLUME_METADATA_SIZE))
    for name in ("attachError", "detachError"):
        error = get_dict(status, name, "status", errs) or {}
        message = get_str(error, "message", child("status", name), errs)
        if len(message) > MAX_VOLUME_ERROR_MESSAGE_SIZE:
            errs.append(too_long(child(child("status", name), "message"),
                                 MAX_VOLUME_ERROR_MESSAGE_SIZE))


def validate_volume_attachment(va: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(va, False, name_is_dns_subdomain, errs)
    _volume_attachment_spec(va, errs)
    _volume_attachment_status(va, errs)


def validate_volume_attachment_update(new: dict[str, Any], old: dict[str, Any],
                                      errs: Errs) -> None:
    validate_volume_attachment(new, errs)
    validate_object_meta_update(new, old, errs)
    if not semantic_equal(new.get("spec"), old.get("spec")):
        errs.append(invalid("spec", "(spec)", IMMUTABLE))


def validate_volume_attachment_status_update(new: dict[str, Any], old: dict[str, Any],
                                             errs: Errs) -> None:
    validate_object_meta_update(new, old, errs)
    _volume_attachment_status(new, errs)


# -- CSIStorageCapacity ----------------------------------------------------------------------


def validate_csi_storage_capacity(capacity: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(capacity, True, name_is_dns_subdomain, errs)
    topology = get_dict(capacity, "nodeTopology", "", errs)
    if topology is not None:
        validate_label_selector(topology, "nodeTopology", errs)
    class_name = get_str(capacity, "storageClassName", "", errs)
    if not class_name:
        errs.append(required("storageClassName"))
    else:
        for msg in naming.is_dns1123_subdomain(class_name):
            errs.append(invalid("storageClassName", class_name, msg))
    for name in ("capacity", "maximumVolumeSize"):
        raw = capacity.get(name)
        if raw is None:
            continue
        q = parse_at(raw, name, errs)
        if q is not None and q.value < 0:
            errs.append(invalid(name, raw, "must be greater than or equal to 0"))


def validate_csi_storage_capacity_update(new: dict[str, Any], old: dict[str, Any],
                                         errs: Errs) -> None:
    validate_csi_storage_capacity(new, errs)
    validate_object_meta_update(new, old, errs)
    validate_immutable(new.get("nodeTopology"), old.get("nodeTopology"), "nodeTopology", errs)
    validate_immutable(new.get("storageClassName"), old.get("storageClassName"),
                       "storageClassName", errs)
