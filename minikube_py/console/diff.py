"""How one stored revision of a key differs from the previous one: JSON-path changes and
unified lines.

Kubernetes piece: none upstream serves this; it is what `kubectl diff` shows (a unified diff
of two objects) applied to two revisions of one etcd key, plus the field-level view
managedFields' field sets describe (`.status.phase: Pending -> Running`). Pure: decoded values
in, JSON out; the store browser and the journey's store hops both use it.
"""

from __future__ import annotations

import difflib
from typing import Any

import orjson

#: changes listed at most (a whole new object lists each leaf: a pod has ~60)
MAX_CHANGES = 500
#: where server-side apply keeps its field sets: listed after the object's own changes
BOOKKEEPING = ".metadata.managedFields"
#: unified lines at most (a 3 MiB ConfigMap must not become a 3 MiB page)
MAX_LINES = 2000


def _segment(key: str) -> str:
    """A JSON-path step: `.name`, or `["a.b/c"]` for keys a dot would make ambiguous."""
    if key and all(ch.isalnum() or ch in "_-" for ch in key):
        return f".{key}"
    return "[" + orjson.dumps(key).decode() + "]"


def changes(old: Any, new: Any, path: str = "", out: list[dict[str, Any]] | None = None,
            ) -> list[dict[str, Any]]:
    """Leaf-level changes from `old` to `new`: `{"path", "op": add|remove|replace, "old",
    "new"}`, objects walked key by key, lists index by index (a list whose length changed is
    still walked: the tail is added or removed)."""
    if out is None:
        out = []
    if len(out) >= MAX_CHANGES:
        return out
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys(), key=str):
            step = path + _segment(str(key))
            if key not in new:
                out.append({"path": step, "op": "remove", "old": old[key]})
            elif key not in old:
                out.append({"path": step, "op": "add", "new": new[key]})
            else:
                changes(old[key], new[key], step, out)
        return out
    if isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            step = f"{path}[{i}]"
            if i >= len(new):
                out.append({"path": step, "op": "remove", "old": old[i]})
            elif i >= len(old):
                out.append({"path": step, "op": "add", "new": new[i]})
            else:
                changes(old[i], new[i], step, out)
        return out
    if old != new or type(old) is not type(new):
        out.append({"path": path or ".", "op": "replace", "old": old, "new": new})
    return out


def _lines(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return value.splitlines()
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
                        | orjson.OPT_NON_STR_KEYS).decode().splitlines()


def unified(old: Any, new: Any, *, old_name: str, new_name: str) -> list[str]:
    """`diff -u` of the two values as indented JSON with sorted keys (text values as they
    are), at most MAX_LINES lines."""
    lines = list(difflib.unified_diff(_lines(old), _lines(new), fromfile=old_name,
                                      tofile=new_name, lineterm="", n=3))
    if len(lines) > MAX_LINES:
        lines = [*lines[:MAX_LINES], f"... {len(lines) - MAX_LINES} more lines"]
    return lines


def diff(old: Any, new: Any, *, old_name: str = "previous", new_name: str = "this",
         ) -> dict[str, Any]:
    """Both views of one change. `old` None: the key was created; `new` None: deleted."""
    if old is None or new is None:
        found: list[dict[str, Any]] = []
    else:
        # the object's own fields first, the field managers' bookkeeping after them
        found = sorted(changes(old, new), key=lambda c: c["path"].startswith(BOOKKEEPING))
    return {"changes": found, "truncated": len(found) >= MAX_CHANGES,
            "unified": unified(old, new, old_name=old_name, new_name=new_name)}
