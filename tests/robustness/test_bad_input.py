"""The bad-input battery (issue 6, "Tests that must exist"): generated hostile requests against a
real API server over HTTP.

Kubernetes' contract for malformed input is that the server answers it, never crashes on it,
and never half-applies it: every rejection is a `Status` (kind Status, `code` equal to the HTTP
status, a message saying what was wrong) with a 4xx code; the server keeps serving; a write that
failed left the store untouched. Hypothesis generates the input: create/update bodies mutated
from valid objects of five kinds, label and field selectors, patch documents of the four patch
types, query parameters with random values, and random paths.

Requests the HTTP parser itself rejects (a request line or header over 1 MiB, a malformed
request line) are answered with a Status by the connection layer (apiserver/connection.py):
431 and 400; tests/apiserver/test_connection.py sends those raw bytes, and the over-long path is
pinned here too.

The server runs on its own event loop in a background thread (one per module) so that the
synchronous hypothesis tests can drive it with `run(coroutine)`.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import threading
from pathlib import Path
from typing import Any, Coroutine, Iterator, TypeVar

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from yarl import URL

from tests.apiserver.conftest import start_api

T = TypeVar("T")
SETTINGS = settings(max_examples=250, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
_names = itertools.count()


# -- the server, on its own loop ------------------------------------------------------------
class Harness:
    def __init__(self, tmp: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.api, self.runner, self.store, self.session = self.run(start_api(tmp))

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def close(self) -> None:
        async def _close() -> None:
            await self.session.close()
            await self.runner.cleanup()
            await self.store.close()
        self.run(_close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    async def _request(self, method: str, path: str, body: bytes | None,
                       content_type: str) -> tuple[int, str, bytes]:
        headers = {"Content-Type": content_type} if body is not None else {}
        url = URL(self.api.url + path, encoded=True)
        timeout = aiohttp.ClientTimeout(total=10)
        async with self.session.request(method, url, data=body, headers=headers,
                                        timeout=timeout) as resp:
            # a successful watch streams forever: its headers are the answer
            data = await resp.read() if resp.status >= 400 else b""
            return resp.status, resp.headers.get("Content-Type", ""), data

    async def contents(self) -> dict[str, bytes]:
        """Every key's value (not its revisions): what a failed write must leave as it was."""
        result = await self.store.range("/")
        return {kv.key: kv.value for kv in result.kvs}

    def check(self, method: str, path: str, body: bytes | None = None, *,
              content_type: str = "application/json") -> int:
        """Send one request and assert the battery's invariants; returns the HTTP status."""
        before = self.run(self.store.current_revision())
        contents = self.run(self.contents()) if method not in ("GET", "HEAD") else None
        status, ctype, data = self.run(self._request(method, path, body, content_type))
        where = f"{method} {path} body={body[:300] if body else body!r}"
        assert status < 500 or _rv_too_large(status, data), f"{status} for {where}: {data[:500]!r}"
        if status >= 400:
            assert ctype.startswith("application/json"), f"{status} non-JSON ({ctype}) for {where}: {data[:300]!r}"
            doc = json.loads(data)
            assert doc.get("kind") == "Status", f"not a Status for {where}: {doc}"
            assert doc.get("code") == status, f"code {doc.get('code')} != {status} for {where}"
            assert isinstance(doc.get("message"), str) and doc["message"], f"no message for {where}"
            after = self.run(self.store.current_revision())
            if after != before:
                # allowed only as a rolled-back side write (a Service's cluster IP or NodePort
                # allocated, then released when the create failed): the contents are as before
                assert contents is not None and self.run(self.contents()) == contents, \
                    f"store changed ({before} -> {after}) by failed {where}: {doc['message']}"
        health, _, _ = self.run(self._request("GET", "/healthz", None, ""))
        assert health == 200
        return status


def _rv_too_large(status: int, data: bytes) -> bool:
    """Upstream's one 5xx for client input: a read at a resourceVersion the store has not
    reached waits (up to 3 s), then answers 504 Timeout with cause ResourceVersionTooLarge so
    that clients retry (k8s.io/apiserver cacher). It is a Status and writes nothing."""
    if status != 504:
        return False
    causes = json.loads(data).get("details", {}).get("causes", [])
    return any(c.get("reason") == "ResourceVersionTooLarge" for c in causes)


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Harness]:
    h = Harness(tmp_path_factory.mktemp("bad-input"))
    for path, obj in SEEDS.items():
        status = h.check("POST", path.rsplit("/", 1)[0], json.dumps(obj).encode())
        assert status == 201, (path, status)
    try:
        yield h
    finally:
        h.close()


# -- valid objects to mutate ------------------------------------------------------------------
def _meta(name: str) -> dict:
    return {"name": name, "labels": {"app": "seed"}, "annotations": {"a": "b"}}


SEEDS: dict[str, dict] = {
    f"{NS}/pods/seed-pod": {
        "apiVersion": "v1", "kind": "Pod", "metadata": _meta("seed-pod"),
        "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                                 "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}},
                                 "env": [{"name": "A", "value": "1"}]}],
                 "restartPolicy": "Always", "nodeSelector": {"disk": "ssd"}}},
    f"{NS}/services/seed-svc": {
        "apiVersion": "v1", "kind": "Service", "metadata": _meta("seed-svc"),
        "spec": {"selector": {"app": "seed"}, "type": "ClusterIP",
                 "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]}},
    f"{NS}/configmaps/seed-cm": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("seed-cm"),
        "data": {"k": "v"}, "binaryData": {"b": "aGVsbG8="}},
    "/api/v1/nodes/seed-node": {
        "apiVersion": "v1", "kind": "Node", "metadata": _meta("seed-node"),
        "spec": {"podCIDR": "10.244.0.0/24", "unschedulable": False},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
    f"{APPS}/deployments/seed-dep": {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta("seed-dep"),
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "seed"}},
                 "strategy": {"type": "RollingUpdate",
                              "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
                 "template": {"metadata": {"labels": {"app": "seed"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}},
}

# hostile JSON values: wrong types, huge and non-finite numbers, unicode, nulls, nesting
HUGE = st.sampled_from([2**63, -(2**63) - 1, 2**64 + 1, 10**40, 1e308, -1e308, float("inf"),
                        float("nan"), -0.0, 2**31, -1])
TEXT = st.one_of(st.text(max_size=20), st.sampled_from(
    ["", " ", "\x00", "\ud800", "é", "🚀" * 10, "a" * 300, "../x", "1Gi", "-1", "0x10", "%zz"]))
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10, 10), HUGE, st.floats(), TEXT)
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)), max_leaves=8)


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, prefix + (i,))
    return out


@st.composite
def mutated(draw: st.DrawFn, obj: dict) -> dict | Any:
    """`obj` with 1-3 random edits: a value replaced, a key removed, or an unknown key added."""
    doc: Any = copy.deepcopy(obj)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(doc)))
        action = draw(st.sampled_from(["replace", "delete", "extra"]))
        if not path:
            if action == "replace":
                doc = draw(VALUE)
            continue
        parent = doc
        for seg in path[:-1]:
            parent = parent[seg]
        if action == "replace":
            parent[path[-1]] = draw(VALUE)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(TEXT)] = draw(VALUE)
    return doc


def dumps(doc: Any) -> bytes:
    """Standard-library JSON: keeps big ints, writes NaN/Infinity, lone surrogates as escapes."""
    return json.dumps(doc).encode()


KINDS = st.sampled_from(sorted(SEEDS))


# -- bodies -----------------------------------------------------------------------------------
@SETTINGS
@given(data=st.data())
def test_create_and_update_with_mutated_bodies(srv: Harness, data: st.DataObject) -> None:
    path = data.draw(KINDS)
    seed = SEEDS[path]
    body = data.draw(mutated(seed))
    if data.draw(st.booleans()):
        if isinstance(body, dict) and isinstance(body.get("metadata"), dict):
            body["metadata"].pop("name", None)
            body["metadata"]["generateName"] = "fz-"
        status = srv.check("POST", path.rsplit("/", 1)[0], dumps(body))
    else:
        status = srv.check("PUT", path, dumps(body))
    assert status in (200, 201) or 400 <= status < 500


@SETTINGS
@given(raw=st.one_of(
    st.binary(max_size=200),
    st.sampled_from([b"", b"{", b"[]", b"null", b"1", b'"x"', b"{}", b'{"kind":', b"\xff\xfe{}",
                     b'{"a":1}{"b":2}', b"[" * 5000 + b"]" * 5000, b'{"a":' * 3000 + b"1" + b"}" * 3000,
                     b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","name":"y"}}',
                     b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"\\ud800"}}']),
), ctype=st.sampled_from(["application/json", "application/yaml", "text/plain", "application/x-www-form-urlencoded",
                          "application/vnd.kubernetes.protobuf", "", "application/json; charset=latin1"]),
   target=KINDS, method=st.sampled_from(["POST", "PUT"]))
def test_unparsable_bodies(srv: Harness, raw: bytes, ctype: str, target: str, method: str) -> None:
    path = target.rsplit("/", 1)[0] if method == "POST" else target
    status = srv.check(method, path, raw, content_type=ctype)
    assert status >= 400 or raw in (b"{}",) or ctype != "application/json"


# -- selectors --------------------------------------------------------------------------------
LABEL_KEY = st.one_of(st.sampled_from(["app", "tier", "example.com/app", "a.b/c-d_e", "", "-x", "a/b/c",
                                       "x" * 70, "UP"]), st.text(max_size=8))
LABEL_VALUE = st.one_of(st.sampled_from(["seed", "", "a-b", "x" * 70, "(", ")", ",", "!"]), st.text(max_size=6))


@st.composite
def label_requirement(draw: st.DrawFn) -> str:
    key = draw(LABEL_KEY)
    op = draw(st.sampled_from(["=", "==", "!=", " in ", " notin ", "", "!", ">", "<", " exists "]))
    if op == "!":
        return "!" + key
    if op == "":
        return key
    if op.strip() in ("in", "notin"):
        vals = draw(st.lists(LABEL_VALUE, max_size=3))
        return f"{key}{op}({','.join(vals)}" + draw(st.sampled_from([")", "", "))"]))
    if op in (">", "<"):
        return f"{key}{op}{draw(st.one_of(st.integers(-5, 10**20).map(str), LABEL_VALUE))}"
    return f"{key}{op}{draw(LABEL_VALUE)}"


FIELD = st.sampled_from(["metadata.name", "metadata.namespace", "status.phase", "spec.nodeName",
                         "spec.restartPolicy", "status.podIP", "spec.unschedulable", "type", "bogus", "", "a.b.c"])
SELECTOR_PARAM = st.one_of(
    st.lists(label_requirement(), min_size=1, max_size=3).map(",".join).map(lambda s: ("labelSelector", s)),
    st.tuples(FIELD, st.sampled_from(["=", "==", "!=", "", "~", "in"]), LABEL_VALUE).map(
        lambda t: ("fieldSelector", "".join(t))),
    st.tuples(st.sampled_from(["labelSelector", "fieldSelector"]), st.text(max_size=30)))

LISTS = st.sampled_from([f"{NS}/pods", f"{NS}/services", f"{NS}/configmaps", "/api/v1/nodes",
                         f"{APPS}/deployments", "/api/v1/pods", "/api/v1/namespaces", "/api/v1/events"])


def qs(params: list[tuple[str, str]]) -> str:
    return "?" + "&".join(f"{k}={_quote(v)}" for k, v in params) if params else ""


def _quote(v: str) -> str:
    from urllib.parse import quote
    return quote(v, safe="")


@settings(SETTINGS, max_examples=300)
@given(path=LISTS, sel=st.lists(SELECTOR_PARAM, min_size=1, max_size=2))
def test_label_and_field_selectors(srv: Harness, path: str, sel: list[tuple[str, str]]) -> None:
    srv.check("GET", path + qs(sel))


# -- patches ----------------------------------------------------------------------------------
PATCH_TYPES = {"merge": "application/merge-patch+json", "json": "application/json-patch+json",
               "strategic": "application/strategic-merge-patch+json", "apply": "application/apply-patch+yaml"}
JSON_POINTER = st.one_of(st.sampled_from(["/metadata/labels/x", "/metadata/labels", "/spec/containers/0/image",
                                          "/spec/containers/-", "/spec/containers/99", "/spec/replicas",
                                          "/data/k", "/metadata/name", "", "/", "~", "/a~2b", "/spec/ports/0/port",
                                          "/metadata/resourceVersion", "/kind", "/spec/containers/-1"]),
                         st.text(max_size=10))
JSON_PATCH_OP = st.fixed_dictionaries(
    {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus", ""])},
    optional={"path": JSON_POINTER, "from": JSON_POINTER, "value": VALUE})


@st.composite
def patch_document(draw: st.DrawFn, ptype: str, seed: dict) -> bytes:
    shape = draw(st.sampled_from(["structured", "random", "raw"]))
    if shape == "raw":
        return draw(st.binary(max_size=60))
    if shape == "random":
        return dumps(draw(VALUE))
    if ptype == "json":
        return dumps(draw(st.lists(JSON_PATCH_OP, max_size=3)))
    doc = draw(mutated(seed))
    if ptype == "strategic" and isinstance(doc, dict) and draw(st.booleans()):
        doc["$patch"] = draw(st.sampled_from(["delete", "replace", "merge", "bogus", 1]))
        doc["$setElementOrder/containers"] = draw(VALUE)
    return dumps(doc)


@settings(SETTINGS, max_examples=350)
@given(data=st.data(), ptype=st.sampled_from(sorted(PATCH_TYPES)), target=KINDS)
def test_patch_documents(srv: Harness, data: st.DataObject, ptype: str, target: str) -> None:
    body = data.draw(patch_document(ptype, SEEDS[target]))
    params = [("fieldManager", data.draw(st.sampled_from(["fz", "", "x" * 200, "\u00e9"])))]
    if data.draw(st.booleans()):
        params.append(("force", data.draw(st.sampled_from(["true", "false", "yes", ""]))))
    path = target
    if data.draw(st.integers(0, 4)) == 0:
        path += data.draw(st.sampled_from(["/status", "/scale", "/bogus", "/log", "/binding"]))
    srv.check("PATCH", path + qs(params), body, content_type=PATCH_TYPES[ptype])


# -- query parameters -------------------------------------------------------------------------
PARAM_VALUE = st.one_of(st.sampled_from(["", "0", "-1", "1", "true", "false", "All", "Server", "None", "abc",
                                         "9" * 30, "1e3", "Strict", "Warn", "Ignore", "Orphan", "Background",
                                         "Foreground", "NotOlderThan", "Exact", "%", "\u2603"]),
                        st.text(max_size=12))
PARAM_NAMES = ["limit", "continue", "resourceVersion", "resourceVersionMatch", "timeoutSeconds", "watch",
               "dryRun", "fieldValidation", "propagationPolicy", "gracePeriodSeconds", "orphanDependents",
               "allowWatchBookmarks", "sendInitialEvents", "pretty", "fieldManager", "includeUninitialized"]
PARAMS = st.lists(st.tuples(st.sampled_from(PARAM_NAMES), PARAM_VALUE), min_size=1, max_size=4)


@settings(SETTINGS, max_examples=350)
@given(params=PARAMS, verb=st.sampled_from(["list", "get", "create", "update", "delete", "deletecollection"]),
       target=KINDS)
def test_query_parameters(srv: Harness, params: list[tuple[str, str]], verb: str, target: str) -> None:
    collection = target.rsplit("/", 1)[0]
    seed = SEEDS[target]
    if verb in ("list", "get"):
        params = [p for p in params if p != ("watch", "true") and p != ("watch", "1")] or [("limit", "x")]
        srv.check("GET", (collection if verb == "list" else target) + qs(params))
    elif verb == "create":
        body = copy.deepcopy(seed)
        body["metadata"] = {"generateName": "fz-"}
        srv.check("POST", collection + qs(params), dumps(body))
    elif verb == "update":
        srv.check("PUT", target + qs(params), dumps(seed))
    else:
        # a throwaway object to delete, so the seeds survive the battery
        cm = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": f"del-{next(_names)}", "labels": {"fz": "del"}}}
        assert srv.check("POST", f"{NS}/configmaps", dumps(cm)) == 201
        if verb == "delete":
            srv.check("DELETE", f"{NS}/configmaps/{cm['metadata']['name']}" + qs(params))
        else:
            srv.check("DELETE", f"{NS}/configmaps" + qs(params + [("labelSelector", "fz=del")]))


# -- paths ------------------------------------------------------------------------------------
SEGMENT = st.one_of(
    st.sampled_from(["api", "apis", "v1", "apps", "namespaces", "default", "pods", "nodes", "status", "scale",
                     "..", ".", "", "%2e%2e", "%2F", "%00", "%zz", "%", "seed-pod", "seed-node", "watch",
                     "proxy", "log", "exec", "binding", "eviction", "x" * 300, "a" * 1500, "UPPER", "-", "~",
                     "%C3%A9", "%F0%9F%9A%80", "%ff", "a%20b", "v2", "batch", "extensions"]),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._~", max_size=12))
# (five segments of 1500 stay well under the 1 MiB request line; longer is a 431, pinned by
# test_over_long_request_line_is_a_431_status)
PREFIX = st.sampled_from(["/api", "/apis", "/api/v1", "/apis/apps/v1", "/api/v1/namespaces/default",
                          "/apis/apps/v1/namespaces/default", "", "/openapi/v3", "/api/v1/nodes"])


@settings(SETTINGS, max_examples=350)
@given(prefix=PREFIX, segments=st.lists(SEGMENT, max_size=5),
       method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]))
def test_random_paths(srv: Harness, prefix: str, segments: list[str], method: str) -> None:
    path = "/".join([prefix, *segments]) or "/"
    if not path.startswith("/"):
        path = "/" + path
    body = dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "fz-"}}) \
        if method in ("POST", "PUT", "PATCH") else None
    ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
    if method == "HEAD":
        return  # HEAD answers carry no body to check; covered by GET
    srv.check(method, path, body, content_type=ctype)


# -- regressions and pinned cases -------------------------------------------------------------
def test_warning_header_carries_hostile_field_names(srv: Harness) -> None:
    """Regression: an unknown field named with a newline went verbatim into the `Warning` header
    and aiohttp refused to send it (header injection guard) -- the client saw a dropped
    connection, not an answer. Now, as upstream's NewWarningHeader, a warning whose text has a
    control character is not written at all."""
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "warn-hostile"},
            "x\n\"y\\\x00": 1}

    async def post() -> tuple[int, list[str]]:
        async with srv.session.post(srv.api.url + f"{NS}/configmaps?fieldValidation=Warn",
                                    data=dumps(body), headers={"Content-Type": "application/json"}) as resp:
            return resp.status, resp.headers.getall("Warning", [])

    status, warnings = srv.run(post())
    assert status == 201
    assert warnings == []
    assert srv.check("GET", "/healthz") == 200


@pytest.mark.parametrize("raw", [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
                                 b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n"},"data":{"k":"'
                                 + b"x" * (5 * 1024 * 1024) + b'"}}'])
def test_deep_and_oversized_bodies_are_statuses(srv: Harness, raw: bytes) -> None:
    status = srv.check("POST", f"{NS}/configmaps", raw)
    assert status in (400, 413, 422)


def test_over_long_request_line_is_a_431_status(srv: Harness) -> None:
    """A request line (or header) longer than 1 MiB — Go's DefaultMaxHeaderBytes, where Go
    answers 431 — is rejected by the HTTP parser; the connection layer answers it with a 431
    Status. Anything shorter reaches the API. The server keeps serving."""
    assert srv.check("GET", f"{NS}/pods/" + "a" * 9000) == 404
    assert srv.check("GET", f"{NS}/pods/" + "a" * (1 << 20)) == 431


@pytest.mark.parametrize("path,body", [
    (f"{NS}/services/seed-svc", {**SEEDS[f"{NS}/services/seed-svc"], "spec": []}),
    (f"{NS}/pods/seed-pod", {**SEEDS[f"{NS}/pods/seed-pod"], "spec": {"containers": {"name": "c"}}}),
    (f"{APPS}/deployments/seed-dep", {**SEEDS[f"{APPS}/deployments/seed-dep"], "metadata": "seed-dep"}),
])
def test_wrong_json_shape_is_400_not_500(srv: Harness, path: str, body: dict) -> None:
    """Regression: `spec: []` on a Service update reached the registry's strategy, which called
    `.get` on the list (500). Upstream fails decoding into the typed struct: 400 BadRequest
    `... cannot be handled as a Service: json: cannot unmarshal array into Go struct field`."""
    status, _, data = srv.run(srv._request("PUT", path, dumps(body), "application/json"))
    assert status == 400
    assert "cannot unmarshal" in json.loads(data)["message"]
    assert srv.check("PUT", path, dumps(body)) == 400  # and the store is unchanged


def test_apply_yaml_with_integer_beyond_64_bits(srv: Harness) -> None:
    """Regression: YAML (apply patches) decoded 2**64+ integers as Python ints that the JSON
    encoder could not write (TypeError, 500); now they are floats, as in the JSON decoder."""
    status = srv.check("PATCH", f"{NS}/configmaps/seed-cm?fieldManager=fz",
                       b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "seed-cm"}, '
                       b'"x": -9223372036854775809}', content_type=PATCH_TYPES["apply"])
    assert status < 500


def test_resource_version_too_large_is_upstreams_504(srv: Harness) -> None:
    status, _, data = srv.run(srv._request("GET", f"{NS}/configmaps?resourceVersion=" + "9" * 30, None, ""))
    assert status == 504 and _rv_too_large(status, data)
