"""The bootstrap RBAC policy, read from upstream's own data files and reconciled when the API
server starts with RBAC enabled.

Kubernetes pieces: plugin/pkg/auth/authorizer/rbac/bootstrappolicy (policy.go's ClusterRoles()
and ClusterRoleBindings(), controller_policy.go's controller roles, namespace_policy.go's
kube-system/kube-public roles) and pkg/registry/rbac/rest/storage_rbac.go's post-start hook
`rbac/bootstrap-roles` with pkg/registry/rbac/reconciliation: a missing role or binding is
created; an existing one annotated `rbac.authorization.kubernetes.io/autoupdate: "true"` gets
the missing rules (subjects) added; `"false"` leaves it alone.

The policy is not typed here: upstream publishes it as the golden files its own unit test
compares policy.go against (bootstrappolicy/testdata/*.yaml), and those files ship unchanged
as package data (policy/, each with a header naming its source commit). They are parsed once,
on first use (PyYAML's C loader when built), with the nulls a Go encoder writes
(`creationTimestamp: null`, an aggregated role's `rules: null`) dropped, as a Go decoder would.

As upstream, admin/edit/view are aggregated ClusterRoles (aggregation.py fills their rules)
over system:aggregate-to-{admin,edit,view}. An aggregated role's rules are the controller's:
reconciliation only adds its missing selectors.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Coroutine
from importlib import resources
from typing import Any

import orjson
import structlog
import yaml

from ....api import errors

log = structlog.get_logger(component="apiserver.rbac.bootstrap")

Obj = dict[str, Any]
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"

#: resource -> the data files holding its bootstrap objects, in reconcile order
POLICY_FILES: dict[str, tuple[str, ...]] = {
    "clusterroles": ("cluster-roles.yaml", "controller-roles.yaml"),
    "clusterrolebindings": ("cluster-role-bindings.yaml", "controller-role-bindings.yaml"),
    "roles": ("namespace-roles.yaml",),
    "rolebindings": ("namespace-role-bindings.yaml",),
}
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _copy(value: Any) -> Any:
    """A deep copy of JSON data (several times faster than copy.deepcopy)."""
    return orjson.loads(orjson.dumps(value))


def _without_nulls(value: Any) -> Any:
    """`value` with every null-valued mapping key removed (what a Go decoder leaves unset)."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


@functools.cache
def policy() -> dict[str, tuple[Obj, ...]]:
    """resource -> the bootstrap objects of that resource, parsed once. Shared: callers copy
    before handing an object to anything that writes to it."""
    data = resources.files(__package__).joinpath("policy")
    out: dict[str, tuple[Obj, ...]] = {}
    for resource, files in POLICY_FILES.items():
        items: list[Obj] = []
        for name in files:
            document = yaml.load(data.joinpath(name).read_text(encoding="utf-8"), Loader=_LOADER)
            items += (_without_nulls(item) for item in document["items"])
        out[resource] = tuple(items)
    return out


async def load_policy() -> dict[str, tuple[Obj, ...]]:
    """policy(), parsed on a worker thread the first time (~60 ms of YAML decoding that must
    not hold the event loop); free afterwards. Not offload.run: that is for a request's
    steps, and would mark the calling task (the server's start) heavy for the rest of it."""
    if policy.cache_info().currsize:
        return policy()
    return await asyncio.to_thread(policy)


def cluster_roles() -> list[Obj]:
    """The bootstrap ClusterRoles (controller roles `system:controller:*` included), copies."""
    return _copy(list(policy()["clusterroles"]))


def cluster_role_bindings() -> list[Obj]:
    """The bootstrap ClusterRoleBindings (controller bindings included), copies."""
    return _copy(list(policy()["clusterrolebindings"]))


@functools.cache
def _cluster_role_index() -> dict[str, Obj]:
    return {role["metadata"]["name"]: role for role in policy()["clusterroles"]}


def cluster_role_rules(name: str) -> list[Obj]:
    """The rules of bootstrap ClusterRole `name` (copies; [] for an aggregated role); KeyError
    for a name the policy does not have. The Node authorizer's NodeRules are
    `cluster_role_rules("system:node")`, as upstream's bootstrappolicy.NodeRules()."""
    return _copy(_cluster_role_index()[name].get("rules") or [])


def _items(obj: Obj, field: str) -> list[Any]:
    """The list `field` reconciles: rules/subjects, or an aggregationRule's selectors."""
    value = obj.get(field)
    if field == "aggregationRule":
        value = value.get("clusterRoleSelectors") if isinstance(value, dict) else None
    return value if isinstance(value, list) else []


def _missing(field: str, have: Obj, want: Obj) -> list[Any]:
    current = _items(have, field)
    return [item for item in _items(want, field) if item not in current]


def _field(resource: str, obj: Obj) -> str:
    if resource.endswith("bindings"):
        return "subjects"
    return "aggregationRule" if "aggregationRule" in obj else "rules"


async def _plan(registry: Any, wanted: Obj, field: str) -> Coroutine[Any, Any, str] | None:
    """What reconciling `wanted` needs: None when nothing (it exists with every `field` item,
    or its autoupdate annotation is "false"), else the write to make — a create, or an update
    adding the missing items — whose result is "created", "updated" or "" (lost a race)."""
    meta = wanted["metadata"]
    namespace, name = meta.get("namespace", ""), meta["name"]
    try:
        current = await registry.get(namespace, name)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
        return _create(registry, namespace, wanted)
    annotations = (current.get("metadata") or {}).get("annotations") or {}
    if annotations.get(AUTOUPDATE) == "false" or not _missing(field, current, wanted):
        return None
    return _add_missing(registry, namespace, name, wanted, field)


async def _create(registry: Any, namespace: str, wanted: Obj) -> str:
    try:
        await registry.create(namespace, _copy(wanted))
    except errors.StatusError as exc:
        if exc.code != 409:
            raise
        return ""
    return "created"


async def _add_missing(registry: Any, namespace: str, name: str, wanted: Obj,
                       field: str) -> str:
    def add_missing(latest: Obj | None) -> Obj:
        if latest is None:
            return _copy(wanted)
        merged = [*_items(latest, field), *_copy(_missing(field, latest, wanted))]
        if field == "aggregationRule":
            latest[field] = {"clusterRoleSelectors": merged}
        else:
            latest[field] = merged
        return latest

    await registry.update(namespace, name, add_missing)
    return "updated"


_KIND_LABEL = {"clusterroles": "clusterrole", "clusterrolebindings": "clusterrolebinding",
               "roles": "role", "rolebindings": "rolebinding"}


async def reconcile(cluster_roles_registry: Any, bindings_registry: Any,
                    roles_registry: Any = None, role_bindings_registry: Any = None
                    ) -> dict[str, str]:
    """The post-start hook: cluster roles, cluster role bindings, then (when their registries
    are given) the namespaced roles and bindings of kube-system and kube-public — roles before
    the bindings that refer to them, as upstream. The namespaces must exist (the bootstrap
    controller creates them first). Returns what changed: `<kind>/[<namespace>/]<name>` ->
    "created" or "updated"."""
    registries = {"clusterroles": cluster_roles_registry,
                  "clusterrolebindings": bindings_registry,
                  "roles": roles_registry, "rolebindings": role_bindings_registry}
    done: dict[str, str] = {}
    for resource, wanted in (await load_policy()).items():
        registry = registries[resource]
        if registry is None:
            continue
        # reads one by one (they never wait), then one resource's writes at once: they share
        # the store's WAL rounds — one fsync for the lot on a fresh data directory
        writes = [(obj, write) for obj in wanted
                  if (write := await _plan(registry, obj, _field(resource, obj))) is not None]
        actions = await asyncio.gather(*(write for _, write in writes))
        for (obj, _), action in zip(writes, actions, strict=True):
            if action:
                meta = obj["metadata"]
                where = f"{meta['namespace']}/" if meta.get("namespace") else ""
                done[f"{_KIND_LABEL[resource]}/{where}{meta['name']}"] = action
    if done:
        log.info("bootstrap RBAC policy reconciled", changed=len(done))
    return done
