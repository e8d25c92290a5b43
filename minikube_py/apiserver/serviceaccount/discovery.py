"""Service-account issuer discovery: `/.well-known/openid-configuration` and `/openid/v1/jwks`.

Kubernetes piece: pkg/serviceaccount/openidmetadata.go (ServiceAccountIssuerDiscovery, GA in
1.21) — an OIDC discovery document naming the issuer and its JWKS URI, and the public keys
that verify tokens, so a relying party outside the cluster can check a token offline. Both
documents are built once at startup; the JWKS URI is `<issuer>/openid/v1/jwks` (upstream
derives it from --service-account-jwks-uri or the external address; the issuer is the usual
choice when it is an https URL). Upstream answers them with `Cache-Control: public,
max-age=3600` and the content types below.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from ...serviceaccount_keys import jwks
from .config import TokenConfig

OIDC_PATH = "/.well-known/openid-configuration"
JWKS_PATH = "/openid/v1/jwks"
_CACHE = "public, max-age=3600"


def openid_configuration(config: TokenConfig) -> dict[str, Any]:
    algs = sorted({k.alg for k in config.keys})
    return {"issuer": config.issuer,
            "jwks_uri": config.issuer.rstrip("/") + JWKS_PATH,
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": algs}


class IssuerDiscovery:
    """The two routes; 404 when no issuer is configured (upstream does not serve them)."""

    def __init__(self, config: TokenConfig) -> None:
        self._config = json.dumps(openid_configuration(config)).encode()
        self._jwks = json.dumps(jwks(config.keys)).encode()

    def install(self, router: web.UrlDispatcher) -> None:
        router.add_get(OIDC_PATH, self.configuration)
        router.add_get(JWKS_PATH, self.key_set)

    async def configuration(self, _request: web.Request) -> web.Response:
        return web.Response(body=self._config, content_type="application/json",
                            headers={"Cache-Control": _CACHE})

    async def key_set(self, _request: web.Request) -> web.Response:
        return web.Response(body=self._jwks, content_type="application/jwk-set+json",
                            headers={"Cache-Control": _CACHE})
