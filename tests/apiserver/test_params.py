"""Query parameters and paths as clients nobody here wrote send them (issue 15's first
findings): kubernetes_asyncio's `watch=True`, kr8s's `GET /version/`."""

from __future__ import annotations

import asyncio

import aiohttp
import orjson
import pytest

from minikube_py.api.params import parse_bool

from .conftest import API, pod


@pytest.mark.parametrize(("value", "expected"), [
    (None, False), ("0", False), ("false", False), ("False", False), ("FALSE", False),
    ("1", True), ("true", True), ("True", True), ("t", True), ("yes", True), ("", True),
])
def test_booleans_convert_as_upstreams_parameter_codec(value, expected):
    assert parse_bool(value) is expected


async def test_version_answers_with_a_trailing_slash(api: API) -> None:
    plain = await api.get("/version")
    slashed = await api.get("/version/")
    assert slashed == plain and plain[0] == 200 and plain[1]["major"] == "1"


@pytest.mark.parametrize("value", ["True", "1", "true"])
async def test_watch_true_in_any_spelling_streams(api: API, value: str) -> None:
    assert (await api.post("/api/v1/namespaces/default/pods", pod("w")))[0] == 201
    url = f"{api.url}/api/v1/namespaces/default/pods?watch={value}"
    async with api.session.get(url, timeout=aiohttp.ClientTimeout(total=5)) as resp:
        assert resp.status == 200
        line = await asyncio.wait_for(resp.content.readline(), 5)
    event = orjson.loads(line)
    assert event["type"] == "ADDED" and event["object"]["metadata"]["name"] == "w"


async def test_watch_false_in_any_spelling_lists(api: API) -> None:
    status, body = await api.get("/api/v1/namespaces/default/pods?watch=False")
    assert status == 200 and body["kind"] == "PodList"


def test_exec_options_accept_capitalised_booleans() -> None:
    from aiohttp.test_utils import make_mocked_request

    from minikube_py.api.errors import StatusError
    from minikube_py.apiserver.streaming import validate_options

    ok = make_mocked_request("GET", "/api/v1/namespaces/default/pods/web/exec?command=ls&stdout=True")
    validate_options("exec", ok)  # kubernetes_asyncio's stream(): was a 400
    none = make_mocked_request("GET", "/api/v1/namespaces/default/pods/web/exec?command=ls&stdout=False")
    with pytest.raises(StatusError) as exc:
        validate_options("exec", none)
    assert exc.value.code == 400 and "at least 1 of stdin, stdout, stderr" in exc.value.message


async def test_status_bytes_are_upstreams(api: API) -> None:
    """Field order of metav1.Status, `details` on a path 404 (kubectl debug dereferences it),
    omitempty details fields, and json.Encoder's trailing newline."""
    async with api.session.get(f"{api.url}/api/v1/nosuchthing") as resp:
        assert resp.status == 404
        assert await resp.read() == (
            b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
            b'"the server could not find the requested resource","reason":"NotFound",'
            b'"details":{},"code":404}\n')
    async with api.session.get(f"{api.url}/api/v1/namespaces/default/pods/nope") as resp:
        assert resp.status == 404
        assert await resp.read() == (
            b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
            b'"pods \\"nope\\" not found","reason":"NotFound","details":{"name":"nope",'
            b'"kind":"pods"},"code":404}\n')


# -- every integer and boolean parameter of every verb, as upstream's parameter codec reads it --

_PODS = "/api/v1/namespaces/default/pods"


def _bad_int(value: str) -> tuple[int, str]:
    return 400, f'strconv.ParseInt: parsing "{value}": invalid syntax'


@pytest.mark.parametrize(("path", "expected"), [
    # ListOptions: limit and timeoutSeconds are int64 (a list parses timeoutSeconds too)
    (f"{_PODS}?limit=abc", _bad_int("abc")),
    (f"{_PODS}?limit=1.5", _bad_int("1.5")),
    (f"{_PODS}?limit=%201", _bad_int(" 1")),
    (f"{_PODS}?limit=", _bad_int("")),
    (f"{_PODS}?limit=99999999999999999999",
     (400, 'strconv.ParseInt: parsing "99999999999999999999": value out of range')),
    (f"{_PODS}?limit=-1", (200, "PodList")),  # a limit <= 0 is no limit
    (f"{_PODS}?limit=%2B1", (200, "PodList")),  # "+1": ParseInt takes a sign
    (f"{_PODS}?timeoutSeconds=x", _bad_int("x")),
    (f"{_PODS}?watch=1&timeoutSeconds=soon", _bad_int("soon")),
    # PodLogOptions: integers parse first (400), then ValidatePodLogOptions (422)
    (f"{_PODS}/p/log?tailLines=abc", _bad_int("abc")),
    (f"{_PODS}/p/log?limitBytes=x", _bad_int("x")),
    (f"{_PODS}/p/log?sinceSeconds=1e3", _bad_int("1e3")),
    (f"{_PODS}/p/log?tailLines=-1",
     (422, 'PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0')),
    (f"{_PODS}/p/log?limitBytes=0",
     (422, 'PodLogOptions "p" is invalid: limitBytes: Invalid value: 0: must be greater than 0')),
    (f"{_PODS}/p/log?sinceSeconds=0",
     (422, 'PodLogOptions "p" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0')),
    (f"{_PODS}/p/log?sinceSeconds=5&sinceTime=2024-01-01T00:00:00Z",
     (422, "at most one of `sinceTime` or `sinceSeconds` may be specified")),
    (f"{_PODS}/p/log?tailLines=0&follow=False&timestamps=FALSE&previous=0", (200, "")),
])
async def test_integer_parameters_parse_as_go(api: API, path: str, expected: tuple[int, str]) -> None:
    assert (await api.post(_PODS, pod("p")))[0] == 201
    async with api.session.get(f"{api.url}{path}", timeout=aiohttp.ClientTimeout(total=10)) as resp:
        body = await resp.read()
    status, text = expected
    assert resp.status == status, body
    if status >= 400:
        assert orjson.loads(body)["message"].endswith(text) or text in orjson.loads(body)["message"]
    elif text:
        assert orjson.loads(body)["kind"] == text


@pytest.mark.parametrize(("query", "expected"), [
    ("gracePeriodSeconds=x", _bad_int("x")),
    ("gracePeriodSeconds=", _bad_int("")),
    ("gracePeriodSeconds=-5", (200, "")),  # upstream BeforeDelete: a negative grace is 1 s
    ("gracePeriodSeconds=0", (200, "")),
])
async def test_delete_options_parse_as_go(api: API, query: str, expected: tuple[int, str]) -> None:
    assert (await api.post(_PODS, pod("d")))[0] == 201
    status, body = await api.delete(f"{_PODS}/d?{query}")
    assert status == expected[0], body
    if status >= 400:
        assert body["message"] == expected[1] and body["reason"] == "BadRequest"


async def test_a_negative_watch_timeout_ends_the_stream_at_once(api: API) -> None:
    url = f"{api.url}{_PODS}?watch=true&timeoutSeconds=-1"
    async with api.session.get(url, timeout=aiohttp.ClientTimeout(total=5)) as resp:
        assert resp.status == 200
        assert await asyncio.wait_for(resp.read(), 3) == b""


# -- paths: what upstream's router answers for each trailing-slash form --

@pytest.mark.parametrize(("path", "status", "kind"), [
    ("/version/", 200, None),
    ("/api/", 200, "APIVersions"),
    ("/apis/", 200, "APIGroupList"),
    ("/api/v1/", 200, "APIResourceList"),
    ("/apis/apps/", 200, "APIGroup"),
    ("/apis/apps/v1/", 200, "APIResourceList"),
    (f"{_PODS}/", 200, "PodList"),  # go-restful trims the slash of resource paths
    ("/api/v1/pods/", 200, "PodList"),
    # exact-match paths of the non-go-restful mux: upstream's NotFoundHandler
    ("/healthz/", 404, "Status"),
    ("/livez/", 404, "Status"),
    ("/readyz/", 404, "Status"),
    ("/openapi/v2/", 404, "Status"),
    ("/no/such/path", 404, "Status"),
])
async def test_trailing_slash_paths_as_upstreams_router(api: API, path: str, status: int, kind) -> None:
    async with api.session.get(f"{api.url}{path}") as resp:
        body = await resp.read()
    assert resp.status == status, body
    if kind:
        assert orjson.loads(body)["kind"] == kind
    if status == 404:  # the one NotFound body, details included (kubectl debug needs them)
        assert body == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
                        b'"the server could not find the requested resource","reason":"NotFound",'
                        b'"details":{},"code":404}\n')


@pytest.mark.parametrize("endpoint", ["healthz", "livez", "readyz"])
async def test_health_endpoints_name_their_checks(api: API, endpoint: str) -> None:
    async with api.session.get(f"{api.url}/{endpoint}") as resp:
        assert resp.status == 200 and await resp.text() == "ok"
        assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    async with api.session.get(f"{api.url}/{endpoint}?verbose") as resp:
        text = await resp.text()
    assert text.startswith("[+]ping ok\n[+]log ok\n[+]etcd ok\n")
    assert text.endswith(f"{endpoint} check passed\n")
    async with api.session.get(f"{api.url}/{endpoint}?verbose&exclude=etcd&exclude=nope") as resp:
        text = await resp.text()
    assert "[+]etcd excluded: ok\n" in text
    assert 'warn: some health checks cannot be excluded: no matches for "nope"\n' in text
    async with api.session.get(f"{api.url}/{endpoint}/etcd") as resp:
        assert resp.status == 200 and await resp.text() == "ok"


async def test_readyz_lists_the_watch_cache_and_shutdown_checks(api: API) -> None:
    async with api.session.get(f"{api.url}/readyz?verbose=false") as resp:  # presence counts
        text = await resp.text()
    assert "[+]informer-sync ok\n[+]shutdown ok\nreadyz check passed\n" in text


# -- field selectors: an absent field matches its Go zero value --

async def test_field_selectors_match_absent_fields_by_go_zero_value(api: API) -> None:
    for name, spec in (("plain", {}), ("cordoned", {"unschedulable": True})):
        node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec}
        assert (await api.post("/api/v1/nodes", node))[0] == 201
    _, listed = await api.get("/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse")
    assert [n["metadata"]["name"] for n in listed["items"]] == ["plain"]
    _, listed = await api.get("/api/v1/nodes?fieldSelector=spec.unschedulable!%3Dtrue")
    assert [n["metadata"]["name"] for n in listed["items"]] == ["plain"]
    assert (await api.post(_PODS, pod("p")))[0] == 201
    _, listed = await api.get(f"{_PODS}?fieldSelector=spec.hostNetwork%3Dfalse")
    assert [p["metadata"]["name"] for p in listed["items"]] == ["p"]


async def test_each_warning_is_its_own_header(api: API) -> None:
    """Upstream's recorder adds one `Warning` header per text (never a comma-joined list)."""
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w"}, "alpha": 1, "beta": 2}
    async with api.session.post(f"{api.url}/api/v1/namespaces/default/configmaps?fieldValidation=Warn",
                                json=body) as resp:
        assert resp.status == 201
        assert resp.headers.getall("Warning") == [
            '299 - "unknown field \\"alpha\\""', '299 - "unknown field \\"beta\\""']


# -- Status bodies byte for byte, as upstream's documented responses --

_STATUS_HEAD = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'


@pytest.mark.parametrize(("method", "path", "body", "expected"), [
    ("POST", _PODS, pod("x"), b'"pods \\"x\\" already exists","reason":"AlreadyExists",'
                               b'"details":{"name":"x","kind":"pods"},"code":409}\n'),
    ("PUT", f"{_PODS}/x", {**pod("x"), "metadata": {"name": "x", "resourceVersion": "1"}},
     b'"Operation cannot be fulfilled on pods \\"x\\": the object has been modified; please apply '
     b'your changes to the latest version and try again","reason":"Conflict",'
     b'"details":{"name":"x","kind":"pods"},"code":409}\n'),
    ("POST", _PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"}, "spec": {}},
     b'"Pod \\"bad\\" is invalid: spec.containers: Required value","reason":"Invalid","details":'
     b'{"name":"bad","kind":"Pod","causes":[{"reason":"FieldValueRequired","message":"Required value",'
     b'"field":"spec.containers"}]},"code":422}\n'),
    # no go-restful route for the method: PUT/PATCH on a collection, POST on an object
    ("PUT", _PODS, pod("x"), b'"the server does not allow this method on the requested resource",'
                              b'"reason":"MethodNotAllowed","details":{},"code":405}\n'),
    ("PATCH", _PODS, {}, b'"the server does not allow this method on the requested resource",'
                          b'"reason":"MethodNotAllowed","details":{},"code":405}\n'),
    ("POST", f"{_PODS}/x", pod("x"), b'"the server does not allow this method on the requested resource",'
                                      b'"reason":"MethodNotAllowed","details":{},"code":405}\n'),
    ("DELETE", "/api/v1/componentstatuses/scheduler", None,
     b'"the server does not allow this method on the requested resource",'
     b'"reason":"MethodNotAllowed","details":{},"code":405}\n'),
])
async def test_status_bodies_byte_for_byte(api: API, method: str, path: str, body, expected: bytes) -> None:
    assert (await api.post(_PODS, pod("x")))[0] == 201
    data = orjson.dumps(body) if body is not None else None
    headers = {"Content-Type": "application/merge-patch+json" if method == "PATCH" else "application/json"}
    async with api.session.request(method, f"{api.url}{path}", data=data, headers=headers) as resp:
        assert await resp.read() == _STATUS_HEAD + expected


async def test_logs_and_exec_name_every_kind_of_container(api: API) -> None:
    """validateContainer, shared by logs and exec: an init container may be named, and the
    400 for an unnamed container lists init, regular and ephemeral containers in that order."""
    body = pod("multi")
    body["spec"]["initContainers"] = [{"name": "setup", "image": "busybox"}]
    body["spec"]["containers"] = [{"name": "a", "image": "nginx"}, {"name": "b", "image": "nginx"}]
    assert (await api.post(_PODS, body))[0] == 201
    status, _ = await api.get(f"{_PODS}/multi/log?container=setup")
    assert status == 200
    for sub in ("log", "exec?command=ls&stdout=1"):
        status, failure = await api.get(f"{_PODS}/multi/{sub}")
        assert status == 400, failure
        assert failure["message"] == ("a container name must be specified for pod multi, "
                                      "choose one of: [setup a b]")
    status, failure = await api.get(f"{_PODS}/multi/log?container=nope")
    assert (status, failure["message"]) == (400, "container nope is not valid for pod multi")


# -- options: dryRun and DeleteOptions as upstream's handlers read them --

@pytest.mark.parametrize(("method", "path", "kind"), [
    ("POST", _PODS, "CreateOptions"),
    ("PUT", f"{_PODS}/x", "UpdateOptions"),
    ("PATCH", f"{_PODS}/x", "PatchOptions"),
    ("DELETE", f"{_PODS}/x", "DeleteOptions"),
])
async def test_dry_run_accepts_only_all(api: API, method: str, path: str, kind: str) -> None:
    assert (await api.post(_PODS, pod("x")))[0] == 201
    body = {} if method == "PATCH" else pod("x") if method != "DELETE" else None
    status, failure = await api.call(method, f"{path}?dryRun=All&dryRun=Some", body,
                                     content_type="application/merge-patch+json" if method == "PATCH" else "application/json")
    assert status == 422, failure
    assert failure["message"] == (f'{kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: '
                                  '[]string{"All", "Some"}: supported values: "All"')


async def test_delete_options_come_from_the_body_or_the_query_never_both(api: API) -> None:
    assert (await api.post(_PODS, pod("kept")))[0] == 201
    # a body with dryRun: the query's gracePeriodSeconds=x is not read at all
    status, _ = await api.delete(f"{_PODS}/kept?gracePeriodSeconds=x",
                                 {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]})
    assert status == 200
    assert (await api.get(f"{_PODS}/kept"))[0] == 200  # a dry run deleted nothing
    status, failure = await api.delete(f"{_PODS}/kept?orphanDependents=true&propagationPolicy=Orphan")
    assert status == 422
    assert failure["message"] == ('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid '
                                  'value: "Orphan": orphanDependents and deletionPropagation cannot be both set')


@pytest.mark.parametrize(("ports", "message"), [
    ("abc", 'cannot convert to []int32: strconv.ParseUint: parsing "abc": invalid syntax'),
    ("80,x", 'cannot convert to []int32: strconv.ParseUint: parsing "x": invalid syntax'),
    ("70000", 'cannot convert to []int32: strconv.ParseUint: parsing "70000": value out of range'),
    ("-1", 'cannot convert to []int32: strconv.ParseUint: parsing "-1": invalid syntax'),
])
async def test_port_forward_ports_parse_as_go(api: API, ports: str, message: str) -> None:
    """PodPortForwardOptions decode before the pod is read: a bad port is a 400 even for a pod
    that does not exist."""
    status, failure = await api.get(f"{_PODS}/nowhere/portforward?ports={ports}")
    assert (status, failure["message"]) == (400, message)
