"""--cors-allowed-origins: Cross-Origin Resource Sharing for browsers calling the API.

Kubernetes piece: pkg/apiserver/handlers.go `CORS(handler, allowedOriginPatterns, ...)` in
v1.0, today k8s.io/apiserver/pkg/server/filters/cors.go `WithCORS`, wrapped *outside*
authentication. Behaviour, as upstream:

- no patterns: no CORS support at all (and no cost: nothing is installed);
- a request without `Origin`, or whose origin matches no pattern (Go's `MatchString`: a
  search, not a full match — anchor with `^...$` yourself), passes through untouched: no CORS
  headers, so the browser refuses the response;
- a matching origin gets `Access-Control-Allow-Origin: <that origin>`, `-Allow-Methods`,
  `-Allow-Headers`, `-Expose-Headers` and `-Allow-Credentials: true` on its response;
- a matching `OPTIONS` (the preflight) is answered 204 right here, before authentication —
  browsers send preflights without credentials.

Headers are added in aiohttp's `on_response_prepare`, so streamed responses (watches, logs)
get them too; the preflight is a middleware placed before the filter chain.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from aiohttp import web

ALLOWED_METHODS = ("POST", "GET", "OPTIONS", "PUT", "DELETE", "PATCH")
ALLOWED_HEADERS = ("Content-Type", "Content-Length", "Accept-Encoding", "X-CSRF-Token",
                   "Authorization", "X-Requested-With", "If-Modified-Since")
EXPOSED_HEADERS = ("Date",)


def parse_origins(text: str) -> list[re.Pattern[str]]:
    """The comma list of --cors-allowed-origins, compiled; ValueError with upstream's message."""
    patterns = [p.strip() for p in text.split(",") if p.strip()]
    try:
        return [re.compile(p) for p in patterns]
    except re.error as exc:
        raise ValueError(f"Invalid CORS allowed origin, --cors-allowed-origins flag was set to "
                         f"{','.join(patterns)} - {exc}") from None


def cors_headers(origin: str) -> dict[str, str]:
    return {
        "Access-Control-Allow-Origin": origin,
        "Access-Control-Allow-Methods": ", ".join(ALLOWED_METHODS),
        "Access-Control-Allow-Headers": ", ".join(ALLOWED_HEADERS),
        "Access-Control-Expose-Headers": ", ".join(EXPOSED_HEADERS),
        "Access-Control-Allow-Credentials": "true",
    }


class CORS:
    """The allow-list and the two hooks that apply it."""

    def __init__(self, patterns: list[re.Pattern[str]]) -> None:
        self.patterns = patterns

    def allowed(self, origin: str | None) -> bool:
        return origin is not None and any(p.search(origin) for p in self.patterns)

    @web.middleware
    async def preflight(self, request: web.Request,
                        handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                        ) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if request.method == "OPTIONS" and self.allowed(origin):
            return web.Response(status=204)  # headers come from on_prepare, like every response
        return await handler(request)

    async def on_prepare(self, request: web.Request, response: web.StreamResponse) -> None:
        origin = request.headers.get("Origin")
        if self.allowed(origin):
            response.headers.update(cors_headers(origin))  # type: ignore[arg-type]

    def install(self, app: web.Application) -> None:
        """Call before the app is frozen; the preflight middleware goes first (outermost)."""
        app.middlewares.insert(0, self.preflight)
        app.on_response_prepare.append(self.on_prepare)
