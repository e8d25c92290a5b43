"""A CRD version's openAPIV3Schema, compiled once, and the three walks upstream makes over a
custom resource with it: pruning, defaulting and validation.

Kubernetes pieces: apiextensions-apiserver pkg/apiserver/schema (NewStructural, pruning.Prune,
defaulting.Default: `default` values, null dropping for non-nullable fields with a default),
pkg/apiserver/validation (kube-openapi's validator; messages are go-openapi's
`<path> in body must be of type integer: "string"`, converted to field errors as
kubeOpenAPIResultToFieldErrors does). The root and embedded resources
(x-kubernetes-embedded-resource) keep apiVersion/kind/metadata; their metadata is pruned to
ObjectMeta's fields (upstream objectmeta.Coerce), and an embedded resource is validated as one
(objectmeta.validateEmbeddedResource). `unknown_fields` reports what pruning drops, for
fieldValidation.

`pattern` is RE2 (google-re2), as upstream's Go regexp is: linear-time matching, so a CRD
author's `(a+)+$` cannot hold the process on a client's value (Python's `re` backtracks, and
holds the GIL while it does, even on the worker thread), and the syntax is the one upstream
accepts (no lookaround or backreferences).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import orjson
import re2

from ..api import errors
from ..api.errors import FieldError, FieldErrorType
from ..api.naming import is_dns1035_label
from ..api.validation.common import validate_labels
from ..api.validation.meta import validate_annotations
from ..api.validation.typed import type_name
from . import fast_check
from .cel_rules import compile_rules
from .cel_values import needs_escape
from .fast_check import format_ok as _format_ok
from .fast_check import matches as _matches

#: compile errors are answered (the pattern then matches nothing), not logged to stderr
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False

_TYPES = ("object", "array", "string", "integer", "number", "boolean")


@dataclass
class Node:
    """One compiled schema node (upstream schema.Structural, with its value validations)."""

    type: str = ""
    properties: dict[str, Node] = field(default_factory=dict)
    additional: Node | None = None  # additionalProperties: a map's value schema
    items: Node | None = None
    required: tuple[str, ...] = ()
    enum: tuple[Any, ...] | None = None
    pattern: Any = None  # a compiled RE2 pattern
    pattern_text: str = ""
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    nullable: bool = False
    format: str = ""
    int_or_string: bool = False
    preserve_unknown: bool = False
    embedded: bool = False
    has_default: bool = False
    default: Any = None
    # x-kubernetes-validations (cel_rules.py): this node's rules, whether any node below has
    # some (the walk skips rule-free subtrees), how listType=map items correlate with old
    # ones, and whether CEL sees a value of this subtree differently from its JSON
    rules: tuple[Any, ...] = ()
    has_rules: bool = False
    list_map_keys: tuple[str, ...] = ()
    converts: bool = False
    #: the compiled yes/no check of `validate` (fast_check.py), built on first use
    checker: Any = field(default=None, compare=False, repr=False)


def compile_schema(raw: Any) -> Node:
    """The tree of an openAPIV3Schema (a missing schema accepts and keeps everything)."""
    if not isinstance(raw, dict):
        return Node(preserve_unknown=True)
    node = Node(
        type=raw.get("type") if raw.get("type") in _TYPES else "",
        required=tuple(r for r in raw.get("required") or () if isinstance(r, str)),
        nullable=raw.get("nullable") is True,
        format=raw.get("format") if isinstance(raw.get("format"), str) else "",
        int_or_string=raw.get("x-kubernetes-int-or-string") is True,
        preserve_unknown=raw.get("x-kubernetes-preserve-unknown-fields") is True,
        embedded=raw.get("x-kubernetes-embedded-resource") is True,
        exclusive_minimum=raw.get("exclusiveMinimum") is True,
        exclusive_maximum=raw.get("exclusiveMaximum") is True,
    )
    props = raw.get("properties")
    if isinstance(props, dict):
        node.properties = {k: compile_schema(v) for k, v in props.items()}
    extra = raw.get("additionalProperties")
    if isinstance(extra, dict):
        node.additional = compile_schema(extra)
    elif extra is True:
        node.additional = Node(preserve_unknown=True)
    if isinstance(raw.get("items"), dict):
        node.items = compile_schema(raw["items"])
    if isinstance(raw.get("enum"), list):
        node.enum = tuple(raw["enum"])
    if isinstance(raw.get("pattern"), str):
        node.pattern_text = raw["pattern"]
        try:
            node.pattern = re2.compile(raw["pattern"], _RE2_OPTIONS)
        except re2.error:
            node.pattern = None
    for attr, key in (("minimum", "minimum"), ("maximum", "maximum")):
        value = raw.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            setattr(node, attr, value)
    for attr, key in (("min_length", "minLength"), ("max_length", "maxLength"),
                      ("min_items", "minItems"), ("max_items", "maxItems"),
                      ("min_properties", "minProperties"), ("max_properties", "maxProperties")):
        value = raw.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            setattr(node, attr, value)
    if "default" in raw:
        node.has_default, node.default = True, raw["default"]
    if raw.get("x-kubernetes-list-type") == "map" and isinstance(
            raw.get("x-kubernetes-list-map-keys"), list):
        node.list_map_keys = tuple(k for k in raw["x-kubernetes-list-map-keys"]
                                   if isinstance(k, str))
    node.rules = compile_rules(raw, node)
    children = [*node.properties.values(), *(n for n in (node.items, node.additional) if n)]
    node.has_rules = bool(node.rules) or any(c.has_rules for c in children)
    node.converts = (node.type == "number" or node.format in ("date-time", "date", "byte")
                     or any(c.converts for c in children)
                     or any(needs_escape(k) for k in node.properties))
    return node


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _copy(value: Any) -> Any:
    return orjson.loads(orjson.dumps(value))


# -- pruning and defaulting (upstream pruning.Prune, then defaulting.Default) -----------------
_OBJECT_META_KEYS = frozenset(("apiVersion", "kind", "metadata"))
#: ObjectMeta's fields: the metadata of a custom resource (and of an embedded resource) is
#: pruned to them, as upstream's objectmeta.Coerce does when it decodes one
_META_FIELDS = frozenset((
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields"))


def _unknown_meta(obj: dict) -> list[str]:
    md = obj.get("metadata")
    return [key for key in md if key not in _META_FIELDS] if isinstance(md, dict) else []


def _prunes(node: Node, root: bool) -> bool:
    """Whether pruning looks at the keys of an object under `node`."""
    return (node.type in ("", "object") or node.embedded or root) and bool(
        node.properties or node.additional is not None or not node.preserve_unknown)


def _dropped(node: Node, key: str, root: bool) -> bool:
    """Whether pruning drops `key` of an object under `node` (one without a schema node)."""
    return not node.preserve_unknown and not ((root or node.embedded) and key in _OBJECT_META_KEYS)


def prune_and_default(obj: Any, node: Node, root: bool = True, *, defaults: bool = True) -> None:
    """Drop the fields the schema does not know (unless it preserves them) and fill `default`s,
    in place. At the root and in embedded resources apiVersion/kind/metadata are kept, and
    metadata keeps ObjectMeta's fields only. `defaults=False` only prunes (upstream's
    schemaCoercingConverter after a conversion)."""
    if isinstance(obj, dict):
        if root or node.embedded:
            for key in _unknown_meta(obj):
                del obj["metadata"][key]
        if node.type in ("", "object") or node.embedded or root:
            if _prunes(node, root):
                for key in list(obj):
                    sub = node.properties.get(key) or node.additional
                    if sub is None:
                        if _dropped(node, key, root):
                            del obj[key]
                        continue
                    if obj[key] is None and not sub.nullable and sub.has_default:
                        del obj[key]  # upstream drops a null it would otherwise default
                        continue
                    prune_and_default(obj[key], sub, False, defaults=defaults)
            for key, sub in node.properties.items():
                if defaults and sub.has_default and key not in obj:
                    obj[key] = _copy(sub.default)
                    prune_and_default(obj[key], sub, False)
    elif isinstance(obj, list) and node.items is not None:
        for item in obj:
            prune_and_default(item, node.items, False, defaults=defaults)


def unknown_fields(obj: Any, node: Node) -> list[str]:
    """The paths of the fields pruning would drop from `obj` (upstream PruneWithOptions'
    ReturnPruned: what fieldValidation reports), found without copying or changing it."""
    out: list[str] = []
    _unknown(obj, node, True, "", out)
    return out


def _unknown(obj: Any, node: Node, root: bool, path: str, out: list[str]) -> None:
    if isinstance(obj, dict):
        if root or node.embedded:
            out.extend(_child(_child(path, "metadata"), key) for key in _unknown_meta(obj))
        if not _prunes(node, root):
            return
        for key, value in obj.items():
            sub = node.properties.get(key) or node.additional
            if sub is None:
                if _dropped(node, key, root):
                    out.append(f"{path}.{key}" if path else key)
            elif isinstance(value, (dict, list)):
                _unknown(value, sub, False, f"{path}.{key}" if path else key, out)
    elif isinstance(obj, list) and node.items is not None:
        for i, item in enumerate(obj):
            if isinstance(item, (dict, list)):
                _unknown(item, node.items, False, f"{path}[{i}]", out)


# -- validation (kube-openapi validate + kubeOpenAPIResultToFieldErrors) ----------------------
#: exact Python types of decoded JSON -> their JSON type (bool before int: it is one)
_EXACT_TYPES = {str: "string", bool: "boolean", int: "integer", dict: "object", list: "array"}


def _type_of(value: Any) -> str:
    """The JSON type name, with kube-openapi's "integer" for whole numbers."""
    name = _EXACT_TYPES.get(type(value))
    if name is not None:  # the common case, one dict lookup
        return name
    name = type_name(value)
    if name == "number" and (isinstance(value, int) or value.is_integer()):
        return "integer"
    return name


def _type_ok(node: Node, value: Any) -> bool:
    actual = _type_of(value)
    if node.int_or_string:
        return actual in ("integer", "string")
    if not node.type:
        return True
    if node.type == "number":
        return actual in ("integer", "number")
    return actual == node.type


def _type_error(path: str, node: Node, value: Any) -> FieldError:
    actual = _type_of(value)
    want = "integer,string" if node.int_or_string else node.type
    return FieldError(FieldErrorType.TYPE_INVALID, path,
                      f'{path} in body must be of type {want}: "{actual}"', actual)


def validate(obj: Any, node: Node, path: str = "") -> list[FieldError]:
    """Every schema violation of `obj`, with upstream's paths and messages.

    Almost every object a client writes is valid, so the node's compiled yes/no check
    (fast_check.py: closures with only the checks the schema declares, no paths built) runs
    first; only when it says no does the walk below run to name every error."""
    checker = node.checker
    if checker is None:
        checker = node.checker = fast_check.compile_checker(node, root=not path)
    if checker(obj):
        return []
    errs: list[FieldError] = []
    _validate(obj, node, path, errs)
    return errs


def _validate(value: Any, node: Node, path: str, errs: list[FieldError]) -> None:
    if value is None:
        if not node.nullable and (node.type or node.int_or_string):
            errs.append(_type_error(path, node, value))
        return
    if not _type_ok(node, value):
        errs.append(_type_error(path, node, value))
        return
    if node.enum is not None and value not in node.enum:
        errs.append(errors.not_supported(path, value, [
            v if isinstance(v, str) else orjson.dumps(v).decode() for v in node.enum]))
    if node.format and not _format_ok(node.format, value):
        errs.append(errors.invalid(path, value, f"{path} in body must be of type {node.format}: "
                                                f"{orjson.dumps(value).decode()}"))
    if isinstance(value, str):
        _validate_string(value, node, path, errs)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _validate_number(value, node, path, errs)
    elif isinstance(value, list):
        _validate_array(value, node, path, errs)
    elif isinstance(value, dict):
        _validate_object(value, node, path, errs)


def _validate_string(value: str, node: Node, path: str, errs: list[FieldError]) -> None:
    if node.max_length is not None and len(value) > node.max_length:
        errs.append(FieldError(FieldErrorType.TOO_LONG, path,
                               f"may not be longer than {node.max_length}", value))
    if node.min_length is not None and len(value) < node.min_length:
        errs.append(errors.invalid(path, value, f"{path} in body should be at least "
                                                f"{node.min_length} chars long"))
    if node.pattern_text and (node.pattern is None or not _matches(node.pattern, value)):
        errs.append(errors.invalid(path, value,
                                   f"{path} in body should match '{node.pattern_text}'"))


def _num(limit: float) -> str:
    return str(int(limit)) if isinstance(limit, float) and limit.is_integer() else str(limit)


def _validate_number(value: float, node: Node, path: str, errs: list[FieldError]) -> None:
    if node.minimum is not None:
        low = node.minimum
        if value < low or (node.exclusive_minimum and value == low):
            rel = "greater than" if node.exclusive_minimum else "greater than or equal to"
            errs.append(errors.invalid(path, value, f"{path} in body should be {rel} {_num(low)}"))
    if node.maximum is not None:
        high = node.maximum
        if value > high or (node.exclusive_maximum and value == high):
            rel = "less than" if node.exclusive_maximum else "less than or equal to"
            errs.append(errors.invalid(path, value, f"{path} in body should be {rel} {_num(high)}"))
    if isinstance(value, float) and not math.isfinite(value):
        errs.append(errors.invalid(path, str(value), "must be a finite number"))


def _too_many(path: str, actual: int, limit: int, what: str) -> FieldError:
    # upstream field.TooMany prints the count: `Too many: 3: must have at most 2 items`
    return FieldError(FieldErrorType.TOO_MANY, path, f"{actual}: must have at most {limit} {what}")


def _too_few(path: str, actual: int, limit: int | None, what: str) -> FieldError | None:
    if limit is None or actual >= limit:
        return None
    return errors.invalid(path, actual, f"{path} in body should have at least {limit} {what}")


def _validate_array(value: list, node: Node, path: str, errs: list[FieldError]) -> None:
    if node.max_items is not None and len(value) > node.max_items:
        errs.append(_too_many(path, len(value), node.max_items, "items"))
    if (err := _too_few(path, len(value), node.min_items, "items")) is not None:
        errs.append(err)
    if node.items is not None:
        for i, item in enumerate(value):
            _validate(item, node.items, f"{path}[{i}]", errs)


def _validate_object(value: dict, node: Node, path: str, errs: list[FieldError]) -> None:
    if node.embedded:
        _validate_embedded(value, path, errs)
    if node.max_properties is not None and len(value) > node.max_properties:
        errs.append(_too_many(path, len(value), node.max_properties, "items"))
    if (err := _too_few(path, len(value), node.min_properties, "properties")) is not None:
        errs.append(err)
    for key in node.required:
        if key not in value:
            errs.append(errors.required(_child(path, key)))
    for key, item in value.items():
        if not path and key in ("apiVersion", "kind", "metadata") and key not in node.properties:
            continue
        sub = node.properties.get(key) or node.additional
        if sub is not None:
            _validate(item, sub, _child(path, key), errs)


def _validate_embedded(value: dict, path: str, errs: list[FieldError]) -> None:
    """An x-kubernetes-embedded-resource object is an object of its own (upstream
    objectmeta validateEmbeddedResource): apiVersion and kind required and well-formed,
    metadata an ObjectMeta (labels and annotations checked; no name is required)."""
    for key in ("apiVersion", "kind"):
        if key not in value:
            errs.append(errors.required(_child(path, key), "must not be empty"))
    api_version = value.get("apiVersion")
    if "apiVersion" in value:
        where = _child(path, "apiVersion")
        if not isinstance(api_version, str):
            errs.append(errors.invalid(where, api_version, "must be a string"))
        elif not api_version:
            errs.append(errors.invalid(where, api_version, "must not be empty"))
        elif api_version.count("/") > 1:
            errs.append(errors.invalid(where, api_version,
                                       f"unexpected GroupVersion string: {api_version}"))
    kind = value.get("kind")
    if "kind" in value:
        where = _child(path, "kind")
        if not isinstance(kind, str):
            errs.append(errors.invalid(where, kind, "must be a string"))
        elif not kind:
            errs.append(errors.invalid(where, kind, "must not be empty"))
        elif problems := is_dns1035_label(kind.lower()):
            errs.append(errors.invalid(where, kind, "may have mixed case, but should otherwise "
                                                    "match: " + ",".join(problems)))
    md = value.get("metadata")
    if md is not None:
        where = _child(path, "metadata")
        if not isinstance(md, dict):
            errs.append(errors.invalid(where, md, "must be an object"))
            return
        labels, annotations = md.get("labels"), md.get("annotations")
        if isinstance(labels, dict):
            validate_labels(labels, _child(where, "labels"), errs)
        if isinstance(annotations, dict):
            validate_annotations(annotations, _child(where, "annotations"), errs)
