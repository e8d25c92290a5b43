"""PATCH documents: JSON merge patch, JSON patch and strategic merge patch, as pure functions.

Kubernetes piece: k8s.io/apiserver/pkg/endpoints/handlers/patch.go (which patch type does
what, and which failure is a 400 and which a 422), evanphx/json-patch (RFC 7386 merge patch
and RFC 6902 JSON patch) and apimachinery's pkg/util/strategicpatch (`StrategicMergeMapPatch`
with the `$patch`, `$retainKeys`, `$setElementOrder/…` and `$deleteFromPrimitiveList/…`
directives). kubectl edit/apply/patch/scale/label all send one of these, so the merge rules
and the order of merged lists follow upstream: a container added by a strategic patch lands
*first* in the list, exactly as upstream's `mergeSortedSlice` puts it.

Every function returns a new document and never mutates its arguments: the live object may
be shared with the watch cache. The original is deep-copied once (orjson round trip) and the
merge then works in place on the copy; patch values are copied as they are inserted.

Deliberate differences from upstream, each because upstream relies on Go's typed decoding to
clean up after it: directive keys never survive into the result (upstream leaves e.g. a
`$patch` inside a newly added map for the decoder to drop); `$deleteFromPrimitiveList/x`
never *adds* `x` when the object lacks it; errors that upstream lets through as 500s are
reported as 422 Invalid with upstream's text.
"""

from __future__ import annotations

import copy
from types import MappingProxyType
from typing import Any

import jsonpatch
import jsonpointer
import orjson

from .bounds import MAX_COPY_BYTES, MAX_COPY_VALUES, measure
from .errors import StatusError, bad_request
from .patch_strategies import MERGE, REPLACE, Field, Struct, child, kind_schema

PATCH_TYPES: dict[str, str] = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
}

MAX_JSON_PATCH_OPERATIONS = 10000  # upstream maxJSONPatchOperations

# Upstream NewGenericServerResponse(422, ...) replaces the error text with this sentence.
REJECTED = "the server rejected our request due to an error in our request"

DIRECTIVE = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ELEMENT_ORDER = "$setElementOrder"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"

_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
_BAD_SET_ORDER = "invalid patch format of setElementOrder list"
_MISSING: Any = object()


def deep_copy(value: Any) -> Any:
    """A fresh copy of a JSON value; orjson is several times faster than copy.deepcopy."""
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:  # ints beyond 64 bits, non-str keys: not JSON from the wire
        return copy.deepcopy(value)


def rejected(cause: str = "") -> StatusError:
    """The 422 upstream answers when a patch cannot be applied (failed `test`, missing path):
    NewGenericServerResponse, whose message hides the cause; the cause, when we report one (the
    copy limit), travels in details.causes as upstream's does."""
    if not cause:
        return StatusError(422, "Invalid", REJECTED)
    return StatusError(422, "Invalid", REJECTED, {
        "causes": [{"reason": "UnexpectedServerResponse", "message": cause}]})


def _semantic(message: str) -> StatusError:
    return StatusError(422, "Invalid", message)


def go_json_type(value: Any) -> str:
    """The JSON type word encoding/json uses in `cannot unmarshal X into Go value`."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "string" if isinstance(value, str) else "null"


def go_value(value: Any) -> str:
    """Go's `%v` of a decoded JSON value, for error texts copied from upstream."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --- RFC 7386 JSON merge patch -----------------------------------------------------------


def json_merge_patch(original: dict, patch: Any) -> dict:
    """Apply an RFC 7386 merge patch: maps merge, everything else replaces, null deletes.

    Like evanphx/json-patch (what the API server uses), nulls inside inserted values are
    pruned. A patch that is not an object cannot produce an object: 400 "Invalid JSON Patch"."""
    if not isinstance(patch, dict):
        raise bad_request("Invalid JSON Patch")
    result = deep_copy(original)
    _merge_docs(result, patch)
    return result


def _merge_docs(doc: dict, patch: dict) -> None:
    for key, value in patch.items():
        if value is None:
            doc.pop(key, None)
            continue
        current = doc.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            _merge_docs(current, value)
        else:
            doc[key] = _pruned(value)


def _pruned(value: Any) -> Any:
    """A copy of a patch value with null map entries removed (evanphx pruneNulls)."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    return value


def create_merge_patch(original: Any, modified: Any) -> Any:
    """The RFC 7386 patch turning `original` into `modified` (evanphx CreateMergePatch).

    Exact for documents whose values are never null (null means "delete" in a merge patch)."""
    if not (isinstance(original, dict) and isinstance(modified, dict)):
        return modified
    patch: dict[str, Any] = {}
    for key, value in modified.items():
        old = original.get(key, _MISSING)
        if old is _MISSING:
            patch[key] = value
        elif isinstance(old, dict) and isinstance(value, dict):
            sub = create_merge_patch(old, value)
            if sub:
                patch[key] = sub
        elif old != value or type(old) is not type(value):
            patch[key] = value
    for key in original:
        if key not in modified:
            patch[key] = None
    return patch


# --- RFC 6902 JSON patch -----------------------------------------------------------------


def json_patch(original: dict, operations: Any) -> dict:
    """Apply an RFC 6902 JSON patch (via the `jsonpatch` library), as upstream does.

    Not a list of operation objects: 400 (upstream fails to decode it). More than 10000
    operations: 413. An operation that cannot be applied — failed `test`, missing path, an
    unknown `op` — is upstream's generic 422, whose message does not carry the cause."""
    if not isinstance(operations, list):
        raise bad_request(
            f"json: cannot unmarshal {go_json_type(operations)} into Go value of type jsonpatch.Patch")
    for op in operations:
        if not isinstance(op, dict):
            raise bad_request(
                f"json: cannot unmarshal {go_json_type(op)} into Go value of type jsonpatch.Operation")
    if len(operations) > MAX_JSON_PATCH_OPERATIONS:
        raise StatusError(
            413, "RequestEntityTooLarge",
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
            f"got {len(operations)}")
    doc, ops = deep_copy([original, operations])
    try:
        result = _bounded_patch_class()(ops).apply(doc, in_place=True)
    except _CopyLimitExceeded as exc:
        raise rejected(str(exc)) from None
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException,
            KeyError, IndexError, TypeError, ValueError) as exc:
        raise rejected() from exc
    if not isinstance(result, dict):
        raise rejected()
    measure(result, "the patched object")  # `add` at depth and `copy` can deepen or grow it
    return result


class _CopyLimitExceeded(Exception):
    """evanphx/json-patch's AccumulatedCopySizeError."""


def _bounded_patch_class() -> type[jsonpatch.JsonPatch]:
    """A JsonPatch whose `copy` counts what it copies, as upstream's AccumulatedCopySizeLimit
    does (the API server sets it to JSONPatchMaxCopyBytes, 3 MiB): the JSON size of every
    copied value adds up, and the copy that passes the limit fails. Without it, 24 copies of
    a list into itself make 2^24 values from a 400-byte patch. Our cost is per value rather
    than per byte, so the copies may also add at most MAX_COPY_VALUES values (estimated from
    the copied JSON's commas, an upper bound): a patch stays well under 100 ms of work. Copies
    go through orjson (the library's copy.deepcopy is ~10x slower); one class per patch keeps
    the count per patch and thread-safe."""
    copied = values = 0

    class FreshAdd(jsonpatch.AddOperation):
        """`add` without the library's copy.deepcopy of the value: json_patch already works on
        a private copy of the operations, and each operation applies once."""

        def _apply(self, obj: Any, journal: Any) -> Any:
            try:
                value = self.operation["value"]
            except KeyError:
                raise jsonpatch.InvalidJsonPatch(
                    "The operation does not contain a 'value' member", op=self) from None
            return self._add(obj, value, journal)

    class BoundedCopy(jsonpatch.CopyOperation):
        def _apply(self, obj: Any, journal: Any) -> Any:
            nonlocal copied, values
            try:
                source = self.pointer_cls(self.operation["from"])
            except KeyError:
                raise jsonpatch.InvalidJsonPatch(
                    "The operation does not contain a 'from' member", op=self) from None
            container, part = source.to_last(obj)
            try:
                value = container if part is None else container[part]
            except (KeyError, IndexError, TypeError) as exc:
                raise jsonpatch.JsonPatchConflict(str(exc), op=self) from None
            raw = orjson.dumps(value)
            copied += len(raw)
            values += raw.count(b",") + 1  # at least the values copied (C-speed estimate)
            if copied > MAX_COPY_BYTES:
                raise _CopyLimitExceeded(
                    f"Unable to complete the copy, the accumulated size increase of copy is "
                    f"{copied}, exceeding the limit {MAX_COPY_BYTES}")
            if values > MAX_COPY_VALUES:
                raise _CopyLimitExceeded(
                    f"Unable to complete the copy, the copies add more than {MAX_COPY_VALUES} "
                    f"values (about {values}), exceeding the limit {MAX_COPY_VALUES}")
            return FreshAdd({"op": "add", "path": self.location, "value": orjson.loads(raw)},
                            pointer_cls=self.pointer_cls)._apply(obj, journal)

    class BoundedPatch(jsonpatch.JsonPatch):
        operations = MappingProxyType(dict(jsonpatch.JsonPatch.operations, add=FreshAdd,
                                           copy=BoundedCopy))

    return BoundedPatch


# --- strategic merge patch ---------------------------------------------------------------


def strategic_merge_patch(original: dict, patch: Any, kind: str) -> dict:
    """Apply a strategic merge patch to an object of `kind` (upstream StrategicMergeMapPatch).

    Lists tagged `patchStrategy:"merge"` in patch_strategies merge by their merge key (or
    as sets of scalars); other lists are replaced; maps merge; null deletes. Kinds without a
    table (CRDs) behave as JSON merge patch with directives honoured, rather than upstream's
    415. Malformed directives are 400, lists of lists and retainKeys mismatches the generic
    422, and other semantic errors (missing merge key, …) 422 with upstream's text."""
    if patch is None:
        patch = {}
    if not isinstance(patch, dict):
        raise bad_request(
            f"json: cannot unmarshal {go_json_type(patch)} into Go value of type "
            "map[string]interface {}")
    return _merge_map(deep_copy(original), patch, kind_schema(kind))


def _merge_map(original: dict, patch: dict, struct: Struct | None) -> dict:
    """Merge `patch` into `original` (owned by us, mutated) and return the result."""
    directive = patch.get(DIRECTIVE, _MISSING)
    if directive is not _MISSING:
        if directive == "replace":
            return _merge_map({}, {k: v for k, v in patch.items() if k != DIRECTIVE}, struct)
        if directive == "delete":
            return {}
        if directive != "merge":  # "merge" is the default; upstream rejects it, we accept it
            raise _semantic(f"unknown patch type: {go_value(directive)} in map: {go_value(patch)}")
    if RETAIN_KEYS in patch:
        _apply_retain_keys(original, patch)
    handled = _merge_ordered_lists(original, patch, struct)
    for key, value in patch.items():
        if key in handled:
            continue
        deleting = False
        if key.startswith("$"):
            if key in (DIRECTIVE, RETAIN_KEYS) or key.startswith(SET_ELEMENT_ORDER):
                continue
            if key.startswith(DELETE_FROM_PRIMITIVE_LIST):
                key = _directive_target(key, DELETE_FROM_PRIMITIVE_LIST, _BAD_PRIMITIVE_LIST)
                deleting = True
        if value is None:
            original.pop(key, None)
            continue
        current = original.get(key, _MISSING)
        if deleting:
            if not isinstance(value, list):
                raise bad_request(_BAD_PRIMITIVE_LIST)
            if isinstance(current, list):
                original[key] = _delete_from_list(current, value)
            continue
        original[key] = _merge_value(current, value, child(struct, key))
    return original


def _merge_value(current: Any, value: Any, field: Field) -> Any:
    if isinstance(current, dict) and isinstance(value, dict) and field.strategy != REPLACE:
        return _merge_map(current, value, field.fields)
    if isinstance(current, list) and isinstance(value, list) and field.strategy == MERGE:
        return _merge_list(current, value, field)
    return _clean(value, field)


def _clean(value: Any, field: Field) -> Any:
    """A directive-free copy of a patch value, as if merged into nothing."""
    if isinstance(value, dict):
        return _merge_map({}, value, field.fields)
    if isinstance(value, list):
        if field.strategy == MERGE:
            return _merge_list([], value, field)
        return [_clean_item(item, field.fields) for item in value]
    return value


def _clean_item(item: Any, struct: Struct | None) -> Any:
    if isinstance(item, dict):
        return _merge_map({}, item, struct)
    if isinstance(item, list):
        return [_clean_item(v, None) for v in item]
    return item


def _directive_target(key: str, prefix: str, error: str) -> str:
    head, sep, target = key.partition("/")
    if not sep or head != prefix:
        raise bad_request(error)
    return target


def _apply_retain_keys(original: dict, patch: dict) -> None:
    """`$retainKeys`: drop fields of `original` not listed; the patch may set only those."""
    keys = patch[RETAIN_KEYS]
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise bad_request(_BAD_RETAIN_KEYS)
    allowed = set(keys)
    for key, value in patch.items():
        if value is None or key in (RETAIN_KEYS, DIRECTIVE):
            continue
        if key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if key not in allowed:
            raise bad_request(_BAD_RETAIN_KEYS)
    for key in [k for k in original if k not in allowed]:
        del original[key]


# --- lists: merge by key, order like upstream ---------------------------------------------


def _merge_list(original: list, patch: list, field: Field) -> list:
    """Merge a `patchStrategy:"merge"` list (upstream mergeSlice), then order it the way
    upstream does: patch items in patch order interleaved with server-only items."""
    if not original and not patch:
        return original
    if _element_kind(original, patch) != "map":
        merged = _dedupe([*original, *patch])
        key = ""
    else:
        key = field.merge_key
        if not key:
            raise _semantic("cannot merge lists without merge key for type map")
        replaced, original, patch = _special_elements(original, patch, key, field.fields)
        if replaced is not None:
            return replaced
        merged = _merge_items(list(original), patch, key, field.fields)
    patch_items, server_only = _partition(merged, patch, key)
    return _normalize_order(patch_items, server_only, patch, original, key)


def _element_kind(*lists: list) -> str:
    """The items' kind, `map` or `scalar`; lists of lists and mixed kinds are refused."""
    kind = ""
    for items in lists:
        for item in items:
            if isinstance(item, list):
                raise rejected()  # mergepatch.ErrNoListOfLists -> generic 422
            this = "map" if isinstance(item, dict) else "scalar"
            if kind and this != kind:
                raise _semantic("list element types are not identical: " + go_value(list(lists)))
            kind = this
    return kind


def _special_elements(original: list, patch: list, key: str, struct: Struct | None
                      ) -> tuple[list | None, list, list]:
    """Handle items carrying `$patch` (upstream mergeSliceWithSpecialElements).

    Returns (replacement or None, original without deleted items, patch without specials)."""
    plain: list = []
    replace = False
    for item in patch:
        directive = item.get(DIRECTIVE, _MISSING)
        if directive is _MISSING:
            plain.append(item)
        elif directive == "delete":
            if key not in item:
                raise _no_merge_key(item, key)
            value = item[key]
            original = [o for o in original if not _key_equal(o, key, value)]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise _semantic("merging lists cannot yet be specified in the patch")
        else:
            raise _semantic(f"unknown patch type: {go_value(directive)} in map: {go_value(item)}")
    if replace:
        return [_merge_map({}, item, struct) for item in plain], original, plain
    return None, original, plain


def _merge_items(merged: list, patch: list, key: str, struct: Struct | None) -> list:
    for item in patch:
        if key not in item:
            raise _no_merge_key(item, key)
        value = item[key]
        for index, existing in enumerate(merged):
            if _key_equal(existing, key, value):
                merged[index] = _merge_map(existing, item, struct)
                break
        else:
            merged.append(_merge_map({}, item, struct))
    return merged


def _no_merge_key(item: dict, key: str) -> StatusError:
    return _semantic(f"map: {go_value(item)} does not contain declared merge key: {key}")


def _same(a: Any, b: Any) -> bool:
    """Go interface equality for JSON scalars: equal value and same JSON type."""
    return a == b and isinstance(a, bool) == isinstance(b, bool)


def _key_equal(item: Any, key: str, value: Any) -> bool:
    return isinstance(item, dict) and key in item and _same(item[key], value)


def _dedupe(items: list) -> list:
    out: list = []
    for item in items:
        if not any(_same(item, seen) for seen in out):
            out.append(item)
    return out


def _delete_from_list(current: list, doomed: list) -> list:
    return [v for v in current if not any(_same(v, d) for d in doomed)]


def _identity(item: Any, key: str) -> Any:
    """What makes two list items "the same item": the merge key value, or the scalar."""
    return item.get(key) if key and isinstance(item, dict) else item


def _index(order: list, item: Any, key: str) -> int:
    wanted = _identity(item, key)
    for position, candidate in enumerate(order):
        if _same(_identity(candidate, key), wanted):
            return position
    return -1


def _partition(merged: list, present: list, key: str) -> tuple[list, list]:
    """Split `merged` into items present in `present` (by identity) and server-only ones."""
    if key:
        for item in merged:
            if not isinstance(item, dict):
                raise _semantic(f"expected a map, but received a {go_json_type(item)}")
            if key not in item:
                raise _no_merge_key(item, key)
    inside, outside = [], []
    for item in merged:
        (inside if _index(present, item, key) >= 0 else outside).append(item)
    return inside, outside


def _sorted_by(items: list, order: list, key: str) -> list:
    end = len(order)

    def position(item: Any) -> int:
        found = _index(order, item, key)
        return found if found >= 0 else end

    return sorted(items, key=position)


def _normalize_order(patch_items: list, server_only: list, patch_order: list,
                     server_order: list, key: str) -> list:
    """Upstream normalizeElementOrder + mergeSortedSlice: patch items keep the patch's
    order, server-only items the live order, and a server-only item goes before a patch
    item only when both are in the live list and it came first there."""
    right = _sorted_by(patch_items, patch_order, key)
    left = _sorted_by(server_only, server_order, key)
    out: list = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            out.append(left[i])
            i += 1
        elif i >= len(left):
            out.append(right[j])
            j += 1
        else:
            li, ri = _index(server_order, left[i], key), _index(server_order, right[j], key)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def _merge_ordered_lists(original: dict, patch: dict, struct: Struct | None) -> set[str]:
    """Process `$setElementOrder/<field>` (upstream mergePatchIntoOriginal): merge the list
    and order it by the directive. Returns the fields it has fully handled."""
    handled: set[str] = set()
    for directive_key, order in patch.items():
        if not directive_key.startswith(SET_ELEMENT_ORDER):
            continue
        name = _directive_target(directive_key, SET_ELEMENT_ORDER, _BAD_SET_ORDER)
        if not isinstance(order, list):
            raise bad_request(_BAD_SET_ORDER)
        field = child(struct, name)
        current = original.get(name, _MISSING)
        value = patch.get(name, _MISSING)
        if value is None:
            continue  # the main loop deletes the field
        if current is not _MISSING and not isinstance(current, list):
            current = _MISSING  # type changed: the patch list replaces it
        if value is not _MISSING and not isinstance(value, list):
            raise bad_request(_BAD_SET_ORDER)
        key = field.merge_key
        _validate_order(value if value is not _MISSING else [], order, key)
        if current is _MISSING and value is _MISSING:
            continue
        if value is _MISSING:
            merged = current
        elif current is _MISSING:
            merged = _clean(value, field)
        else:
            merged = _merge_value(current, value, field)
        patch_items, server_only = _partition(merged, order, key)
        live = current if current is not _MISSING else []
        original[name] = _normalize_order(patch_items, server_only, order, live, key)
        handled.add(name)
    return handled


def _validate_order(patch_list: list, order: list, key: str) -> None:
    """The patch list must follow the `$setElementOrder` list (upstream
    validatePatchWithSetOrderList); deletions are exempt."""
    if not order or not patch_list:
        return
    items = [p for p in patch_list
             if not (key and isinstance(p, dict) and p.get(DIRECTIVE) == "delete")]
    p = s = 0
    while p < len(items) and s < len(order):
        item = items[p]
        if isinstance(item, dict) and DIRECTIVE in item:
            p += 1
            continue
        if key:
            for side in (item, order[s]):
                if not isinstance(side, dict):
                    raise _semantic(f"expected a map, but received a {go_json_type(side)}")
                if key not in side:
                    raise _no_merge_key(side, key)
            equal = _same(item[key], order[s][key])
        else:
            equal = _same(item, order[s])
        if equal:
            p += 1
        s += 1
    if p < len(items):
        raise _semantic(f"The order in patch list:\n{go_value(patch_list)}\n doesn't match "
                        f"{SET_ELEMENT_ORDER} list:\n{go_value(order)}\n")
