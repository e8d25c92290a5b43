"""Validation of the access-review kinds (SubjectAccessReview and its local and self forms).

Kubernetes piece: pkg/apis/authorization/validation (ValidateSubjectAccessReview,
ValidateSelfSubjectAccessReview, ValidateLocalSubjectAccessReview): exactly one of
resourceAttributes / nonResourceAttributes, a user or a group for the non-self kinds, metadata
empty (a LocalSubjectAccessReview may carry its namespace, which the resource attributes
must repeat). Before that, the JSON shapes the Go structs would refuse to decode into (a
string where a list belongs) are reported as `type_errors`, which the handler answers as
upstream's 400 "cannot be handled as". Pure functions over decoded JSON.
"""

from __future__ import annotations

from typing import Any

from .. import errors

_ATTRS = {
    "resourceAttributes": ("namespace", "verb", "group", "version", "resource",
                           "subresource", "name"),
    "nonResourceAttributes": ("path", "verb"),
}

#: a nil pointer as upstream's field.Error prints it (the string "null", quoted)
_NIL = errors.GoValue('"null"')


def type_errors(spec: Any, self_review: bool) -> str:
    """A description of the first field whose JSON type the spec struct cannot hold, or ""."""
    if spec is None:
        return ""
    if not isinstance(spec, dict):
        return "spec: expected an object"
    for key, names in _ATTRS.items():
        attrs = spec.get(key)
        if attrs is None:
            continue
        if not isinstance(attrs, dict):
            return f"spec.{key}: expected an object"
        for name in names:
            if not isinstance(attrs.get(name, ""), str):
                return f"spec.{key}.{name}: expected a string"
    if self_review:
        return ""
    for name in ("user", "uid"):
        if not isinstance(spec.get(name, ""), str):
            return f"spec.{name}: expected a string"
    groups = spec.get("groups") or []
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        return "spec.groups: expected a list of strings"
    extra = spec.get("extra") or {}
    if not isinstance(extra, dict) or not all(
            isinstance(v, list) and all(isinstance(s, str) for s in v) for v in extra.values()):
        return "spec.extra: expected a map of string lists"
    return ""


def _attribute_errors(spec: dict[str, Any]) -> list[errors.FieldError]:
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    errs = []
    if resource is not None and non_resource is not None:
        errs.append(errors.invalid("spec.nonResourceAttributes", non_resource,
                                   "cannot be specified in combination with resourceAttributes"))
    if resource is None and non_resource is None:
        errs.append(errors.invalid("spec.resourceAttributes", _NIL, "exactly one of "
                                   "nonResourceAttributes or resourceAttributes must be specified"))
    return errs


def _metadata_errors(metadata: Any, allow_namespace: bool) -> list[errors.FieldError]:
    md = dict(metadata or {})
    md.pop("managedFields", None)
    if md.get("creationTimestamp") is None:  # the zero time, as a Go client encodes it
        md.pop("creationTimestamp", None)
    if allow_namespace:
        md.pop("namespace", None)
    if not md:
        return []
    detail = "must be empty except for namespace" if allow_namespace else "must be empty"
    return [errors.invalid("metadata", md, detail)]


def validate_subject_access_review(obj: dict[str, Any]) -> list[errors.FieldError]:
    spec = obj.get("spec") or {}
    errs = _attribute_errors(spec)
    if not spec.get("user") and not spec.get("groups"):
        errs.append(errors.invalid("spec.user", spec.get("user", ""),
                                   "at least one of user or group must be specified"))
    return errs + _metadata_errors(obj.get("metadata"), allow_namespace=False)


def validate_self_subject_access_review(obj: dict[str, Any]) -> list[errors.FieldError]:
    return (_attribute_errors(obj.get("spec") or {})
            + _metadata_errors(obj.get("metadata"), allow_namespace=False))


def validate_local_subject_access_review(obj: dict[str, Any]) -> list[errors.FieldError]:
    spec = obj.get("spec") or {}
    errs = _attribute_errors(spec)
    if not spec.get("user") and not spec.get("groups"):
        errs.append(errors.invalid("spec.user", spec.get("user", ""),
                                   "at least one of user or group must be specified"))
    errs += _metadata_errors(obj.get("metadata"), allow_namespace=True)
    namespace = (obj.get("metadata") or {}).get("namespace", "")
    resource = spec.get("resourceAttributes")
    if resource is not None and resource.get("namespace", "") != namespace:
        errs.append(errors.invalid("spec.resourceAttributes.namespace",
                                   resource.get("namespace", ""), "must match metadata.namespace"))
    if spec.get("nonResourceAttributes") is not None:
        errs.append(errors.invalid("spec.nonResourceAttributes", spec["nonResourceAttributes"],
                                   "disallowed on this kind of request"))
    return errs
