"""`/console-api/store/...`: the store browser's routes.

Kubernetes piece: etcdctl's `get --prefix --keys-only`, `get --rev`, `watch --rev` (history)
and `compact`, over HTTP for the console (console/store_browser.py has the reads, through the
Store contract only). Routes:
- `GET /console-api/store/tree?prefix=/registry/&limit=100&after=NAME`: one page of a
  prefix's children (directories with key counts, keys with revisions), the store's current
  and compaction revisions;
- `GET /console-api/store/key?key=K&revision=R`: K's value at R (default now), its previous
  value and the diff (JSON-path changes and unified lines);
- `GET /console-api/store/history?key=K`: K's retained revisions, each with its diff;
- `POST /console-api/store/compact` `{"revision": N}` (default: the current revision).
Bad input is a 400 Status, an unknown key a 404, a compacted revision a 410.
"""

from __future__ import annotations

from aiohttp import web

from ..api import errors
from .context import ConsoleContext
from .errors import parse_json_object
from .store_browser import (
    check_key,
    compact,
    key_at,
    key_history,
    parse_limit,
    parse_revision,
    revisions,
    tree,
)


def _key(request: web.Request) -> str:
    key = request.query.get("key", "")
    if not key:
        raise errors.bad_request("key: required")
    return check_key(key)


def _json(body: dict) -> web.Response:
    return web.json_response(body)


def routes(ctx: ConsoleContext) -> list[web.RouteDef]:
    store = ctx.store

    async def get_tree(request: web.Request) -> web.Response:
        query = request.query
        return _json(await tree(store, query.get("prefix", "/registry/"),
                                limit=parse_limit(query.get("limit")),
                                after=query.get("after", "")))

    async def get_key(request: web.Request) -> web.Response:
        body = await key_at(store, _key(request), parse_revision(request.query.get("revision")))
        return _json(body)

    async def get_history(request: web.Request) -> web.Response:
        return _json(await key_history(store, _key(request)))

    async def get_status(request: web.Request) -> web.Response:
        return _json(await revisions(store))

    async def post_compact(request: web.Request) -> web.Response:
        body = parse_json_object(await request.read())
        revision = body.get("revision", 0)
        if not isinstance(revision, int) or isinstance(revision, bool) or revision < 0:
            raise errors.bad_request(f"revision: must be a non-negative integer, "
                                     f"got {revision!r}")
        return _json(await compact(store, revision))

    return [web.get("/console-api/store/tree", get_tree),
            web.get("/console-api/store/key", get_key),
            web.get("/console-api/store/history", get_history),
            web.get("/console-api/store/status", get_status),
            web.post("/console-api/store/compact", post_compact)]
