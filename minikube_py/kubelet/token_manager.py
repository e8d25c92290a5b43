"""The kubelet's service-account token manager: tokens for projected `serviceAccountToken`
volume sources.

Kubernetes piece: pkg/kubelet/token/token_manager.go (Manager.GetServiceAccountToken) — the
kubelet asks the API server for a TokenRequest bound to the pod (audience and
expirationSeconds from the volume source; the ServiceAccount admission plugin's
`kube-api-access-*` volume asks 3607 s for the API server's own audience), caches it per (pod,
service account, audience, expiration), and asks again once 80% of its lifetime has passed or
24 h went by (requiresRefresh). Entries of pods that are gone are dropped when the cache is
read. When the API server serves no TokenRequest (no signing key: 404), the file is left out
instead of failing the pod — upstream would keep the pod in ContainerCreating.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog

from ..api.errors import StatusError
from .sandbox import token_key

log = structlog.get_logger(component="kubelet")

Obj = dict[str, Any]
#: (namespace, pod uid, service account, audience or "", expirationSeconds)
Key = tuple[str, str, str, str, int]
MAX_TTL_SECONDS = 24 * 3600


def token_sources(pod: Obj) -> list[tuple[str, int]]:
    """(audience, expirationSeconds) of every projected serviceAccountToken source."""
    found: list[tuple[str, int]] = []
    for volume in (pod.get("spec") or {}).get("volumes") or ():
        for source in ((volume or {}).get("projected") or {}).get("sources") or ():
            sat = (source or {}).get("serviceAccountToken")
            if isinstance(sat, dict) and token_key(sat) not in found:
                found.append(token_key(sat))
    return found


#: how long a TokenRequest API found not served is not asked again
UNSERVED_RETRY_SECONDS = 60.0


def requires_refresh(issued: float, expires: float, now: float) -> bool:
    """token_manager.go requiresRefresh: past 80% of the lifetime, or older than 24 h."""
    return now >= issued + 0.8 * (expires - issued) or now >= issued + MAX_TTL_SECONDS


class TokenManager:
    def __init__(self, client: Any, clock: Callable[[], float] = time.time, *,
                 client_for: Callable[[str], Any] | None = None) -> None:
        """`client_for`: node name -> the client to ask as (the pod's node); default
        `client` for every pod."""
        self.client = client
        self.client_for = client_for
        self.clock = clock
        self._tokens: dict[Key, tuple[str, float, float]] = {}  # -> (token, issued, expires)
        #: until when the API server is known not to serve TokenRequest (no signing key
        #: configured): asking again for every pod would cost a request per pod for nothing
        self._unserved_until = 0.0

    async def tokens_for(self, pod: Obj) -> dict[tuple[str, int], bytes]:
        """(audience, expirationSeconds) -> token bytes for the pod's token sources."""
        out: dict[tuple[str, int], bytes] = {}
        for audience, exp in token_sources(pod):
            token = await self.token(pod, audience, exp)
            if token is not None:
                out[audience, exp] = token.encode()
        return out

    async def token(self, pod: Obj, audience: str, expiration_seconds: int) -> str | None:
        md = pod.get("metadata") or {}
        account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        key: Key = (md.get("namespace", "default"), md.get("uid", ""), account, audience,
                    expiration_seconds)
        now = self.clock()
        cached = self._tokens.get(key)
        if cached is not None and not requires_refresh(cached[1], cached[2], now):
            return cached[0]
        if now < self._unserved_until:
            return cached[0] if cached is not None else None
        spec: Obj = {"expirationSeconds": expiration_seconds,
                     "boundObjectRef": {"apiVersion": "v1", "kind": "Pod",
                                        "name": md.get("name", ""), "uid": md.get("uid", "")}}
        if audience:
            spec["audiences"] = [audience]
        try:
            node = (pod.get("spec") or {}).get("nodeName") or ""
            client = self.client if self.client_for is None else self.client_for(node)
            answer = await client.create_token(key[0], account, spec)
        except StatusError as exc:
            log.debug("service account token not issued", namespace=key[0], pod=md.get("name"),
                     serviceaccount=account, code=exc.code, reason=exc.reason)
            if exc.code == 404 and not (exc.details or {}).get("kind"):
                # the subresource itself is not served (a 404 about a missing
                # ServiceAccount names its kind): ask again in a minute, not per pod
                self._unserved_until = now + UNSERVED_RETRY_SECONDS
            return cached[0] if cached is not None else None
        token = str((answer.get("status") or {}).get("token") or "")
        granted = ((answer.get("spec") or {}).get("expirationSeconds")) or expiration_seconds
        self._tokens[key] = (token, now, now + float(granted))
        return token

    def forget(self, live_pod_uids: set[str]) -> None:
        """Drop the tokens of pods that are gone (token_manager.go's cleanup)."""
        for key in [k for k in self._tokens if k[1] not in live_pod_uids]:
            del self._tokens[key]
