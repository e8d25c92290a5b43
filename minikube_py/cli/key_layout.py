"""Where a resource is stored when its key does not say its name: the hint `storage ls`
prints for an empty prefix (`/registry/nodes/` -> nodes are under `/registry/minions/`).

Kubernetes piece: the etcd key layout of pkg/registry (v1.0's `/registry/minions`,
`/registry/services/specs`, `/registry/services/endpoints`, `/registry/controllers`, still
upstream's today, and later ones such as `/registry/ingress` or group-qualified roots like
`/registry/apiregistration.k8s.io/apiservices`). The table is read from the registry's own
strategies (each one's `key_root` beside its resource name), not typed here, so a kind added
later brings its synonym with it.

Pure: `synonyms()` builds the table from (group, resource, key_root) triples and `suggest()`
rewrites a prefix; the inspector asks the store whether the rewritten prefix holds keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Synonym:
    """A resource (of `group`) whose keys live under `key_root`, not under its name."""

    resource: str
    group: str
    key_root: str

    @property
    def layout(self) -> str:
        """Which layout puts it there: the core group's roots are v1.0's."""
        return "the v1.0 layout" if not self.group else "upstream's key layout"


@dataclass(frozen=True)
class Suggestion:
    """An empty `prefix` and where its objects are: `stored_prefix`."""

    prefix: str
    stored_prefix: str
    synonym: Synonym
    root: str

    def message(self) -> str:
        """`nodes are stored under /registry/minions/ (the v1.0 layout)`, plus the rewritten
        prefix when it says more than the resource's root."""
        root = f"/{self.root}/{self.synonym.key_root}/"
        name = self.synonym.resource if not self.synonym.group \
            else f"{self.synonym.resource}.{self.synonym.group}"
        text = f"{name} are stored under {root} ({self.synonym.layout})"
        if self.stored_prefix.rstrip("/") != root.rstrip("/"):
            text += f"; try {self.stored_prefix}"
        return text


def synonyms(resources: Iterable[tuple[str, str, str]]) -> dict[str, Synonym]:
    """(group, resource, key_root) of every stored resource -> the spellings of a resource
    that are *not* where it is stored: its plural when the root differs (`nodes`), and its
    `group/plural` (`apps/deployments`, stored under `deployments`). Virtual resources (no
    key_root) have no keys and no entry."""
    resources = list(resources)
    table: dict[str, Synonym] = {}
    for group, resource, key_root in resources:
        if not key_root:
            continue
        synonym = Synonym(resource, group, key_root)
        spellings = [resource] + ([f"{group}/{resource}"] if group else [])
        for spelled in spellings:
            if spelled != key_root:
                table.setdefault(spelled, synonym)
    # a spelling that is itself some resource's real root is not a synonym (it has keys)
    roots = {key_root for _, _, key_root in resources if key_root}
    return {spelled: s for spelled, s in table.items() if spelled not in roots}


def suggest(prefix: str, table: Mapping[str, Synonym]) -> Suggestion | None:
    """The synonym `prefix` uses right after its root segment (`/registry/nodes/node-1` ->
    `/registry/minions/node-1`), or None. The longest spelling wins (`apps/deployments`
    over a resource named `apps`)."""
    parts = prefix.strip("/").split("/")
    if len(parts) < 2 or not parts[0]:
        return None
    root, rest = parts[0], parts[1:]
    for width in (2, 1):
        spelled = "/".join(rest[:width])
        synonym = table.get(spelled) if len(rest) >= width else None
        if synonym is None:
            continue
        if "/".join(rest).startswith(synonym.key_root + "/"):
            continue  # already spelled the stored way (`services/specs/...`)
        tail = rest[width:]
        stored = "/".join([root, synonym.key_root, *tail])
        trailing = "/" if prefix.endswith("/") or not tail else ""
        return Suggestion(prefix, f"/{stored}{trailing}", synonym, root)
    return None


def registry_synonyms() -> dict[str, Synonym]:
    """The table of the registry's built-in resources (imported here, on an empty listing
    only: the registry costs ~0.3 s to import, which `storage ls` otherwise never pays)."""
    from ..registry.resources import STORED

    return synonyms((s.group, s.resource, s.key_root) for s in STORED)
