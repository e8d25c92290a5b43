"""The scale subresource of a custom resource: an autoscaling/v1 Scale over three JSON paths.

Kubernetes piece: apiextensions-apiserver pkg/registry/customresource/etcd.go (ScaleREST,
scaleFromCustomResource, scaleUpdatedObjectInfo) and validator.go (ValidateScaleSpec,
ValidateScaleStatus). `subresources.scale` of a CRD version names where the replicas live
(`specReplicasPath`, `statusReplicasPath`, optional `labelSelectorPath`); the Scale is computed
from the stored object on every read and a write sets only the spec path, through the main
resource's update (so the schema, generation and admission see an ordinary update).

Errors are upstream's: a path holding a non-integer is `.spec.replicas accessor error: x is
of the type string, expected int64`; GET of an object without the spec path is 500 `the spec
replicas field ".spec.replicas" does not exist`; a write that leaves it unset is 400 `...
cannot be empty`. Pure functions only; the HTTP side is apiserver/subresources.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..api import errors
from ..api.patch import go_value
from ..apiextensions.jsonpath import simple_path
from .strategy import Obj

#: upstream's marker for "the spec replicas path was not set" (the smallest int32)
UNSET = -2147483648
_INT32_MAX = 2 ** 31 - 1


class ScaleError(ValueError):
    """A replicas or selector path holding a value of the wrong type."""


@dataclass(frozen=True)
class ScalePaths:
    """A CRD version's `subresources.scale`."""

    spec_replicas: str
    status_replicas: str
    label_selector: str = ""

    @classmethod
    def from_crd(cls, scale: Any) -> ScalePaths | None:
        if not isinstance(scale, dict):
            return None
        return cls(str(scale.get("specReplicasPath") or ""),
                   str(scale.get("statusReplicasPath") or ""),
                   str(scale.get("labelSelectorPath") or ""))


def _go_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    return "int64"


def _nested(obj: Obj, path: str, want: type, want_name: str) -> tuple[Any, bool]:
    """unstructured.NestedInt64/NestedString: (value, found); a wrong type is a ScaleError."""
    parts = simple_path(path)
    current: Any = obj
    for i, part in enumerate(parts):
        if not isinstance(current, dict):
            shown = "." + ".".join(parts[:i])
            raise ScaleError(f"{shown} accessor error: {go_value(current)} is of the type "
                             f"{_go_type(current)}, expected map[string]interface{{}}")
        if part not in current:
            return None, False
        current = current[part]
    if current is None:
        return None, False
    if not isinstance(current, want) or isinstance(current, bool):
        raise ScaleError(f"{'.' + '.'.join(parts)} accessor error: {go_value(current)} is of "
                         f"the type {_go_type(current)}, expected {want_name}")
    return current, True


def scale_of(obj: Obj, paths: ScalePaths) -> tuple[Obj, bool]:
    """The Scale of a custom resource and whether its spec replicas path is set."""
    spec_replicas, found = _nested(obj, paths.spec_replicas, int, "int64")
    status_replicas, _ = _nested(obj, paths.status_replicas, int, "int64")
    selector = ""
    if paths.label_selector:
        selector = _nested(obj, paths.label_selector, str, "string")[0] or ""
    md = obj.get("metadata") or {}
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {k: md[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                        "creationTimestamp") if k in md},
        "spec": {"replicas": spec_replicas or 0},
        "status": {"replicas": status_replicas or 0, "selector": selector},
    }, found


def get_scale(obj: Obj, paths: ScalePaths) -> Obj:
    """ScaleREST.Get: 500 when a path holds the wrong type or the spec path is unset."""
    try:
        scale, found = scale_of(obj, paths)
    except ScaleError as exc:
        raise errors.internal_error(str(exc)) from None
    if not found:
        raise errors.internal_error(
            f'the spec replicas field "{paths.spec_replicas}" does not exist')
    return scale


def current_scale(obj: Obj, paths: ScalePaths) -> Obj:
    """The Scale an update starts from: UNSET replicas when the spec path is unset."""
    try:
        scale, found = scale_of(obj, paths)
    except ScaleError as exc:
        raise errors.internal_error(str(exc)) from None
    if not found:
        scale["spec"]["replicas"] = UNSET
    return scale


def with_replicas(obj: Obj, paths: ScalePaths, replicas: Any) -> Obj:
    """The custom resource with `replicas` at the spec path (intermediate maps created, as
    unstructured.SetNestedField); 400 when the write left the field unset."""
    if replicas == UNSET:
        raise errors.bad_request(
            f'the spec replicas field "{paths.spec_replicas}" cannot be empty')
    new = dict(obj)
    parts = simple_path(paths.spec_replicas)
    container = new
    for part in parts[:-1]:
        child = container.get(part)
        child = dict(child) if isinstance(child, dict) else {}
        container[part] = child
        container = child
    container[parts[-1]] = replicas
    return new


def scale_errors(obj: Obj, paths: ScalePaths, status: bool) -> list[errors.FieldError]:
    """validator.ValidateScaleSpec (status=False) or ValidateScaleStatus (status=True)."""
    out: list[errors.FieldError] = []
    checks = [(paths.status_replicas, True)] if status else [(paths.spec_replicas, True)]
    if status and paths.label_selector:
        checks.append((paths.label_selector, False))
    for path, replicas in checks:
        try:
            value, _ = _nested(obj, path, int if replicas else str,
                               "int64" if replicas else "string")
        except ScaleError as exc:
            out.append(errors.invalid(path, 0 if replicas else "", str(exc)))
            continue
        if replicas and value is not None:
            if value < 0:
                out.append(errors.invalid(path, value, "should be a non-negative integer"))
            elif value > _INT32_MAX:
                out.append(errors.invalid(path, value,
                                          f"should be less than or equal to {_INT32_MAX}"))
    return out
