"""`/debug/components`: list the cluster's pausable components, pause and resume them.

Kubernetes piece: none upstream (see minikube_py/pausing.py for why pausing exists). Mounted
beside `/debug/trace` and `/debug/pprof`, so it sits behind the same filter chain: on the
secure port the request is authenticated and authorized as a non-resource URL (`get` for
the list, `post` for a POST — cluster-admin has both, through `nonResourceURLs: ["*"]`);
the insecure port trusts its loopback callers, as for every other path.

- `GET /debug/components` -> `{"components": [{"name", "kind", "paused", "since"}, ...]}`
- `GET /debug/components/{name}` -> that component
- `POST /debug/components/{name}/pause` | `/resume` -> the component after the change
  (idempotent: pausing a paused component answers 200 and changes nothing)
- an unknown component or action -> a 404 Status (reason NotFound).
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

from ..api import errors
from ..pausing import PauseGate, PauseRegistry
from . import render

#: what `POST /debug/components/{name}/{action}` accepts
ACTIONS = ("pause", "resume")
#: the Status details' kind of an unknown component (`components "x" not found`)
RESOURCE = "components"


class ComponentsEndpoint:
    """The handlers of `/debug/components` over one cluster's pause registry."""

    def __init__(self, registry: PauseRegistry) -> None:
        self.registry = registry

    def install(self, router: web.UrlDispatcher) -> None:
        router.add_get("/debug/components", self.list)
        router.add_get("/debug/components/{name}", self.get)
        router.add_post("/debug/components/{name}/{action}", self.act)

    def _gate(self, name: str) -> PauseGate:
        try:
            return self.registry.get(name)
        except KeyError:
            raise errors.not_found(RESOURCE, name) from None

    async def list(self, request: web.Request) -> web.Response:
        return _json({"components": self.registry.snapshot()})

    async def get(self, request: web.Request) -> web.Response:
        return _json(self._gate(request.match_info["name"]).to_dict())

    async def act(self, request: web.Request) -> web.Response:
        gate = self._gate(request.match_info["name"])
        action = request.match_info["action"]
        if action not in ACTIONS:
            raise errors.not_found_path()
        if action == "pause":
            gate.pause()
        else:
            gate.resume()
        return _json(gate.to_dict())


def _json(doc: dict[str, Any]) -> web.Response:
    return render.json_response(orjson.dumps(doc))
