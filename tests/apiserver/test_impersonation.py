"""Impersonation on the real secure port (TLS, token authn, ABAC): Impersonate-* headers are
authorized as verb `impersonate` on users/groups/serviceaccounts/userextras/uids, answered with
upstream's 403 texts when denied, and the request then runs — authorized and admitted — as
the impersonated user (a ValidatingAdmissionPolicy reads `request.userInfo`)."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from multidict import CIMultiDict

from minikube_py.apiserver.authz.guard import USER, build_guard
from minikube_py.apiserver.certs import ensure_serving_cert, server_ssl_context
from minikube_py.apiserver.filters import filter_chain
from minikube_py.apiserver.metrics import metrics as process_metrics
from minikube_py.apiserver.options import APIServerOptions
from tests.apiserver.conftest import pod
from tests.apiserver.test_access_reviews import SELF_REVIEWS
from tests.apiserver.test_secure import Secure, serve
from tests.apiserver.test_validating_admission_policy import (
    CHAIN,
    VAP,
    VAPB,
    binding,
    eventually,
    policy,
)

TOKENS = 'admin-token,admin,1\nalice-token,alice,2\ndave-token,dave,3\ncarol-token,carol,4\n'
AUTHN = "authentication.k8s.io"


def v1beta1(**spec: str) -> str:
    return ('{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":'
            + str(spec).replace("'", '"') + "}")


POLICY = "\n".join([
    '{"user":"admin"}',
    # alice may impersonate any user and group, service accounts of team-a, extras and uids
    '{"user":"alice","resource":"users"}',
    '{"user":"alice","resource":"groups"}',
    '{"user":"alice","resource":"serviceaccounts","namespace":"team-a"}',
    v1beta1(user="alice", apiGroup=AUTHN, resource="userextras", namespace="*"),
    v1beta1(user="alice", apiGroup=AUTHN, resource="uids", namespace="*"),
    # dave may impersonate users only
    '{"user":"dave","resource":"users"}',
    # what the impersonated identities may do
    '{"user":"bob","readonly":true,"resource":"pods"}',
    '{"group":"dev","resource":"configmaps","namespace":"default"}',
    '{"user":"system:serviceaccount:team-a:builder","resource":"pods"}',
    '{"group":"system:serviceaccounts:team-a","readonly":true,"resource":"secrets"}',
    SELF_REVIEWS,
])
PODS = "/api/v1/namespaces/default/pods"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"




@pytest.fixture
async def secure(tmp_path: Path):
    (tmp_path / "imp").mkdir()
    (tmp_path / "imp" / "tokens.csv").write_text(TOKENS)
    (tmp_path / "imp" / "policy.jsonl").write_text(POLICY + "\n")
    api, close = await serve(tmp_path, token_auth_file=str(tmp_path / "imp" / "tokens.csv"),
                             authorization_policy_file=str(tmp_path / "imp" / "policy.jsonl"),
                             admission_control=CHAIN)
    try:
        yield api
    finally:
        await close()


def configmap(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


async def as_(api: Secure, method: str, path: str, token: str, *headers: tuple[str, str],
              body: Any = None) -> tuple[int, Any]:
    hdrs = CIMultiDict(headers)
    hdrs["Authorization"] = f"Bearer {token}"
    async with api.session.request(method, api.https + path, json=body, headers=hdrs) as resp:
        return resp.status, await resp.json()


async def test_the_request_is_authorized_as_the_impersonated_user(secure: Secure) -> None:
    bob = ("Impersonate-User", "bob")
    assert (await as_(secure, "GET", PODS, "alice-token", bob))[0] == 200
    # alice herself may not list pods: the request really ran as bob
    assert (await as_(secure, "GET", PODS, "alice-token"))[0] == 403
    status, body = await as_(secure, "POST", PODS, "alice-token", bob, body=pod("p"))
    assert status == 403
    assert body["message"] == ('pods is forbidden: User "bob" cannot create resource "pods" in '
                               'API group "" in the namespace "default": No policy matched.')
    # groups: bob in dev may create configmaps in default, bob alone may not
    status, _ = await as_(secure, "POST", CONFIGMAPS, "alice-token", bob, body=configmap("c0"))
    assert status == 403
    status, _ = await as_(secure, "POST", CONFIGMAPS, "alice-token", bob,
                          ("Impersonate-Group", "ops"), ("Impersonate-Group", "dev"),
                          body=configmap("c1"))
    assert status == 201


async def test_denied_impersonation_is_upstreams_403(secure: Secure) -> None:
    status, body = await as_(secure, "GET", PODS, "carol-token", ("Impersonate-User", "bob"))
    assert status == 403
    assert (body["reason"], body["code"]) == ("Forbidden", 403)
    assert body["message"] == (
        'users "bob" is forbidden: User "carol" cannot impersonate resource "users" in API '
        'group "" at the cluster scope: No policy matched.')
    assert body["details"] == {"name": "bob", "kind": "users"}
    # dave may impersonate bob but not bob's groups, extras or uid
    status, body = await as_(secure, "GET", PODS, "dave-token", ("Impersonate-User", "bob"),
                             ("Impersonate-Group", "dev"))
    assert status == 403
    assert body["message"].startswith(
        'groups "dev" is forbidden: User "dave" cannot impersonate resource "groups" in API '
        'group "" at the cluster scope')
    status, body = await as_(secure, "GET", PODS, "dave-token", ("Impersonate-User", "bob"),
                             ("Impersonate-Extra-Scopes", "view"))
    assert status == 403
    assert body["message"].startswith(
        'userextras.authentication.k8s.io "view" is forbidden: User "dave" cannot impersonate '
        'resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope')
    assert body["details"] == {"name": "view", "group": AUTHN, "kind": "userextras"}
    status, body = await as_(secure, "GET", PODS, "dave-token", ("Impersonate-User", "bob"),
                             ("Impersonate-Uid", "u-9"))
    assert status == 403
    assert body["message"].startswith('uids.authentication.k8s.io "u-9" is forbidden: User '
                                      '"dave" cannot impersonate resource "uids"')


async def test_service_accounts_are_checked_in_their_namespace(secure: Secure) -> None:
    builder = ("Impersonate-User", "system:serviceaccount:team-a:builder")
    status, _ = await as_(secure, "POST", "/api/v1/namespaces", "admin-token",
                          body={"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": "team-a"}})
    assert status == 201
    # the account's own line and its fixed group system:serviceaccounts:team-a
    assert (await as_(secure, "GET", "/api/v1/namespaces/team-a/pods", "alice-token",
                      builder))[0] == 200
    assert (await as_(secure, "GET", "/api/v1/namespaces/team-a/secrets", "alice-token",
                      builder))[0] == 200
    # Impersonate-Group replaces the fixed groups
    assert (await as_(secure, "GET", "/api/v1/namespaces/team-a/secrets", "alice-token",
                      builder, ("Impersonate-Group", "dev")))[0] == 403
    status, body = await as_(secure, "GET", PODS, "alice-token",
                             ("Impersonate-User", "system:serviceaccount:team-b:builder"))
    assert status == 403
    assert body["message"] == (
        'serviceaccounts "builder" is forbidden: User "alice" cannot impersonate resource '
        '"serviceaccounts" in API group "" in the namespace "team-b": No policy matched.')


async def test_groups_without_a_user_are_a_400(secure: Secure) -> None:
    status, body = await as_(secure, "GET", PODS, "alice-token", ("Impersonate-Group", "dev"))
    assert status == 400
    assert (body["kind"], body["reason"]) == ("Status", "BadRequest")
    assert body["message"] == "requested [{Group  dev    }] without impersonating a user"


async def test_anonymous_may_not_impersonate(secure: Secure) -> None:
    async with secure.session.get(secure.https + "/healthz",
                                  headers={"Impersonate-User": "admin"}) as resp:
        assert resp.status == 401
    async with secure.session.get(secure.https + "/healthz") as resp:
        assert resp.status == 200


async def test_insecure_port_ignores_the_headers(secure: Secure) -> None:
    # v1.0's insecure port runs no authn/authz, so no impersonation either
    status, _ = await secure.call("GET", PODS, secure=False,
                                  headers={"Impersonate-Group": "dev"})
    assert status == 200


async def test_admission_sees_the_impersonated_user_info(secure: Secure) -> None:
    rule = {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                               "operations": ["CREATE"], "resources": ["configmaps"]}]}
    assert (await secure.call("POST", VAP, "admin-token", policy(
        "who", matchConstraints=rule,
        validations=[{"expression": "!has(object.metadata.labels)",
                      "messageExpression":
                          "request.userInfo.username + '|' + request.userInfo.uid + '|' + "
                          "request.userInfo.groups[0] + ',' + request.userInfo.groups[1] + '|' + "
                          "request.userInfo.extra['acme.io/scopes'][1]"}])))[0] == 201
    assert (await secure.call("POST", VAPB, "admin-token", binding("who", "who")))[0] == 201
    labelled = {**configmap("probe"), "metadata": {"name": "probe", "labels": {"a": "b"}}}

    async def enforced() -> bool:
        return (await secure.call("POST", CONFIGMAPS + "?dryRun=All", "admin-token",
                                  labelled))[0] == 422
    await eventually(enforced)
    status, body = await as_(secure, "POST", CONFIGMAPS, "alice-token",
                             ("Impersonate-User", "bob"), ("Impersonate-Group", "dev"),
                             ("Impersonate-Uid", "u-42"),
                             ("Impersonate-Extra-Acme.io%2fScopes", "view"),  # the key: lower-cased, unescaped
                             ("Impersonate-Extra-Acme.io%2fScopes", "edit"), body=labelled)
    assert status == 422
    assert body["message"].endswith("bob|u-42|dev,system:authenticated|edit")


async def test_always_allow_lets_any_authenticated_user_impersonate(tmp_path: Path) -> None:
    api, close = await serve(tmp_path, authorization_mode="AlwaysAllow",
                             authorization_policy_file=None)
    try:
        assert (await as_(api, "GET", PODS, "reader-token", ("Impersonate-User", "x"),
                          ("Impersonate-Group", "y")))[0] == 200
        assert (await as_(api, "GET", PODS, "reader-token", ("Impersonate-Uid", "1")))[0] == 400
    finally:
        await close()


async def test_the_handler_gets_the_request_without_the_headers(tmp_path: Path) -> None:
    """The real filter chain and guard over TLS, in front of a handler that reports what it
    received: the impersonated user, and none of the Impersonate-* headers."""
    (tmp_path / "tokens.csv").write_text(TOKENS)
    guard = build_guard(APIServerOptions(token_auth_file=str(tmp_path / "tokens.csv")))
    assert guard is not None

    async def report(request: web.Request) -> web.Response:
        user = request[USER]
        return web.json_response({"user": user.name, "groups": list(user.groups),
                                  "headers": sorted(k.lower() for k in request.headers)})

    app = web.Application(middlewares=[filter_chain(process_metrics(), readonly=10,
                                                    mutating=10, guard=guard.check)])
    app.router.add_get("/api/v1/namespaces/default/pods", report)
    cert, key, ca = ensure_serving_cert(tmp_path / "certs", ["10.0.0.1"])
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ssl_context(cert, key, ca))
    await site.start()
    port = runner.addresses[0][1]
    connector = aiohttp.TCPConnector(ssl=ssl.create_default_context(cafile=str(ca)))
    try:
        headers = [("Authorization", "Bearer alice-token"), ("Impersonate-User", "bob"),
                   ("Impersonate-Group", "dev"), ("Impersonate-Uid", "1"),
                   ("Impersonate-Extra-Scopes", "view"), ("X-Kept", "yes")]
        async with (aiohttp.ClientSession(connector=connector) as session,
                    session.get(f"https://127.0.0.1:{port}{PODS}", headers=headers) as resp):
            assert resp.status == 200
            seen = await resp.json()
    finally:
        await runner.cleanup()
    assert (seen["user"], seen["groups"]) == ("bob", ["dev", "system:authenticated"])
    assert "x-kept" in seen["headers"] and "authorization" in seen["headers"]
    assert not [h for h in seen["headers"] if h.startswith("impersonate-")]


async def test_a_watch_streams_on_the_cloned_request(secure: Secure) -> None:
    assert (await secure.call("POST", PODS, "admin-token", pod("w")))[0] == 201
    headers = {"Authorization": "Bearer alice-token", "Impersonate-User": "bob"}
    async with secure.session.get(secure.https + PODS + "?watch=1&timeoutSeconds=5",
                                  headers=headers) as resp:
        assert resp.status == 200
        line = await resp.content.readline()
    assert b'"ADDED"' in line and b'"name":"w"' in line


async def test_whoami_answers_the_impersonated_user(secure: Secure) -> None:
    status, body = await as_(secure, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                             "alice-token", ("Impersonate-User", "bob"),
                             ("Impersonate-Group", "dev"), ("Impersonate-Uid", "u-1"),
                             ("Impersonate-Extra-Scopes", "view"),
                             body={"apiVersion": "authentication.k8s.io/v1",
                                   "kind": "SelfSubjectReview"})
    assert status == 201, body
    assert body["status"]["userInfo"] == {"username": "bob", "uid": "u-1",
                                          "groups": ["dev", "system:authenticated"],
                                          "extra": {"scopes": ["view"]}}
