"""The generic registry: list, get, create, update, delete for any resource, over the Store.

Kubernetes v1.0 piece: pkg/registry/generic/etcd (etcd.Etcd: Create, Update, Get, List,
Delete, DeleteCollection, Watch) and pkg/tools' GuaranteedUpdate. One implementation,
configured per resource by a Strategy (strategy.py); every resource-specific rule is a hook on
the strategy or a pure function in minikube_py.api (defaults, validation).

Concurrency follows upstream exactly:
- a write that carries `metadata.resourceVersion` is a precondition: a mismatch is 409 Conflict
  and is never retried;
- a write without one is applied to the newest object in a compare-and-swap loop
  (`_guaranteed_update`) that re-reads and re-applies on conflict — that is how concurrent
  PATCHes compose without losing updates;
- an update that changes nothing writes nothing (same bytes -> no new revision).

Deletion follows upstream too: graceful (pods on a node get a deletionTimestamp and the kubelet
finishes the job), finalizers (the object stays with a deletionTimestamp until the last
finalizer is removed, and an update that removes it deletes the object), and overrides
(namespaces go Terminating).

A resource that is a view of another's stored objects (Strategy.stored_as: events.k8s.io/v1
Events) is converted at this class's edges only: everything inside -- defaults, validation,
selectors, the bytes compared and written -- works on the stored form, and what leaves (objects,
and KeyValues whose bytes are the converted object in codec layout, so every byte-splicing fast
path of the handlers works unchanged) is in the served form.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Awaitable, Callable

import orjson

from ..api import errors, meta
from ..api.defaults import apply_defaults
from ..api.fields import FieldSelector
from ..api.labels import LabelSelector
from ..api.validation import validate_create, validate_status_update, validate_update
from ..storage import (
    ConflictError,
    KeyNotFoundError,
    KeyValue,
    StorageError,
    Store,
    encode_continue,
)
from .. import offload
from . import codec
from ..apiextensions.conversion import set_api_version
from .errors import interpret
from .strategy import ALL_BUT_METADATA, Obj, Strategy

if TYPE_CHECKING:
    from .leases import LeaseManager

#: metadata fields the server owns; a client's values are ignored on create and update
_SYSTEM_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
                "generation", "selfLink")
_MAX_RETRIES = 64

Produce = Callable[[Obj | None], Awaitable[Obj] | Obj]


@dataclass
class ListResult:
    """One page of a list. `objects` is set when the page had to be decoded (selectors);
    otherwise the raw KeyValues are rendered without decoding (codec.with_revision)."""

    kvs: list[KeyValue]
    objects: list[Obj] | None
    revision: int
    continue_token: str | None
    remaining: int | None

    def decoded(self) -> list[Obj]:
        """The page's objects, in the served form."""
        if self.objects is None:
            self.objects = [codec.decode(kv) for kv in self.kvs]
        return self.objects


class Registry:
    """REST storage for one resource (upstream `etcd.Etcd` configured with a strategy)."""

    def __init__(
        self,
        strategy: Strategy,
        store: Store,
        *,
        prefix: str = "/registry",
        clock: Callable[[], float] = time.time,
        leases: LeaseManager | None = None,
        gc_enabled: bool = False,
    ) -> None:
        self.strategy = strategy
        self.store = store
        self.prefix = prefix.rstrip("/")
        self.root = f"{self.prefix}/{strategy.key_root}/"
        self.clock = clock
        self.leases = leases
        self.gc_enabled = gc_enabled
        #: resources this registry's hooks need (services -> allocators); set by the wiring
        self.extras: dict[str, Any] = {}
        self.stored_as = strategy.stored_as
        self._validation = strategy.validation or strategy.kind
        #: the strategy of the stored objects (this one unless it is a view of another)
        self.storage = strategy.stored_as.storage if strategy.stored_as else strategy
        # a view's KeyValues name their representation, so caches keyed by key and revision
        # (protobuf messages) never mix the two forms; a name cannot hold the `/`
        self._view_suffix = f"@{strategy.group_version}" if (
            strategy.stored_as or strategy.conversion) else ""
        #: a version of a multi-version CRD: converted at the edges, asynchronously
        self.conversion = strategy.conversion
        if strategy.stored_as is None and strategy.conversion is None:
            self.get_kv = self._stored_kv  # type: ignore[method-assign]  # no frame for GET

    # -- representation (views of another resource's stored objects) ----------------------
    def served(self, obj: Obj) -> Obj:
        """A stored-form object as this resource serves it."""
        return self.stored_as.from_storage(obj) if self.stored_as is not None else obj

    def stored(self, obj: Obj) -> Obj:
        """A served-form object as it is stored."""
        return self.stored_as.to_storage(obj) if self.stored_as is not None else obj

    def view(self, kv: KeyValue) -> KeyValue:
        """A stored KeyValue as this resource serves it (the same one when not a view)."""
        if self.stored_as is None:
            return kv
        obj = self.stored_as.from_storage(orjson.loads(kv.value))
        return kv._replace(key=kv.key + self._view_suffix, value=codec.encode(obj))

    async def _out(self, obj: Obj) -> Obj:
        """A stored object as this resource serves it, a CRD version's conversion included."""
        if self.conversion is None:
            return self.served(obj)
        return (await self.conversion.convert([obj], self.strategy.api_version))[0]

    async def _to_storage(self, obj: Obj) -> Obj:
        """A CRD version's object in its storage version (itself for every other resource)."""
        if self.conversion is None:
            return obj
        return (await self.conversion.convert([obj], self.conversion.storage_api_version))[0]

    def _converted_kv(self, kv: KeyValue, value: bytes) -> KeyValue:
        # a converted KeyValue names its version, so caches keyed by key and revision
        # (protobuf messages) never mix representations
        return kv._replace(key=kv.key + self._view_suffix, value=value)

    async def _converted(self, result: ListResult) -> ListResult:
        """A page of a CRD version's list in this version. Objects stored in it are found by
        a prefix check of their bytes; when conversion changes only apiVersion (None, one
        schema for all versions) the others get it swapped in the bytes, without decoding;
        else they are decoded, converted in ONE call (one ConversionReview for a webhook, as
        upstream converts a list), pruned to this version's schema and re-encoded."""
        assert self.conversion is not None
        api_version = self.strategy.api_version
        todo = [i for i, kv in enumerate(result.kvs)
                if not codec.in_api_version(kv.value, api_version)]
        if not todo:
            return result
        kvs = list(result.kvs)
        if self.conversion.api_version_only:
            for i in todo:
                kvs[i] = self._converted_kv(kvs[i], codec.with_api_version(kvs[i].value,
                                                                           api_version))
            result.kvs = kvs
            if result.objects is not None:
                result.objects = [set_api_version(obj, api_version) for obj in result.objects]
            return result
        weight = 2 * sum(len(kvs[i].value) for i in todo)
        stored = await offload.run(lambda: [codec.decode(kvs[i]) for i in todo], weight=weight)
        converted = await self.conversion.convert(stored, api_version)

        def encode() -> None:
            for i, obj in zip(todo, converted):
                kvs[i] = self._converted_kv(kvs[i], codec.encode(obj))

        await offload.run(encode, weight=weight)
        result.kvs = kvs
        if result.objects is not None:
            objects = list(result.objects)
            for i, obj in zip(todo, converted):
                objects[i] = obj
            result.objects = objects
        return result

    def _views(self, result: ListResult) -> ListResult:
        if self.stored_as is None:
            return result
        result.kvs = [self.view(kv) for kv in result.kvs]
        if result.objects is not None:
            result.objects = [self.served(obj) for obj in result.objects]
        return result

    # -- keys ---------------------------------------------------------------------------
    def key(self, namespace: str, name: str) -> str:
        if self.strategy.namespaced:
            return f"{self.root}{namespace}/{name}"
        return f"{self.root}{name}"

    def list_prefix(self, namespace: str | None) -> str:
        if self.strategy.namespaced and namespace:
            return f"{self.root}{namespace}/"
        return self.root

    def _not_found(self, name: str) -> errors.StatusError:
        return errors.not_found(self.strategy.resource, name, self.strategy.group)

    def _conflict(self, name: str, reason: str = errors.OBJECT_MODIFIED) -> errors.StatusError:
        return errors.conflict(self.strategy.resource, name, reason, self.strategy.group)

    def _invalid(self, name: str, errs: list) -> errors.StatusError:
        return errors.invalid_object(self.strategy.kind, name, errs, self.strategy.group)

    # -- reads --------------------------------------------------------------------------
    async def get_kv(self, namespace: str, name: str) -> KeyValue:
        """The object's KeyValue, as this resource serves it."""
        kv = await self._stored_kv(namespace, name)
        if self.conversion is None:
            return self.view(kv)
        api_version = self.strategy.api_version
        if codec.in_api_version(kv.value, api_version):
            return kv
        if self.conversion.api_version_only:
            return self._converted_kv(kv, codec.with_api_version(kv.value, api_version))
        offload.weigh(len(kv.value))  # a big object converts and prunes on the worker
        obj = await self._out(codec.decode(kv))
        return self._converted_kv(kv, codec.encode(obj))

    async def _stored_kv(self, namespace: str, name: str) -> KeyValue:
        try:
            return await self.store.get(self.key(namespace, name))
        except KeyNotFoundError:
            raise self._not_found(name) from None
        except StorageError as exc:
            raise interpret(exc, self.strategy, name) from None

    async def get(self, namespace: str, name: str) -> Obj:
        return await self._out(codec.decode(await self._stored_kv(namespace, name)))

    async def list(
        self,
        namespace: str | None,
        *,
        labels: LabelSelector | None = None,
        fields: FieldSelector | None = None,
        limit: int = 0,
        continue_token: str | None = None,
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> ListResult:
        """A page of objects matching the selectors (upstream etcd3 store GetList).

        resourceVersion: "" = most recent; "0" = any (we serve the most recent); N with
        match NotOlderThan (the default) = at least N; N with match Exact = exactly at N."""
        revision = await self._list_revision(resource_version, resource_version_match, continue_token)
        if self.stored_as is not None:
            fields = self.stored_as.storage_selector(fields)
            page = await self._list(namespace, labels, fields, limit, continue_token, revision)
            return await offload.run(self._views, page,
                                     weight=2 * sum(len(kv.value) for kv in page.kvs))
        page = await self._list(namespace, labels, fields, limit, continue_token, revision)
        if self.conversion is not None:
            return await self._converted(page)
        return page

    async def _list(self, namespace: str | None, labels: LabelSelector | None,
                    fields: FieldSelector | None, limit: int, continue_token: str | None,
                    revision: int) -> ListResult:
        filtering = (labels is not None and not labels.empty()) or (
            fields is not None and not fields.empty()
        )
        prefix = self.list_prefix(namespace)
        try:
            if not filtering:
                page = await self.store.range(
                    prefix, limit=limit, continue_token=continue_token, revision=revision
                )
                return ListResult(list(page.kvs), None, page.revision, page.continue_token,
                                  page.remaining if page.continue_token else None)
            return await self._filtered_list(prefix, labels, fields, limit, continue_token, revision)
        except StorageError as exc:
            raise self._list_error(exc, continue_token) from None

    def _list_error(self, exc: StorageError, continue_token: str | None) -> errors.StatusError:
        status = interpret(exc, self.strategy)
        if continue_token and status.code == 410:
            status.message = (
                "The provided continue parameter is too old to display a consistent list result. "
                "You can start a new list without the continue parameter."
            )
        return status

    async def _list_revision(self, rv: str, match: str, continue_token: str | None) -> int:
        if continue_token:
            if rv not in ("", "0") and rv:
                raise errors.bad_request(
                    "specifying resource version is not allowed when using continue"
                )
            return 0
        if match and match not in ("Exact", "NotOlderThan"):
            raise errors.bad_request(
                f'resourceVersionMatch: Unsupported value: "{match}": supported values: '
                '"Exact", "NotOlderThan"'
            )
        if rv in ("", "0"):
            if match == "Exact":
                raise errors.bad_request(
                    "resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"0\""
                    if rv == "0" else
                    "resourceVersionMatch is forbidden unless resourceVersion is provided"
                )
            return 0
        requested = parse_resource_version(rv)
        current = await self.store.current_revision()
        if requested > current:
            raise errors.StatusError(
                504, "Timeout", f"Too large resource version: {requested}, current: {current}",
                {"causes": [{"reason": "ResourceVersionTooLarge",
                             "message": "Too large resource version"}], "retryAfterSeconds": 1},
            )
        return requested if match == "Exact" else 0

    async def _filtered_list(
        self,
        prefix: str,
        labels: LabelSelector | None,
        fields: FieldSelector | None,
        limit: int,
        continue_token: str | None,
        revision: int,
    ) -> ListResult:
        """Keep reading pages until `limit` objects match (upstream GetList's predicate loop)."""
        attrs = self.strategy.field_attrs
        kvs: list[KeyValue] = []
        objects: list[Obj] = []
        page_size = max(limit, 500) if limit else 0
        token = continue_token
        while True:
            page = await self.store.range(prefix, limit=page_size, continue_token=token,
                                          revision=revision)
            revision = page.revision
            for kv in page.kvs:
                obj = codec.decode(kv)
                if labels is not None and not labels.matches((obj.get("metadata") or {}).get("labels")):
                    continue
                if fields is not None and not fields.empty() and not fields.matches(attrs(obj)):
                    continue
                kvs.append(kv)
                objects.append(obj)
                if limit and len(objects) >= limit:
                    more = page.continue_token is not None or kv is not page.kvs[-1]
                    next_token = (encode_continue(prefix=prefix, next_key=kv.key + "\x00", revision=revision)
                                  if more else None)
                    return ListResult(kvs, objects, revision, next_token, None)
            if not page.continue_token:
                return ListResult(kvs, objects, revision, None, None)
            token = page.continue_token
            await asyncio.sleep(0)  # decoding a page is ~10 ms of work: let the loop breathe

    # -- create -------------------------------------------------------------------------
    async def create(self, namespace: str, obj: Obj, *, dry_run: bool = False) -> Obj:
        """Create (upstream BeforeCreate + store.Create): system fields, defaults, strategy
        hook, validation, then one durable write."""
        strategy = self.strategy
        self._fill_create_meta(namespace, obj, meta.metadata(obj))
        obj = self.stored(obj)
        md = obj["metadata"]
        errs = await offload.run(_defaulted_create_errors, strategy, obj)
        if errs:
            raise self._invalid(md.get("name") or md.get("generateName", ""), errs)
        if strategy.prepare_create is not None:
            await strategy.prepare_create(self, obj)
        name = md["name"]
        if dry_run:
            if strategy.release is not None:
                await strategy.release(self, obj)
            return self.served(obj)
        lease = await self.leases.lease() if (strategy.ttl and self.leases) else 0
        obj = await self._to_storage(obj)  # validated in the request's version, as upstream
        value = await offload.run(codec.encode, obj)
        try:
            kv = await self.store.create(self.key(namespace, name), value, lease=lease)
        except StorageError as exc:
            if strategy.release is not None:
                await strategy.release(self, obj)
            raise interpret(exc, strategy, name) from None
        obj["metadata"]["resourceVersion"] = str(kv.mod_revision)
        return await self._out(obj)

    def _fill_create_meta(self, namespace: str, obj: Obj, md: dict[str, Any]) -> None:
        strategy = self.strategy
        obj["apiVersion"] = strategy.api_version
        obj["kind"] = strategy.kind
        for field in _SYSTEM_META:
            md.pop(field, None)
        md.pop("resourceVersion", None)
        if strategy.namespaced:
            md["namespace"] = namespace
        else:
            md.pop("namespace", None)
        if not md.get("name") and isinstance(md.get("generateName"), str) and md["generateName"]:
            md["name"] = meta.generate_name(md["generateName"])
        md["uid"] = meta.new_uid()
        md["creationTimestamp"] = meta.rfc3339(self.clock())
        if strategy.spec_fields:
            md["generation"] = 1

    # -- update -------------------------------------------------------------------------
    async def update(
        self,
        namespace: str,
        name: str,
        produce: Produce,
        *,
        subresource: str | None = None,
        allow_create: bool = False,
        dry_run: bool = False,
    ) -> tuple[Obj, bool]:
        """Update via `produce(old) -> desired body` (PUT returns the request body; PATCH
        applies the patch to `old`). Returns (object, created). `produce(None)` is called when
        the object does not exist and creation is allowed (PUT on endpoints, apply)."""
        strategy = self.strategy
        key = self.key(namespace, name)
        for _ in range(_MAX_RETRIES):
            finish: Callable[[bool], Awaitable[None]] | None = None
            try:
                kv = await self.store.get(key)
            except KeyNotFoundError:
                if not (allow_create or strategy.allow_create_on_update) or subresource:
                    raise self._not_found(name) from None
                body = await _call(produce, None)
                self._check_identity(body, namespace, name)
                try:
                    return await self.create(namespace, body, dry_run=dry_run), True
                except errors.StatusError as exc:
                    if exc.reason == "AlreadyExists":
                        continue  # lost a race with a create: update the new object instead
                    raise
            except StorageError as exc:
                raise interpret(exc, strategy, name) from None
            offload.weigh(len(kv.value))  # a big object makes every later step heavy
            old = codec.decode(kv)
            if self.conversion is not None:  # a CRD version: the whole update in its version
                old = await self._out(old)
                body = await _call(produce, codec.clone(old))
            else:
                body = await _call(produce, self.served(codec.decode(kv)))
            self._check_identity(body, namespace, name)
            _omit_empty_finalizers(body)
            precondition = (body.get("metadata") or {}).get("resourceVersion")
            if precondition not in (None, ""):
                if parse_resource_version(str(precondition)) != kv.mod_revision:
                    raise self._conflict(name)
            body = self.stored(body)
            if subresource == "status":
                new = await offload.run(self._status_update, old, body, kv.mod_revision)
                if strategy.prepare_status is not None:
                    await strategy.prepare_status(self, new, old)
                errs = await offload.run(validate_status_update, strategy.kind, new, old)
            elif subresource in strategy.subresource_updates:
                new = strategy.subresource_updates[subresource](old, body)
                new["metadata"] = dict(new["metadata"], resourceVersion=str(kv.mod_revision))
                errs = await offload.run(validate_update, strategy.kind, new, old)
            elif subresource:
                # a server-computed change (pods/binding): `produce` built the final object
                new = body
                new["metadata"]["resourceVersion"] = str(kv.mod_revision)
                errs = []
            else:
                new = await offload.run(self._main_update, old, body, kv.mod_revision)
                if strategy.prepare_update is not None:
                    # upstream BeginUpdate: a hook that allocates may hand back its FinishFunc
                    finish = await strategy.prepare_update(self, new, old)
                errs = await offload.run(validate_update, self._validation, new, old)
            written = None
            try:
                if errs:
                    raise self._invalid(name, errs)
                served_new = new
                new = await self._to_storage(new)  # a CRD version: stored in its storage version
                value = await offload.run(codec.encode, new)
                if value == kv.value:
                    return await self._out(old), False  # nothing changed: no write/revision
                if dry_run:
                    return self.served(served_new), False
                try:
                    written = await self.store.update(
                        key, value, expected_mod_revision=kv.mod_revision, lease=kv.lease)
                except ConflictError:
                    if precondition not in (None, ""):
                        raise self._conflict(name) from None
                    continue
                except StorageError as exc:
                    raise interpret(exc, strategy, name) from None
            finally:
                if finish is not None:  # keep what was allocated only if the update was written
                    await finish(written is not None)
            new["metadata"]["resourceVersion"] = str(written.mod_revision)
            if (strategy.finalized or _finalized)(new):
                await self._delete_kv(key, written, name)
            return await self._out(new), False  # a CRD version: what was stored, converted back
        raise self._conflict(name, "too many concurrent updates; please retry")

    def _check_identity(self, body: Obj, namespace: str, name: str) -> None:
        if not isinstance(body, dict):
            raise errors.bad_request("the body of the request must be a JSON object")
        md = meta.metadata(body)
        check_name(body, name)
        md["name"] = name
        if self.strategy.namespaced:
            body_ns = md.get("namespace")
            if body_ns not in (None, "") and body_ns != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            md["namespace"] = namespace

    def _main_update(self, old: Obj, body: Obj, revision: int) -> Obj:
        """A main-resource update ignores status and the server-owned metadata."""
        strategy = self.strategy
        new = body
        new["apiVersion"] = self.storage.api_version
        new["kind"] = self.storage.kind
        md = new["metadata"]
        old_md = old["metadata"]
        for field in _SYSTEM_META:
            if field in old_md:
                md[field] = old_md[field]
            else:
                md.pop(field, None)
        md["resourceVersion"] = str(revision)  # the precondition held; encode() drops it
        apply_defaults(strategy.kind, new, strategy.group)
        if strategy.has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        if strategy.spec_fields and _spec_changed(strategy, new, old):
            md["generation"] = int(old_md.get("generation") or 0) + 1
        return new

    def _status_update(self, old: Obj, body: Obj, revision: int) -> Obj:
        """A status update changes only status (upstream ResetObjectMetaForStatus + spec reset)."""
        new = codec.clone(old)
        if "status" in body:
            new["status"] = body["status"]
        elif self.strategy.custom:  # upstream customresource statusStrategy: no status, none
            new.pop("status", None)
        new["metadata"]["resourceVersion"] = str(revision)
        body_md = body.get("metadata") or {}
        for field in self.strategy.status_metadata:
            if field in body_md:
                new["metadata"][field] = body_md[field]
            else:
                new["metadata"].pop(field, None)
        if "managedFields" in body_md:
            new["metadata"]["managedFields"] = body_md["managedFields"]
        return new

    # -- delete -------------------------------------------------------------------------
    async def delete(
        self, namespace: str, name: str, options: dict[str, Any] | None = None, *,
        dry_run: bool = False,
    ) -> tuple[Obj, bool]:
        """Delete per DeleteOptions. Returns (object, deleted_now): graceful deletion and
        pending finalizers leave the object in place with a deletionTimestamp."""
        obj, deleted = await self._delete(namespace, name, options, dry_run)
        return await self._out(obj), deleted

    async def _delete(self, namespace: str, name: str, options: dict[str, Any] | None,
                      dry_run: bool) -> tuple[Obj, bool]:
        strategy = self.strategy
        options = options or {}
        key = self.key(namespace, name)
        if name in strategy.undeletable:
            raise errors.forbidden_request(
                f'{strategy.qualified_resource} "{name}" is forbidden: '
                f"{strategy.undeletable_reason}", strategy.resource, name, strategy.group)
        for _ in range(_MAX_RETRIES):
            kv = await self._stored_kv(namespace, name)
            obj = codec.decode(kv)
            _check_preconditions(obj, options, strategy, name)
            if strategy.delete_override is not None:
                replacement = strategy.delete_override(codec.clone(obj))
                if replacement is not None:
                    replacement["metadata"].pop("resourceVersion", None)
                    if dry_run or codec.encode(replacement) == kv.value:
                        replacement["metadata"]["resourceVersion"] = str(kv.mod_revision)
                        return replacement, False
                    written = await self._cas_write(key, kv, replacement, name)
                    if written is None:
                        continue
                    return replacement, False
            grace = strategy.graceful_delete(obj, options) if strategy.graceful_delete else None
            pending = self._pending_finalizers(obj, options)
            if grace or pending:
                updated = self._mark_deleting(obj, grace or 0, pending)
                if updated is None:  # already terminating with a shorter grace period
                    return obj, False
                if dry_run:
                    return updated, False
                written = await self._cas_write(key, kv, updated, name)
                if written is None:
                    continue
                return updated, False
            if dry_run:
                return obj, True
            try:
                await self.store.delete(key, expected_mod_revision=kv.mod_revision)
            except ConflictError:
                continue
            except KeyNotFoundError:
                raise self._not_found(name) from None
            except StorageError as exc:
                raise interpret(exc, strategy, name) from None
            if strategy.release is not None:
                await strategy.release(self, obj)
            return obj, True
        raise self._conflict(name, "too many concurrent updates; please retry")

    def _pending_finalizers(self, obj: Obj, options: dict[str, Any]) -> list[str]:
        finalizers = list((obj.get("metadata") or {}).get("finalizers") or [])
        policy = options.get("propagationPolicy")
        if options.get("orphanDependents") is True:
            policy = "Orphan"
        if policy is None and options.get("orphanDependents") is None:
            policy = self.strategy.default_gc_policy or None
        if self.gc_enabled and policy in ("Orphan", "Foreground"):
            extra = "orphan" if policy == "Orphan" else "foregroundDeletion"
            if extra not in finalizers:
                finalizers.append(extra)
        return finalizers

    def _mark_deleting(self, obj: Obj, grace: int, finalizers: list[str]) -> Obj | None:
        md = obj["metadata"]
        now = self.clock()
        current = md.get("deletionGracePeriodSeconds")
        if md.get("deletionTimestamp"):
            if current is not None and grace >= int(current) and finalizers == (md.get("finalizers") or []):
                return None
            if current is not None and grace > int(current):
                grace = int(current)
        md["deletionTimestamp"] = meta.rfc3339(now + grace)
        md["deletionGracePeriodSeconds"] = grace
        if finalizers:
            md["finalizers"] = finalizers
        if "generation" in md:
            md["generation"] = int(md["generation"]) + 1
        md.pop("resourceVersion", None)
        return obj

    async def _cas_write(self, key: str, kv: KeyValue, obj: Obj, name: str) -> KeyValue | None:
        obj["metadata"].pop("resourceVersion", None)
        try:
            written = await self.store.update(key, codec.encode(obj),
                                              expected_mod_revision=kv.mod_revision, lease=kv.lease)
        except ConflictError:
            return None
        except StorageError as exc:
            raise interpret(exc, self.strategy, name) from None
        obj["metadata"]["resourceVersion"] = str(written.mod_revision)
        return written

    async def _delete_kv(self, key: str, kv: KeyValue, name: str) -> None:
        try:
            await self.store.delete(key, expected_mod_revision=kv.mod_revision)
        except (ConflictError, KeyNotFoundError):
            return  # someone else changed or removed it; their write decides
        except StorageError as exc:
            raise interpret(exc, self.strategy, name) from None
        if self.strategy.release is not None:
            await self.strategy.release(self, codec.decode(kv))

    async def delete_collection(
        self,
        namespace: str | None,
        *,
        labels: LabelSelector | None,
        fields: FieldSelector | None,
        options: dict[str, Any] | None = None,
        dry_run: bool = False,
    ) -> list[Obj]:
        page = await self.list(namespace, labels=labels, fields=fields)
        deleted = []
        for obj in page.decoded():
            md = obj["metadata"]
            try:
                item, _ = await self.delete(md.get("namespace", ""), md["name"], options,
                                            dry_run=dry_run)
            except errors.StatusError as exc:
                if exc.code == 404:
                    continue
                raise
            deleted.append(item)
        return deleted


def _omit_empty_finalizers(obj: Obj) -> None:
    """`metadata.finalizers: []` is no finalizers: upstream's ObjectMeta omits the empty list
    (`omitempty`), so a patch that deletes the last finalizer (the job controller's
    `$deleteFromPrimitiveList/finalizers`) leaves no `finalizers` key behind."""
    md = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(md, dict) and md.get("finalizers") == []:
        del md["finalizers"]


def _defaulted_create_errors(strategy: Strategy, obj: Obj) -> list:
    """Defaults applied to a new object, then its validation errors (the pure part of create,
    run on the worker for a big object)."""
    apply_defaults(strategy.kind, obj, strategy.group)
    return validate_create(strategy.validation or strategy.kind, obj)


def _spec_changed(strategy: Strategy, new: Obj, old: Obj) -> bool:
    """Whether an update bumps metadata.generation: a change of a spec field, or (custom
    resources, upstream customResourceStrategy.PrepareForUpdate) of anything but metadata
    and, when the status subresource owns it, status."""
    if strategy.spec_fields != ALL_BUT_METADATA:
        return any(new.get(f) != old.get(f) for f in strategy.spec_fields)
    skip = ("apiVersion", "kind", "metadata", "status") if strategy.has_status else (
        "apiVersion", "kind", "metadata")
    return ({k: v for k, v in new.items() if k not in skip}
            != {k: v for k, v in old.items() if k not in skip})


def _finalized(obj: Obj) -> bool:
    """Upstream ShouldDeleteDuringUpdate: terminating, no finalizers, no grace left."""
    md = obj["metadata"]
    return bool(md.get("deletionTimestamp")) and not md.get("finalizers") and not md.get(
        "deletionGracePeriodSeconds"
    )


def _check_preconditions(obj: Obj, options: dict[str, Any], strategy: Strategy, name: str) -> None:
    pre = options.get("preconditions") or {}
    if not isinstance(pre, dict):
        raise errors.bad_request("preconditions must be an object")
    md = obj["metadata"]
    if pre.get("uid") and pre["uid"] != md.get("uid"):
        raise errors.conflict(
            strategy.resource, name,
            f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: {md.get('uid')}",
            strategy.group)
    if pre.get("resourceVersion") and str(pre["resourceVersion"]) != md.get("resourceVersion"):
        raise errors.conflict(
            strategy.resource, name,
            f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
            f"ResourceVersion in object meta: {md.get('resourceVersion')}",
            strategy.group)


def check_name(body: Obj, name: str) -> None:
    """A body (or a patch's result) naming another object than the URL — or none — is 400,
    as upstream's checkName in the update and patch handlers, before storage."""
    md = body.get("metadata")
    if md is not None and not isinstance(md, dict):
        raise errors.bad_request(
            f"the name of the object ({name} based on URL) was undeterminable: metadata must "
            f"be an object, not {type(md).__name__}")
    body_name = md.get("name") if isinstance(md, dict) else None
    if body_name != name:
        raise errors.bad_request(
            f"the name of the object ({body_name or ''}) does not match the name on the URL "
            f"({name})")


def parse_resource_version(text: str) -> int:
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise errors.bad_request(f'invalid resource version "{text}"') from None
    if value < 0:
        raise errors.bad_request(f'invalid resource version "{text}"')
    return value


async def _call(produce: Produce, old: Obj | None) -> Obj:
    result = produce(old)
    if isinstance(result, Awaitable):
        result = await result
    return result
