"""Typed reads of decoded JSON: the one place a wrong JSON type becomes a FieldError.

Kubernetes piece: none directly. Upstream decodes into Go structs first, so a `containers` that
is a string fails in the decoder and validation only ever sees well-typed values. We validate
the decoded JSON itself, so every read goes through these helpers: a missing or null field
reads as absent (Go's zero value), a field of the wrong type is reported once as
`spec.containers: Invalid value: "string": must be an array` and then also reads as absent.
That keeps every validator total (no exception on any JSON input) without type checks
scattered through the rule code.

Errors are appended to a caller-owned list instead of returned and concatenated: validators
run on every write and most produce no errors at all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from minikube_py.api.errors import FieldError, invalid, required

__all__ = [
    "Errs", "as_list", "child", "get_bool", "get_dict", "get_int", "get_list", "get_str",
    "get_str_list", "get_str_map", "index", "is_int", "iter_dicts", "key", "type_error",
    "type_name",
]

Errs = list[FieldError]


def child(path: str, name: str) -> str:
    """`spec` + `containers` -> `spec.containers` (upstream field.Path.Child)."""
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    """`spec.containers` + 0 -> `spec.containers[0]`."""
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    """`metadata.labels` + `app` -> `metadata.labels[app]` (upstream Path.Key, unquoted)."""
    return f"{path}[{k}]"


def type_name(value: Any) -> str:
    """The JSON name of a decoded value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def type_error(path: str, value: Any, expected: str) -> FieldError:
    """`Invalid value: "string": must be an array`."""
    return invalid(path, type_name(value), f"must be {expected}")


def as_list(value: Any) -> list[Any]:
    """`value` if it is a list, else [] (for reading without reporting, e.g. old objects)."""
    return value if isinstance(value, list) else []


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def get_dict(obj: Any, name: str, path: str, errs: Errs) -> dict[str, Any] | None:
    """obj[name] as an object; None when absent or of the wrong type (reported)."""
    value = obj.get(name) if isinstance(obj, dict) else None
    if value is None or isinstance(value, dict):
        return value
    errs.append(type_error(child(path, name), value, "an object"))
    return None


def get_list(obj: Any, name: str, path: str, errs: Errs) -> list[Any] | None:
    """obj[name] as an array; None when absent or of the wrong type (reported)."""
    value = obj.get(name) if isinstance(obj, dict) else None
    if value is None or isinstance(value, list):
        return value
    errs.append(type_error(child(path, name), value, "an array"))
    return None


def get_str(obj: Any, name: str, path: str, errs: Errs, *, required_: bool = False) -> str:
    """obj[name] as a string, "" when absent or wrong (reported). With `required_`, an absent or
    empty value is reported as `Required value` (but a wrong type only as a type error)."""
    value = obj.get(name) if isinstance(obj, dict) else None
    if isinstance(value, str):
        if not value and required_:
            errs.append(required(child(path, name)))
        return value
    if value is None:
        if required_:
            errs.append(required(child(path, name)))
        return ""
    errs.append(type_error(child(path, name), value, "a string"))
    return ""


def get_int(obj: Any, name: str, path: str, errs: Errs) -> int | None:
    """obj[name] as an integer; None when absent or wrong (reported). 3.0 is not an integer,
    as for Go's decoder into int32/int64."""
    value = obj.get(name) if isinstance(obj, dict) else None
    if value is None or is_int(value):
        return value
    errs.append(type_error(child(path, name), value, "an integer"))
    return None


def get_bool(obj: Any, name: str, path: str, errs: Errs) -> bool | None:
    value = obj.get(name) if isinstance(obj, dict) else None
    if value is None or isinstance(value, bool):
        return value
    errs.append(type_error(child(path, name), value, "a boolean"))
    return None


def get_str_map(obj: Any, name: str, path: str, errs: Errs) -> dict[str, str]:
    """obj[name] as a map of strings (labels, annotations, selectors); {} when absent. Entries
    whose value is not a string are reported and left out."""
    value = get_dict(obj, name, path, errs)
    if not value:
        return {}
    for v in value.values():
        if not isinstance(v, str):
            break
    else:
        return value
    good: dict[str, str] = {}
    map_path = child(path, name)
    for k, v in value.items():
        if isinstance(v, str):
            good[k] = v
        elif v is not None:
            errs.append(type_error(key(map_path, k), v, "a string"))
    return good


def get_str_list(obj: Any, name: str, path: str, errs: Errs) -> list[str]:
    """obj[name] as a list of strings; [] when absent. Non-strings are reported and skipped."""
    value = get_list(obj, name, path, errs)
    if not value:
        return []
    list_path = child(path, name)
    out = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            out.append(item)
        else:
            errs.append(type_error(index(list_path, i), item, "a string"))
    return out


def iter_dicts(obj: Any, name: str, path: str,
               errs: Errs) -> Iterator[tuple[int, dict[str, Any], str]]:
    """(i, item, `path.name[i]`) for each object in the array obj[name]; other items are
    reported (null items read as empty objects, as Go decodes them)."""
    items = get_list(obj, name, path, errs)
    if not items:
        return
    list_path = child(path, name)
    for i, item in enumerate(items):
        item_path = index(list_path, i)
        if item is None:
            item = {}
        elif not isinstance(item, dict):
            errs.append(type_error(item_path, item, "an object"))
            continue
        yield i, item, item_path
