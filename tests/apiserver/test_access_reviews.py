"""The access reviews on a real secure port: token users, ABAC, and the answers upstream gives.

SubjectAccessReview / LocalSubjectAccessReview / SelfSubjectAccessReview /
SelfSubjectRulesReview (authorization.k8s.io/v1), TokenReview and SelfSubjectReview
(authentication.k8s.io), over TLS with bearer tokens; then discovery, the insecure port's
superuser, and the official python client's AuthorizationV1Api.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.apiserver.test_secure import Secure, serve

AUTHZ = "/apis/authorization.k8s.io/v1"
AUTHN = "/apis/authentication.k8s.io/v1"
SELF_REVIEWS = "\n".join(
    '{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":'
    f'{{"group":"system:authenticated","apiGroup":"{group}","resource":"{resource}",'
    '"namespace":"*"}}'
    for group, resource in (("authorization.k8s.io", "selfsubjectaccessreviews"),
                            ("authorization.k8s.io", "selfsubjectrulesreviews"),
                            ("authentication.k8s.io", "selfsubjectreviews")))
POLICY = """{"user":"admin"}
{"user":"reader","readonly":true,"resource":"pods"}
{"user":"scoped","resource":"pods","namespace":"team-a"}
{"group":"ops","readonly":true}
""" + SELF_REVIEWS + "\n"


@pytest.fixture
async def secure(tmp_path: Path):
    (tmp_path / "reviews-policy.jsonl").write_text(POLICY)
    api, close = await serve(tmp_path, authorization_policy_file=str(
        tmp_path / "reviews-policy.jsonl"))
    try:
        yield api
    finally:
        await close()


def sar(user: str, verb: str, resource: str, namespace: str = "", **extra) -> dict:
    attrs = {"verb": verb, "resource": resource, **extra}
    if namespace:
        attrs["namespace"] = namespace
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": user, "resourceAttributes": attrs}}


async def test_subject_access_review_asks_the_servers_authorizer(secure: Secure) -> None:
    code, body = await secure.call("POST", f"{AUTHZ}/subjectaccessreviews", "admin-token",
                                   sar("reader", "list", "pods", "default"))
    assert code == 201, body
    assert body["kind"] == "SubjectAccessReview" and body["status"] == {"allowed": True}
    assert body["spec"]["user"] == "reader"
    code, body = await secure.call("POST", f"{AUTHZ}/subjectaccessreviews", "admin-token",
                                   sar("reader", "delete", "pods", "default"))
    assert code == 201
    assert body["status"] == {"allowed": False, "reason": "No policy matched."}
    # groups count: a user in `ops` reads anything
    review = sar("olga", "get", "secrets", "kube-system")
    review["spec"]["groups"] = ["ops"]
    code, body = await secure.call("POST", f"{AUTHZ}/subjectaccessreviews", "admin-token", review)
    assert body["status"]["allowed"] is True
    review["spec"]["groups"] = []
    code, body = await secure.call("POST", f"{AUTHZ}/subjectaccessreviews", "admin-token", review)
    assert body["status"]["allowed"] is False
    # non-resource attributes
    code, body = await secure.call("POST", f"{AUTHZ}/subjectaccessreviews", "admin-token", {
        "spec": {"user": "admin", "nonResourceAttributes": {"path": "/metrics", "verb": "get"}}})
    assert (code, body["status"]["allowed"]) == (201, True)


async def test_creating_a_review_is_itself_authorized(secure: Secure) -> None:
    code, body = await secure.call("POST", f"{AUTHZ}/subjectaccessreviews", "reader-token",
                                   sar("admin", "get", "pods"))
    assert code == 403, body
    assert 'User "reader" cannot create resource "subjectaccessreviews" in API group ' \
        '"authorization.k8s.io" at the cluster scope' in body["message"]
    code, _ = await secure.call("POST", f"{AUTHZ}/subjectaccessreviews", None,
                                sar("admin", "get", "pods"))
    assert code == 401


async def test_subject_access_review_validation(secure: Secure) -> None:
    url = f"{AUTHZ}/subjectaccessreviews"
    code, body = await secure.call("POST", url, "admin-token", {"spec": {}})
    assert code == 422
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes: '
        'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must '
        'be specified, spec.user: Invalid value: "": at least one of user or group must be '
        'specified]')
    both = {"spec": {"user": "x", "resourceAttributes": {"verb": "get"},
                     "nonResourceAttributes": {"path": "/x", "verb": "get"}}}
    code, body = await secure.call("POST", url, "admin-token", both)
    assert code == 422 and "spec.nonResourceAttributes: Invalid value: " in body["message"]
    assert "cannot be specified in combination with resourceAttributes" in body["message"]
    named = sar("x", "get", "pods")
    named["metadata"] = {"name": "mine"}
    code, body = await secure.call("POST", url, "admin-token", named)
    assert code == 422 and 'metadata: Invalid value: {"name":"mine"}: must be empty' \
        in body["message"], body
    code, body = await secure.call("POST", url, "admin-token",
                                   {"spec": {"user": "x", "groups": "ops",
                                             "resourceAttributes": {"verb": "get"}}})
    assert code == 400 and "cannot be handled as a SubjectAccessReview" in body["message"]
    code, body = await secure.call("POST", url, "admin-token",
                                   {"kind": "Pod", "spec": {}})
    assert code == 400
    for method in ("GET", "DELETE"):
        code, _ = await secure.call(method, url, "admin-token")
        assert code == 405, method


async def test_local_subject_access_review(secure: Secure) -> None:
    url = f"{AUTHZ}/namespaces/team-a/localsubjectaccessreviews"
    review = {"spec": {"user": "scoped", "resourceAttributes": {
        "namespace": "team-a", "verb": "create", "resource": "pods"}}}
    code, body = await secure.call("POST", url, "admin-token", review)
    assert code == 201, body
    assert body["kind"] == "LocalSubjectAccessReview"
    assert body["metadata"]["namespace"] == "team-a" and body["status"]["allowed"] is True
    review["spec"]["resourceAttributes"]["namespace"] = "default"
    code, body = await secure.call("POST", url, "admin-token", review)
    assert code == 422
    assert 'spec.resourceAttributes.namespace: Invalid value: "default": must match ' \
        'metadata.namespace' in body["message"]
    code, body = await secure.call("POST", url, "admin-token", {"spec": {
        "user": "scoped", "nonResourceAttributes": {"path": "/x", "verb": "get"}}})
    assert code == 422 and "disallowed on this kind of request" in body["message"]
    code, body = await secure.call("POST", url, "admin-token", {
        "metadata": {"namespace": "other"}, **review})
    assert code == 400 and "does not match the namespace" in body["message"]


async def test_self_subject_access_review_uses_the_caller(secure: Secure) -> None:
    url = f"{AUTHZ}/selfsubjectaccessreviews"

    async def can(token: str, verb: str, resource: str, namespace: str) -> dict:
        code, body = await secure.call("POST", url, token, {"spec": {"resourceAttributes": {
            "verb": verb, "resource": resource, "namespace": namespace}}})
        assert code == 201, body
        assert body["kind"] == "SelfSubjectAccessReview"
        return body["status"]

    assert (await can("reader-token", "list", "pods", "default"))["allowed"] is True
    assert (await can("reader-token", "create", "pods", "default")) == {
        "allowed": False, "reason": "No policy matched."}
    assert (await can("scoped-token", "create", "pods", "team-a"))["allowed"] is True
    assert (await can("scoped-token", "create", "pods", "default"))["allowed"] is False
    code, body = await secure.call("POST", url, "reader-token", {"spec": {}})
    assert code == 422 and body["message"].startswith(
        'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes')


async def test_self_subject_rules_review_lists_abac_lines(secure: Secure) -> None:
    url = f"{AUTHZ}/selfsubjectrulesreviews"
    code, body = await secure.call("POST", url, "reader-token", {"spec": {"namespace": "default"}})
    assert code == 201, body
    status = body["status"]
    assert status["incomplete"] is False and "evaluationError" not in status
    assert {"verbs": ["get", "list", "watch"], "apiGroups": ["*"], "resources": ["pods"]} \
        in status["resourceRules"]
    assert {"verbs": ["*"], "apiGroups": ["authorization.k8s.io"],
            "resources": ["selfsubjectaccessreviews"]} in status["resourceRules"]
    assert status["nonResourceRules"] == []
    # scoped's line names team-a: listed there, not in default
    _, body = await secure.call("POST", url, "scoped-token", {"spec": {"namespace": "team-a"}})
    assert {"verbs": ["*"], "apiGroups": ["*"], "resources": ["pods"]} in \
        body["status"]["resourceRules"]
    _, body = await secure.call("POST", url, "scoped-token", {"spec": {"namespace": "default"}})
    assert all(r["resources"] != ["pods"] for r in body["status"]["resourceRules"])
    # admin's v0 line: everything, resources and paths
    _, body = await secure.call("POST", url, "admin-token", {"spec": {"namespace": "x"}})
    assert {"verbs": ["*"], "nonResourceURLs": ["*"]} in body["status"]["nonResourceRules"]
    code, body = await secure.call("POST", url, "admin-token", {"spec": {}})
    assert (code, body["message"]) == (400, "no namespace on request")


async def test_insecure_port_is_the_superuser(secure: Secure) -> None:
    code, body = await secure.call("POST", f"{AUTHZ}/selfsubjectaccessreviews", None, {
        "spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}}, secure=False)
    assert (code, body["status"]) == (201, {"allowed": True})
    code, body = await secure.call("POST", f"{AUTHN}/selfsubjectreviews", None, {}, secure=False)
    assert body["status"]["userInfo"] == {
        "username": "system:unsecured", "groups": ["system:masters", "system:authenticated"]}
    # a SubjectAccessReview still asks the configured authorizer about the named user
    code, body = await secure.call("POST", f"{AUTHZ}/subjectaccessreviews", None,
                                   sar("reader", "delete", "pods", "default"), secure=False)
    assert body["status"]["allowed"] is False


async def test_token_review(secure: Secure) -> None:
    url = f"{AUTHN}/tokenreviews"
    code, body = await secure.call("POST", url, "admin-token", {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": "ops-token"}})
    assert code == 201, body
    assert body["status"] == {"authenticated": True, "user": {
        "username": "olga", "uid": "4", "groups": ["ops", "dev", "system:authenticated"]}}
    code, body = await secure.call("POST", url, "admin-token",
                                   {"spec": {"token": "nope", "audiences": ["api"]}})
    assert (code, body["status"]) == (201, {"user": {}})
    code, body = await secure.call("POST", url, "admin-token",
                                   {"spec": {"token": "reader-token", "audiences": ["api"]}})
    assert body["status"]["audiences"] == ["api"]
    code, body = await secure.call("POST", url, "admin-token", {"spec": {}})
    assert (code, body["message"]) == (400, "token is required for TokenReview in authentication")
    code, body = await secure.call("POST", url, "reader-token", {"spec": {"token": "x"}})
    assert code == 403


@pytest.mark.parametrize("version", ["v1", "v1beta1"])
async def test_self_subject_review(secure: Secure, version: str) -> None:
    code, body = await secure.call(
        "POST", f"/apis/authentication.k8s.io/{version}/selfsubjectreviews", "ops-token",
        {"apiVersion": f"authentication.k8s.io/{version}", "kind": "SelfSubjectReview"})
    assert code == 201, body
    assert body["apiVersion"] == f"authentication.k8s.io/{version}"
    assert body["kind"] == "SelfSubjectReview" and body["metadata"]["creationTimestamp"]
    assert body["status"]["userInfo"] == {
        "username": "olga", "uid": "4", "groups": ["ops", "dev", "system:authenticated"]}


async def test_discovery_lists_the_reviews(secure: Secure) -> None:
    _, body = await secure.call("GET", AUTHZ, "admin-token")
    resources = {r["name"]: r for r in body["resources"]}
    assert set(resources) == {"subjectaccessreviews", "localsubjectaccessreviews",
                              "selfsubjectaccessreviews", "selfsubjectrulesreviews"}
    assert resources["localsubjectaccessreviews"]["namespaced"] is True
    assert resources["subjectaccessreviews"]["verbs"] == ["create"]
    _, body = await secure.call("GET", AUTHN, "admin-token")
    assert {r["name"] for r in body["resources"]} == {"tokenreviews", "selfsubjectreviews"}
    _, body = await secure.call("GET", "/apis/authentication.k8s.io", "admin-token")
    assert body["preferredVersion"]["version"] == "v1"
    assert [v["version"] for v in body["versions"]] == ["v1", "v1beta1"]
    code, _ = await secure.call("POST", "/apis/authentication.k8s.io/v1alpha1/selfsubjectreviews",
                                "admin-token", {})
    assert code == 404  # alpha: off upstream by default


async def test_official_client_self_subject_access_review(secure: Secure) -> None:
    kubernetes = pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")

    def ask() -> tuple[bool, bool, list]:
        config = kubernetes.client.Configuration()
        config.host = secure.https
        config.ssl_ca_cert = str(secure.ca)
        config.api_key = {"authorization": "Bearer reader-token"}
        with kubernetes.client.ApiClient(config) as client:
            api = kubernetes.client.AuthorizationV1Api(client)
            spec = kubernetes.client.V1SelfSubjectAccessReviewSpec(
                resource_attributes=kubernetes.client.V1ResourceAttributes(
                    namespace="default", verb="list", resource="pods"))
            allowed = api.create_self_subject_access_review(
                kubernetes.client.V1SelfSubjectAccessReview(spec=spec)).status.allowed
            spec.resource_attributes.verb = "delete"
            denied = api.create_self_subject_access_review(
                kubernetes.client.V1SelfSubjectAccessReview(spec=spec)).status.allowed
            rules = api.create_self_subject_rules_review(
                kubernetes.client.V1SelfSubjectRulesReview(
                    spec=kubernetes.client.V1SelfSubjectRulesReviewSpec(namespace="default"))
            ).status.resource_rules
            return allowed, denied, rules

    allowed, denied, rules = await asyncio.to_thread(ask)
    assert (allowed, denied) == (True, False)
    assert any(r.resources == ["pods"] for r in rules)


async def test_protobuf_for_client_go(secure: Secure) -> None:
    """client-go's typed clients (kubectl 1.32+ among them) write protobuf and offer it
    first: the question decodes, the answer is a SelfSubjectAccessReview message that
    Google's runtime parses."""
    from tests.apiserver.test_protobuf_responses import CLIENT_GO, PB, _google
    from tests.protobuf_descriptors import google_envelope, message_class

    question = message_class("k8s.io.api.authorization.v1.SelfSubjectAccessReview")()
    question.spec.resourceAttributes.verb = "list"
    question.spec.resourceAttributes.resource = "pods"
    headers = {"Authorization": "Bearer reader-token", "Accept": CLIENT_GO,
               "Content-Type": PB}
    body = google_envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", question)
    async with secure.session.post(f"{secure.https}{AUTHZ}/selfsubjectaccessreviews",
                                   data=body, headers=headers) as resp:
        assert (resp.status, resp.content_type) == (201, PB)
        data = await resp.read()
    type_meta, review = _google(data, "k8s.io.api.authorization.v1.SelfSubjectAccessReview")
    assert (type_meta.apiVersion, type_meta.kind) == ("authorization.k8s.io/v1",
                                                      "SelfSubjectAccessReview")
    assert review.status.allowed is True
    assert review.spec.resourceAttributes.resource == "pods"


async def test_official_client_token_and_local_reviews(secure: Secure) -> None:
    kubernetes = pytest.importorskip(
        "kubernetes", reason="the kubernetes client is not installed: pip install -e '.[test]'")

    def ask() -> tuple[str, bool]:
        config = kubernetes.client.Configuration()
        config.host = secure.https
        config.ssl_ca_cert = str(secure.ca)
        config.api_key = {"authorization": "Bearer admin-token"}
        with kubernetes.client.ApiClient(config) as client:
            token = kubernetes.client.AuthenticationV1Api(client).create_token_review(
                kubernetes.client.V1TokenReview(
                    spec=kubernetes.client.V1TokenReviewSpec(token="scoped-token")))
            local = kubernetes.client.AuthorizationV1Api(
                client).create_namespaced_local_subject_access_review(
                "team-a", kubernetes.client.V1LocalSubjectAccessReview(
                    metadata=kubernetes.client.V1ObjectMeta(namespace="team-a"),
                    spec=kubernetes.client.V1SubjectAccessReviewSpec(
                        user="scoped", resource_attributes=kubernetes.client.V1ResourceAttributes(
                            namespace="team-a", verb="delete", resource="pods"))))
            return token.status.user.username, local.status.allowed

    assert await asyncio.to_thread(ask) == ("scoped", True)
