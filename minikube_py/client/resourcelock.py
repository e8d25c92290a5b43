"""Leader-election locks: where the LeaderElectionRecord lives in the API.

Kubernetes piece: client-go tools/leaderelection/resourcelock (interface.go, leaselock.go,
endpointslock.go, configmaplock.go, multilock.go). Three places a record can live:

- `leases` (the default since 1.20 and the only lock 1.31's client-go still builds): a
  coordination.k8s.io/v1 Lease whose spec *is* the record — holderIdentity,
  leaseDurationSeconds, acquireTime/renewTime (MicroTime), leaseTransitions;
- `endpoints` and `configmaps` (v1.3's design, removed from client-go in 1.24, kept here for
  teaching and for older components): the record as JSON in the annotation
  `control-plane.alpha.kubernetes.io/leader` of an Endpoints or ConfigMap, times as
  metav1.Time (seconds);
- `endpointsleases` / `configmapsleases` (the 1.17-1.25 migration locks, MultiLock): both at
  once, the annotation primary, the Lease secondary, so old and new candidates exclude each
  other.

The record format is upstream's byte for byte (field names and order, time formats), so one of
our components and an upstream one contend for the same lock. Every write is a compare-and-swap
on the resourceVersion of the object last read (`update` needs a `get` or `create` first).
Conversions are pure functions; the lock classes only do the I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

import orjson

from ..api import meta
from ..api.errors import StatusError
from .resources import CONFIGMAPS, ENDPOINTS, LEASES, Resource
from .rest import Client

Obj = dict[str, Any]

LEADER_ANNOTATION = "control-plane.alpha.kubernetes.io/leader"
ENDPOINTS_LOCK = "endpoints"
CONFIGMAPS_LOCK = "configmaps"
LEASES_LOCK = "leases"
ENDPOINTS_LEASES_LOCK = "endpointsleases"
CONFIGMAPS_LEASES_LOCK = "configmapsleases"
LOCK_TYPES = (LEASES_LOCK, ENDPOINTS_LOCK, CONFIGMAPS_LOCK, ENDPOINTS_LEASES_LOCK,
              CONFIGMAPS_LEASES_LOCK)
#: MultiLock's holder when the two records disagree (upstream UnknownLeader)
UNKNOWN_LEADER = "leaderelection.k8s.io/unknown"


@dataclass(frozen=True)
class LeaderElectionRecord:
    """upstream LeaderElectionRecord; times are seconds since the epoch (None: Go's zero
    time, JSON null)."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: float | None = None
    renew_time: float | None = None
    leader_transitions: int = 0


# -- the annotation form (Endpoints, ConfigMap) ------------------------------------------------
def _time_or_none(text: Any) -> float | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return meta.parse_rfc3339(text)
    except ValueError:
        return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def record_to_json(record: LeaderElectionRecord) -> bytes:
    """json.Marshal of the record: fields in struct order, metav1.Time in whole seconds (a
    zero time is null)."""
    def time_text(value: float | None) -> str | None:
        return None if value is None else meta.rfc3339(value)

    return orjson.dumps({"holderIdentity": record.holder_identity,
                         "leaseDurationSeconds": record.lease_duration_seconds,
                         "acquireTime": time_text(record.acquire_time),
                         "renewTime": time_text(record.renew_time),
                         "leaderTransitions": record.leader_transitions})


def record_from_json(raw: str | bytes) -> LeaderElectionRecord:
    """json.Unmarshal into a record; fields it does not know (1.31's strategy,
    preferredHolder) are ignored. Raises ValueError on text that is not a JSON object."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"leader election record is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("leader election record is not a JSON object")  # noqa: TRY004
    holder = data.get("holderIdentity")
    return LeaderElectionRecord(
        holder_identity=holder if isinstance(holder, str) else "",
        lease_duration_seconds=_int(data.get("leaseDurationSeconds")),
        acquire_time=_time_or_none(data.get("acquireTime")),
        renew_time=_time_or_none(data.get("renewTime")),
        leader_transitions=_int(data.get("leaderTransitions")))


# -- the Lease form ---------------------------------------------------------------------------
def record_to_lease_spec(record: LeaderElectionRecord) -> Obj:
    """LeaderElectionRecordToLeaseSpec: every field set (MicroTime keeps microseconds)."""
    def micro(value: float | None) -> str | None:
        return None if value is None else meta.rfc3339_micro(value)

    spec: Obj = {"holderIdentity": record.holder_identity,
                 "leaseDurationSeconds": record.lease_duration_seconds,
                 "acquireTime": micro(record.acquire_time),
                 "renewTime": micro(record.renew_time),
                 "leaseTransitions": record.leader_transitions}
    return {k: v for k, v in spec.items() if v is not None}


def lease_spec_to_record(spec: Any) -> LeaderElectionRecord:
    """LeaseSpecToLeaderElectionRecord: unset fields are zero values."""
    spec = spec if isinstance(spec, dict) else {}
    holder = spec.get("holderIdentity")
    return LeaderElectionRecord(
        holder_identity=holder if isinstance(holder, str) else "",
        lease_duration_seconds=_int(spec.get("leaseDurationSeconds")),
        acquire_time=_time_or_none(spec.get("acquireTime")),
        renew_time=_time_or_none(spec.get("renewTime")),
        leader_transitions=_int(spec.get("leaseTransitions")))


# -- the locks ----------------------------------------------------------------------------------
class ResourceLock(Protocol):
    """upstream resourcelock.Interface. `get` raises StatusError 404 when the lock object does
    not exist; `raw` is the bytes compared to tell whether the record changed."""

    identity: str

    async def get(self) -> tuple[LeaderElectionRecord, bytes]: ...

    async def create(self, record: LeaderElectionRecord) -> None: ...

    async def update(self, record: LeaderElectionRecord) -> None: ...

    def describe(self) -> str: ...


class LeaseLock:
    """The record is the Lease's spec."""

    def __init__(self, client: Client, namespace: str, name: str, identity: str) -> None:
        self.client, self.namespace, self.name, self.identity = client, namespace, name, identity
        self._lease: Obj | None = None

    async def get(self) -> tuple[LeaderElectionRecord, bytes]:
        self._lease = await self.client.get(LEASES, self.name, self.namespace)
        record = lease_spec_to_record(self._lease.get("spec"))
        return record, record_to_json(record)

    async def create(self, record: LeaderElectionRecord) -> None:
        self._lease = await self.client.create(LEASES, {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record_to_lease_spec(record)}, self.namespace)

    async def update(self, record: LeaderElectionRecord) -> None:
        if self._lease is None:
            raise RuntimeError("lease not initialized, call get or create first")
        self._lease = await self.client.update(
            LEASES, {**self._lease, "spec": record_to_lease_spec(record)})

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"


class AnnotationLock:
    """The record is the JSON of one annotation of an Endpoints (EndpointsLock) or a ConfigMap
    (ConfigMapLock) object."""

    def __init__(self, client: Client, resource: Resource, namespace: str, name: str,
                 identity: str) -> None:
        self.client, self.resource = client, resource
        self.namespace, self.name, self.identity = namespace, name, identity
        self._object: Obj | None = None

    async def get(self) -> tuple[LeaderElectionRecord, bytes]:
        self._object = await self.client.get(self.resource, self.name, self.namespace)
        raw = ((self._object.get("metadata") or {}).get("annotations") or {}).get(
            LEADER_ANNOTATION)
        if not raw:
            return LeaderElectionRecord(), b""
        return record_from_json(raw), raw.encode()

    async def create(self, record: LeaderElectionRecord) -> None:
        self._object = await self.client.create(self.resource, {
            "apiVersion": "v1", "kind": self.resource.kind,
            "metadata": {"name": self.name, "namespace": self.namespace,
                         "annotations": {LEADER_ANNOTATION: record_to_json(record).decode()}}},
            self.namespace)

    async def update(self, record: LeaderElectionRecord) -> None:
        if self._object is None:
            raise RuntimeError(f"{self.resource.kind.lower()} not initialized, call get or "
                               "create first")
        md = dict(self._object.get("metadata") or {})
        md["annotations"] = {**(md.get("annotations") or {}),
                             LEADER_ANNOTATION: record_to_json(record).decode()}
        self._object = await self.client.update(self.resource, {**self._object, "metadata": md})

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"


class MultiLock:
    """upstream MultiLock: `primary` (the old lock) and `secondary` (the Lease) hold the same
    record; a candidate that only knows the old lock still sees the leader."""

    def __init__(self, primary: AnnotationLock, secondary: LeaseLock) -> None:
        self.primary, self.secondary = primary, secondary
        self.identity = primary.identity

    async def get(self) -> tuple[LeaderElectionRecord, bytes]:
        primary, primary_raw = await self.primary.get()
        try:
            secondary, secondary_raw = await self.secondary.get()
        except StatusError as exc:
            if exc.code == 404 and primary.holder_identity != self.identity:
                return primary, primary_raw  # held by a candidate that knows only the old lock
            raise
        if primary.holder_identity != secondary.holder_identity:
            primary = replace(primary, holder_identity=UNKNOWN_LEADER)
            primary_raw = record_to_json(primary)
        return primary, primary_raw + b"," + secondary_raw  # upstream ConcatRawRecord

    async def create(self, record: LeaderElectionRecord) -> None:
        try:
            await self.primary.create(record)
        except StatusError as exc:
            if exc.code != 409:
                raise
        await self.secondary.create(record)

    async def update(self, record: LeaderElectionRecord) -> None:
        await self.primary.update(record)
        try:
            await self.secondary.update(record)
        except RuntimeError:  # never read: it did not exist when we looked
            await self.secondary.create(record)
        except StatusError as exc:
            if exc.code != 404:
                raise
            await self.secondary.create(record)

    def describe(self) -> str:
        return f"{self.primary.describe()}+{self.secondary.describe()}"


def new_lock(lock_type: str, client: Client, namespace: str, name: str,
             identity: str) -> ResourceLock:
    """resourcelock.New: the lock of `--leader-elect-resource-lock` (ValueError otherwise)."""
    lease = LeaseLock(client, namespace, name, identity)
    if lock_type == LEASES_LOCK:
        return lease
    if lock_type in (ENDPOINTS_LOCK, ENDPOINTS_LEASES_LOCK):
        annotation = AnnotationLock(client, ENDPOINTS, namespace, name, identity)
    elif lock_type in (CONFIGMAPS_LOCK, CONFIGMAPS_LEASES_LOCK):
        annotation = AnnotationLock(client, CONFIGMAPS, namespace, name, identity)
    else:
        raise ValueError(f"Invalid lock-type {lock_type}")
    if lock_type.endswith(LEASES_LOCK):
        return MultiLock(annotation, lease)
    return annotation
