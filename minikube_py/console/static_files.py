"""The console's static shell, served from memory.

Kubernetes piece: none (kube-ui served its files from a container image's nginx). The shell
is a few dozen kilobytes of HTML, ES modules and CSS in the package; reading it once when the
app is built and answering from bytes keeps every asset request on the event loop for a few
microseconds — aiohttp's file responses stat and open the file on a worker thread per request;
in a probe of a first load next to a 100-node cluster on the loaded 2-core machine, assets
served that way took 150–350 ms each, from memory 50–130 ms (noisy: load average ~7). Each answer carries a strong ETag (a hash of its bytes) and
`Cache-Control: no-cache`: a browser revalidates and gets a 304, so a changed file is never
served stale.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from ..api import errors

#: what may be served (anything else in the directory is not an asset)
SUFFIXES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css",
            ".svg": "image/svg+xml", ".png": "image/png"}


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


def load(root: Path) -> dict[str, Asset]:
    """Every asset under `root`, by its path relative to it ("views/nodes.js")."""
    assets = {}
    for path in sorted(root.rglob("*")):
        kind = SUFFIXES.get(path.suffix)
        if kind is None or not path.is_file():
            continue
        body = path.read_bytes()
        assets[path.relative_to(root).as_posix()] = Asset(
            body, kind or mimetypes.guess_type(path.name)[0] or "application/octet-stream",
            f'"{hashlib.sha256(body).hexdigest()[:20]}"')
    return assets


def respond(request: web.Request, asset: Asset) -> web.Response:
    headers = {"ETag": asset.etag, "Cache-Control": "no-cache"}
    if asset.etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    return web.Response(body=asset.body, content_type=asset.content_type, headers=headers,
                        charset="utf-8" if asset.content_type.startswith("text/") else None)


def routes(root: Path) -> list[web.RouteDef]:
    assets = load(root)

    async def index(request: web.Request) -> web.Response:
        return respond(request, assets["index.html"])

    async def asset(request: web.Request) -> web.Response:
        found = assets.get(request.match_info["path"])
        if found is None:
            raise errors.not_found_path()
        return respond(request, found)

    return [web.get("/", index), web.get("/static/{path:.+}", asset)]
