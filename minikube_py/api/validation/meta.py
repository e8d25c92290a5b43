"""ObjectMeta validation on create and on update, shared by every kind.

Kubernetes pieces: apimachinery/pkg/api/validation/objectmeta.go (ValidateObjectMeta,
ValidateObjectMetaUpdate, ValidateAnnotations, ValidateOwnerReferences, ValidateFinalizers)
and the core additions in pkg/apis/core/validation (validateKubeFinalizerName). Every kind's
validator starts here with its own name rule: DNS-1123 subdomain for most, DNS-1123 label for
Namespaces, DNS-1035 label for Services, URL path segment for Events.
managedFields entries get apimachinery/pkg/apis/meta/v1/validation ValidateManagedFields (and
ValidateFieldManager for their manager); the field manager has already re-encoded them by then
(api/managedfields.py), so these rules catch what decodes but may not be stored.
"""

from __future__ import annotations

from typing import Any

from minikube_py.api import naming
from minikube_py.api.errors import forbidden, invalid, required, too_long
from minikube_py.api.managedfields_codec import APPLY, FIELDS_V1, UPDATE, printable
from minikube_py.api.validation.common import (
    NameFn,
    ValidMemo,
    items_key,
    name_is_dns_label,
    validate_immutable,
    validate_labels,
    validate_nonnegative,
    validate_qualified_name,
)
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_dict,
    get_int,
    get_str,
    get_str_list,
    get_str_map,
    index,
    iter_dicts,
)

TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024
STANDARD_FINALIZERS = frozenset({"kubernetes", "orphan", "foregroundDeletion"})
BANNED_OWNERS = frozenset({("", "v1", "Event")})
FIELD_MANAGER_MAX_LENGTH = 128
MAX_SUBRESOURCE_NAME_LENGTH = 256
META = "metadata"


def metadata(obj: Any, errs: Errs) -> dict[str, Any]:
    """obj.metadata as an object ({} when absent; a wrong type is reported)."""
    return get_dict(obj, META, "", errs) or {}


def validate_object_meta(obj: Any, namespaced: bool, name_fn: NameFn, errs: Errs) -> None:
    """ValidateObjectMeta for `obj.metadata` (name generation has already happened)."""
    meta = metadata(obj, errs)
    generate_name = get_str(meta, "generateName", META, errs)
    if generate_name:
        for msg in name_fn(generate_name, True):
            errs.append(invalid("metadata.generateName", generate_name, msg))
    name = get_str(meta, "name", META, errs)
    if not name:
        if meta.get("name") is None or meta.get("name") == "":
            errs.append(required("metadata.name", "name or generateName is required"))
    else:
        for msg in name_fn(name, False):
            errs.append(invalid("metadata.name", name, msg))
    namespace = get_str(meta, "namespace", META, errs)
    if namespaced:
        if not namespace:
            errs.append(required("metadata.namespace"))
        else:
            for msg in name_is_dns_label(namespace, False):
                errs.append(invalid("metadata.namespace", namespace, msg))
    elif namespace:
        errs.append(forbidden("metadata.namespace", "not allowed on this type"))
    validate_nonnegative(get_int(meta, "generation", META, errs), "metadata.generation", errs)
    _validate_common(meta, errs)


def _validate_common(meta: dict[str, Any], errs: Errs) -> None:
    """The parts checked the same way on create and on update."""
    validate_labels(get_str_map(meta, "labels", META, errs), "metadata.labels", errs)
    validate_annotations(get_str_map(meta, "annotations", META, errs), "metadata.annotations",
                         errs)
    _validate_owner_references(meta, errs)
    _validate_finalizers(get_str_list(meta, "finalizers", META, errs), errs)
    validate_managed_fields(meta, errs)


def validate_managed_fields(meta: dict[str, Any], errs: Errs) -> None:
    """ValidateManagedFields: operation Apply or Update, fieldsType FieldsV1 when set, a valid
    manager name, a subresource of at most 256 bytes; the other fields are only type-checked
    (upstream's decoder does that)."""
    for _, entry, path in iter_dicts(meta, "managedFields", META, errs):
        operation = _string(entry, "operation", path, errs)
        if operation is not None and operation not in (APPLY, UPDATE):
            errs.append(invalid(child(path, "operation"), operation,
                                "must be `Apply` or `Update`"))
        fields_type = _string(entry, "fieldsType", path, errs)
        if fields_type and fields_type != FIELDS_V1:
            errs.append(invalid(child(path, "fieldsType"), fields_type, "must be `FieldsV1`"))
        manager = _string(entry, "manager", path, errs)
        if manager:
            validate_field_manager(manager, child(path, "manager"), errs)
        subresource = _string(entry, "subresource", path, errs)
        if subresource and len(subresource.encode()) > MAX_SUBRESOURCE_NAME_LENGTH:
            errs.append(too_long(child(path, "subresource"), MAX_SUBRESOURCE_NAME_LENGTH))
        get_str(entry, "apiVersion", path, errs)
        get_str(entry, "time", path, errs)
        get_dict(entry, "fieldsV1", path, errs)


def _string(obj: dict[str, Any], name: str, path: str, errs: Errs) -> str | None:
    """obj[name] as a string ("" when absent); None when of the wrong type (reported)."""
    value = obj.get(name)
    if value is not None and not isinstance(value, str):
        get_str(obj, name, path, errs)
        return None
    return value or ""


def validate_field_manager(manager: str, path: str, errs: Errs) -> None:
    """ValidateFieldManager: at most 128 bytes, printable characters only (positions are byte
    offsets, as Go's range over a string gives them)."""
    if manager.isascii() and manager.isprintable() and len(manager) <= FIELD_MANAGER_MAX_LENGTH:
        return  # the usual name: printable ASCII (Python's and Go's rules agree there)
    if len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        errs.append(too_long(path, FIELD_MANAGER_MAX_LENGTH))
    position = 0
    for char in manager:
        if not printable(char):
            errs.append(invalid(path, manager, f"invalid character U+{ord(char):04X} (at "
                                               f"position {position})"))
        position += len(char.encode())


def validate_annotations(annotations: dict[str, str], path: str, errs: Errs) -> None:
    """Keys are qualified names (case-insensitively); all keys and values together <= 256 KiB."""
    key = items_key(annotations)
    if key in _VALID_ANNOTATIONS:
        return
    before = len(errs)
    total = 0
    for k, v in annotations.items():
        for msg in naming.is_qualified_name(k.lower()):
            errs.append(invalid(path, k, msg))
        total += len(k.encode()) + len(v.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    if len(errs) == before:
        _VALID_ANNOTATIONS.add(key)


_VALID_ANNOTATIONS = ValidMemo(limit=4096)


def _group_version(api_version: str) -> tuple[str, str]:
    """schema.ParseGroupVersion, with unparseable input giving an empty version."""
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", api_version
    if len(parts) == 2:
        return parts[0], parts[1]
    return "", ""


def _validate_owner_references(meta: dict[str, Any], errs: Errs) -> None:
    """Upstream reports owner reference problems at `metadata.ownerReferences.<field>`, without
    an index, and allows one controller reference only."""
    path = "metadata.ownerReferences"
    refs = []
    first_controller = ""
    for _, ref, ref_path in iter_dicts(meta, "ownerReferences", META, errs):
        refs.append(ref)
        api_version = get_str(ref, "apiVersion", ref_path, errs)
        kind = get_str(ref, "kind", ref_path, errs)
        name = get_str(ref, "name", ref_path, errs)
        uid = get_str(ref, "uid", ref_path, errs)
        group, version = _group_version(api_version)
        if not version:
            errs.append(invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
        if not kind:
            errs.append(invalid(f"{path}.kind", kind, "must not be empty"))
        if not name:
            errs.append(invalid(f"{path}.name", name, "must not be empty"))
        if not uid:
            errs.append(invalid(f"{path}.uid", uid, "must not be empty"))
        if (group, version, kind) in BANNED_OWNERS:
            errs.append(invalid(path, ref, f"{group}/{version}, Kind={kind} is disallowed from "
                                           "being an owner"))
        if ref.get("controller") is True:
            current = f"{kind}/{name}"
            if first_controller:
                errs.append(invalid(path, meta.get("ownerReferences"),
                                    "Only one reference can have Controller set to true. Found "
                                    f'"true" in references for {first_controller} and {current}'))
            else:
                first_controller = current


def _validate_finalizers(finalizers: list[str], errs: Errs) -> None:
    path = "metadata.finalizers"
    for finalizer in finalizers:
        validate_qualified_name(finalizer, path, errs)
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errs.append(invalid(path, finalizers,
                            "finalizer orphan and foregroundDeletion cannot be both set"))
    for i, finalizer in enumerate(finalizers):
        validate_kube_finalizer_name(finalizer, index(path, i), errs)


def validate_kube_finalizer_name(value: str, path: str, errs: Errs) -> None:
    """A finalizer without a `/` must be one of Kubernetes' own."""
    if "/" not in value and value not in STANDARD_FINALIZERS:
        errs.append(invalid(path, value,
                            "name is neither a standard finalizer name nor is it fully qualified"))


def validate_object_meta_update(new: Any, old: Any, errs: Errs) -> None:
    """ValidateObjectMetaUpdate: identity fields never change, resourceVersion is required,
    generation never goes back, and a deleting object gains no finalizers."""
    meta = metadata(new, errs)
    old_meta = old.get(META) if isinstance(old, dict) else None
    if not isinstance(old_meta, dict):
        old_meta = {}
    new_finalizers = get_str_list(meta, "finalizers", META, errs)
    if old_meta.get("deletionTimestamp"):
        old_finalizers = old_meta.get("finalizers") or []
        extra = sorted(set(new_finalizers) - set(old_finalizers if isinstance(old_finalizers, list)
                                                 else []))
        if extra:
            quoted = ", ".join(f'"{f}"' for f in extra)
            errs.append(forbidden("metadata.finalizers",
                                  "no new finalizers can be added if the object is being "
                                  f"deleted, found new finalizers []string{{{quoted}}}"))
    resource_version = get_str(meta, "resourceVersion", META, errs)
    if not resource_version:
        errs.append(invalid("metadata.resourceVersion", resource_version,
                            "must be specified for an update"))
    generation = get_int(meta, "generation", META, errs) or 0
    old_generation = old_meta.get("generation")
    if isinstance(old_generation, int) and generation < old_generation:
        errs.append(invalid("metadata.generation", generation, "must not be decremented"))
    for name in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                 "deletionGracePeriodSeconds"):
        validate_immutable(meta.get(name), old_meta.get(name), child(META, name), errs)
    _validate_common(meta, errs)
