"""/configz: a component's effective configuration, as JSON, on its own HTTP port.

Kubernetes piece: pkg/util/configz (v1.2+). A component registers named configurations
(`configz.New("componentconfig").Set(s.KubeSchedulerConfiguration)` in kube-scheduler, the same
with KubeControllerManagerConfiguration in kube-controller-manager) and `/configz` answers the
JSON object of all of them: `{"componentconfig": {...}}`. The API server had none in v1.x, so it
has none here. Upstream keeps one registry per process; here each component's HTTP app holds its
own (`start` runs the scheduler and the controller manager in one process, each on its port).
"""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

PATH = "/configz"
COMPONENT_CONFIG = "componentconfig"


class Configz:
    """Named configurations of one component (upstream's configs map)."""

    def __init__(self) -> None:
        self.configs: dict[str, Any] = {}

    def set(self, name: str, value: Any) -> None:
        self.configs[name] = value

    def body(self) -> bytes:
        return orjson.dumps(self.configs, default=str, option=orjson.OPT_INDENT_2)

    async def handle(self, request: web.Request) -> web.Response:
        return web.Response(body=self.body(), content_type="application/json")


def install(app: web.Application, component_config: dict[str, Any] | None) -> Configz:
    """Serve `component_config` as {"componentconfig": ...} at /configz on `app`."""
    configz = Configz()
    if component_config is not None:
        configz.set(COMPONENT_CONFIG, component_config)
    app.router.add_get(PATH, configz.handle)
    return configz
