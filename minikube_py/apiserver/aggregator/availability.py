"""Is an APIService's backend there? The `Available` condition, from a live probe.

Kubernetes piece: kube-aggregator's pkg/controllers/status/available_controller.go. A local
APIService is always available (reason `Local`). A service-backed one must name an existing
Service (`ServiceNotFound`); a ClusterIP service must have the APIService's port
(`ServicePortError`) and Endpoints (`EndpointsNotFound`) with a ready address on that port's
name (`MissingEndpoints`); then the backend's discovery document `/apis/<group>/<version>`
must answer 2xx within 5 s (`FailedDiscoveryCheck`), asked as `system:kube-aggregator` in
`system:masters` over TLS *without* verifying the backend's certificate (upstream's probe is
"best effort": the proxy verifies, the probe only checks reachability), presenting the proxy
client certificate. Otherwise `Passed`.

`service_verdict` is the pure half; `probe` does the I/O with a deadline, and hands back the
discovery document it read, which the aggregated discovery serves (one request does both
jobs).
"""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

import aiohttp
import orjson

from ...api import errors
from ...registry.apiservices import service_of, spec_of
from ..webhook_client import ClientConfig, Getter, WebhookCallError, resolve

Obj = dict[str, Any]
PROBE_TIMEOUT = 5.0
#: upstream's identity for the probe (SetAuthProxyHeaders in available_controller.go)
PROBE_USER, PROBE_GROUP = "system:kube-aggregator", "system:masters"


class Verdict(NamedTuple):
    status: str
    reason: str
    message: str


LOCAL = Verdict("True", "Local", "Local APIServices are always available")
PASSED = Verdict("True", "Passed", "all checks passed")


def service_verdict(apiservice: Obj, service: Obj | None, endpoints: Obj | None,
                    endpoints_found: bool) -> Verdict | None:
    """The checks before the network call; None = go on and probe."""
    ref = service_of(apiservice)
    if ref is None:
        return LOCAL
    name, namespace = ref.get("name", ""), ref.get("namespace", "")
    if service is None:
        return Verdict("False", "ServiceNotFound",
                       f'service/{name} in "{namespace}" is not present')
    spec = service.get("spec") or {}
    if (spec.get("type") or "ClusterIP") != "ClusterIP":
        return None
    port = ref.get("port", 443)
    port_name = next((p.get("name") or "" for p in spec.get("ports") or ()
                      if p.get("port") == port), None)
    if port_name is None:
        return Verdict("False", "ServicePortError",
                       f'service/{name} in "{namespace}" is not listening on port {port}')
    if not endpoints_found:
        return Verdict("False", "EndpointsNotFound",
                       f'cannot find endpoints for service/{name} in "{namespace}"')
    for subset in (endpoints or {}).get("subsets") or ():
        if subset.get("addresses") and any((p.get("name") or "") == port_name
                                           for p in subset.get("ports") or ()):
            return None
    return Verdict("False", "MissingEndpoints", f'endpoints for service/{name} in "{namespace}" '
                                                f'have no addresses with port name "{port_name}"')


def discovery_path(apiservice: Obj) -> str:
    spec = spec_of(apiservice)
    if (apiservice.get("metadata") or {}).get("name") == "v1.":
        return f"/api/{spec.get('version', '')}"
    return f"/apis/{spec.get('group', '')}/{spec.get('version', '')}"


def client_config(apiservice: Obj) -> ClientConfig:
    """The webhook client's view of an APIService's backend (same resolution rules)."""
    ref = service_of(apiservice) or {}
    return ClientConfig.from_api({
        "service": {"namespace": ref.get("namespace", ""), "name": ref.get("name", ""),
                    "port": ref.get("port") or 443},
        "caBundle": spec_of(apiservice).get("caBundle") or ""})


async def _get(getter: Getter, namespace: str, name: str) -> tuple[Obj | None, bool]:
    try:
        return await getter(namespace, name), True
    except errors.StatusError as exc:
        if exc.code == 404:
            return None, False
        raise


async def probe(apiservice: Obj, *, services: Getter, endpoints: Getter,
                session: aiohttp.ClientSession, insecure_context: Any
                ) -> tuple[Verdict, Obj | None]:
    """(the verdict, the backend's discovery document when it answered one)."""
    ref = service_of(apiservice)
    if ref is None:
        return LOCAL, None
    namespace, name = ref.get("namespace", ""), ref.get("name", "")
    service, _ = await _get(services, namespace, name)
    eps, found = (None, False)
    if service is not None:
        eps, found = await _get(endpoints, namespace, name)
    verdict = service_verdict(apiservice, service, eps, found)
    if verdict is not None:
        return verdict, None
    try:
        target = await resolve(client_config(apiservice), services, endpoints)
    except WebhookCallError as exc:
        return Verdict("False", "FailedDiscoveryCheck", str(exc)), None
    url = target.url.rstrip("/") + discovery_path(apiservice)
    try:
        async with asyncio.timeout(PROBE_TIMEOUT):
            async with session.get(url, ssl=insecure_context, allow_redirects=False,
                                   headers={"X-Remote-User": PROBE_USER,
                                            "X-Remote-Group": PROBE_GROUP,
                                            "Accept": "application/json"}) as response:
                body = await response.read()
    except TimeoutError:
        return Verdict("False", "FailedDiscoveryCheck",
                       f"failing or missing response from {url}: Get \"{url}\": context "
                       "deadline exceeded (Client.Timeout exceeded while awaiting headers)"), None
    except (aiohttp.ClientError, OSError) as exc:
        return Verdict("False", "FailedDiscoveryCheck",
                       f'failing or missing response from {url}: Get "{url}": {exc}'), None
    if not 200 <= response.status < 300:
        return Verdict("False", "FailedDiscoveryCheck",
                       f"failing or missing response from {url}: bad status from {url}: "
                       f"{response.status}"), None
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        document = None
    return PASSED, document if isinstance(document, dict) else None
