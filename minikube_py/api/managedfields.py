"""Server-side apply and `metadata.managedFields` bookkeeping, as pure functions.

Kubernetes piece: k8s.io/apimachinery/pkg/util/managedfields (FieldManager, the
managedFieldsUpdater, stripMeta, conflict.go) over sigs.k8s.io/structured-merge-diff
(fieldpath sets, `Updater.Apply`/`Update`, `ToFieldSet`, `Compare`). It exists because
`kubectl apply --server-side` is a PATCH with `application/apply-patch+yaml`, and because
every write records in `managedFields` who set which field — `kubectl get -o yaml
--show-managed-fields` prints it and the next apply's conflicts are decided from it.

A field set is a Python set of paths; a path is a tuple of upstream FieldsV1 elements:
`f:<field>`, `k:<json of the item's keys>` (keyed list item), `v:<json>` (set item),
`i:<index>`. It is read from and written back to the upstream FieldsV1 JSON shape.

Simplifications, chosen and kept honest:
- Schema comes from patch_strategies: keyed lists are the strategic merge lists (with SSA's
  list keys, e.g. ports by containerPort+protocol); other lists are atomic leaves.
- A map is owned through its leaves (no `.` for maps, only for list items), as ToFieldSet
  does; an empty map or list is a leaf.
- What a write may own is decided by where it goes (upstream: the strategy's GetResetFields,
  which the field manager ignores, plus stripMeta). On the main resource `status` is never
  tracked nor applied (every served kind's main strategy resets it), nor are apiVersion, kind
  and the server-set metadata fields. On the `status` subresource only `status` is: our status
  strategies all reset spec and metadata (upstream's genericStatusStrategy; a few upstream
  ones, pods/status and replicasets/status among them, let labels and annotations through).
  Its entries carry `subresource: status`, and conflicts are decided across both kinds of
  entries as upstream does.
- Update managers are not capped at 10 (upstream merges the oldest into "ancient-changes").

The wire format (decoding, canonical FieldsV1, the path-set conversions) is managedfields_codec:
managedFields are decoded and re-encoded on every write, so junk sent by a client never lands.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from .bounds import SORT_RUN, sorted_in_runs
from .errors import StatusError, bad_request
from .managedfields_codec import (
    APPLY,
    UPDATE,
    FieldSet,
    Path,
    decode_entries,
    fields_v1,
    ident,
    is_reset,
    json_text,
    parse_fields_v1,
    printable,
    remember,
    sort_key,
    tree_paths,
)
from .patch import deep_copy
from .patch_strategies import NO_FIELD, Field, Struct, child, kind_schema

__all__ = [
    "APPLY", "STATUS", "UNKNOWN_MANAGER", "UPDATE", "field_set", "fields_tree", "fields_v1",
    "parse_fields_v1", "path_string", "record_update", "server_side_apply", "update_manager",
]

#: the manager of a write that names none (upstream buildManagerInfo)
UNKNOWN_MANAGER = "unknown"
#: upstream validation.FieldManagerMaxLength
FIELD_MANAGER_MAX_BYTES = 128
_STRIPPED_META = frozenset({
    "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
    "generation", "managedFields", "resourceVersion",
})
_UNTRACKED_TOP = frozenset({"apiVersion", "kind", "status"})
#: the subresource whose writes own `status` and nothing else
STATUS = "status"
_MISSING: Any = object()


# --- managedFields entries ---------------------------------------------------------------


@dataclass
class _Entry:
    """One manager's entry: upstream identifies it by manager, operation, subresource and
    (for Update only) apiVersion; time and fields are its payload."""

    manager: str
    operation: str
    api_version: str
    time: str | None
    subresource: str
    fields: FieldSet = field(default_factory=set)

    @property
    def ident(self) -> tuple[str, str, str, str]:
        version = "" if self.operation == APPLY else self.api_version
        return (self.manager, self.operation, version, self.subresource)

    def printed(self) -> str:
        """How conflict messages name a manager (upstream printManager)."""
        text = orjson.dumps(self.manager).decode()
        if self.subresource:
            text += f' with subresource "{self.subresource}"'
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text

    def encode(self) -> dict[str, Any]:
        return _entry(self.manager, self.operation, self.api_version, self.time,
                      fields_v1(self.fields), self.subresource)


def update_manager(user_agent: str) -> str:
    """The manager of an Update that names no fieldManager: the User-Agent's product (the part
    before the first `/`, unprintable characters dropped, cut at 128 bytes: upstream
    prefixFromUserAgent), or "unknown" when that leaves nothing (buildManagerInfo)."""
    name = user_agent.split("/", 1)[0]
    if name.isascii() and name.isprintable() and len(name) <= FIELD_MANAGER_MAX_BYTES:
        return name or UNKNOWN_MANAGER  # the usual User-Agent: nothing to drop or cut
    kept: list[str] = []
    size = 0
    for char in name:
        if not printable(char):
            continue
        size += len(char.encode())
        if size > FIELD_MANAGER_MAX_BYTES:
            break
        kept.append(char)
    return "".join(kept) or UNKNOWN_MANAGER


def _decode_entries(meta: Any) -> list[_Entry]:
    """The live object's entries as field sets; none when they do not decode (upstream's
    Apply would fail with "failed to decode managed fields"; starting afresh is kinder)."""
    raw = meta.get("managedFields") if isinstance(meta, dict) else None
    return [_Entry(item.get("manager", ""), item["operation"], item["apiVersion"],
                   item.get("time"), item.get("subresource", ""), tree_paths(item["fieldsV1"]))
            for item in decode_entries(raw) or []]


def _encode_entries(meta: dict, entries: Iterable[_Entry]) -> None:
    kept = sorted((e.encode() for e in entries if e.fields), key=sort_key)
    if kept:
        remember(kept)
        meta["managedFields"] = kept
    else:
        meta.pop("managedFields", None)


# --- paths ---------------------------------------------------------------------------------


def _item_element(item: Any, fld: Field) -> str | None:
    """The path element of a keyed/set list item; None when the list must be atomic."""
    if not isinstance(item, dict):
        return None if fld.keys else "v:" + json_text(item)
    keys = fld.keys
    if not keys:
        return None
    values = {}
    for key in keys:
        value = item.get(key, fld.key_defaults.get(key))
        if value is None:
            return None
        values[key] = value
    return "k:" + json_text(values)


def _list_elements(items: list, fld: Field) -> list[str] | None:
    """Elements of every item of a merge list, or None to treat the list as atomic."""
    if not fld.is_merge_list:
        return None
    elements = []
    for item in items:
        element = _item_element(item, fld)
        if element is None or (fld.keys and not isinstance(item, dict)):
            return None
        elements.append(element)
    return elements


def path_string(path: Path) -> str:
    """Upstream fieldpath.Path.String(): `.spec.containers[name="c"].image`."""
    parts = []
    for element in path:
        kind, body = element[:2], element[2:]
        if kind == "f:":
            parts.append("." + body)
        elif kind == "k:":
            keys = orjson.loads(body)
            parts.append("[" + ",".join(f"{k}={json_text(v)}" for k, v in sorted(keys.items()))
                         + "]")
        elif kind == "v:":
            parts.append(f"[={body}]")
        else:
            parts.append(f"[{body}]")
    return "".join(parts)


# --- field sets of values and of changes ---------------------------------------------------


def _tracked(obj: dict, subresource: str = "") -> dict:
    """A shallow view of `obj` holding only the fields a write to `subresource` may own: on
    the status subresource its status, elsewhere all but status and what upstream stripMeta
    drops."""
    if subresource == STATUS:
        status = obj.get("status")
        return {} if status is None else {"status": status}
    view = {k: v for k, v in obj.items() if k not in _UNTRACKED_TOP}
    meta = view.get("metadata")
    if isinstance(meta, dict):
        tracked = {k: v for k, v in meta.items() if k not in _STRIPPED_META}
        if tracked:
            view["metadata"] = tracked
        else:
            del view["metadata"]
    return view


#: a kind's name (its patch metadata comes from patch_strategies) or the Struct itself (a
#: custom resource's, built from its CRD schema: apiextensions/listtypes.py)
KindOrStruct = str | Struct


def struct_of(kind: KindOrStruct) -> Struct:
    return kind_schema(kind) if isinstance(kind, str) else kind


def field_set(obj: dict, kind: KindOrStruct, subresource: str = "") -> FieldSet:
    """The fields an applied configuration sets (upstream ToFieldSet) that a write to
    `subresource` may own."""
    out: FieldSet = set()
    _fields_of_map(_tracked(obj, subresource), struct_of(kind), (), out)
    return out


def _fields_of(value: Any, fld: Field, path: Path, out: FieldSet) -> None:
    if isinstance(value, dict) and value and not fld.atomic:
        _fields_of_map(value, fld.fields, path, out)
    elif isinstance(value, list) and value:
        elements = _list_elements(value, fld)
        if elements is None:
            out.add(path)
            return
        for element, item in zip(elements, value):
            item_path = path + (element,)
            out.add(item_path)
            if isinstance(item, dict):
                _fields_of_map(item, fld.fields, item_path, out)
    elif not isinstance(value, list) or not fld.is_merge_list:
        out.add(path)  # scalar, atomic, or empty map/list (an empty keyed list is nothing)


def _fields_of_map(value: dict, struct: Struct | None, path: Path, out: FieldSet) -> None:
    for key, sub in value.items():
        if sub is not None:
            _fields_of(sub, child(struct, key), path + ("f:" + key,), out)


def fields_tree(obj: dict, kind: KindOrStruct) -> dict[str, Any]:
    """`fields_v1(field_set(obj, kind))`, built directly: one walk, no path tuples, no sort
    of the whole set (each map's keys are sorted where they are made)."""
    return _tree_of_map(_tracked(obj), struct_of(kind))


#: JSON scalars: always one leaf, whatever the field's metadata says
_LEAF_TYPES = frozenset({str, int, float, bool})


def _tree_of_map(value: dict, struct: Struct | None) -> dict[str, Any]:
    # keys in order first ("f:" + key sorts as key does), so the node is built sorted; a
    # scalar is a leaf without a look at its field (the bulk of every object). This runs on
    # every create, so it is written for speed: ~2x the straightforward walk.
    node: dict[str, Any] = {}
    keys = sorted(value) if len(value) <= SORT_RUN else sorted_in_runs(value)
    get = struct.get if struct is not None else None
    for key in keys:
        sub = value[key]
        if sub is None:
            continue
        if type(sub) in _LEAF_TYPES:
            node["f:" + key] = {}
            continue
        subtree = _tree_of(sub, NO_FIELD if get is None else get(key, NO_FIELD))
        if subtree is not None:
            node["f:" + key] = subtree
    return node


def _tree_of(value: Any, fld: Field) -> dict[str, Any] | None:
    """The subtree of one field; `{}` for a leaf, None when it contributes nothing."""
    if isinstance(value, dict) and value and not fld.atomic:
        subtree = _tree_of_map(value, fld.fields)
        return subtree or None
    if isinstance(value, list) and value:
        elements = _list_elements(value, fld)
        if elements is None:
            return {}  # an atomic list is one leaf
        node: dict[str, Any] = {}
        for element, item in zip(elements, value):
            children = _tree_of_map(item, fld.fields) if isinstance(item, dict) else {}
            node[element] = {".": {}, **children} if children else {}
        return dict(sorted_in_runs(node.items())) if len(node) > 1 else node
    if not isinstance(value, list) or not fld.is_merge_list:
        return {}  # scalar, atomic, or empty map/list
    return None  # an empty keyed list is nothing


@dataclass
class _Changes:
    added: FieldSet = field(default_factory=set)
    modified: FieldSet = field(default_factory=set)
    removed: FieldSet = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.removed)


def _compare(old: Any, new: Any, fld: Field, path: Path, changes: _Changes) -> None:
    """Which leaves/items were added, modified or removed (upstream typed Compare).
    Equal subtrees are skipped with one C-level `==`, which keeps updates cheap."""
    if old == new and type(old) is type(new):
        return
    old_shape, new_shape = _shape(old, fld), _shape(new, fld)
    if old_shape is None and new_shape is None:
        changes.modified.add(path)
    elif isinstance(old_shape, dict) and isinstance(new_shape, dict):
        _compare_maps(old, new, fld.fields, path, changes)
    elif isinstance(old_shape, list) and isinstance(new_shape, list):
        _compare_lists(old, new, old_shape, new_shape, fld, path, changes)
    else:
        _fields_of(old, fld, path, changes.removed)
        _fields_of(new, fld, path, changes.added)


def _shape(value: Any, fld: Field) -> dict | list[str] | None:
    """None for a leaf; the map itself for a granular map; item elements for a keyed list."""
    if isinstance(value, dict):
        return value if value and not fld.atomic else None
    if isinstance(value, list):
        return _list_elements(value, fld)
    return None


def _compare_maps(old: dict, new: dict, struct: Struct | None, path: Path,
                  changes: _Changes) -> None:
    for key in old.keys() | new.keys():
        before, after = old.get(key), new.get(key)
        sub_path, sub_field = path + ("f:" + key,), child(struct, key)
        if before is None and after is not None:
            _fields_of(after, sub_field, sub_path, changes.added)
        elif after is None and before is not None:
            _fields_of(before, sub_field, sub_path, changes.removed)
        elif before is not None:
            _compare(before, after, sub_field, sub_path, changes)


def _compare_lists(old: list, new: list, old_elements: list[str], new_elements: list[str],
                   fld: Field, path: Path, changes: _Changes) -> None:
    old_items = dict(zip(old_elements, old))
    new_items = dict(zip(new_elements, new))
    for element, item in new_items.items():
        item_path = path + (element,)
        if element not in old_items:
            changes.added.add(item_path)
            if isinstance(item, dict):
                _fields_of_map(item, fld.fields, item_path, changes.added)
        elif isinstance(item, dict) and isinstance(old_items[element], dict):
            _compare_maps(old_items[element], item, fld.fields, item_path, changes)
    for element, item in old_items.items():
        if element not in new_items:
            item_path = path + (element,)
            changes.removed.add(item_path)
            if isinstance(item, dict):
                _fields_of_map(item, fld.fields, item_path, changes.removed)


def _compare_objects(old: dict | None, new: dict, kind: KindOrStruct,
                     subresource: str = "") -> _Changes:
    """What changed between two whole objects, over the fields a write to `subresource` may
    own only."""
    changes = _Changes()
    _compare_maps(_tracked(old or {}, subresource), _tracked(new, subresource),
                  struct_of(kind), (), changes)
    return changes


# --- Update: record who changed what -------------------------------------------------------


def record_update(old: dict | None, new: dict, *, manager: str, operation: str,
                  now: str, subresource: str = "", schema: Struct | None = None) -> None:
    """Record a create/update/patch by `manager` in `new["metadata"]["managedFields"]`.

    The fields that changed between `old` and `new` (every set field on create) join the
    manager's entry (identified with `new`'s apiVersion) and leave every other entry; removed
    fields leave every entry (upstream Updater.Update with force). The entry's time becomes
    `now` when it took any field. Untracked: apiVersion, kind, status and the server-set
    metadata (name, namespace, uid, resourceVersion, generation, creationTimestamp, ...); a
    write to the status subresource tracks status and nothing else (the strategy resets the
    rest, so a spec sent along changes nothing and is owned by no one).

    The entries start from `new`'s when they decode and are not empty (how a client edits
    managedFields upstream), `[]` or `[{}]` resets them, otherwise the live object's are
    carried over (and when those do not decode either, none): upstream decodeLiveOrNew. The
    result is always re-encoded (managedfields_codec.decode_entries), so entries a client
    sent are stored canonical or not at all, whatever the headers; entries left without
    fields go. A write to a `subresource` starts from the live object's entries whatever it
    sent (upstream ignoreManagedFieldsFromRequestObject) and records its entry under that
    subresource. This runs on every write, so it edits the FieldsV1 trees along the changed
    paths instead of converting whole trees to path sets."""
    meta = new.get("metadata")
    if not isinstance(meta, dict):
        return
    api_version = str(new.get("apiVersion", ""))
    if old is None and "managedFields" not in meta and not subresource:
        # a create with no entries to merge: every set field is the manager's, so build the
        # FieldsV1 tree in one walk (same result as the path-set route below, ~5x cheaper)
        tree = fields_tree(new, schema if schema is not None else str(new.get("kind", "")))
        if tree:
            meta["managedFields"] = [_entry(manager, operation, api_version, now, tree)]
            remember(meta["managedFields"])
        return
    entries = _starting_entries(None if subresource else meta.get("managedFields"), old)
    decoded = len(entries)
    changes = _compare_objects(old, new, schema if schema is not None else str(new.get("kind", "")),
                               subresource)
    if changes:
        entries = _take(entries, changes, (manager, operation, api_version, now, subresource))
    else:
        entries = [entry for entry in entries if entry["fieldsV1"]]
    if entries:
        if changes or len(entries) != decoded:
            remember(entries)  # the next write decodes them from the live object
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)


def _starting_entries(sent: Any, old: dict | None) -> list[dict]:
    """Upstream decodeLiveOrNew: fresh (unshared) canonical entries to edit."""
    if is_reset(sent):
        return []
    if sent is not None:
        decoded = decode_entries(sent)
        if decoded:
            return decoded
    old_meta = (old or {}).get("metadata")
    return decode_entries(old_meta.get("managedFields") if isinstance(old_meta, dict) else None
                          ) or []


def _entry(manager: str, operation: str, api_version: str, time: str | None,
           tree: dict, subresource: str = "") -> dict[str, Any]:
    """An encoded entry (upstream omits an empty manager, time and subresource)."""
    entry: dict[str, Any] = {"manager": manager} if manager else {}
    entry.update(operation=operation, apiVersion=api_version)
    if time is not None:
        entry["time"] = time
    entry.update(fieldsType="FieldsV1", fieldsV1=tree)
    if subresource:
        entry["subresource"] = subresource
    return entry


def _take(entries: list[dict], changes: _Changes,
          who: tuple[str, str, str, str, str]) -> list[dict]:
    """Entries after `who` = (manager, operation, apiVersion, now, subresource) made
    `changes`; edits the (decoded, so unshared) entries in place."""
    manager, operation, api_version, now, subresource = who
    mine_ident = (manager, operation, "" if operation == APPLY else api_version, subresource)
    taken = changes.added | changes.modified
    dropped = taken | changes.removed
    kept: list[dict] = []
    mine: dict | None = None
    for entry in entries:
        if ident(entry) == mine_ident:
            mine = entry
            continue
        tree = entry["fieldsV1"]
        for path in dropped:
            _tree_remove(tree, path)
        if tree:
            kept.append(entry)
    tree = mine["fieldsV1"] if mine else {}
    for path in changes.removed:
        _tree_remove(tree, path)
    if tree:
        _tree_insert(tree, taken)
    else:
        tree = fields_v1(taken)  # a first write: build the tree in one go
    if tree:
        time = now if taken or mine is None else mine.get("time")
        kept.append(_entry(manager, operation, api_version, time, tree, subresource))
    kept.sort(key=sort_key)
    return kept


def _tree_insert(tree: dict, paths: Iterable[Path]) -> None:
    """Add `paths` to a FieldsV1 tree in place, keeping upstream's canonical shape (a member
    with children carries `.`) and sorted keys. Each node that got a key is sorted once, when
    every path is in: sorting per insert made 14,000 new labels take minutes."""
    touched: dict[int, dict] = {}
    for path in paths:
        _insert_one(tree, path, touched)
    for node in touched.values():
        _sort_in_place(node)


def _insert_one(tree: dict, path: Path, touched: dict[int, dict]) -> None:
    node = tree
    last = len(path) - 1
    for depth, element in enumerate(path):
        sub = node.get(element)
        if not isinstance(sub, dict):
            sub = node[element] = {}
            touched[id(node)] = node
        elif depth == last and sub and "." not in sub:
            sub["."] = {}
            touched[id(sub)] = sub
        elif depth < last and not sub:
            sub["."] = {}  # a member leaf about to get children stays a member
        node = sub


def _sort_in_place(node: dict) -> None:
    items = sorted_in_runs(node.items())
    node.clear()
    node.update(items)


def _tree_remove(tree: dict, path: Path) -> None:
    """Drop `path` from a FieldsV1 tree in place (no-op when it is not a member); emptied
    non-member parents go, and a parent left with only `.` becomes a plain leaf."""
    trail = [tree]
    node: Any = tree
    for element in path:
        node = node.get(element)
        if not isinstance(node, dict):
            return
        trail.append(node)
    if node and "." not in node:
        return  # not a member, only an ancestor of members
    if len(node) > 1:
        del node["."]  # still an ancestor of other members
        return
    for depth in range(len(path), 0, -1):
        parent = trail[depth - 1]
        del parent[path[depth - 1]]
        if depth == 1 or parent:
            if parent.keys() == {"."}:
                parent.clear()  # a member with no children left is a plain leaf
            break


# --- Apply ---------------------------------------------------------------------------------


def server_side_apply(live: dict | None, applied: dict, *, kind: KindOrStruct, manager: str,
                      force: bool, now: str, subresource: str = "") -> dict:
    """Server-side apply `applied` by `manager` onto `live` (None: create); return the new
    object with the manager's `Apply` entry in metadata.managedFields.

    Maps merge, keyed lists merge by key, everything else is replaced; fields this manager
    applied last time and no longer applies are removed unless another manager owns them.
    Changing a field another manager owns is a 409 Conflict listing every such field, in
    upstream's words; with `force` the fields change hands instead. On the main resource
    `status` in the applied configuration is ignored; on the `status` subresource only
    `status` is applied, and the entry is the manager's Apply with `subresource: status`
    (an identity of its own: the same manager's main-resource apply is another entry)."""
    if not isinstance(applied, dict):
        raise bad_request("error decoding YAML: the applied configuration is not an object")
    applied_meta = applied.get("metadata")
    if isinstance(applied_meta, dict) and applied_meta.get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    struct = struct_of(kind)
    before = deep_copy(live) if live else {}
    before_meta = before.get("metadata") if isinstance(before.get("metadata"), dict) else {}
    entries = _decode_entries(before_meta)
    before_meta.pop("managedFields", None)
    merged = deep_copy(before)
    config = _tracked(applied, subresource) if subresource == STATUS else {
        k: v for k, v in applied.items() if k != "status"}
    _apply_map(merged, config, struct)

    api_version = str(applied.get("apiVersion") or before.get("apiVersion") or "")
    mine = _find(entries, manager, APPLY, api_version, subresource)
    last, applied_set = mine.fields, field_set(config, kind, subresource)
    others = [e for e in entries if e is not mine]
    stale = last - applied_set
    if stale:
        keep = applied_set.union(*(e.fields for e in others))
        _prune(merged, stale, keep, struct)

    changes = _compare_objects(before, merged, kind, subresource)
    if subresource == STATUS and "status" in before and "status" not in merged:
        merged["status"] = {}  # pruned empty: the status write must still replace it
    taken = changes.added | changes.modified
    conflicts = [(e, e.fields & taken) for e in others if e.fields & taken]
    if conflicts and not force:
        raise _conflict_error(conflicts)
    for entry in others:
        entry.fields -= taken
        entry.fields -= changes.removed
    if changes or mine.time is None or mine.fields != applied_set:
        mine.time = now
    mine.fields = applied_set
    if not isinstance(merged.get("metadata"), dict):
        merged["metadata"] = {}
    _encode_entries(merged["metadata"], entries)
    return merged


def _find(entries: list[_Entry], manager: str, operation: str, api_version: str,
          subresource: str = "") -> _Entry:
    """The entry of this manager identity, appended (empty) when it has none yet."""
    wanted = _Entry(manager, operation, api_version, None, subresource)
    for entry in entries:
        if entry.ident == wanted.ident:
            entry.api_version = api_version or entry.api_version
            return entry
    entries.append(wanted)
    return wanted


def _apply_map(live: dict, config: dict, struct: Struct | None) -> None:
    """Merge an applied configuration into `live` in place (structured-merge-diff Merge)."""
    for key, value in config.items():
        if value is None:
            live.pop(key, None)
            continue
        fld = child(struct, key)
        current = live.get(key)
        if isinstance(current, dict) and isinstance(value, dict) and not fld.atomic:
            _apply_map(current, value, fld.fields)
        elif isinstance(current, list) and isinstance(value, list) and fld.is_merge_list:
            live[key] = _apply_list(current, value, fld)
        else:
            live[key] = _without_nulls(value)


def _apply_list(live: list, config: list, fld: Field) -> list:
    live_elements, config_elements = _list_elements(live, fld), _list_elements(config, fld)
    if live_elements is None or config_elements is None:
        return _without_nulls(config)
    position = {element: index for index, element in enumerate(live_elements)}
    merged = list(live)
    for element, item in zip(config_elements, config):
        index = position.get(element)
        if index is None:
            position[element] = len(merged)
            merged.append(_without_nulls(item))
        elif isinstance(item, dict) and isinstance(merged[index], dict):
            _apply_map(merged[index], item, fld.fields)
    return merged


def _without_nulls(value: Any) -> Any:
    """A copy of an applied value; a null field in an applied configuration means unset."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _prune(obj: dict, stale: FieldSet, keep: FieldSet, struct: Struct) -> None:
    """Remove fields the applier dropped from its configuration, deepest first, unless a
    manager (the applier included) still owns them or something below them; maps and lists
    this empties go too, as Go's omitempty would drop them."""
    kept = {path[:i] for path in keep for i in range(1, len(path) + 1)}
    for path in sorted(stale, key=len, reverse=True):
        if path in kept or not path or _is_key_field(path):
            continue
        trail = _locate(obj, path, struct)
        if trail is None:
            continue
        depth = len(path)
        while depth:
            parent = trail[depth - 1]
            _remove_element(parent, path[depth - 1], trail[depth])
            depth -= 1
            if not depth or parent or path[:depth] in kept:
                break


def _is_key_field(path: Path) -> bool:
    """A key field of a list item stays as long as the item does."""
    if len(path) < 2 or not path[-2].startswith("k:"):
        return False
    return path[-1][2:] in orjson.loads(path[-2][2:])


def _locate(obj: dict, path: Path, struct: Struct) -> list[Any] | None:
    """The values along `path`: [obj, child, grandchild, ...]; None when it is absent."""
    trail: list[Any] = [obj]
    fld = Field(fields=struct)
    node: Any = obj
    for element in path:
        kind, body = element[:2], element[2:]
        if kind == "f:" and isinstance(node, dict) and body in node:
            fld = child(fld.fields, body)
            node = node[body]
        elif kind in ("k:", "v:") and isinstance(node, list):
            found = next((item for item in node if _item_element(item, fld) == element),
                         _MISSING)
            if found is _MISSING:
                return None
            node = found
        elif kind == "i:" and isinstance(node, list) and body.isdigit() and int(body) < len(
                node):
            node = node[int(body)]
        else:
            return None
        trail.append(node)
    return trail


def _remove_element(container: Any, element: str, value: Any) -> None:
    if isinstance(container, dict):
        container.pop(element[2:], None)
    elif isinstance(container, list):
        for index, item in enumerate(container):
            if item is value:
                del container[index]
                return


def _conflict_error(conflicts: list[tuple[_Entry, FieldSet]]) -> StatusError:
    """409 Conflict in upstream's words (managedfields/internal/conflict.go)."""
    conflicts = sorted(conflicts, key=lambda pair: pair[0].ident)
    flat = [(entry, path_string(path)) for entry, paths in conflicts for path in sorted(paths)]
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {e.printed()}",
               "field": text} for e, text in flat]
    if len(flat) == 1:
        entry, text = flat[0]
        message = f"Apply failed with 1 conflict: conflict with {entry.printed()}: {text}"
    else:
        lines = []
        for entry, paths in conflicts:
            lines.append(f"conflicts with {entry.printed()}:")
            lines.extend(f"- {path_string(path)}" for path in sorted(paths))
        message = f"Apply failed with {len(flat)} conflicts: " + "\n".join(lines)
    return StatusError(409, "Conflict", message, {"causes": causes})
