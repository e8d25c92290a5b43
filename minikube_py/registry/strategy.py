"""What makes one resource different from another: its strategy.

Kubernetes v1.0 piece: pkg/registry/generic (etcd.Etcd's KeyFunc, NewFunc, PredicateFunc,
CreateStrategy, UpdateStrategy, DeleteStrategy) and each resource's `strategy.go`. The generic
registry (generic.py) is *configured* by one Strategy per resource, never subclassed: a new
resource is a Strategy value, not new handler code. The hooks below are the few places where a
resource genuinely behaves differently (pods' graceful deletion, namespaces' Terminating phase,
services' IP allocation, events' TTL).

A resource may also be served in one group/version and stored as another's objects (`StoredAs`,
upstream's cohabitating resources: events.k8s.io/v1 Events are core/v1 Events in etcd). The
registry converts at its edges and the watch fan-out of the stored resource serves both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping, Protocol

from ..api.fields import FieldSelector

if TYPE_CHECKING:
    from ..apiextensions.conversion import Converter

Obj = dict[str, Any]


class Registry(Protocol):
    """What a strategy's hooks may use of the registry that calls them (generic.Registry is
    the one): its strategy, its `extras` (allocators and the like) and reads and creates of
    its own resource. A protocol, so this module need not import generic.py, which imports it."""

    strategy: Strategy
    extras: dict[str, Any]

    async def get(self, namespace: str, name: str) -> Obj: ...

    async def create(self, namespace: str, obj: Obj, *, dry_run: bool = False) -> Obj: ...

#: `Strategy.spec_fields` for "everything that is not metadata (or status)"
ALL_BUT_METADATA = ("*",)

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def _get(obj: Obj, *path: str) -> Any:
    cur: Any = obj
    for part in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def field_text(value: Any) -> str:
    """Field-selector form of a value: upstream formats everything as a string."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: the string a field selector compares an absent field with: upstream's ToSelectableFields
#: formats the Go field, so an unset bool is "false" and an unset integer "0", never ""
_GO_ZERO = {"string": "", "bool": "false", "int": "0"}


def field_getter(*paths: str) -> Callable[[Obj], dict[str, str]]:
    """Field-selector attributes from dotted paths, plus metadata.name/namespace (always).

    A path may name its Go type after a colon (`spec.unschedulable:bool`, `status.replicas:int`;
    string when omitted): an object without the field then matches the Go zero value, as
    upstream, where `spec.unschedulable=false` selects every node that does not set it."""
    split = []
    for spec in paths:
        name, _, go_type = spec.partition(":")
        split.append((name, tuple(name.split(".")), _GO_ZERO[go_type or "string"]))

    def attrs(obj: Obj) -> dict[str, str]:
        meta = obj.get("metadata") or {}
        out = {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}
        for name, parts, zero in split:
            value = _get(obj, *parts)
            out[name] = zero if value is None else field_text(value)
        return out

    return attrs


def field_names(*paths: str) -> tuple[str, ...]:
    """The selectable field names of `field_getter` paths (their types dropped)."""
    return tuple(spec.partition(":")[0] for spec in paths)


@dataclass(frozen=True)
class SubresourceSpec:
    """A subresource entry in discovery (`pods/status`) and the verbs it serves."""

    name: str
    verbs: tuple[str, ...]
    kind: str = ""  # response kind when not the parent's (Scale, Binding)
    group: str | None = None
    version: str | None = None


@dataclass(frozen=True, eq=False)
class StoredAs:
    """How a resource is a view of another resource's stored objects.

    Upstream: the storage factory's cohabitating resources plus the scheme's conversions and
    field label conversions. `storage` is the resource whose keys, stored JSON and watch this
    one shares; `to_storage`/`from_storage` convert whole objects (pure, never mutating their
    input); `field_labels` maps every fieldSelector label this resource accepts to the label
    the storage selects on (`regarding.name` -> `involvedObject.name`)."""

    storage: Strategy
    to_storage: Callable[[Obj], Obj]
    from_storage: Callable[[Obj], Obj]
    field_labels: Mapping[str, str]

    def storage_selector(self, fields: FieldSelector | None) -> FieldSelector | None:
        """A selector in this resource's labels, in the storage's (kept as is when empty)."""
        if fields is None or fields.empty():
            return fields
        return FieldSelector(tuple((self.field_labels.get(name, name), op, value)
                                   for name, op, value in fields.requirements))


@dataclass(frozen=True)
class Strategy:
    """The per-resource configuration of the generic registry."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    key_root: str  # under the etcd prefix: "pods" -> /registry/pods/<ns>/<name>
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[SubresourceSpec, ...] = ()
    #: the object has a status that only the status subresource writes
    has_status: bool = False
    #: top-level fields that are "spec" (a change bumps metadata.generation); empty = none;
    #: ALL_BUT_METADATA = every field but apiVersion, kind, metadata (and status when the
    #: status subresource owns it), as custom resources count it
    spec_fields: tuple[str, ...] = ("spec",)
    field_attrs: Callable[[Obj], dict[str, str]] = field(default_factory=field_getter)
    #: fields other than metadata.name/namespace accepted in a fieldSelector
    selectable_fields: tuple[str, ...] = ()
    #: a second field the watch fan-out indexes watchers by (pods: spec.nodeName)
    watch_index_field: str | None = None
    allow_create_on_update: bool = False
    #: hook: initialise what the server owns on create (status, allocated IPs); may raise
    prepare_create: Callable[[Registry, Obj], Awaitable[None]] | None = None
    #: hook: after a successful create failed later / after delete (release allocations)
    release: Callable[[Registry, Obj], Awaitable[None]] | None = None
    #: hook: adjust an update (services: drop type-dependent fields, allocate); may return a
    #: finish callback the registry awaits with whether the update was written (upstream
    #: BeginUpdate's FinishFunc: keep or give back what the hook allocated)
    prepare_update: Callable[[Registry, Obj, Obj],
                             Awaitable[Callable[[bool], Awaitable[None]] | None]] | None = None
    #: hook: decide a delete; returns the grace period (pods) or None for immediate
    graceful_delete: Callable[[Obj, dict[str, Any]], int | None] | None = None
    #: hook: replace deletion entirely (namespaces go Terminating); returns the new object or
    #: None to fall through to the normal delete
    delete_override: Callable[[Obj], Obj | None] | None = None
    #: when an update leaves the object deletable (default: terminating, no finalizers, no
    #: grace period left — upstream ShouldDeleteDuringUpdate)
    finalized: Callable[[Obj], bool] | None = None
    #: updates through subresources other than status: name -> (old, body) -> new
    subresource_updates: Mapping[str, Callable[[Obj, Obj], Obj]] = field(default_factory=dict)
    #: events: keys carry a lease so they expire after --event-ttl
    ttl: bool = False
    #: objects of this kind cannot be deleted (default namespaces, system priority classes)
    undeletable: frozenset[str] = frozenset()
    #: why, in the 403 a delete of one of them gets
    undeletable_reason: str = "this namespace may not be deleted"
    #: upstream's Store.ReturnDeletedObject: a delete that removes the object answers with it
    #: (pods, services, namespaces, service accounts); every other kind answers a Success
    #: Status naming what was deleted
    return_deleted_object: bool = False
    singular: str = ""
    #: a view of another resource's stored objects (events.k8s.io/v1 Events); field_attrs
    #: then reads the stored form, in the storage's labels
    stored_as: StoredAs | None = None
    #: the key of this resource's validators in api/validation when it is not the kind
    #: (events.k8s.io/v1 Events: stored as core Events, held to their version's rules)
    validation: str = ""
    #: a custom resource served from a CustomResourceDefinition (registry/crds.py): no
    #: strategic merge patch (415, as upstream), no built-in schema
    custom: bool = False
    #: metadata fields a status-subresource write takes from the body besides the status
    #: (upstream's deploymentStatusStrategy resets only spec and labels, so the deployment
    #: controller records its revision annotation with the status, as UpdateStatus)
    status_metadata: tuple[str, ...] = ()
    #: hook: a status-subresource write after the status was copied in (custom resources:
    #: their schema validates the status); may raise
    prepare_status: Callable[[Registry, Obj, Obj], Awaitable[None]] | None = None
    #: the resource's own Table printer (upstream TableConvertor; custom resources print
    #: their CRD's additionalPrinterColumns); None = api/tables.py by kind
    table_convertor: Any = None
    #: server-side apply's list/map types when not api/patch_strategies' table for the kind
    #: (a custom resource's, read from its CRD schema)
    apply_struct: Mapping[str, Any] | None = None
    #: unknown fields of a write's body when not the built-in OpenAPI schemas' (custom
    #: resources: what pruning would drop), for fieldValidation
    unknown_fields: Callable[[Obj], list[str]] | None = None
    #: the scale subresource of a custom resource (registry/crd_scale.py ScalePaths)
    scale: Any = None
    #: a version of a multi-version CRD (apiextensions/conversion.py): objects are stored in
    #: the converter's storage version and converted at the registry's edges, asynchronously
    #: (a webhook may be called)
    conversion: Converter | None = None
    #: the `Warning` every request to this version gets (a CRD version marked deprecated)
    deprecation_warning: str = ""
    #: upstream's DefaultGarbageCollectionPolicy: the propagation a delete without
    #: propagationPolicy/orphanDependents gets ("" = Background; batch/v1 Jobs: "Orphan")
    default_gc_policy: str = ""
    #: the `Warning` a delete that relied on that default gets (upstream job REST's
    #: deleteWarning)
    default_gc_warning: str = ""

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def api_version(self) -> str:
        return self.group_version

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    @property
    def qualified_resource(self) -> str:
        return f"{self.resource}.{self.group}" if self.group else self.resource

    def allowed_fields(self) -> frozenset[str]:
        """Field-selector labels accepted; a cluster-scoped custom resource has no
        metadata.namespace (upstream crConverter.ConvertFieldLabel)."""
        meta = ("metadata.name",) if self.custom and not self.namespaced else (
            "metadata.name", "metadata.namespace")
        return frozenset(meta + self.selectable_fields)

    def subresource(self, name: str) -> SubresourceSpec | None:
        for sub in self.subresources:
            if sub.name == name:
                return sub
        return None
