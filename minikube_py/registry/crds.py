"""CustomResourceDefinitions: the CRD resource itself and the Strategy made from one.

Kubernetes pieces: k8s.io/apiextensions-apiserver's pkg/registry/customresourcedefinition
(strategy.go: cluster scope, status subresource, PrepareForCreate; etcd.go: a delete marks the
CRD terminating with the `customresourcecleanup.apiextensions.k8s.io` finalizer),
pkg/apis/apiextensions/validation (the basic name/scope/version rules; structural schemas,
CEL and conversion are not checked yet) and pkg/apiserver/customresource_handler.go's
per-version storage: every served version of an established CRD is served by the SAME generic
registry, configured by a Strategy computed here (no per-CRD code). Pure functions only: the
wiring that starts serving is apiserver/crd_controller.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import offload
from ..api import errors, meta
from ..api.naming import is_dns1035_label, is_dns1123_subdomain
from ..api.validation import CLUSTER_SCOPED, CUSTOM_RESOURCE, CUSTOM_RESOURCE_CLUSTER
from ..apiextensions import cel_crd_checks, cel_validation
from ..apiextensions import versions as crd_versions
from ..apiextensions.cache import schema_for
from ..apiextensions.conversion import (
    Converter,
    Post,
    converter_for,
    deprecation_warning,
    storage_version,
)
from ..apiextensions.jsonpath import JSONPath, JSONPathError, parse
from ..apiextensions.listtypes import apply_struct
from ..apiextensions.printer import CustomResourceTable
from ..apiextensions.schema import Node, prune_and_default, unknown_fields, validate
from .crd_scale import ScalePaths, scale_errors
from .strategy import ALL_BUT_METADATA, Obj, Strategy, SubresourceSpec, field_text

GROUP = "apiextensions.k8s.io"
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_SCOPES = ("Cluster", "Namespaced")
_STATUS = SubresourceSpec("status", ("get", "patch", "update"))
_SCALE = SubresourceSpec("scale", ("get", "patch", "update"), kind="Scale",
                         group="autoscaling", version="v1")


def _names(spec: dict[str, Any]) -> dict[str, Any]:
    names = spec.get("names")
    return names if isinstance(names, dict) else {}


def default_crd(crd: Obj) -> None:
    """Upstream SetDefaults_CustomResourceDefinition: singular and listKind from kind."""
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str) and names["kind"]:
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    for version in spec.get("versions") or ():
        if isinstance(version, dict):
            version.setdefault("served", True)
            version.setdefault("storage", False)
    spec.setdefault("conversion", {"strategy": "None"})


def validate_crd(crd: Obj) -> list[errors.FieldError]:
    """The basic rules of upstream ValidateCustomResourceDefinition (names, group, scope,
    versions); schemas are stored as sent."""
    errs: list[errors.FieldError] = []
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return [errors.required("spec", "")]
    group = spec.get("group")
    names = _names(spec)
    plural = names.get("plural")
    name = (crd.get("metadata") or {}).get("name", "")
    if name != f"{plural}.{group}":
        errs.append(errors.invalid("metadata.name", name,
                                   'must be spec.names.plural+"."+spec.group'))
    if not group:
        errs.append(errors.required("spec.group", ""))
    elif not isinstance(group, str) or is_dns1123_subdomain(group):
        errs.append(errors.invalid("spec.group", group, "; ".join(is_dns1123_subdomain(str(group)))))
    elif "." not in group:
        errs.append(errors.invalid("spec.group", group, "should be a domain with at least one dot"))
    scope = spec.get("scope")
    if not scope:
        errs.append(errors.required("spec.scope", ""))
    elif scope not in _SCOPES:
        errs.append(errors.not_supported("spec.scope", scope, _SCOPES))
    for field in ("plural", "singular"):
        value = names.get(field)
        if not value and field == "plural":
            errs.append(errors.required("spec.names.plural", ""))
        elif value and (not isinstance(value, str) or is_dns1035_label(value)):
            errs.append(errors.invalid(f"spec.names.{field}", value,
                                       "; ".join(is_dns1035_label(str(value)))))
    for field in ("kind", "listKind"):
        value = names.get(field)
        if not value:
            errs.append(errors.required(f"spec.names.{field}", ""))
        elif not isinstance(value, str) or is_dns1035_label(value.lower()):
            errs.append(errors.invalid(f"spec.names.{field}", value,
                                       "may have mixed case, but should otherwise match: "
                                       "[a-z]([-a-z0-9]*[a-z0-9])?"))
    errs += _validate_versions(spec.get("versions"))
    errs += cel_crd_checks.version_errors(spec.get("versions"))
    return errs


def _validate_versions(versions: Any) -> list[errors.FieldError]:
    if not isinstance(versions, list) or not versions:
        return [errors.invalid("spec.versions", versions or None, "must have exactly one version "
                                                                  "marked as storage version")]
    errs: list[errors.FieldError] = []
    seen: set[str] = set()
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        name = version.get("name") if isinstance(version, dict) else None
        if not name:
            errs.append(errors.required(f"{path}.name", ""))
        elif not isinstance(name, str) or is_dns1035_label(name):
            errs.append(errors.invalid(f"{path}.name", name, "; ".join(is_dns1035_label(str(name)))))
        elif name in seen:
            errs.append(errors.duplicate(f"{path}.name", name))
        else:
            seen.add(name)
        if isinstance(version, dict):
            errs += _validate_serving(version, path)
    storage = [v for v in versions if isinstance(v, dict) and v.get("storage") is True]
    if len(storage) != 1:
        errs.append(errors.invalid("spec.versions", versions,
                                   "must have exactly one version marked as storage version"))
    if not any(isinstance(v, dict) and v.get("served") for v in versions):
        errs.append(errors.invalid("spec.versions", versions, "must have at least one version "
                                                              "marked as served"))
    return errs


_COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
_COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")
_MAX_SELECTABLE = 8


def _simple_json_path(value: Any, path: str) -> list[errors.FieldError]:
    """Upstream validateSimpleJSONPath."""
    if not isinstance(value, str) or not value:
        return [errors.invalid(path, value if isinstance(value, str) else "", "must not be empty")]
    if not value.startswith("."):
        return [errors.invalid(path, value, "must be a simple json path starting with .")]
    return []


def _validate_serving(version: dict[str, Any], path: str) -> list[errors.FieldError]:
    """What one version declares about how it is served (upstream
    ValidateCustomResourceColumnDefinition, ValidateCustomResourceDefinitionSubresources'
    scale paths and the selectableFields rules)."""
    errs: list[errors.FieldError] = []
    for j, col in enumerate(version.get("additionalPrinterColumns") or ()):
        where = f"{path}.additionalPrinterColumns[{j}]"
        col = col if isinstance(col, dict) else {}
        if not col.get("name"):
            errs.append(errors.required(f"{where}.name", ""))
        kinds = ",".join(_COLUMN_TYPES)
        if not col.get("type"):
            errs.append(errors.required(f"{where}.type", f"must be one of {kinds}"))
        elif col["type"] not in _COLUMN_TYPES:
            errs.append(errors.invalid(f"{where}.type", col["type"], f"must be one of {kinds}"))
        if col.get("format") and col["format"] not in _COLUMN_FORMATS:
            errs.append(errors.invalid(f"{where}.format", col["format"],
                                       f"must be one of {','.join(_COLUMN_FORMATS)}"))
        if not col.get("jsonPath"):
            errs.append(errors.required(f"{where}.JSONPath", ""))
        else:
            bad = _simple_json_path(col["jsonPath"], f"{where}.jsonPath")
            errs += bad
            if not bad:
                try:
                    parse(col["jsonPath"])
                except JSONPathError:
                    errs.append(errors.invalid(f"{where}.jsonPath", col["jsonPath"],
                                               "must be a valid JSON path"))
    scale = (version.get("subresources") or {}).get("scale")
    if isinstance(scale, dict):
        where = f"{path}.subresources.scale"
        for key, under, message in (
                ("specReplicasPath", (".spec.",), "should be a json path under .spec"),
                ("statusReplicasPath", (".status.",), "should be a json path under .status"),
                ("labelSelectorPath", (".spec.", ".status."),
                 "should be a json path under either .spec or .status")):
            value = scale.get(key)
            if not value:
                if key != "labelSelectorPath":
                    errs.append(errors.required(f"{where}.{key}", ""))
                continue
            bad = _simple_json_path(value, f"{where}.{key}")
            if not bad and not str(value).startswith(under):
                bad = [errors.invalid(f"{where}.{key}", value, message)]
            errs += bad
    selectable = version.get("selectableFields") or ()
    seen: set[str] = set()
    for j, field in enumerate(selectable):
        where = f"{path}.selectableFields[{j}].jsonPath"
        value = field.get("jsonPath") if isinstance(field, dict) else None
        if not value:
            errs.append(errors.required(where, ""))
            continue
        errs += _simple_json_path(value, where)
        if value in seen:
            errs.append(errors.duplicate(where, value))
        seen.add(value)
    if len(selectable) > _MAX_SELECTABLE:
        errs.append(errors.FieldError(errors.FieldErrorType.TOO_MANY, f"{path}.selectableFields",
                                      f"{len(selectable)}: must have at most {_MAX_SELECTABLE} "
                                      "items"))
    return errs


def _check(registry: Any, crd: Obj) -> None:
    default_crd(crd)
    if isinstance(crd.get("spec"), dict):
        crd_versions.default_conversion(crd["spec"])
    errs = validate_crd(crd)
    if isinstance(crd.get("spec"), dict):  # conversion and storedVersions (apiextensions/versions)
        errs += crd_versions.validate_spec(crd["spec"]) + crd_versions.validate_stored_versions(crd)
    if errs:
        raise errors.invalid_object("CustomResourceDefinition", crd["metadata"].get("name", ""),
                                    errs, GROUP)


async def _prepare_create(registry: Any, crd: Obj) -> None:
    """Upstream PrepareForCreate: no status from the client (the establishing controller
    writes it), then the checks."""
    crd["status"] = {"conditions": [], "acceptedNames": {"kind": "", "plural": ""},
                     "storedVersions": []}
    crd_versions.add_storage_version(crd)
    _check(registry, crd)


async def _prepare_update(registry: Any, new: Obj, old: Obj) -> None:
    """The same checks on every main update (there is no finish step to hand back)."""
    if new.get("spec") is not None:
        crd_versions.add_storage_version(new)
        _check(registry, new)


def mark_terminating(crd: Obj) -> Obj | None:
    """Upstream's CRD Delete: the first delete sets deletionTimestamp, the cleanup finalizer and
    a Terminating condition; once the finalizer is gone, None = delete for real."""
    md = crd["metadata"]
    if not md.get("deletionTimestamp"):
        md["deletionTimestamp"] = meta.now_rfc3339()
        md["deletionGracePeriodSeconds"] = 0
        finalizers = md.setdefault("finalizers", [])
        if CLEANUP_FINALIZER not in finalizers:
            finalizers.append(CLEANUP_FINALIZER)
        set_condition(crd, "Terminating", "True", "InstanceDeletionInProgress",
                      "CustomResource deletion is in progress")
        return crd
    return crd if md.get("finalizers") else None


CRDS = Strategy(
    group=GROUP, version="v1", resource="customresourcedefinitions",
    kind="CustomResourceDefinition", namespaced=False,
    key_root="apiextensions.k8s.io/customresourcedefinitions", short_names=("crd", "crds"),
    categories=("api-extensions",), subresources=(_STATUS,), has_status=True,
    prepare_create=_prepare_create, prepare_update=_prepare_update,
    delete_override=mark_terminating, validation=CLUSTER_SCOPED,
)


def set_condition(crd: Obj, type_: str, status: str, reason: str, message: str) -> bool:
    """Set one status condition; True when it changed (lastTransitionTime moves only then)."""
    conditions = crd.setdefault("status", {}).setdefault("conditions", [])
    for cond in conditions:
        if cond.get("type") == type_:
            if (cond.get("status"), cond.get("reason"), cond.get("message")) == (status, reason,
                                                                                   message):
                return False
            if cond.get("status") != status:
                cond["lastTransitionTime"] = meta.now_rfc3339()
            cond.update(status=status, reason=reason, message=message)
            return True
    conditions.append({"type": type_, "status": status, "lastTransitionTime": meta.now_rfc3339(),
                       "reason": reason, "message": message})
    return True


def name_conflicts(crd: Obj, taken: dict[str, str]) -> str:
    """Upstream's naming controller, reduced: why the CRD's plural/singular/shortNames/kind
    clash with another resource of its group (`taken`: name -> owning CRD), or ""."""
    names = _names(crd.get("spec") or {})
    me = crd["metadata"]["name"]
    for field in ("plural", "singular", "kind", "listKind"):
        owner = taken.get(str(names.get(field, "")).lower())
        if owner and owner != me:
            return f'"{names[field]}" is already in use'
    for short in names.get("shortNames") or ():
        owner = taken.get(str(short).lower())
        if owner and owner != me:
            return f'"{short}" is already in use'
    return ""


def claimed_names(crd: Obj) -> list[str]:
    names = _names(crd.get("spec") or {})
    out = [names.get(f) for f in ("plural", "singular", "kind", "listKind")]
    out += list(names.get("shortNames") or ())
    return [str(n).lower() for n in out if n]


def strategies_for(crd: Obj, post_for: Callable[[Obj], Post] | None = None) -> list[Strategy]:
    """One Strategy per served version: keys `/registry/<group>/<plural>/...` (all versions share
    them: objects are stored in the storage version and converted by apiextensions/conversion.py,
    `post_for(clientConfig)` calling a conversion webhook), `status` and `scale` when the version
    declares them, its printer columns, selectable fields and list types (upstream
    crdHandler.getOrCreateServingInfoFor)."""
    spec = crd["spec"]
    names = _names(spec)
    converter = converter_for(crd, post_for) if crd_versions.needs_conversion(crd) else None
    out = []
    for version in spec.get("versions") or ():
        if not version.get("served"):
            continue
        out.append(_version_strategy(crd, spec, names, version, converter))
    # the storage version first: whoever takes a CRD's first registry (quota's lookup, the
    # finalizer) reads without a conversion webhook; discovery sorts versions on its own
    storage = storage_version(spec)
    out.sort(key=lambda strategy: strategy.version != storage)
    return out


def _version_strategy(crd: Obj, spec: dict[str, Any], names: dict[str, Any],
                      version: dict[str, Any], converter: Converter | None) -> Strategy:
    subresources = version.get("subresources") or {}
    has_status = "status" in subresources
    scale = ScalePaths.from_crd(subresources.get("scale"))
    namespaced = spec.get("scope") == "Namespaced"
    schema = schema_for(crd, version)
    raw_schema = (version.get("schema") or {}).get("openAPIV3Schema")
    selectable = _selectable_paths(version)
    rules = _Rules(schema, names["kind"], spec["group"], has_status, scale)
    return Strategy(
        group=spec["group"], version=version["name"], resource=names["plural"],
        kind=names["kind"], namespaced=namespaced,
        key_root=f"{spec['group']}/{names['plural']}",
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        subresources=(_STATUS,) * has_status + (_SCALE,) * (scale is not None),
        has_status=has_status, spec_fields=ALL_BUT_METADATA,
        singular=names.get("singular", ""), custom=True,
        validation=CUSTOM_RESOURCE if namespaced else CUSTOM_RESOURCE_CLUSTER,
        selectable_fields=tuple(selectable), field_attrs=_field_attrs(selectable),
        prepare_create=_schema_create(rules),
        prepare_update=_schema_update(rules),
        prepare_status=_schema_status(rules),
        table_convertor=CustomResourceTable(version.get("additionalPrinterColumns")),
        apply_struct=apply_struct(raw_schema),
        unknown_fields=lambda obj: unknown_fields(obj, schema),
        scale=scale,
        conversion=converter,
        deprecation_warning=deprecation_warning(spec["group"], names["kind"], version),
    )


def _selectable_paths(version: dict[str, Any]) -> dict[str, JSONPath]:
    """spec.versions[].selectableFields: the field-selector label (the jsonPath without its
    leading dot) and the path it reads."""
    out: dict[str, JSONPath] = {}
    for field in version.get("selectableFields") or ():
        path = field.get("jsonPath") if isinstance(field, dict) else None
        if isinstance(path, str) and path.startswith("."):
            try:
                out[path[1:]] = parse(path)
            except JSONPathError:
                continue
    return out


def _field_attrs(selectable: dict[str, JSONPath]) -> Any:
    """Upstream customresource strategy's GetAttrs with selectableFieldSet: metadata.name and
    metadata.namespace, then each selectable field's value as text ("" when absent)."""
    def attrs(obj: Obj) -> dict[str, str]:
        md = obj.get("metadata") or {}
        out = {"metadata.name": md.get("name", ""), "metadata.namespace": md.get("namespace", "")}
        for label, path in selectable.items():
            found = path.find(obj)
            value = found[0] if len(found) == 1 else None
            out[label] = "" if isinstance(value, (dict, list)) else field_text(value)
        return out
    return attrs


class _Rules:
    """What one CRD version checks on a write (upstream customResourceStrategy +
    customResourceValidator): its structural schema, and its scale paths."""

    def __init__(self, schema: Node, kind: str, group: str, has_status: bool,
                 scale: ScalePaths | None) -> None:
        self.schema, self.kind, self.group = schema, kind, group
        self.has_status, self.scale = has_status, scale

    def errors(self, obj: Obj, old: Obj | None = None,
               status: bool = False) -> list[errors.FieldError]:
        """Upstream's order on a write: prune unknown fields, apply defaults, validate, CEL
        rules (`old`: the stored object on an update), and the scale paths
        (ValidateScaleSpec on the main resource, ValidateScaleStatus on /status)."""
        errs = _schema_errors(self.schema, obj, old)
        if self.scale is not None:
            errs += scale_errors(obj, self.scale, status)
        return errs

    def raise_invalid(self, obj: Obj, errs: list[errors.FieldError]) -> None:
        if errs:
            md = obj.get("metadata") or {}
            raise errors.invalid_object(self.kind, md.get("name") or md.get("generateName", ""),
                                        errs, self.group)


def _schema_errors(schema: Node, obj: Obj, old: Obj | None = None) -> list[errors.FieldError]:
    """Upstream's order on a write: prune unknown fields, apply defaults, validate, then the
    x-kubernetes-validations rules (`old`: the stored object on an update)."""
    prune_and_default(obj, schema)
    errs = validate(obj, schema)
    return errs + cel_validation.validate(obj, old, schema, errs)


def _schema_create(rules: _Rules) -> Any:
    """The custom resource's create hook (upstream PrepareForCreate + Validate): status is
    dropped when the status subresource owns it, then its version's structural schema (a
    walk on the worker: a big object would hold the event loop)."""
    async def prepare_create(registry: Any, obj: Obj) -> None:
        if rules.has_status:
            obj.pop("status", None)
        rules.raise_invalid(obj, await offload.run(rules.errors, obj))
    return prepare_create


def _schema_update(rules: _Rules) -> Any:
    """The same schema on every main-resource update and patch (status and generation were
    handled by the generic registry: ALL_BUT_METADATA, has_status)."""
    async def prepare_update(registry: Any, new: Obj, old: Obj) -> None:
        rules.raise_invalid(new, await offload.run(rules.errors, new, old))
    return prepare_update


def _schema_status(rules: _Rules) -> Any:
    """A /status write: the whole object is pruned, defaulted and validated again, as
    upstream statusStrategy.ValidateUpdate (ValidateStatusUpdate) does."""
    async def prepare_status(registry: Any, new: Obj, old: Obj) -> None:
        rules.raise_invalid(new, await offload.run(rules.errors, new, old, True))
    return prepare_status
