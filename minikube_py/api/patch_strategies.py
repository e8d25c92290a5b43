"""Which lists merge and on what key: the data strategic merge patch and server-side apply read.

Kubernetes piece: the `patchStrategy`/`patchMergeKey` struct tags of k8s.io/api (core/v1,
apps/v1, batch/v1, meta/v1 ObjectMeta) that apimachinery's strategicpatch reads by
reflection, plus the `+listType=map`/`+listMapKey`/`+mapType=atomic`/`+structType=atomic`
markers that structured-merge-diff reads from the OpenAPI schema for server-side apply.

Why a table: we have no Go types to reflect on, and both PATCH flavours must agree on which
lists are keyed — `kubectl apply` sends `$setElementOrder/containers` and expects the server
to merge `containers` by `name`, not to replace the list. A field that is not in the table
behaves like upstream's default: maps merge recursively, lists are replaced (atomic).

A `Struct` maps a JSON field name to its `Field`; `Field.fields` is the `Struct` of the
value (for a map) or of each item (for a list of objects).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

MERGE = "merge"
REPLACE = "replace"


@dataclass(frozen=True, slots=True)
class Field:
    """Patch metadata of one field (upstream LookupPatchMetadata result + SSA list type).

    strategy: "merge" — lists merge (objects by `merge_key`, scalars as a set);
    "replace" — a map is replaced whole; "" — default (maps merge, lists replace).
    retain_keys: upstream's `retainKeys` strategy (informational: `$retainKeys` directives
    are honoured wherever they appear, as upstream does on apply).
    list_keys/key_defaults: server-side apply's `listMapKeys` when they differ from
    `(merge_key,)`, and the schema defaults of key fields (ports' protocol is "TCP").
    atomic: server-side apply owns this map/struct as one leaf (`+mapType=atomic`).
    """

    strategy: str = ""
    merge_key: str = ""
    fields: Mapping[str, Field] | None = None
    retain_keys: bool = False
    list_keys: tuple[str, ...] = ()
    key_defaults: Mapping[str, Any] = field(default_factory=dict)
    atomic: bool = False

    @property
    def is_merge_list(self) -> bool:
        return self.strategy == MERGE

    @property
    def keys(self) -> tuple[str, ...]:
        """Keys identifying an item of a keyed list for server-side apply."""
        if self.list_keys:
            return self.list_keys
        return (self.merge_key,) if self.merge_key else ()


Struct = Mapping[str, Field]
NO_FIELD = Field()


def _struct(**fields: Field) -> Struct:
    return MappingProxyType(fields)


def _keyed(key: str, item: Struct | None = None, **extra: Any) -> Field:
    return Field(strategy=MERGE, merge_key=key, fields=item, **extra)


def _obj(item: Struct) -> Field:
    return Field(fields=item)


_TCP = MappingProxyType({"protocol": "TCP"})
_CONDITIONS = _keyed("type")
_SELECTOR = Field(atomic=True)          # metav1.LabelSelector: +structType=atomic
_ATOMIC_MAP = Field(atomic=True)        # +mapType=atomic (nodeSelector, service selector)

OBJECT_META: Struct = _struct(
    finalizers=Field(strategy=MERGE),
    ownerReferences=_keyed("uid"),
)

CONTAINER: Struct = _struct(
    ports=_keyed("containerPort", list_keys=("containerPort", "protocol"), key_defaults=_TCP),
    env=_keyed("name"),
    volumeMounts=_keyed("mountPath"),
    volumeDevices=_keyed("devicePath"),
)

POD_SPEC: Struct = _struct(
    volumes=_keyed("name", retain_keys=True),
    initContainers=_keyed("name", CONTAINER),
    containers=_keyed("name", CONTAINER),
    ephemeralContainers=_keyed("name", CONTAINER),
    imagePullSecrets=_keyed("name"),
    hostAliases=_keyed("ip"),
    topologySpreadConstraints=_keyed(
        "topologyKey", list_keys=("topologyKey", "whenUnsatisfiable")),
    schedulingGates=_keyed("name"),
    resourceClaims=_keyed("name", retain_keys=True),
    nodeSelector=_ATOMIC_MAP,
)

POD_STATUS: Struct = _struct(
    conditions=_CONDITIONS,
    podIPs=_keyed("ip"),
    hostIPs=_keyed("ip"),
    resourceClaimStatuses=_keyed("name", retain_keys=True),
)

POD_TEMPLATE_SPEC: Struct = _struct(metadata=_obj(OBJECT_META), spec=_obj(POD_SPEC))
_TEMPLATE = _obj(POD_TEMPLATE_SPEC)
_CONDITIONED_STATUS = _obj(_struct(conditions=_CONDITIONS))


def _kind(spec: Struct | None = None, status: Struct | None = None, **top: Field) -> Struct:
    fields: dict[str, Field] = {"metadata": _obj(OBJECT_META)}
    if spec is not None:
        fields["spec"] = _obj(spec)
    if status is not None:
        fields["status"] = _obj(status)
    fields.update(top)
    return MappingProxyType(fields)


_WORKLOAD_SPEC: Struct = _struct(template=_TEMPLATE, selector=_SELECTOR)
_CONDITIONS_ONLY: Struct = _struct(conditions=_CONDITIONS)
_JOB_SPEC: Struct = _struct(template=_TEMPLATE, selector=_SELECTOR)

KINDS: Mapping[str, Struct] = MappingProxyType({
    "Pod": _kind(POD_SPEC, POD_STATUS),
    "PodTemplate": _kind(template=_TEMPLATE),
    "ReplicationController": _kind(
        _struct(template=_TEMPLATE, selector=_ATOMIC_MAP), _CONDITIONS_ONLY),
    "ReplicaSet": _kind(_WORKLOAD_SPEC, _CONDITIONS_ONLY),
    "Deployment": _kind(
        _struct(template=_TEMPLATE, selector=_SELECTOR, strategy=Field(retain_keys=True)),
        _CONDITIONS_ONLY),
    "DaemonSet": _kind(_WORKLOAD_SPEC, _CONDITIONS_ONLY),
    "StatefulSet": _kind(_WORKLOAD_SPEC, _CONDITIONS_ONLY),
    "Job": _kind(_JOB_SPEC, _CONDITIONS_ONLY),
    "CronJob": _kind(_struct(jobTemplate=_obj(_struct(spec=_obj(_JOB_SPEC))))),
    "Service": _kind(
        _struct(ports=_keyed("port", list_keys=("port", "protocol"), key_defaults=_TCP),
                selector=_ATOMIC_MAP),
        _CONDITIONS_ONLY),
    "Node": _kind(
        _struct(podCIDRs=Field(strategy=MERGE)),
        _struct(conditions=_CONDITIONS, addresses=_keyed("type"))),
    "Namespace": _kind(status=_CONDITIONS_ONLY),
    "PersistentVolumeClaim": _kind(status=_CONDITIONS_ONLY),
    "ComponentStatus": _kind(conditions=_CONDITIONS),
    "ServiceAccount": _kind(secrets=_keyed("name")),
    "Endpoints": _kind(),
    "ConfigMap": _kind(),
    "Secret": _kind(),
    "Event": _kind(),
    "LimitRange": _kind(),
    "ResourceQuota": _kind(),
    "PersistentVolume": _kind(),
})

#: What an unknown kind (a CRD, say) gets: ObjectMeta's lists are still keyed — every object
#: has ObjectMeta — and everything else behaves like JSON merge patch (lists replaced).
UNKNOWN_KIND: Struct = _kind()


def kind_schema(kind: str) -> Struct:
    """The top-level `Struct` of `kind`; `UNKNOWN_KIND` when we have no table for it.

    Upstream refuses strategic merge patch for kinds it has no Go type for (415); we treat
    them as merge patch plus directives instead, which is what a CRD user would expect."""
    return KINDS.get(kind, UNKNOWN_KIND)


def is_known_kind(kind: str) -> bool:
    return kind in KINDS


def child(struct: Struct | None, name: str) -> Field:
    """The metadata of `name` inside `struct`; `NO_FIELD` when unknown (merge maps,
    replace lists)."""
    if struct is None:
        return NO_FIELD
    return struct.get(name, NO_FIELD)
