"""The wire format of `metadata.managedFields`: decoding (checking and canonicalising) and the
FieldsV1 tree <-> path-set conversions, as pure functions.

Kubernetes pieces: k8s.io/apimachinery/pkg/util/managedfields/internal/managedfields.go
(`DecodeManagedFields`, `encodeManagedFields`, `BuildManagerIdentifier`) and
sigs.k8s.io/structured-merge-diff fieldpath (`Set.FromJSON`/`ToJSON`,
`DeserializePathElement`). Upstream never stores managedFields as sent: every write decodes
them into field sets and encodes them back, so an entry that does not decode (an operation other
than Apply/Update, no apiVersion, a fieldsType other than FieldsV1, a FieldsV1 key that is not a
path element) is never stored, and what is stored is canonical: known keys only, path elements
re-serialised, `.` only where a member has children, times in UTC seconds.

Why a separate, careful walk: FieldsV1 is the one free-form tree in a built-in object, so it is
where a hostile client puts hundreds of nesting levels or a million keys. Every walk here is
iterative (no Python recursion, whatever the depth), and a decode gives up past
MAX_PATH_ELEMENTS: the set-algebra side (server-side apply) expands a tree into one tuple per
member, `depth` elements long, so a tree of 100 levels with a few hundred thousand leaves would
otherwise cost gigabytes. The bound is far above any real object's field set (its members are a
few levels deep); upstream has none, but its field sets are trees, not path tuples.

Decoding costs a Python step per FieldsV1 key, and every write decodes the live object's
entries: a bounded memo of entry lists already known canonical (what a decode or the field
manager produced, by digest) turns that into one C-level serialisation in the common case.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

import orjson

from . import gotime
from .bounds import sorted_in_runs

Path = tuple[str, ...]
FieldSet = set[Path]

APPLY = "Apply"
UPDATE = "Update"
FIELDS_V1 = "FieldsV1"
#: path elements (summed over all members and entries) one decode may expand to
MAX_PATH_ELEMENTS = 1_000_000

_INVALID: Any = object()
_INDEX = re.compile(r"[+-]?[0-9]+\Z")
_INT64 = 1 << 63
_STRING_FIELDS = ("manager", "operation", "apiVersion", "time", "fieldsType", "subresource")
_KNOWN_LIMIT = 16_384
_known: set[bytes] = set()  # digests of entry lists known canonical


def printable(char: str) -> bool:
    """Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and ASCII space (a
    manager name may hold nothing else: ValidateFieldManager)."""
    return char == " " or unicodedata.category(char)[0] in "LMNPS"


# --- path elements -------------------------------------------------------------------------


def json_text(value: Any) -> str:
    """Compact JSON with sorted keys: how path elements carry values and keys."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def canonical_element(key: str) -> Any:
    """A FieldsV1 key as upstream re-serialises it (DeserializePathElement, then
    SerializePathElement); None for an unknown element type (upstream drops those, "a future
    version maybe knows what they are"); _INVALID when it does not parse."""
    if len(key) < 2 or key[1] != ":":
        return _INVALID
    kind, body = key[0], key[2:]
    if kind == "f":
        return key
    if kind == "i":
        if not _INDEX.match(body) or not -_INT64 <= int(body) < _INT64:
            return _INVALID
        return f"i:{int(body)}"
    if kind in ("k", "v"):
        try:
            value = orjson.loads(body)
            if kind == "k" and not isinstance(value, dict):
                return _INVALID
            return f"{kind}:{json_text(value)}"
        except (orjson.JSONDecodeError, orjson.JSONEncodeError):  # encode: nested > 254 levels
            return _INVALID
    return None


# --- FieldsV1 trees ------------------------------------------------------------------------


def canonical_tree(raw: Any, budget: int = MAX_PATH_ELEMENTS) -> tuple[dict[str, Any], int] | None:
    """A FieldsV1 value in canonical shape, and the path elements its members expand to; None
    when it does not decode or expands past `budget`.

    Canonical (upstream ToJSON of FromJSON): keys re-serialised and sorted, `.` first and only
    on members with children, leaves `{}`; `null` reads as an empty object, `.` on the root and
    unknown element types are dropped, a node left without children is a member. Iterative:
    the nesting depth costs no Python stack."""
    if raw is None:
        return {}, 0
    if not isinstance(raw, dict):
        return None
    root: dict[str, Any] = {}
    made: list[tuple[dict, dict]] = []  # (raw node, canonical node) below the root
    stack: list[tuple[dict, dict, int]] = [(raw, root, 0)]
    spent = 0
    while stack:
        node, out, depth = stack.pop()
        for key, sub in node.items():
            if key == ".":
                continue
            element = canonical_element(key)
            if element is _INVALID:
                return None
            if element is None:
                continue
            if sub is None:
                sub = {}
            elif not isinstance(sub, dict):
                return None
            spent += depth + 1
            if spent > budget:
                return None
            child: dict[str, Any] = {}
            out[element] = child
            made.append((sub, child))
            stack.append((sub, child, depth + 1))
    for sub, child in made:
        if child:
            if "." in sub:
                child["."] = {}
            _sort_keys(child)
    _sort_keys(root)
    return root, spent


def _sort_keys(node: dict) -> None:
    if len(node) > 1:
        items = sorted_in_runs(node.items())
        node.clear()
        node.update(items)


def tree_paths(tree: dict[str, Any]) -> FieldSet:
    """The members of a canonical FieldsV1 tree as a set of paths (iterative)."""
    out: FieldSet = set()
    stack: list[tuple[dict, Path]] = [(tree, ())]
    while stack:
        node, prefix = stack.pop()
        for key, sub in node.items():
            if key == ".":
                if prefix:
                    out.add(prefix)
                continue
            path = prefix + (key,)
            if sub:
                stack.append((sub, path))
            else:
                out.add(path)
    return out


def parse_fields_v1(tree: Any) -> FieldSet | None:
    """FieldsV1 JSON -> set of paths (upstream FieldsToSet); None if it does not decode."""
    decoded = canonical_tree(tree)
    return None if decoded is None else tree_paths(decoded[0])


def fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    """Set of paths -> FieldsV1 JSON: leaves are `{}`, a member with children gets `.`.

    Walking the paths in sorted order creates every map's keys already sorted (`.` first,
    as upstream prints them) and lets each path reuse the walk of its predecessor."""
    root: dict[str, Any] = {}
    members = []
    stack = [root]
    previous: Path = ()
    for path in sorted_in_runs(paths):
        common = 0
        limit = min(len(previous), len(path))
        while common < limit and previous[common] == path[common]:
            common += 1
        del stack[common + 1:]
        node = stack[common]
        for element in path[common:]:
            node = node.setdefault(element, {})
            stack.append(node)
        node.setdefault(".", {})
        members.append(node)
        previous = path
    for node in members:
        if len(node) == 1:
            node.clear()  # a member without children is a plain leaf
    return root


# --- entries -------------------------------------------------------------------------------


def canonical_time(value: Any) -> Any:
    """metav1.Time as decoded and re-encoded (gotime.py): RFC 3339 in, UTC seconds out; None
    for null (and Go's zero time); _INVALID for anything else (upstream fails to decode the
    body)."""
    if value is None:
        return None
    if not isinstance(value, str):
        return _INVALID
    try:
        return gotime.reencode(value, False)
    except gotime.TimeParseError:
        return _INVALID


def is_reset(sent: Any) -> bool:
    """`[]` or `[{}]` (a single zero entry): the client asks for no managedFields at all
    (upstream isResetManagedFields)."""
    if not isinstance(sent, list) or len(sent) > 1:
        return False
    if not sent:
        return True
    entry = sent[0]
    return entry is None or (isinstance(entry, dict) and all(
        value is None or (value == "" and name in _STRING_FIELDS)
        for name, value in entry.items()))


def ident(entry: dict[str, Any]) -> tuple[str, str, str, str]:
    """Who an entry belongs to (upstream BuildManagerIdentifier): manager, operation,
    apiVersion (Update only: an applier is the same manager in any version), subresource."""
    operation = entry["operation"]
    return (entry.get("manager", ""), operation,
            "" if operation == APPLY else entry["apiVersion"], entry.get("subresource", ""))


def sort_key(entry: dict[str, Any]) -> tuple[str, ...]:
    """Upstream's order of entries: operation, time, manager, apiVersion, subresource."""
    return (entry["operation"], entry.get("time") or "", entry.get("manager", ""),
            entry["apiVersion"], entry.get("subresource", ""))


def _serialised(entries: Any) -> bytes | None:
    try:
        return orjson.dumps(entries)
    except (TypeError, orjson.JSONEncodeError):  # nested past 254 levels, or not JSON at all
        return None


def _digest(text: bytes) -> bytes:
    return hashlib.blake2b(text, digest_size=16).digest()


def remember(entries: list[dict[str, Any]]) -> None:
    """Note canonical entries (a decode's result, the field manager's output) so decoding
    them again is a copy."""
    text = _serialised(entries)
    if text is None:
        return
    if len(_known) >= _KNOWN_LIMIT:
        _known.clear()
    _known.add(_digest(text))


def decode_entries(raw: Any) -> list[dict[str, Any]] | None:
    """`metadata.managedFields` decoded and encoded back, as upstream stores them (a fresh
    copy, never sharing with `raw`); None when they do not decode (the caller falls back, as
    decodeLiveOrNew does).

    Each entry needs operation Apply or Update, a non-empty apiVersion and fieldsType FieldsV1;
    manager and subresource are strings, time RFC 3339, fieldsV1 a FieldsV1 tree. Entries of
    one identity collapse into the last one; unknown keys are dropped; the result is sorted."""
    if not isinstance(raw, list):
        return None
    text = _serialised(raw)
    if text is not None and _digest(text) in _known:
        return orjson.loads(text)
    decoded = _decode_all(raw)
    if decoded is not None:
        remember(decoded)
    return decoded


def _decode_all(raw: list) -> list[dict[str, Any]] | None:
    budget = MAX_PATH_ELEMENTS
    found: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for item in raw:
        entry = _decode_entry(item, budget)
        if entry is None:
            return None
        entry, spent = entry
        budget -= spent
        found[ident(entry)] = entry
    return sorted(found.values(), key=sort_key)


def _decode_entry(item: Any, budget: int) -> tuple[dict[str, Any], int] | None:
    if not isinstance(item, dict):
        return None
    operation, api_version = item.get("operation"), item.get("apiVersion")
    manager, subresource = item.get("manager"), item.get("subresource")
    manager = "" if manager is None else manager
    subresource = "" if subresource is None else subresource
    if (operation not in (APPLY, UPDATE) or not isinstance(api_version, str) or not api_version
            or item.get("fieldsType") != FIELDS_V1 or not isinstance(manager, str)
            or not isinstance(subresource, str)):
        return None
    time = canonical_time(item.get("time"))
    tree = canonical_tree(item.get("fieldsV1"), budget)
    if time is _INVALID or tree is None:
        return None
    entry: dict[str, Any] = {"operation": operation, "apiVersion": api_version}
    if manager:
        entry = {"manager": manager, **entry}
    if time is not None:
        entry["time"] = time
    entry["fieldsType"] = FIELDS_V1
    entry["fieldsV1"] = tree[0]
    if subresource:
        entry["subresource"] = subresource
    return entry, tree[1]
