"""`POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token`: the TokenRequest subresource.

Kubernetes piece: pkg/registry/core/serviceaccount/storage/token.go (TokenREST.Create) with
pkg/apis/authentication's defaults (expirationSeconds 3600) and validation (at least 10
minutes, at most 2^32 seconds); --service-account-max-token-expiration shortens a longer
request with a warning. A token bound to a Pod or Secret carries its name and uid (and the
pod's node), and stops authenticating when that object is gone. The answer is the request
with `status.token` and `status.expirationTimestamp`, 201 as upstream.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ... import offload
from ...api import errors
from ...registry.generic import Registry
from ..filters import WARNINGS
from ..negotiation import (
    Output,
    body_type,
    decode_json_object,
    output_format,
    read_body,
)
from ..render import object_response
from .claims import new_claims
from .config import TokenConfig

if TYPE_CHECKING:
    from ..requestinfo import RequestInfo
    from ..serving import Verbs

GROUP = "authentication.k8s.io"
API_VERSION = "authentication.k8s.io/v1"
KIND = "TokenRequest"
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 2**32
#: what signing weighs for offload.run: always past HEAVY_BYTES, so it runs off the loop
SIGN_WEIGHT = offload.HEAVY_BYTES + 1


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def validate_spec(spec: Any) -> list[errors.FieldError]:
    """authentication validation.ValidateTokenRequest plus the shape checks decoding does."""
    errs: list[errors.FieldError] = []
    if not isinstance(spec, dict):
        return [errors.invalid("spec", spec, "must be an object")]
    auds = spec.get("audiences")
    if not isinstance(auds, list) or not all(isinstance(a, str) for a in auds):
        errs.append(errors.invalid("spec.audiences", auds, "must be a list of strings"))
    exp = spec.get("expirationSeconds")
    if not isinstance(exp, int) or isinstance(exp, bool):
        errs.append(errors.invalid("spec.expirationSeconds", exp, "must be an integer"))
    elif exp < MIN_EXPIRATION_SECONDS:
        errs.append(errors.invalid("spec.expirationSeconds", exp,
                                   "may not specify a duration less than 10 minutes"))
    elif exp > MAX_EXPIRATION_SECONDS:
        errs.append(errors.invalid("spec.expirationSeconds", exp,
                                   "may not specify a duration larger than 2^32 seconds"))
    ref = spec.get("boundObjectRef")
    if ref is not None and not isinstance(ref, dict):
        errs.append(errors.invalid("spec.boundObjectRef", ref, "must be an object"))
    return errs


def defaulted(body: dict[str, Any], config: TokenConfig) -> dict[str, Any]:
    """The request with upstream's defaults: audiences (the API server's), expirationSeconds."""
    req = dict(body)
    spec = req.get("spec") or {}
    if isinstance(spec, dict):  # anything else is reported by validate_spec
        spec = dict(spec)
        if not spec.get("audiences"):
            spec["audiences"] = list(config.audiences)
        if spec.get("expirationSeconds") is None:  # kubectl sends null for "unset"
            spec["expirationSeconds"] = DEFAULT_EXPIRATION_SECONDS
    req["spec"] = spec
    return req


async def _get(handlers: Verbs, resource: str, namespace: str, name: str) -> dict[str, Any]:
    registry = handlers.serving.resources.registry_for("", "v1", resource)
    return await registry.get(namespace, name)


async def _bound_objects(handlers: Verbs, namespace: str, account: str,
                         ref: dict[str, Any]) -> tuple[Any, Any, Any]:
    """(pod, secret, node) of spec.boundObjectRef, as TokenREST.Create checks them."""
    api_version, kind = ref.get("apiVersion", ""), ref.get("kind", "")
    name = ref.get("name", "")
    pod = secret = node = None
    if api_version == "v1" and kind == "Pod":
        pod = await _get(handlers, "pods", namespace, name)
        if (pod.get("spec") or {}).get("serviceAccountName") != account:
            raise errors.bad_request(f'cannot bind token for serviceaccount "{account}" to pod '
                                     "running with different serviceaccount name.")
        node_name = (pod.get("spec") or {}).get("nodeName")
        if node_name:
            try:
                node = await _get(handlers, "nodes", "", node_name)
            except errors.StatusError as exc:
                if exc.code != 404:
                    raise
                node = {"metadata": {"name": node_name}}
        uid, obj_resource = pod["metadata"].get("uid", ""), "Pod"
    elif api_version == "v1" and kind == "Secret":
        secret = await _get(handlers, "secrets", namespace, name)
        uid, obj_resource = secret["metadata"].get("uid", ""), "Secret"
    else:
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        raise errors.bad_request(f"cannot bind token to object of type "
                                 f"{group}/{api_version.rpartition('/')[2]}, Kind={kind}")
    if ref.get("uid") and ref["uid"] != uid:
        raise errors.conflict(obj_resource, name, (
            f"the UID in the bound object reference ({ref['uid']}) does not match the UID in "
            "record. The object might have been deleted and then recreated"))
    return pod, secret, node


async def create_token(handlers: Verbs, request: web.Request, info: RequestInfo,
                       registry: Registry, config: TokenConfig | None) -> web.Response:
    if config is None or config.signer is None:
        raise errors.not_found_path()  # upstream registers the subresource only when signing
    namespace, name = info.namespace, info.name or ""
    body = decode_json_object(await read_body(request), body_type(request))
    md = body.get("metadata") or {}
    if not isinstance(md, dict):
        raise errors.invalid_object(KIND, name, [errors.invalid("metadata", md, "must be an object")], GROUP)
    if md.get("name") and md["name"] != name:
        raise errors.invalid_object(KIND, name, [errors.invalid(
            "metadata.name", md["name"], "must match the service account name if specified")], GROUP)
    if md.get("namespace") and md["namespace"] != namespace:
        raise errors.invalid_object(KIND, name, [errors.invalid(
            "metadata.namespace", md["namespace"],
            "must match the service account namespace if specified")], GROUP)
    account = await registry.get(namespace, name)  # 404 serviceaccounts "name" not found
    req = defaulted(body, config)
    now = time.time()
    req["kind"], req["apiVersion"] = KIND, API_VERSION
    req["metadata"] = {**md, "name": name, "namespace": namespace,
                       "creationTimestamp": _rfc3339(now)}
    req.pop("status", None)
    errs = validate_spec(req["spec"])
    if errs:
        raise errors.invalid_object(KIND, "", errs, GROUP)
    spec = req["spec"]
    await handlers.admit(request, "CREATE", registry, namespace, name, "token", req)
    pod = secret = node = None
    if spec.get("boundObjectRef"):
        pod, secret, node = await _bound_objects(handlers, namespace, name, spec["boundObjectRef"])
    limit = config.max_expiration_seconds
    if limit > 0 and spec["expirationSeconds"] > limit:
        warnings = request.get(WARNINGS)
        if warnings is None:
            warnings = request[WARNINGS] = []
        warnings.append(f"requested expiration of {spec['expirationSeconds']} seconds "
                        f"shortened to {limit} seconds")
        spec["expirationSeconds"] = limit
    issued = int(now)
    claims = new_claims(config.issuer, account, spec["audiences"], issued,
                        spec["expirationSeconds"], pod=pod, secret=secret, node=node)
    # an RSA signature is ~1 ms of CPU: on the worker thread, not the shared loop
    token = await offload.run(config.signer.sign, claims, weight=SIGN_WEIGHT)
    req["status"] = {"token": token,
                     "expirationTimestamp": _rfc3339(issued + spec["expirationSeconds"])}
    output = output_format(request.headers.get("Accept"))
    return object_response(req, Output.JSON if output is Output.TABLE else output, 201)
