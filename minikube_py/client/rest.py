"""The REST client every component uses to reach the cluster.

Kubernetes v1.0 piece: pkg/client (Client, RESTClient, Request.Do/Watch) — the one door from
scheduler, controllers and kubelets to the API server, as v1.0 required (nothing else touches
storage). Objects are plain JSON-shaped dicts, as on the wire. Failures raise the server's
Status as a StatusError; a watch yields WatchEvents and raises the Status of an ERROR event
(410 Expired tells a reflector to re-list).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, NamedTuple

import orjson

from ..api.errors import StatusError
from .errors import error_from_response, error_from_status
from .flowcontrol import TokenBucket
from .resources import PODS, SERVICEACCOUNTS, Resource
from .transport import Transport
from .wire import WireFormat

PATCH_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}

Obj = dict[str, Any]


MAX_THROTTLE_RETRIES = 10


def _retry_after(body: bytes) -> float:
    """Seconds a 429 asks us to wait (its Status details.retryAfterSeconds; 1 by default)."""
    try:
        details = orjson.loads(body).get("details") or {}
        return float(details.get("retryAfterSeconds") or 1)
    except (orjson.JSONDecodeError, AttributeError, TypeError, ValueError):
        return 1.0


class WatchEvent(NamedTuple):
    type: str  # ADDED | MODIFIED | DELETED | BOOKMARK
    object: Obj


class Client:
    """Typed-by-resource verbs over a Transport."""

    def __init__(self, transport: Transport, *, field_manager: str = "",
                 wire: WireFormat | None = None, rate_limiter: TokenBucket | None = None
                 ) -> None:
        """`wire`: JSON (default) or protobuf bodies (--kube-api-content-type);
        `rate_limiter`: client-side QPS/burst every request and watch start waits on
        (client-go's rest.Config QPS/Burst, the components' --kube-api-qps/-burst)."""
        self.transport = transport
        self.field_manager = field_manager
        self.wire = wire
        self.rate_limiter = rate_limiter

    async def _call(self, method: str, path: str, *, query: dict[str, str] | None = None,
                    body: Any = None, content_type: str = "application/json",
                    accept: str | None = None) -> Obj:
        """`accept`: a JSON media type other than the wire's (aggregated discovery's); the
        answer is then read as JSON whatever the wire format."""
        wire = self.wire if accept is None else None
        if body is None or isinstance(body, bytes):
            data = body
        elif wire is not None and content_type == "application/json":
            data, content_type = wire.encode(body)
        else:
            data = orjson.dumps(body)
        if accept is None:
            accept = wire.accept if wire is not None else "application/json"
        for attempt in range(MAX_THROTTLE_RETRIES + 1):
            if self.rate_limiter is not None:
                await self.rate_limiter.accept()
            resp = await self.transport.request(method, path, query=query, body=data,
                                                content_type=content_type, accept=accept)
            if resp.status != 429 or attempt == MAX_THROTTLE_RETRIES:
                break
            # the server is at its in-flight limit: wait as told and try again (client-go
            # retries 429s up to 10 times, honouring Retry-After)
            await asyncio.sleep(min(_retry_after(resp.body), 10.0))
        if wire is not None:
            if resp.status >= 400:
                raise await wire.error(resp)
            return await wire.decode(resp)
        if resp.status >= 400:
            raise error_from_response(resp.status, resp.body)
        return orjson.loads(resp.body) if resp.body else {}

    def _write_query(self, dry_run: bool = False) -> dict[str, str]:
        query = {"fieldManager": self.field_manager} if self.field_manager else {}
        if dry_run:
            query["dryRun"] = "All"
        return query

    async def get(self, resource: Resource, name: str, namespace: str | None = None,
                  *, subresource: str | None = None) -> Obj:
        return await self._call("GET", resource.path(namespace, name, subresource))

    async def get_or_none(self, resource: Resource, name: str,
                          namespace: str | None = None) -> Obj | None:
        """GET, with None for an object that does not exist (a 404) — what a controller
        checking whether something is still there wants; other errors raise."""
        try:
            return await self.get(resource, name, namespace)
        except StatusError as exc:
            if exc.code == 404:
                return None
            raise

    async def get_path(self, path: str, *, accept: str | None = None) -> Obj:
        """GET any API path: the discovery documents (/api/v1, /apis, /apis/apps/v1);
        `accept` asks for another JSON form (aggregated discovery's media type)."""
        return await self._call("GET", path, accept=accept)

    async def list(self, resource: Resource, namespace: str | None = None, *,
                   label_selector: str = "", field_selector: str = "", limit: int = 0,
                   continue_token: str | None = None, resource_version: str = "") -> Obj:
        query: dict[str, str] = {}
        if label_selector:
            query["labelSelector"] = label_selector
        if field_selector:
            query["fieldSelector"] = field_selector
        if limit:
            query["limit"] = str(limit)
        if continue_token:
            query["continue"] = continue_token
        if resource_version:
            query["resourceVersion"] = resource_version
        return await self._call("GET", resource.path(namespace), query=query)

    async def create(self, resource: Resource, obj: Obj, namespace: str | None = None, *,
                     dry_run: bool = False) -> Obj:
        ns = namespace or (obj.get("metadata") or {}).get("namespace")
        return await self._call("POST", resource.path(ns), body=obj,
                                query=self._write_query(dry_run))

    async def update(self, resource: Resource, obj: Obj, *, subresource: str | None = None) -> Obj:
        md = obj.get("metadata") or {}
        return await self._call("PUT", resource.path(md.get("namespace"), md["name"], subresource),
                                body=obj, query=self._write_query())

    async def update_status(self, resource: Resource, obj: Obj) -> Obj:
        return await self.update(resource, obj, subresource="status")

    async def patch(self, resource: Resource, name: str, patch: Any,
                    namespace: str | None = None, *, patch_type: str = "merge",
                    subresource: str | None = None, force: bool = False) -> Obj:
        query = self._write_query()
        if patch_type == "apply" and force:
            query["force"] = "true"
        return await self._call("PATCH", resource.path(namespace, name, subresource), body=patch,
                                query=query, content_type=PATCH_CONTENT_TYPES[patch_type])

    async def delete(self, resource: Resource, name: str, namespace: str | None = None, *,
                     grace_period_seconds: int | None = None,
                     propagation_policy: str | None = None,
                     preconditions: dict[str, str] | None = None) -> Obj:
        options: dict[str, Any] = {}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if preconditions:
            options["preconditions"] = preconditions
        return await self._call("DELETE", resource.path(namespace, name),
                                body=options or None)

    async def delete_collection(self, resource: Resource, namespace: str | None = None, *,
                                label_selector: str = "",
                                propagation_policy: str | None = None) -> Obj:
        """DELETE on the collection (upstream DeleteCollection); returns the deleted list."""
        query = {"labelSelector": label_selector} if label_selector else None
        body = {"propagationPolicy": propagation_policy} if propagation_policy else None
        return await self._call("DELETE", resource.path(namespace), query=query, body=body)

    async def bind(self, namespace: str, pod: str, node: str,
                   annotations: dict[str, str] | None = None) -> None:
        """POST pods/{pod}/binding (raises 409 when the pod is already bound)."""
        binding: Obj = {"apiVersion": "v1", "kind": "Binding",
                        "metadata": {"name": pod, "namespace": namespace},
                        "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        if annotations:
            binding["metadata"]["annotations"] = annotations
        await self._call("POST", PODS.path(namespace, pod, "binding"), body=binding)

    async def create_token(self, namespace: str, service_account: str, spec: Obj) -> Obj:
        """POST serviceaccounts/{name}/token (authentication.k8s.io/v1 TokenRequest): the
        answered TokenRequest, its token in status.token."""
        body: Obj = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                     "spec": spec}
        return await self._call("POST", SERVICEACCOUNTS.path(namespace, service_account, "token"),
                                body=body)

    async def watch(self, resource: Resource, namespace: str | None = None, *,
                    resource_version: str = "", label_selector: str = "",
                    field_selector: str = "", timeout_seconds: int | None = None,
                    allow_bookmarks: bool = True) -> AsyncIterator[WatchEvent]:
        """Events after `resource_version` until the server ends the stream. An ERROR event
        is raised as its Status (code 410: the resourceVersion is too old, re-list)."""
        query = {"watch": "true", "resourceVersion": resource_version}
        if label_selector:
            query["labelSelector"] = label_selector
        if field_selector:
            query["fieldSelector"] = field_selector
        if timeout_seconds is not None:
            query["timeoutSeconds"] = str(timeout_seconds)
        if allow_bookmarks:
            query["allowWatchBookmarks"] = "true"
        if self.rate_limiter is not None:
            await self.rate_limiter.accept()
        path = resource.path(namespace)
        if self.wire is not None and self.wire.protobuf and hasattr(self.transport,
                                                                     "watch_stream"):
            async for event in self._negotiated_watch(path, query):
                yield event
            return
        stream = self.transport.stream(path, query=query)
        try:
            async for line in stream:
                if not line.strip():
                    continue
                event = orjson.loads(line)
                if event.get("type") == "ERROR":
                    raise error_from_status(event.get("object") or {})
                yield WatchEvent(event["type"], event["object"])
        finally:
            await stream.aclose()

    async def _negotiated_watch(self, path: str, query: dict[str, str]
                                ) -> AsyncIterator[WatchEvent]:
        """A watch in the wire format's terms: protobuf frames, or JSON lines when the
        server has no protobuf form for the kind (HTTPTransport.watch_stream)."""
        from .http import WatchStartFailed

        wire = self.wire
        assert wire is not None
        stream = self.transport.watch_stream(path, query=query,  # type: ignore[attr-defined]
                                             accept=wire.accept)
        try:
            async for framed, payload in stream:
                event = await wire.watch_event(framed, payload)
                if event is None:
                    continue
                if event[0] == "ERROR":
                    raise error_from_status(event[1])
                yield WatchEvent(*event)
        except WatchStartFailed as failed:
            raise await wire.error(failed.response) from None
        finally:
            await stream.aclose()

    async def close(self) -> None:
        await self.transport.close()


__all__ = ["Client", "StatusError", "WatchEvent"]
