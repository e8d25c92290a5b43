"""Service-account tokens end to end on a real secure port: TokenRequest, the JWT
authenticator (expired, wrong-audience, deleted-account, deleted-pod and recreated-account
tokens refused with 401), issuer discovery, and `kubectl create token`."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path
from typing import Any

import jwt
import pytest

from minikube_py.apiserver.serviceaccount.claims import new_claims
from minikube_py.serviceaccount_keys import (
    TokenSigner,
    load_signing_key,
    new_private_key_pem,
)
from tests.apiserver.test_secure import Secure, serve

ISSUER = "https://kubernetes.default.svc.cluster.local"
NS = "/api/v1/namespaces/default"


@pytest.fixture
async def api(tmp_path: Path):
    key = tmp_path / "sa.key"
    key.write_bytes(new_private_key_pem())
    api, close = await serve(tmp_path, authorization_mode="AlwaysAllow",
                             authorization_policy_file=None,
                             service_account_issuer=ISSUER,
                             service_account_signing_key_file=str(key),
                             service_account_max_token_expiration=86400)
    api.key = key  # type: ignore[attr-defined]
    try:
        yield api
    finally:
        await close()


async def _sa(api: Secure, name: str = "robot") -> dict[str, Any]:
    status, body = await api.call("POST", f"{NS}/serviceaccounts", "admin-token",
                                  {"metadata": {"name": name}})
    assert status == 201, body
    return body


async def _token(api: Secure, name: str = "robot", spec: dict | None = None) -> tuple[int, Any]:
    return await api.call("POST", f"{NS}/serviceaccounts/{name}/token", "admin-token",
                          {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                           "spec": spec or {}})


async def test_token_request_and_use(api: Secure) -> None:
    account = await _sa(api)
    status, body = await _token(api)
    assert status == 201, body
    assert body["kind"] == "TokenRequest" and body["apiVersion"] == "authentication.k8s.io/v1"
    assert body["spec"]["audiences"] == [ISSUER] and body["spec"]["expirationSeconds"] == 3600
    assert body["metadata"]["name"] == "robot" and body["status"]["expirationTimestamp"]
    token = body["status"]["token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["iss"] == ISSUER and claims["aud"] == [ISSUER]
    assert claims["sub"] == "system:serviceaccount:default:robot"
    assert claims["exp"] - claims["iat"] == 3600 and claims["nbf"] == claims["iat"]
    assert claims["jti"]
    assert claims["kubernetes.io"] == {"namespace": "default", "serviceaccount": {
        "name": "robot", "uid": account["metadata"]["uid"]}}
    assert jwt.get_unverified_header(token)["kid"]
    status, listing = await api.call("GET", f"{NS}/pods", token)
    assert status == 200, listing
    # twice: the second comes from the verified-token cache
    assert (await api.call("GET", f"{NS}/pods", token))[0] == 200


async def test_token_request_validation(api: Secure) -> None:
    await _sa(api)
    status, body = await _token(api, spec={"expirationSeconds": 599})
    assert status == 422 and body["reason"] == "Invalid"
    assert body["details"]["causes"][0]["field"] == "spec.expirationSeconds"
    assert "may not specify a duration less than 10 minutes" in body["message"]
    status, body = await _token(api, spec={"expirationSeconds": 2**32 + 1})
    assert status == 422 and "larger than 2^32 seconds" in body["message"]
    status, body = await _token(api, spec={"expirationSeconds": 10**6})
    assert status == 201 and body["spec"]["expirationSeconds"] == 86400  # clamped
    assert (await _token(api, "nobody"))[0] == 404
    status, body = await _token(api, spec={"boundObjectRef": {
        "apiVersion": "v1", "kind": "ConfigMap", "name": "x"}})
    assert status == 400 and body["message"] == "cannot bind token to object of type /v1, Kind=ConfigMap"
    status, body = await api.call("POST", f"{NS}/serviceaccounts/robot/token", "admin-token",
                                  {"spec": "not an object"})
    assert status == 422, body
    status, body = await api.call("POST", f"{NS}/serviceaccounts/robot/token", "admin-token",
                                  {"metadata": {"name": "other"}, "spec": {}})
    assert status == 422 and "must match the service account name" in body["message"]
    async with api.session.post(api.https + f"{NS}/serviceaccounts/robot/token", data=b"{oops",
                                headers={"Authorization": "Bearer admin-token",
                                         "Content-Type": "application/json"}) as resp:
        assert resp.status == 400


async def test_refused_tokens(api: Secure) -> None:
    account = await _sa(api)
    # another audience than the API server's
    status, body = await _token(api, spec={"audiences": ["vault"]})
    assert status == 201
    assert (await api.call("GET", f"{NS}/pods", body["status"]["token"]))[0] == 401
    # expired (signed with the cluster's key, two minutes past exp: beyond the leeway)
    now = int(time.time())
    signer = TokenSigner(load_signing_key(api.key))  # type: ignore[attr-defined]
    old = signer.sign(new_claims(ISSUER, account, [ISSUER], now - 4000, 3600))
    assert (await api.call("GET", f"{NS}/pods", old))[0] == 401
    # signed by another key
    other = api.key.with_name("other.key")  # type: ignore[attr-defined]
    other.write_bytes(new_private_key_pem())
    forged = TokenSigner(load_signing_key(other)).sign(
        new_claims(ISSUER, account, [ISSUER], now, 3600))
    assert (await api.call("GET", f"{NS}/pods", forged))[0] == 401
    # the account deleted, then recreated (another uid)
    token = (await _token(api))[1]["status"]["token"]
    assert (await api.call("GET", f"{NS}/pods", token))[0] == 200
    assert (await api.call("DELETE", f"{NS}/serviceaccounts/robot", "admin-token"))[0] == 200
    assert (await api.call("GET", f"{NS}/pods", token))[0] == 401
    await _sa(api)
    assert (await api.call("GET", f"{NS}/pods", token))[0] == 401


async def test_pod_bound_token(api: Secure) -> None:
    await _sa(api)
    pod = {"metadata": {"name": "p"}, "spec": {"serviceAccountName": "robot", "nodeName": "n1",
                                               "containers": [{"name": "c", "image": "x"}]}}
    status, created = await api.call("POST", f"{NS}/pods", "admin-token", pod)
    assert status == 201, created
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "p"}
    status, body = await _token(api, spec={"boundObjectRef": {**ref, "uid": "wrong"}})
    assert status == 409 and body["reason"] == "Conflict"
    status, body = await _token(api, spec={"boundObjectRef": ref})
    assert status == 201, body
    token = body["status"]["token"]
    private = jwt.decode(token, options={"verify_signature": False})["kubernetes.io"]
    assert private["pod"] == {"name": "p", "uid": created["metadata"]["uid"]}
    assert private["node"]["name"] == "n1"
    assert (await api.call("GET", f"{NS}/pods", token))[0] == 200
    # whoami: the bound pod, node and token ID are the user's extra, as upstream 1.31
    status, review = await api.call("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                    token, {"apiVersion": "authentication.k8s.io/v1",
                                            "kind": "SelfSubjectReview"})
    assert status == 201, review
    extra = review["status"]["userInfo"]["extra"]
    assert extra["authentication.kubernetes.io/pod-name"] == ["p"]
    assert extra["authentication.kubernetes.io/pod-uid"] == [created["metadata"]["uid"]]
    assert extra["authentication.kubernetes.io/node-name"] == ["n1"]
    assert extra["authentication.kubernetes.io/credential-id"] == [
        f"JTI={jwt.decode(token, options={'verify_signature': False})['jti']}"]
    status, _ = await api.call("DELETE", f"{NS}/pods/p?gracePeriodSeconds=0", "admin-token")
    assert status == 200
    assert (await api.call("GET", f"{NS}/pods", token))[0] == 401


async def test_issuer_discovery(api: Secure) -> None:
    """Authenticated callers the authorizer allows (here AlwaysAllow) read it; anonymous ones
    are refused, as upstream (whose bootstrap policy grants it to service accounts only)."""
    assert (await api.call("GET", "/.well-known/openid-configuration"))[0] == 401
    status, body = await api.call("GET", "/.well-known/openid-configuration", "admin-token")
    assert status == 200
    assert body["issuer"] == ISSUER and body["jwks_uri"] == ISSUER + "/openid/v1/jwks"
    assert body["id_token_signing_alg_values_supported"] == ["RS256"]
    async with api.session.get(api.https + "/openid/v1/jwks",
                               headers={"Authorization": "Bearer admin-token"}) as resp:
        assert resp.status == 200
        keys = (await resp.json(content_type=None))["keys"]
    token = (await (_sa(api)) and await _token(api))[1]["status"]["token"]
    key = jwt.PyJWKSet.from_dict({"keys": keys})[jwt.get_unverified_header(token)["kid"]]
    claims = jwt.decode(token, key.key, algorithms=["RS256"], audience=ISSUER)
    assert claims["sub"] == "system:serviceaccount:default:robot"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="no kubectl")
async def test_kubectl_create_token(api: Secure, tmp_path: Path) -> None:
    await _sa(api, "default")
    config = tmp_path / "kubeconfig"
    config.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "{api.https}", certificate-authority: "{api.ca}"}}}}]
users: [{{name: u, user: {{token: admin-token}}}}]
contexts: [{{name: x, context: {{cluster: c, user: u, namespace: default}}}}]
current-context: x
""")
    proc = await asyncio.create_subprocess_exec(
        "kubectl", "--kubeconfig", str(config), "create", "token", "default",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "HOME": str(tmp_path)})
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err
    token = out.decode().strip()
    assert jwt.decode(token, options={"verify_signature": False})["sub"] == \
        "system:serviceaccount:default:default"
    assert (await api.call("GET", f"{NS}/pods", token))[0] == 200


async def test_kubelet_projects_a_working_token(api: Secure) -> None:
    """The ServiceAccount admission plugin's kube-api-access volume, filled by the kubelet's
    token manager through the real API server (in-process client, as `start`'s kubelets)."""
    from minikube_py.apiserver.admission.service_account import token_volume
    from minikube_py.client import Client, InProcessTransport
    from minikube_py.kubelet.environment import load_sandbox
    from minikube_py.kubelet.reads import ClusterReads
    from minikube_py.kubelet.token_manager import TokenManager

    await _sa(api)
    mount = "/var/run/secrets/kubernetes.io/serviceaccount"
    container = {"name": "c", "image": "x",
                 "volumeMounts": [{"name": "kube-api-access-x", "mountPath": mount}]}
    status, pod = await api.call("POST", f"{NS}/pods", "admin-token", {
        "metadata": {"name": "p"}, "spec": {"serviceAccountName": "robot", "containers": [
            container], "volumes": [token_volume("kube-api-access-x")]}})
    assert status == 201, pod
    client = Client(InProcessTransport(api.app))
    manager = TokenManager(client)
    try:
        sandbox = await load_sandbox(ClusterReads(client), pod, container, pod_ip="10.1.0.2",
                                     host_ip="127.0.0.1", allocatable={}, tokens=manager)
        token = sandbox.files[f"{mount}/token"].decode()
        assert sandbox.files[f"{mount}/namespace"] == b"default"
        claims = jwt.decode(token, options={"verify_signature": False})
        assert claims["exp"] - claims["iat"] == 3607
        assert claims["kubernetes.io"]["pod"] == {"name": "p", "uid": pod["metadata"]["uid"]}
        assert (await api.call("GET", f"{NS}/pods", token))[0] == 200
        again = await load_sandbox(ClusterReads(client), pod, container, pod_ip="10.1.0.2",
                                   host_ip="127.0.0.1", allocatable={}, tokens=manager)
        assert again.files[f"{mount}/token"].decode() == token  # cached, not re-requested
        manager.forget(set())
        assert not manager._tokens
    finally:
        await client.close()


async def test_openapi_describes_the_token_subresource(api: Secure) -> None:
    status, doc = await api.call("GET", "/openapi/v3/api/v1", "admin-token")
    assert status == 200
    post = doc["paths"]["/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"]["post"]
    assert post["operationId"] == "createCoreV1NamespacedServiceAccountToken"
    assert post["x-kubernetes-group-version-kind"] == {
        "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}
    spec = doc["components"]["schemas"]["io.k8s.api.authentication.v1.TokenRequestSpec"]
    assert {"audiences", "expirationSeconds", "boundObjectRef"} <= set(spec["properties"])
    status, discovery = await api.call("GET", "/api/v1", "admin-token")
    assert "serviceaccounts/token" in {r["name"] for r in discovery["resources"]}


async def test_token_review_of_service_account_tokens(api: Secure) -> None:
    account = await _sa(api)
    token = (await _token(api, spec={"audiences": [ISSUER, "vault"]}))[1]["status"]["token"]

    async def review(audiences: list[str] | None = None) -> dict:
        spec: dict[str, Any] = {"token": token}
        if audiences is not None:
            spec["audiences"] = audiences
        status, body = await api.call("POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                                      "admin-token", {"apiVersion": "authentication.k8s.io/v1",
                                                      "kind": "TokenReview", "spec": spec})
        assert status == 201, body
        return body["status"]

    answer = await review()
    assert answer["authenticated"] is True and answer["audiences"] == [ISSUER]
    jti = jwt.decode(token, options={"verify_signature": False})["jti"]
    assert answer["user"] == {"username": "system:serviceaccount:default:robot",
                              "uid": account["metadata"]["uid"],
                              "groups": ["system:serviceaccounts", "system:serviceaccounts:default",
                                         "system:authenticated"],
                              # 1.30+: every token's ID (ServiceAccountTokenJTI)
                              "extra": {"authentication.kubernetes.io/credential-id":
                                        [f"JTI={jti}"]}}
    assert (await review(["vault", "other"]))["audiences"] == ["vault"]
    assert (await review(["other"])) == {"user": {}}
    assert (await api.call("DELETE", f"{NS}/serviceaccounts/robot", "admin-token"))[0] == 200
    assert (await review()) == {"user": {}}


async def test_legacy_secret_token_from_the_tokens_controller(api: Secure) -> None:
    """A hand-made `kubernetes.io/service-account-token` Secret gets a legacy JWT signed with
    --service-account-private-key-file; it authenticates until the Secret is deleted."""
    import base64

    from minikube_py.client import Client, InProcessTransport
    from minikube_py.client.resources import SECRETS
    from minikube_py.controllers.tokens import TokensController
    from tests.integration.test_cluster_controllers import eventually, running

    await _sa(api)
    status, _ = await api.call("POST", f"{NS}/secrets", "admin-token", {
        "metadata": {"name": "robot-token", "annotations": {
            "kubernetes.io/service-account.name": "robot"}},
        "type": "kubernetes.io/service-account-token"})
    assert status == 201
    client = Client(InProcessTransport(api.app))
    try:
        async with running(client, TokensController,
                           service_account_private_key_file=str(api.key)):  # type: ignore[attr-defined]
            async def token() -> str | None:
                """the controller filled the token in"""
                data = (await client.get(SECRETS, "robot-token", "default")).get("data") or {}
                return base64.b64decode(data["token"]).decode() if data.get("token") else None
            legacy = await eventually(token)
    finally:
        await client.close()
    claims = jwt.decode(legacy, options={"verify_signature": False})
    assert claims["iss"] == "kubernetes/serviceaccount" and "exp" not in claims
    assert claims["kubernetes.io/serviceaccount/secret.name"] == "robot-token"
    assert (await api.call("GET", f"{NS}/pods", legacy))[0] == 200
    assert (await api.call("DELETE", f"{NS}/secrets/robot-token", "admin-token"))[0] == 200
    assert (await api.call("GET", f"{NS}/pods", legacy))[0] == 401


async def test_service_account_may_impersonate(api: Secure) -> None:
    """The asynchronous (service-account) path still goes through impersonation."""
    await _sa(api)
    token = (await _token(api))[1]["status"]["token"]
    status, body = await api.call(
        "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", token,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert status == 201, body
    assert body["status"]["userInfo"]["username"] == "system:serviceaccount:default:robot"
    status, body = await api.call(
        "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", token,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
        headers={"Impersonate-User": "jane"})
    assert status == 201, body
    assert body["status"]["userInfo"]["username"] == "jane"
