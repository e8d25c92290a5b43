"""Who may approve and sign CSRs, under RBAC on the secure port: the CertificateApproval,
CertificateSigning and CertificateSubjectRestriction admission plugins (with the real kubectl
and the official Python client), and the csrapproving controller auto-approving a kubelet's
client certificate — signed end to end by csrsigning — while an unprivileged requestor's stays
pending. The controllers talk HTTPS as their own token user, with the RBAC rights upstream's
certificate controllers need, so their own writes pass the same plugins.

Every role and binding is created here (no reliance on the bootstrap policy's
system:certificates.k8s.io:* roles), so the tests hold before and after it changes.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID

from minikube_py.apiserver.admission import PLUGINS
from minikube_py.apiserver.admission.order import enabled
from minikube_py.apiserver.authn import UserInfo
from minikube_py.apiserver.authn.identities import service_account_user
from minikube_py.client import Client
from minikube_py.client.http import HTTPTransport
from minikube_py.client.inprocess import InProcessTransport
from minikube_py.client.resources import CERTIFICATE_SIGNING_REQUESTS as CSRS
from minikube_py.controllers.csrapproving import CSRApprovingController
from minikube_py.controllers.csrsigning import CSRSigningController
from tests.apiserver.test_rbac import binding, role
from tests.apiserver.test_secure import Secure, serve
from tests.e2e.kubectl_run import KUBECTL, kubectl
from tests.integration.test_cluster_controllers import eventually, running
from tests.integration.test_csr_signing import PATH, csr_body, new_request

RBAC = "/apis/rbac.authorization.k8s.io/v1"
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
KUBELET_SIGNER = "kubernetes.io/kube-apiserver-client-kubelet"
TOKENS = ('admin-token,admin,1,"system:masters"\n'
          "alice-token,alice,2\n"
          "mallory-token,mallory,3\n"
          'boot-token,system:bootstrap:abcdef,4,"system:bootstrappers"\n'
          'node-token,system:node:n2,5,"system:nodes"\n'
          "kcm-token,system:kube-controller-manager,6\n")
needs_kubectl = pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")

CSR_RULE = {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"]}
#: the roles these tests bind (names of our own, not upstream's bootstrap roles)
ROLES: dict[str, list[dict]] = {
    "test:csr-requester": [{**CSR_RULE, "verbs": ["create", "get", "list", "watch"]}],
    "test:csr-approval-endpoint": [
        {**CSR_RULE, "verbs": ["get", "list"]},
        {**CSR_RULE, "resources": ["certificatesigningrequests/approval"],
         "verbs": ["update", "patch"]}],
    "test:csr-status-endpoint": [
        {**CSR_RULE, "verbs": ["get"]},
        {**CSR_RULE, "resources": ["certificatesigningrequests/status"], "verbs": ["update"]}],
    "test:approve-client-signer": [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve"],
         "resourceNames": [CLIENT_SIGNER]}],
    "test:approve-example-domain": [
        {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve"],
         "resourceNames": ["example.com/*"]}],
    "test:nodeclient": [{**CSR_RULE, "resources": ["certificatesigningrequests/nodeclient"],
                         "verbs": ["create"]}],
    "test:selfnodeclient": [
        {**CSR_RULE, "resources": ["certificatesigningrequests/selfnodeclient"],
         "verbs": ["create"]}],
    # what upstream's system:controller:certificate-controller and csrsigning hold
    "test:certificate-controllers": [
        {**CSR_RULE, "verbs": ["get", "list", "watch", "delete"]},
        {**CSR_RULE, "resources": ["certificatesigningrequests/approval",
                                   "certificatesigningrequests/status"], "verbs": ["update"]},
        {"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
         "verbs": ["approve", "sign"], "resourceNames": [KUBELET_SIGNER, CLIENT_SIGNER]},
        {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"],
         "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch", "update"]}],
}


def user(name: str) -> dict:
    return {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": name}


def group(name: str) -> dict:
    return {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": name}


async def grant(api: Secure, role_name: str, *subjects: dict) -> None:
    """Bind a ClusterRole of ROLES (created on first use) to `subjects`, cluster-wide."""
    status, body = await api.call("POST", f"{RBAC}/clusterroles", "admin-token",
                                  role(role_name, ROLES[role_name], ns=""))
    assert status in (201, 409), body
    name = f"{role_name}:{len(subjects)}:{subjects[0]['name']}"
    status, body = await api.call("POST", f"{RBAC}/clusterrolebindings", "admin-token",
                                  binding(name, "ClusterRole", role_name, list(subjects), ns=""))
    assert status == 201, body


async def allowed(api: Secure, username: str, groups: list[str], **attrs: str) -> bool:
    """Poll (the authorizer's informers follow the store) until the SAR says allowed."""
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
              "spec": {"user": username, "groups": groups, "resourceAttributes": attrs}}

    async def check() -> bool:
        """the RBAC authorizer has caught up with the new binding"""
        status, body = await api.call("POST", SAR, "admin-token", review)
        assert status == 201, body
        return body["status"]["allowed"]
    return await eventually(check)


@pytest.fixture
async def secure(tmp_path: Path):
    api, close = await serve(tmp_path, TOKENS, authorization_mode="RBAC",
                             authorization_policy_file=None,
                             admission_control=enabled(PLUGINS))
    try:
        await grant(api, "test:csr-requester", group("system:authenticated"))
        yield api
    finally:
        await close()


def approval(csr: dict, reason: str = "Test") -> dict:
    return {**csr, "status": {"conditions": [{"type": "Approved", "status": "True",
                                              "reason": reason, "message": "ok"}]}}


async def create(api: Secure, token: str, body: dict) -> dict:
    status, created = await api.call("POST", PATH, token, body)
    assert status == 201, created
    return created


async def _kubectl(api: Secure, home: Path, *args: str, ok: bool = True):
    return await asyncio.to_thread(kubectl, api.https, home, "--certificate-authority",
                                   str(api.ca), *args, ok=ok)


def forbidden_text(name: str, verb: str, signer: str) -> str:
    return (f'certificatesigningrequests.certificates.k8s.io "{name}" is forbidden: user not '
            f'permitted to {verb} requests with signerName "{signer}"')


# -- CertificateApproval ------------------------------------------------------------------

@needs_kubectl
async def test_kubectl_approve_needs_approve_on_the_signer(secure: Secure, tmp_path: Path) -> None:
    api = secure
    home = tmp_path / "home"
    request, _ = new_request("carol")
    await create(api, "mallory-token", csr_body("carol", request))
    await grant(api, "test:csr-approval-endpoint", user("alice"))
    assert await allowed(api, "alice", [], group="certificates.k8s.io",
                         resource="certificatesigningrequests", subresource="approval",
                         verb="update")
    # RBAC lets alice call the endpoint; the plugin wants `approve` on the signer
    out = await _kubectl(api, home, "--token", "alice-token", "certificate", "approve", "carol",
                         ok=False)
    assert out.returncode != 0
    assert (f"Error from server (Forbidden): {forbidden_text('carol', 'approve', CLIENT_SIGNER)}"
            in out.stderr), out.stderr
    status, csr = await api.call("GET", f"{PATH}/carol", "admin-token")
    assert status == 200 and "conditions" not in csr["status"]

    await grant(api, "test:approve-client-signer", user("alice"))
    assert await allowed(api, "alice", [], group="certificates.k8s.io", resource="signers",
                         name=CLIENT_SIGNER, verb="approve")
    out = await _kubectl(api, home, "--token", "alice-token", "certificate", "approve", "carol")
    assert "carol approved" in out.stdout
    status, csr = await api.call("GET", f"{PATH}/carol", "admin-token")
    assert [c["type"] for c in csr["status"]["conditions"]] == ["Approved"]


async def test_the_official_client_gets_upstreams_403_then_approves(secure: Secure) -> None:
    import kubernetes

    api = secure
    request, _ = new_request("dave")
    await create(api, "mallory-token", csr_body("dave", request))
    await grant(api, "test:csr-approval-endpoint", user("alice"))
    assert await allowed(api, "alice", [], group="certificates.k8s.io",
                         resource="certificatesigningrequests", subresource="approval",
                         verb="update")

    def approve() -> tuple[int, Any]:
        config = kubernetes.client.Configuration()
        config.host = api.https
        config.ssl_ca_cert = str(api.ca)
        config.api_key = {"authorization": "Bearer alice-token"}
        with kubernetes.client.ApiClient(config) as api_client:
            certs = kubernetes.client.CertificatesV1Api(api_client)
            csr = certs.read_certificate_signing_request("dave")
            csr.status.conditions = [kubernetes.client.V1CertificateSigningRequestCondition(
                type="Approved", status="True", reason="ClientApprove", message="ok")]
            try:
                done = certs.replace_certificate_signing_request_approval("dave", csr)
            except kubernetes.client.ApiException as exc:
                return exc.status, json.loads(exc.body)
            return 200, [c.type for c in done.status.conditions]

    status, body = await asyncio.to_thread(approve)
    assert status == 403
    assert (body["reason"], body["message"]) == (
        "Forbidden", forbidden_text("dave", "approve", CLIENT_SIGNER))
    assert body["details"] == {"name": "dave", "group": "certificates.k8s.io",
                               "kind": "certificatesigningrequests"}
    await grant(api, "test:approve-client-signer", user("alice"))
    assert await allowed(api, "alice", [], group="certificates.k8s.io", resource="signers",
                         name=CLIENT_SIGNER, verb="approve")
    assert await asyncio.to_thread(approve) == (200, ["Approved"])


async def test_a_domain_wildcard_grant_approves_every_signer_of_the_domain(
        secure: Secure) -> None:
    api = secure
    request, _ = new_request("erin")
    created = await create(api, "mallory-token",
                           csr_body("erin", request, signer="example.com/serving"))
    other = await create(api, "mallory-token",
                         csr_body("frank", request, signer="example.org/serving"))
    await grant(api, "test:csr-approval-endpoint", user("alice"))
    await grant(api, "test:approve-example-domain", user("alice"))
    assert await allowed(api, "alice", [], group="certificates.k8s.io", resource="signers",
                         name="example.com/*", verb="approve")
    status, body = await api.call("PUT", f"{PATH}/erin/approval", "alice-token",
                                  approval(created))
    assert status == 200, body
    status, body = await api.call("PUT", f"{PATH}/frank/approval", "alice-token",
                                  approval(other))
    assert (status, body["message"]) == (
        403, forbidden_text("frank", "approve", "example.org/serving"))
    # a system:masters member needs no grant (RBAC allows it everything)
    status, body = await api.call("PUT", f"{PATH}/frank/approval", "admin-token",
                                  approval(other))
    assert status == 200, body


# -- CertificateSigning -------------------------------------------------------------------

async def test_writing_a_certificate_needs_sign_on_the_signer(secure: Secure) -> None:
    api = secure
    request, _ = new_request("gina")
    created = await create(api, "mallory-token", csr_body("gina", request))
    await grant(api, "test:csr-status-endpoint", user("mallory"))
    assert await allowed(api, "mallory", [], group="certificates.k8s.io",
                         resource="certificatesigningrequests", subresource="status",
                         verb="update")
    # a status write that changes neither certificate nor conditions is not signing
    status, body = await api.call("PUT", f"{PATH}/gina/status", "mallory-token", created)
    assert status == 200, body
    certificate = base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB\n"
                                   b"-----END CERTIFICATE-----\n").decode()
    forged = {**body, "status": {"certificate": certificate}}
    status, body = await api.call("PUT", f"{PATH}/gina/status", "mallory-token", forged)
    assert (status, body["reason"], body["message"]) == (
        403, "Forbidden", forbidden_text("gina", "sign", CLIENT_SIGNER))
    # a Failed condition is a signer's word too
    failed = {**created, "status": {"conditions": [
        {"type": "Failed", "status": "True", "reason": "Nope", "message": "no"}]}}
    status, body = await api.call("PUT", f"{PATH}/gina/status", "mallory-token", failed)
    assert (status, body["message"]) == (403, forbidden_text("gina", "sign", CLIENT_SIGNER))


# -- CertificateSubjectRestriction ---------------------------------------------------------

async def test_a_system_masters_subject_is_refused_for_the_client_signer(secure: Secure) -> None:
    api = secure
    request, _ = new_request("root", ("dev", "system:masters"))
    for token in ("mallory-token", "admin-token"):  # whoever asks
        status, body = await api.call("POST", PATH, token, csr_body("root", request))
        assert (status, body["reason"], body["message"]) == (
            403, "Forbidden",
            ('certificatesigningrequests.certificates.k8s.io "root" is forbidden: use of '
            "kubernetes.io/kube-apiserver-client signer with system:masters group is not "
            "allowed"))
    # other signers may carry the group (theirs to judge), and other groups pass
    await create(api, "mallory-token", csr_body("root", request, signer="example.com/x"))
    plain, _ = new_request("dev", ("dev",))
    await create(api, "mallory-token", csr_body("dev", plain))


async def test_the_plugins_can_be_disabled(tmp_path: Path) -> None:
    chain = enabled(PLUGINS, disable=["CertificateSubjectRestriction", "CertificateApproval"])
    assert "CertificateSigning" in chain and "CertificateApproval" not in chain
    api, close = await serve(tmp_path, TOKENS, authorization_mode="RBAC",
                             authorization_policy_file=None, admission_control=chain)
    try:
        await grant(api, "test:csr-requester", group("system:authenticated"))
        await grant(api, "test:csr-approval-endpoint", user("alice"))
        assert await allowed(api, "alice", [], group="certificates.k8s.io",
                             resource="certificatesigningrequests", subresource="approval",
                             verb="update")
        request, _ = new_request("root", ("system:masters",))
        created = await create(api, "mallory-token", csr_body("root", request))
        status, body = await api.call("PUT", f"{PATH}/root/approval", "alice-token",
                                      approval(created))
        assert status == 200, body
    finally:
        await close()


# -- csrapproving ----------------------------------------------------------------------------

@pytest.fixture(params=["https", "in-process"])
async def controllers(request, secure: Secure, tmp_path: Path):
    """csrapproving + csrsigning over HTTPS as system:kube-controller-manager (a token), or
    in-process as kube-system/certificate-controller (the all-in-one's asserted identity)."""
    api = secure
    if request.param == "https":
        who = UserInfo("system:kube-controller-manager")
        client = Client(HTTPTransport(api.https, token="kcm-token", ca_data=api.ca.read_bytes()))
    else:
        who = service_account_user("kube-system", "certificate-controller")
        client = Client(InProcessTransport(api.app, user=who))
    await grant(api, "test:certificate-controllers", user(who.name))
    assert await allowed(api, who.name, list(who.groups), group="certificates.k8s.io",
                         resource="signers", name=KUBELET_SIGNER, verb="sign")
    certs = tmp_path / "certs"
    try:
        async with running(client, CSRApprovingController, CSRSigningController,
                           cluster_signing_cert_file=str(certs / "ca.crt"),
                           cluster_signing_key_file=str(certs / "ca.key")):
            yield api, client
    finally:
        await client.close()


def kubelet_csr(name: str, node: str) -> dict:
    request, _ = new_request(f"system:node:{node}", ("system:nodes",))
    return csr_body(name, request, signer=KUBELET_SIGNER,
                    usages=("digital signature", "client auth"))


async def _signed(client: Client, name: str) -> dict:
    async def issued():
        """approved by csrapproving and signed by csrsigning"""
        csr = await client.get(CSRS, name)
        return csr if (csr.get("status") or {}).get("certificate") else None
    return await eventually(issued, timeout=10)


async def test_a_bootstrapping_nodes_client_csr_is_auto_approved_and_signed(controllers) -> None:
    api, client = controllers
    await grant(api, "test:nodeclient", group("system:bootstrappers"))
    assert await allowed(api, "system:bootstrap:abcdef", ["system:bootstrappers"],
                         group="certificates.k8s.io", resource="certificatesigningrequests",
                         subresource="nodeclient", verb="create")
    await create(api, "boot-token", kubelet_csr("node-n1", "n1"))
    await create(api, "mallory-token", kubelet_csr("mallory-n1", "n1"))
    csr = await _signed(client, "node-n1")
    [cond] = csr["status"]["conditions"]
    assert (cond["type"], cond["status"], cond["reason"], cond["message"]) == (
        "Approved", "True", "AutoApproved",
        "Auto approving kubelet client certificate after SubjectAccessReview.")
    assert cond["lastUpdateTime"] and cond["lastTransitionTime"]
    cert = x509.load_pem_x509_certificate(base64.b64decode(csr["status"]["certificate"]))
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:node:n1"
    # the unprivileged requestor's identical request stays pending
    await asyncio.sleep(0.3)
    pending = await client.get(CSRS, "mallory-n1")
    assert pending["status"] == {}


async def test_a_nodes_renewal_is_approved_as_selfnodeclient(controllers) -> None:
    api, client = controllers
    await grant(api, "test:selfnodeclient", group("system:nodes"))
    assert await allowed(api, "system:node:n2", ["system:nodes"], group="certificates.k8s.io",
                         resource="certificatesigningrequests", subresource="selfnodeclient",
                         verb="create")
    await create(api, "node-token", kubelet_csr("renew-n2", "n2"))
    # the same node asking for another node's certificate is not a renewal (and nodeclient is
    # not granted): pending
    await create(api, "node-token", kubelet_csr("other-n3", "n3"))
    # a request that is not a kubelet client certificate is never auto-approved
    request, _ = new_request("system:node:n2", ("system:nodes",))
    await create(api, "node-token", csr_body("serving-n2", request, signer=KUBELET_SIGNER,
                                             usages=("digital signature", "server auth")))
    csr = await _signed(client, "renew-n2")
    assert [(c["reason"], c["message"]) for c in csr["status"]["conditions"]] == [
        ("AutoApproved",
         "Auto approving self kubelet client certificate after SubjectAccessReview.")]
    await asyncio.sleep(0.3)
    for name in ("other-n3", "serving-n2"):
        assert (await client.get(CSRS, name))["status"] == {}, name
