"""The console's aiohttp application and its listener.

Kubernetes piece: kube-ui's server (v1.0 cluster/addons/kube-ui), folded into the all-in-one
process on its own port. `build_app` serves the static shell (`static/`: plain ES modules, SVG
and CSS, no build step, no CDN) at `/` and `/static/`, and the JSON/SSE routes of every module
in ROUTE_MODULES under `/console-api/` — never under /api or /apis, so nothing here looks like
a Kubernetes API. Each route module exposes `routes(ctx) -> list[web.RouteDef]`.
"""

from __future__ import annotations

import importlib
import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from . import auth, errors, static_files
from .context import ConsoleContext

STATIC = Path(__file__).parent / "static"
#: the route modules of this package (relative names), one per view or concern
ROUTE_MODULES: tuple[str, ...] = (
    "routes_overview",
    "routes_cluster",
    "routes_events",
    "routes_actions",
    "routes_journey",
    "routes_store",
)


def build_app(ctx: ConsoleContext) -> web.Application:
    app = web.Application(middlewares=[errors.middleware, auth.middleware(ctx)],
                          client_max_size=64 * 1024)
    for name in ROUTE_MODULES:
        module = importlib.import_module(f".{name}", __package__)
        app.add_routes(module.routes(ctx))
    app.add_routes(static_files.routes(STATIC))

    async def close(_app: web.Application) -> None:
        await ctx.close()

    app.on_cleanup.append(close)
    return app


def is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:  # a host name: treat as reachable from elsewhere
        return False


@dataclass
class ConsoleServer:
    """A listening console: its URL (the port the OS chose for 0) and how to stop it."""

    runner: web.AppRunner
    url: str

    async def close(self) -> None:
        await self.runner.cleanup()


async def serve(ctx: ConsoleContext, address: str, port: int,
                sock: socket.socket | None = None) -> ConsoleServer:
    """Listen on address:port (0: a port the OS picks, read back from the socket), or on
    `sock`, a socket `start` bound already (cli/listeners.py). OSError when the address
    cannot be bound."""
    runner = web.AppRunner(build_app(ctx), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.SockSite(runner, sock) if sock is not None else web.TCPSite(runner, address, port)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    server = site._server  # aiohttp keeps the asyncio Server here; its socket has the port
    bound = (sock.getsockname()[1] if sock is not None
             else server.sockets[0].getsockname()[1] if server is not None and port == 0
             else port)
    shown = "127.0.0.1" if address in ("0.0.0.0", "") else "::1" if address == "::" else address
    host = f"[{shown}]" if ":" in shown else shown
    return ConsoleServer(runner, f"http://{host}:{bound}/")
