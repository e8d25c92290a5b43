"""Type checks on request bodies: apiVersion/kind, and unknown fields (`fieldValidation`).

Kubernetes piece: the decoding step of k8s.io/apiserver handlers (a body of the wrong kind or
version is 400 BadRequest) and server-side field validation (KEP-2885, v1.25+):
`fieldValidation=Strict` rejects unknown or duplicated fields with 400 `strict decoding error:
unknown field "spec.foo"`, `Warn` (the server default) answers with `Warning` headers, and
`Ignore` drops them silently. Unknown fields are found by walking the same OpenAPI schemas
`kubectl explain` reads (openapi_schemas.py), so the two can never disagree.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import orjson

from ..api import errors
from ..api.patch import go_json_type, go_value
from ..api.timefields import TimeFieldError, normalize
from ..registry.strategy import Strategy
from .openapi_schemas import REF_PREFIX, SCHEMAS, generic_kind_schemas, schema_name

_MODES = ("", "Ignore", "Warn", "Strict")
#: schemas of served kinds that have no table entry (versions upstream removed, served by
#: registry/legacy.py), built from their protobuf description on first use
_EXTRA: dict[str, Any] = {}
_MAX_REPORTED = 20


def check_type_meta(body: dict[str, Any], strategy: Strategy) -> None:
    """A body naming another kind or version is refused (upstream: decode into the wrong
    type fails before anything else)."""
    api_version = body.get("apiVersion")
    kind = body.get("kind")
    if api_version not in (None, "") and api_version != strategy.api_version:
        raise errors.bad_request(
            f'the API version in the data ({api_version}) does not match the expected API '
            f'version ({strategy.api_version})')
    if kind not in (None, "") and kind != strategy.kind:
        raise cannot_handle(strategy, f"the object provided is unrecognized (must be of type "
                                      f"{strategy.kind})", kind)


def cannot_handle(strategy: Strategy, detail: str, kind: str = "") -> errors.StatusError:
    """Upstream's transformDecodeError: a body that does not decode into the kind's struct is
    400 `Pod in version "v1" cannot be handled as a Pod: <the decoder's error>`."""
    return errors.bad_request(f'{kind or strategy.kind} in version "{strategy.version}" cannot be '
                              f'handled as a {strategy.kind}: {detail}')


def check_patched_type_meta(obj: dict[str, Any], strategy: Strategy) -> None:
    """A patch may not turn an object into another kind."""
    check_type_meta(obj, strategy)


def check_times(body: dict[str, Any], strategy: Strategy) -> None:
    """Every metav1.Time/MicroTime field of a create or update body re-encoded as upstream's
    decoding and encoding leave it (api/timefields.py); one it cannot parse is the decode
    error."""
    try:
        normalize(body, strategy.api_version, strategy.kind)
    except TimeFieldError as exc:
        raise cannot_handle(strategy, str(exc)) from None


def check_patched_times(obj: dict[str, Any], strategy: Strategy, patch_type: str,
                        patch: Any) -> None:
    """check_times on a patch's result. Upstream decodes the patched object and reports a
    failure as 422 `patch: Invalid value: <the patched JSON>` (JSON and merge patches) or
    `<the patch as Go's %+v prints it>` (strategic merge patches); an apply has no such
    report upstream (an internal error), so it is refused as a create's body would be."""
    try:
        normalize(obj, strategy.api_version, strategy.kind)
    except TimeFieldError as exc:
        if patch_type == "apply":
            raise cannot_handle(strategy, str(exc)) from None
        shown = go_value(patch) if patch_type == "strategic" else orjson.dumps(obj).decode()
        raise errors.invalid_object("", "", [errors.invalid("patch", shown, str(exc))]) from None


def check_fields(body: dict[str, Any], strategy: Strategy, mode: str) -> list[str]:
    """Unknown-field problems per `mode`: raise (Strict), or drop the unknown fields from
    `body` (which the caller owns) and return warnings (Warn, the default) or nothing
    (Ignore). Dropping is what upstream's decoding into typed structs does for built-in
    kinds: an unknown field is never stored, so it is reported once, not on every later
    write."""
    if mode not in _MODES:
        raise errors.bad_request(
            f'fieldValidation: Unsupported value: "{mode}": supported values: "Ignore", '
            '"Strict", "Warn"')
    if strategy.unknown_fields is not None:  # a custom resource: what pruning would drop
        return _custom_unknown(body, strategy, mode)
    name = schema_name(strategy.group, strategy.version, strategy.kind)
    if name not in SCHEMAS and name not in _EXTRA and strategy.stored_as is not None:
        _EXTRA.update(generic_kind_schemas(strategy.group, strategy.version, strategy.kind))
    if (name not in SCHEMAS and name not in _EXTRA) or not body:
        return []
    root = _compiled(name)
    if _clean(body, root):  # the common case: no path strings built
        return []
    unknown: list[str] = []
    found: list[tuple[dict, str]] = []
    wrong: list[tuple[str, str, str]] = []
    _walk(body, root, "", unknown, found, wrong)
    if wrong:  # a decode error whatever the mode: the body cannot be this kind at all
        raise cannot_handle(strategy, f"json: cannot unmarshal {wrong[0][0]} into Go struct "
                                      f"field {strategy.kind}.{wrong[0][1]} of type {wrong[0][2]}")
    if not found:
        return []
    if mode == "Strict":
        messages = [f'unknown field "{path}"' for path in unknown[:_MAX_REPORTED]]
        raise errors.bad_request("strict decoding error: " + ", ".join(messages))
    for container, key in found:
        container.pop(key, None)
    if mode == "Ignore":
        return []
    return [f'unknown field "{path}"' for path in unknown[:_MAX_REPORTED]]


def _custom_unknown(body: dict[str, Any], strategy: Strategy, mode: str) -> list[str]:
    """Upstream's fieldValidation for custom resources: the fields pruning drops are the
    unknown ones (Strict: 400, Warn: warnings); the registry prunes them in every mode."""
    if mode == "Ignore" or not body:
        return []
    assert strategy.unknown_fields is not None
    unknown = sorted(strategy.unknown_fields(body))[:_MAX_REPORTED]  # upstream sorts them
    messages = [f'unknown field "{path}"' for path in unknown]
    if messages and mode == "Strict":
        raise errors.bad_request("strict decoding error: " + ", ".join(messages))
    return messages


@lru_cache(maxsize=None)
def _compiled(name: str) -> _Node:
    """The schema `name` as a tree of known fields, refs resolved once (they are shared by
    every request, so walking a body is one dict lookup per key)."""
    return _compile(_schema(name), {})


def _schema(name: str) -> dict[str, Any]:
    return SCHEMAS.get(name) or _EXTRA.get(name, {})


class _Node:
    """Known fields of one schema: `props` (name -> node), `extra` (node for map values or
    None), `items` (node for list items or None), `open` (anything goes)."""

    __slots__ = ("props", "extra", "items", "open")

    def __init__(self) -> None:
        self.props: dict[str, _Node] | None = None
        self.extra: _Node | None = None
        self.items: _Node | None = None
        self.open = True


def _compile(schema: dict[str, Any], seen: dict[str, _Node]) -> _Node:
    for _ in range(8):
        all_of = schema.get("allOf")
        if "$ref" not in schema and all_of and len(all_of) == 1:
            schema = all_of[0]
            continue
        break
    ref = schema.get("$ref")
    if ref is not None:
        name = ref[len(REF_PREFIX):] if ref.startswith(REF_PREFIX) else ""
        if name in seen:
            return seen[name]
        node = seen[name] = _Node()
        _fill(node, _schema(name), seen)
        return node
    node = _Node()
    _fill(node, schema, seen)
    return node


def _fill(node: _Node, schema: dict[str, Any], seen: dict[str, _Node]) -> None:
    while "$ref" not in schema and len(schema.get("allOf") or ()) == 1:
        schema = schema["allOf"][0]
    if "$ref" in schema:
        target = _compile(schema, seen)
        node.props, node.extra, node.items, node.open = (
            target.props, target.extra, target.items, target.open)
        return
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    items = schema.get("items")
    if props is not None:
        node.props = {k: _compile(v, seen) for k, v in props.items()}
        node.open = isinstance(extra, bool) and extra
    if isinstance(extra, dict):
        node.extra = _compile(extra, seen)
        node.open = False
    if isinstance(items, dict):
        node.items = _compile(items, seen)


def _shape_error(item: Any, node: _Node, path: str) -> tuple[str, str, str] | None:
    """`item` where the schema wants an object or an array and it is something else (null is
    fine: the zero value) -- upstream's json.Unmarshal fails there; our strategies would
    otherwise meet a list where they expect a dict."""
    if item is None:
        return None
    wants_object = node.props is not None or node.extra is not None
    if wants_object and not isinstance(item, dict):
        expected = "object"
    elif node.items is not None and not wants_object and not isinstance(item, list):
        expected = "array"
    else:
        return None
    return go_json_type(item), path, expected


def _clean(value: Any, node: _Node) -> bool:
    """True when `value` has neither an unknown field nor a value of the wrong shape — what
    _walk would find nothing in, decided without building a path (every write of a
    built-in kind asks: the bodies of components' status updates and events are clean)."""
    if isinstance(value, dict):
        props, extra = node.props, node.extra
        if props is None and extra is None:
            return True
        for key, item in value.items():
            child = props.get(key) if props is not None else None
            if child is None:
                child = extra
                if child is None:
                    if node.open:
                        continue
                    return False
            if item is None:
                continue
            if child.props is not None or child.extra is not None:
                if not isinstance(item, dict) or not _clean(item, child):
                    return False
            elif child.items is not None:
                if not isinstance(item, list) or not _clean(item, child):
                    return False
        return True
    if isinstance(value, list) and node.items is not None:
        child = node.items
        wants_object = child.props is not None or child.extra is not None
        for item in value:
            if item is None:
                continue
            if wants_object:
                if not isinstance(item, dict) or not _clean(item, child):
                    return False
            elif child.items is not None:
                if not isinstance(item, list) or not _clean(item, child):
                    return False
        return True
    return True


def _walk(value: Any, node: _Node, path: str, unknown: list[str],
          found: list[tuple[dict, str]], wrong: list[tuple[str, str, str]]) -> None:
    """Collect the unknown fields of `value`: their paths (the first _MAX_REPORTED, for
    messages) and every (container, key), for dropping them; and into `wrong`, values of
    the wrong shape (see _shape_error)."""
    if isinstance(value, dict):
        props = node.props
        extra = node.extra
        if props is None and extra is None:
            return
        for key, item in value.items():
            child = props.get(key) if props is not None else None
            if child is None:
                child = extra
            if child is not None:
                where = f"{path}.{key}" if path else key
                problem = _shape_error(item, child, where)
                if problem:
                    wrong.append(problem)
                elif isinstance(item, (dict, list)):
                    _walk(item, child, where, unknown, found, wrong)
            elif not node.open:
                found.append((value, key))
                if len(unknown) < _MAX_REPORTED:
                    unknown.append(f"{path}.{key}" if path else key)
    elif isinstance(value, list) and node.items is not None:
        for i, item in enumerate(value):
            problem = _shape_error(item, node.items, f"{path}[{i}]")
            if problem:
                wrong.append(problem)
            elif isinstance(item, (dict, list)):
                _walk(item, node.items, f"{path}[{i}]", unknown, found, wrong)