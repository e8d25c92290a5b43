"""HTTPExtender: ask an out-of-process HTTP service to filter and score nodes for a pod.

Kubernetes piece: plugin/pkg/scheduler/extender.go (v1.5 `HTTPExtender`, with the v1.7+
`send` that trims the URL prefix's trailing slash and fails on a non-200 status) and the wire
types of plugin/pkg/scheduler/api/types.go. It exists so a Policy's `extenders` can add
predicates and priorities the scheduler does not know (GPU inventories, licences, ...)
without rebuilding the scheduler: after the built-in predicates, each extender is POSTed the
pod and the still-feasible nodes and answers which of them fit; after the built-in
priorities, it is POSTed the same and answers raw scores, which the caller multiplies by
`weight` and adds.

Wire format: upstream json.Marshal's the *internal* api types, which carry no json tags, so
the field names on the wire are the Go names: `{"Pod": pod, "Nodes": {"items": [...]}}`
(`items` is NodeList's own tag); replies are `{"Nodes": {"items": [...]}, "NodeNames": [...],
"FailedNodes": {node: reason}, "Error": "..."}` and `[{"Host": ..., "Score": ...}]`. Go's
json.Unmarshal matches keys case-insensitively, so extenders written against the tagged
versioned types (`nodes`, `failedNodes`, `host`, `score`) work upstream; `_field` gives the
same tolerance here.

What the caller does with errors is upstream's policy, not this module's: a filter error
fails the scheduling attempt; a prioritize error is ignored (the other priorities decide).
Both surface here as `ExtenderError`, whose message names the URL and what went wrong.

TLS: `url_prefix` carries its scheme and is used as given; certificates are verified with the
system store. (Upstream has a `tlsConfig` and skips verification when `enableHttps` is set
without a CA; our ExtenderConfig has no TLS fields, so we keep verification on.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import aiohttp
import orjson

from .factory import ExtenderConfig

Obj = dict[str, Any]

#: upstream DefaultExtenderTimeout, used when a config carries a zero timeout
DEFAULT_EXTENDER_TIMEOUT = 5.0
_BODY_SNIPPET = 200  # how much of a bad reply to quote in an error


class ExtenderError(Exception):
    """An extender call failed: unreachable, timed out, non-200, unreadable, or it said
    `Error`. Upstream fails the scheduling attempt on a filter error and ignores a
    prioritize error."""


class HTTPExtender:
    """One configured extender (upstream NewHTTPExtender) with one lazily created
    aiohttp session, so connections are reused across scheduling attempts."""

    def __init__(self, config: ExtenderConfig) -> None:
        self.config = config
        self.weight: int = config.weight
        self._timeout = aiohttp.ClientTimeout(
            total=config.http_timeout if config.http_timeout > 0 else DEFAULT_EXTENDER_TIMEOUT)
        self._session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:
        return f"HTTPExtender({self.config.url_prefix!r}, weight={self.weight})"

    async def filter(self, pod: Obj, nodes: list[Obj]) -> tuple[list[str], dict[str, str]]:
        """Names of the nodes the extender keeps, and {node: reason} for those it rejects.

        Without a filter verb the extender does not filter: every node passes (upstream
        returns the input unchanged with an empty FailedNodesMap)."""
        if not self.config.filter_verb:
            return _names(nodes), {}
        verb = self.config.filter_verb
        result = await self._send(verb, _args(pod, nodes))
        if not isinstance(result, dict):
            raise self._error(verb, f"expected an ExtenderFilterResult object, got {_kind(result)}")
        message = _field(result, "Error")
        if message:
            raise self._error(verb, f"extender error: {message}")
        try:
            return _fitting(result), _failed(result)
        except (TypeError, ValueError) as exc:
            raise self._error(verb, f"malformed ExtenderFilterResult: {exc}") from None

    async def prioritize(self, pod: Obj, nodes: list[Obj]) -> dict[str, int]:
        """{host: raw score} as the extender sent it; the caller applies `weight`.

        Without a prioritize verb the extender contributes nothing (upstream answers zero
        for every node, which adds nothing either)."""
        if not self.config.prioritize_verb:
            return {}
        verb = self.config.prioritize_verb
        result = await self._send(verb, _args(pod, nodes))
        try:
            return _scores(result)
        except (TypeError, ValueError) as exc:
            raise self._error(verb, f"malformed HostPriorityList: {exc}") from None

    async def close(self) -> None:
        """Close the session (and its pooled connections); a later call opens a new one."""
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    # -- I/O ------------------------------------------------------------------------------

    def _url(self, verb: str) -> str:
        return self.config.url_prefix.rstrip("/") + "/" + verb

    def _error(self, verb: str, what: str) -> ExtenderError:
        return ExtenderError(f"failed {verb} with extender at URL {self._url(verb)}: {what}")

    def _client(self) -> aiohttp.ClientSession:
        """The session, created on first use: it must be made inside the running loop."""
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        return self._session

    async def _send(self, verb: str, args: Obj) -> Any:
        """POST `args` as JSON to prefix/verb and decode the 200 reply (upstream `send`).
        The timeout covers connecting, sending and reading the whole body."""
        body = orjson.dumps(args)
        try:
            async with self._client().post(self._url(verb), data=body, timeout=self._timeout,
                                           headers={"Content-Type": "application/json"}) as resp:
                reply = await resp.read()
                status = resp.status
        except TimeoutError:
            raise self._error(verb, f"timed out after {self._timeout.total:g}s") from None
        except aiohttp.ClientError as exc:
            raise self._error(verb, f"{type(exc).__name__}: {exc}") from None
        if status != 200:
            raise self._error(verb, f"code {status}: {_snippet(reply)}")
        try:
            return orjson.loads(reply)
        except orjson.JSONDecodeError as exc:
            raise self._error(verb, f"invalid JSON ({exc}): {_snippet(reply)}") from None


# -- wire encoding and decoding (pure) ------------------------------------------------------


def _args(pod: Obj, nodes: Iterable[Obj]) -> Obj:
    """ExtenderArgs as upstream marshals the untagged internal struct."""
    return {"Pod": pod, "Nodes": {"items": list(nodes)}}


def _field(obj: Obj, name: str) -> Any:
    """obj[name], else the first key equal to it ignoring case (Go json.Unmarshal's rule)."""
    if name in obj:
        return obj[name]
    lowered = name.lower()
    for key, value in obj.items():
        if key.lower() == lowered:
            return value
    return None


def _names(nodes: Iterable[Obj]) -> list[str]:
    return [(node.get("metadata") or {}).get("name", "") for node in nodes]


def _fitting(result: Obj) -> list[str]:
    """Names from `Nodes.items`, or from `NodeNames` (the v1.7 nodeCacheCapable reply) when
    no node list came back. Neither means no node fits, as a nil list does upstream."""
    nodes = _field(result, "Nodes")
    if nodes is not None:
        if not isinstance(nodes, dict):
            raise TypeError(f"Nodes must be a NodeList object, got {_kind(nodes)}")
        items = _field(nodes, "items") or []
        if not isinstance(items, list) or not all(isinstance(n, dict) for n in items):
            raise TypeError("Nodes.items must be a list of node objects")
        return _names(items)
    names = _field(result, "NodeNames") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise TypeError("NodeNames must be a list of strings")
    return names


def _failed(result: Obj) -> dict[str, str]:
    failed = _field(result, "FailedNodes") or {}
    if not isinstance(failed, dict) or not all(isinstance(v, str) for v in failed.values()):
        raise TypeError("FailedNodes must map node names to reason strings")
    return dict(failed)


def _scores(result: Any) -> dict[str, int]:
    """HostPriorityList -> {host: score}. A host listed twice is summed, as upstream's
    combinedScores[host] += score does. A null reply is an empty list, as in Go."""
    if result is None:
        return {}
    if not isinstance(result, list):
        raise TypeError(f"expected a list of {{Host, Score}}, got {_kind(result)}")
    scores: dict[str, int] = {}
    for entry in result:
        if not isinstance(entry, dict):
            raise TypeError(f"entry {entry!r} is not an object")
        host, score = _field(entry, "Host"), _field(entry, "Score")
        if not isinstance(host, str) or not isinstance(score, int) or isinstance(score, bool):
            raise TypeError(f"entry {entry!r} needs a string Host and an integer Score")
        scores[host] = scores.get(host, 0) + score
    return scores


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__)


def _snippet(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    return repr(text[:_BODY_SNIPPET] + ("..." if len(text) > _BODY_SNIPPET else ""))
