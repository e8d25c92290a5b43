"""CertificateSigningRequests end to end: a user asks over the secure port, an admin approves
with the real `kubectl certificate approve`, the csrsigning controller signs with the cluster
CA, and the certificate then authenticates on the secure port (the x509 authenticator trusts
the same CA) — with `ssl`/aiohttp and with kubectl's --client-certificate."""

from __future__ import annotations

import asyncio
import base64
import datetime
import os
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from minikube_py.client import Client
from minikube_py.client.inprocess import InProcessTransport
from minikube_py.client.resources import CERTIFICATE_SIGNING_REQUESTS as CSRS
from minikube_py.controllers.csrsigning import CSRSigningController
from tests.apiserver.test_secure import Secure, serve
from tests.e2e.kubectl_run import KUBECTL, kubectl
from tests.integration.test_cluster_controllers import eventually, running

PATH = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
needs_kubectl = pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")


def new_request(cn: str, orgs: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
    """(PEM CSR, PEM private key) for CN=`cn`, O=`orgs`."""
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.NameAttribute(NameOID.COMMON_NAME, cn),
             *(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs)]
    csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names)).sign(
        key, hashes.SHA256())
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return csr.public_bytes(serialization.Encoding.PEM), key_pem


def csr_body(name: str, request: bytes, signer: str = "kubernetes.io/kube-apiserver-client",
             usages: tuple[str, ...] = ("client auth",), **spec: Any) -> dict:
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": name},
            "spec": {"request": base64.b64encode(request).decode(), "signerName": signer,
                     "usages": list(usages), **spec}}


@pytest.fixture
async def cluster(tmp_path: Path):
    api, close = await serve(tmp_path, authorization_mode="AlwaysAllow",
                             authorization_policy_file=None)
    client = Client(InProcessTransport(api.app))
    certs = tmp_path / "certs"
    try:
        async with running(client, CSRSigningController,
                           cluster_signing_cert_file=str(certs / "ca.crt"),
                           cluster_signing_key_file=str(certs / "ca.key")):
            yield api, client, tmp_path
    finally:
        await client.close()
        await close()


async def _kubectl(api: Secure, home: Path, *args: str, ok: bool = True):
    return await asyncio.to_thread(kubectl, api.https, home, "--certificate-authority",
                                   str(api.ca), *args, ok=ok)


async def _issued(client: Client, name: str) -> dict:
    async def issued():
        """status.certificate written by csrsigning"""
        csr = await client.get(CSRS, name)
        return csr if (csr.get("status") or {}).get("certificate") else None
    return await eventually(issued, timeout=10)


@needs_kubectl
async def test_request_approve_sign_and_authenticate(cluster, tmp_path: Path) -> None:
    api, client, _ = cluster
    request, key_pem = new_request("alice", ("dev",))
    status, created = await api.call("POST", PATH, "reader-token",
                                     csr_body("alice", request, expirationSeconds=3600,
                                              username="forged", groups=["system:masters"]))
    assert status == 201, created
    spec = created["spec"]
    # the requestor is recorded from authentication, whatever the body claimed
    assert (spec["username"], spec["uid"]) == ("reader", "2")
    assert spec["groups"] == ["system:authenticated"]
    assert created["status"] == {}

    home = tmp_path / "home"
    out = await _kubectl(api, home, "--token", "admin-token", "get", "csr")
    header = out.stdout.splitlines()[0].split()
    assert header == ["NAME", "AGE", "SIGNERNAME", "REQUESTOR", "REQUESTEDDURATION",
                      "CONDITION"]
    assert out.stdout.splitlines()[1].split()[2:] == [
        "kubernetes.io/kube-apiserver-client", "reader", "60m", "Pending"]
    out = await _kubectl(api, home, "--token", "admin-token", "certificate", "approve", "alice")
    assert "approved" in out.stdout

    csr = await _issued(client, "alice")
    approved = [c for c in csr["status"]["conditions"] if c["type"] == "Approved"]
    assert approved[0]["reason"] == "KubectlApprove" and approved[0]["lastTransitionTime"]
    cert_pem = base64.b64decode(csr["status"]["certificate"])
    cert = x509.load_pem_x509_certificate(cert_pem)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice"
    lifetime = cert.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
    assert datetime.timedelta(minutes=58) < lifetime <= datetime.timedelta(hours=1)
    out = await _kubectl(api, home, "--token", "admin-token", "get", "csr", "alice")
    assert out.stdout.split()[-1] == "Approved,Issued"

    # the certificate authenticates on the secure port: ssl + aiohttp ...
    (tmp_path / "alice.crt").write_bytes(cert_pem)
    (tmp_path / "alice.key").write_bytes(key_pem)
    ctx = ssl.create_default_context(cafile=str(api.ca))
    ctx.load_cert_chain(tmp_path / "alice.crt", tmp_path / "alice.key")
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session:
        async with session.get(f"{api.https}/api/v1/namespaces") as resp:
            assert resp.status == 200
        # ... as alice of group dev: her own CSR records the identity the cert proved
        second, _ = new_request("alice-2")
        async with session.post(f"{api.https}{PATH}", json=csr_body("alice-2", second)) as resp:
            assert resp.status == 201
            spec = (await resp.json())["spec"]
    assert spec["username"] == "alice" and set(spec["groups"]) == {"dev", "system:authenticated"}
    assert (await api.call("GET", "/api/v1/namespaces"))[0] == 401  # no cert, no token
    # ... and kubectl with --client-certificate
    out = await _kubectl(api, home, "--client-certificate", str(tmp_path / "alice.crt"),
                         "--client-key", str(tmp_path / "alice.key"), "get", "ns", "default")
    assert "default" in out.stdout


@needs_kubectl
async def test_denied_and_invalid_requests_are_not_signed(cluster, tmp_path: Path) -> None:
    api, client, _ = cluster
    home = tmp_path / "home"
    request, _ = new_request("bob")
    assert (await api.call("POST", PATH, "admin-token", csr_body("bob", request)))[0] == 201
    out = await _kubectl(api, home, "--token", "admin-token", "certificate", "deny", "bob")
    assert "denied" in out.stdout
    # a kubelet-client request whose subject is not a node: approved, then Failed
    kubelet, _ = new_request("not-a-node", ("system:nodes",))
    body = csr_body("kubelet", kubelet, "kubernetes.io/kube-apiserver-client-kubelet",
                    ("client auth", "digital signature"))
    assert (await api.call("POST", PATH, "admin-token", body))[0] == 201
    await _kubectl(api, home, "--token", "admin-token", "certificate", "approve", "kubelet")

    async def failed():
        """the Failed condition csrsigning sets"""
        csr = await client.get(CSRS, "kubelet")
        return [c for c in csr["status"].get("conditions", []) if c["type"] == "Failed"]
    cond = (await eventually(failed, timeout=10))[0]
    assert (cond["reason"], cond["message"]) == (
        "SignerValidationFailure", "subject common name does not begin with system:node:")
    # a node's own request is signed with O=system:nodes
    node, _ = new_request("system:node:n1", ("system:nodes",))
    body = csr_body("node-n1", node, "kubernetes.io/kube-apiserver-client-kubelet",
                    ("client auth", "digital signature"))
    assert (await api.call("POST", PATH, "admin-token", body))[0] == 201
    await _kubectl(api, home, "--token", "admin-token", "certificate", "approve", "node-n1")
    cert = x509.load_pem_x509_certificate(
        base64.b64decode((await _issued(client, "node-n1"))["status"]["certificate"]))
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == [
        "system:nodes"]
    bob = await client.get(CSRS, "bob")
    assert "certificate" not in bob["status"]
    assert [c["type"] for c in bob["status"]["conditions"]] == ["Denied"]
    out = await _kubectl(api, home, "--token", "admin-token", "get", "csr", "bob", "kubelet")
    assert [line.split()[-1] for line in out.stdout.splitlines()[1:]] == [
        "Denied", "Approved,Failed"]


async def test_approval_rules_of_the_subresources(cluster) -> None:
    api, client, _ = cluster
    request, _ = new_request("carol")
    assert (await api.call("POST", PATH, "admin-token", csr_body("carol", request)))[0] == 201
    csr = await client.get(CSRS, "carol")
    approved = {"type": "Approved", "status": "True", "reason": "Test", "message": "ok"}
    denied = {"type": "Denied", "status": "True", "reason": "Test", "message": "no"}
    # the status subresource may not approve
    status, body = await api.call("PUT", f"{PATH}/carol/status", "admin-token",
                                  {**csr, "status": {"conditions": [approved]}})
    assert status == 422 and 'updates may not add a condition of type "Approved"' in (
        body["message"])
    # a main-resource update keeps spec and status as they are
    changed = {**csr, "spec": {**csr["spec"], "usages": ["server auth"]},
               "status": {"conditions": [approved]}}
    status, body = await api.call("PUT", f"{PATH}/carol", "admin-token", changed)
    assert status == 200 and body["spec"]["usages"] == ["client auth"] and body["status"] == {}
    csr = body  # (managedFields changed: a new resourceVersion)
    # Approved and Denied together is invalid
    status, body = await api.call("PUT", f"{PATH}/carol/approval", "admin-token",
                                  {**csr, "status": {"conditions": [approved, denied]}})
    assert status == 422 and "Approved and Denied conditions are mutually exclusive" in (
        body["message"])
    # approval by PATCH too; the approval endpoint cannot set a certificate
    status, body = await api.call(
        "PATCH", f"{PATH}/carol/approval", "admin-token",
        {"status": {"conditions": [approved], "certificate": "Zm9v"}},
        headers={"Content-Type": "application/merge-patch+json"})
    assert status == 200, body
    assert [c["type"] for c in body["status"]["conditions"]] == ["Approved"]
    assert "certificate" not in body["status"]
    # an approval cannot be taken back (no resourceVersion: csrsigning may have signed by now)
    body["metadata"].pop("resourceVersion")
    status, body = await api.call("PUT", f"{PATH}/carol/approval", "admin-token",
                                  {**body, "status": {"conditions": []}})
    assert status == 422 and 'updates may not remove a condition of type "Approved"' in (
        body["message"])
    assert (await api.call("GET", f"{PATH}/carol/approval", "admin-token"))[0] == 200
    # impersonation: the CSR records the impersonated user, extra included (as upstream)
    status, body = await api.call("POST", PATH, "admin-token", csr_body("as-frank", request),
                                  headers={"Impersonate-User": "frank", "Impersonate-Uid": "f-1",
                                           "Impersonate-Group": "qa",
                                           "Impersonate-Extra-Scopes": "view"})
    assert status == 201, body
    spec = body["spec"]
    assert (spec["username"], spec["uid"], spec["extra"]) == ("frank", "f-1",
                                                              {"scopes": ["view"]})
    assert "qa" in spec["groups"]
    # the insecure port authenticates nobody: its requestor is upstream's insecure superuser
    status, body = await api.call("POST", PATH, body=csr_body("insecure", request), secure=False)
    assert status == 201 and (body["spec"]["username"], body["spec"]["groups"]) == (
        "system:unsecured", ["system:masters", "system:authenticated"])


def _start(tmp_path: Path, *extra: str):
    from minikube_py.cli.main import build_parser
    from minikube_py.cli.start_options import StartOptions

    args = ["start", "--data-dir", str(tmp_path / "data"), "--cert-dir", str(tmp_path / "certs"),
            "--kubeconfig-out", "", *extra]
    return StartOptions.from_args(build_parser().parse_args(args))


def test_start_hands_its_cluster_ca_to_csrsigning_only_with_the_secure_port(
        tmp_path: Path) -> None:
    from minikube_py.cli.secure_serving import prepare

    options, serving = prepare(_start(tmp_path, "--secure-port", "6443"))
    assert serving is not None and serving.ca_path == tmp_path / "certs" / "ca.crt"
    assert options.controllers.cluster_signing_cert_file == str(tmp_path / "certs" / "ca.crt")
    assert options.controllers.cluster_signing_key_file == str(tmp_path / "certs" / "ca.key")
    assert "csrsigning" in options.controllers.controllers
    # one cluster CA: it also authenticates client certificates, and the admin token stays
    assert options.apiserver.client_ca_file == str(tmp_path / "certs" / "ca.crt")
    assert serving.admin_token and options.apiserver.token_auth_file
    options, serving = prepare(_start(tmp_path, "--secure-port", "0"))
    assert serving is None and options.controllers.cluster_signing_cert_file is None
    # flags given explicitly win
    options, _ = prepare(_start(tmp_path, "--secure-port", "6443", "--cluster-signing-cert-file",
                                "/elsewhere/ca.crt", "--cluster-signing-key-file",
                                str(tmp_path / "certs" / "ca.key"),
                                "--cluster-signing-duration", "2h"))
    assert options.controllers.cluster_signing_cert_file == "/elsewhere/ca.crt"
    assert options.controllers.cluster_signing_duration == 7200.0


async def test_the_official_client_approves_through_the_approval_subresource(cluster) -> None:
    import kubernetes

    api, client, _ = cluster
    request, _ = new_request("dave")

    def run() -> tuple[str, list[str]]:
        config = kubernetes.client.Configuration()
        config.host = api.https
        config.ssl_ca_cert = str(api.ca)
        config.api_key = {"authorization": "Bearer admin-token"}
        with kubernetes.client.ApiClient(config) as api_client:
            certs = kubernetes.client.CertificatesV1Api(api_client)
            created = certs.create_certificate_signing_request(
                api_client.sanitize_for_serialization(csr_body("dave", request)))
            created.status.conditions = [kubernetes.client.V1CertificateSigningRequestCondition(
                type="Approved", status="True", reason="ClientApprove", message="ok")]
            approved = certs.replace_certificate_signing_request_approval("dave", created)
            return approved.spec.username, [c.type for c in approved.status.conditions]

    username, conditions = await asyncio.to_thread(run)
    assert (username, conditions) == ("admin", ["Approved"])
    cert = x509.load_pem_x509_certificate(
        base64.b64decode((await _issued(client, "dave"))["status"]["certificate"]))
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "dave"


async def test_a_started_cluster_signs_with_its_generated_ca(tmp_path: Path) -> None:
    """`minikube-py start` as a whole (running_cluster over parsed flags, secure port on, its
    defaults): its controller manager signs with the CA start generated, and the certificate
    authenticates on the secure port, which trusts that CA for clients too (kubeadm's one
    cluster CA) — next to the generated admin token. Under the default Node,RBAC the new user
    is who the certificate says and may do nothing else yet."""
    from minikube_py.cli.start import running_cluster
    from minikube_py.cli.storage_target import ConfigError
    from tests.etcd_server import free_port

    for attempt in range(5):  # the ports are only reserved by this process: retry a race
        options = _start(tmp_path, "--fsync", "never", "--nodes", "0", "--insecure-port", "0",
                         "--secure-port", str(free_port()), "--scheduler-port",
                         str(free_port()), "--controller-manager-port", str(free_port()))
        try:
            async with running_cluster(options) as cluster:
                await _sign_in_cluster(cluster, tmp_path)
                return
        except ConfigError as exc:
            if "address" not in str(exc) or attempt == 4:
                raise


async def _sign_in_cluster(cluster: Any, tmp_path: Path) -> None:
    ca = str(cluster.secure.ca_path)
    token = {"Authorization": f"Bearer {cluster.secure.admin_token}"}
    request, key_pem = new_request("erin", ("qa",))
    ctx = ssl.create_default_context(cafile=ca)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session:
        url = f"{cluster.secure_url}{PATH}"
        async with session.post(url, json=csr_body("erin", request), headers=token) as resp:
            assert resp.status == 201
            csr = await resp.json()
        csr["status"] = {"conditions": [{"type": "Approved", "status": "True",
                                         "reason": "Test", "message": "ok"}]}
        async with session.put(f"{url}/erin/approval", json=csr, headers=token) as resp:
            assert resp.status == 200

        async def issued():
            """status.certificate from the cluster's own csrsigning"""
            async with session.get(f"{url}/erin", headers=token) as resp:
                body = await resp.json()
            return (body.get("status") or {}).get("certificate")
        cert = base64.b64decode(await eventually(issued, timeout=15))
    (tmp_path / "erin.crt").write_bytes(cert)
    (tmp_path / "erin.key").write_bytes(key_pem)
    ctx.load_cert_chain(tmp_path / "erin.crt", tmp_path / "erin.key")
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx)) as session:
        async with session.post(f"{cluster.secure_url}/apis/authentication.k8s.io/v1/"
                                "selfsubjectreviews", json=review) as resp:
            assert resp.status == 201
            user = (await resp.json())["status"]["userInfo"]
        assert user["username"] == "erin"
        assert user["groups"] == ["qa", "system:authenticated"]
        async with session.get(f"{cluster.secure_url}/api/v1/namespaces/default") as resp:
            assert resp.status == 403
            assert 'User "erin" cannot get resource "namespaces"' in (await resp.json())["message"]


async def test_every_kubectl_approves_and_denies(cluster, tmp_path: Path) -> None:
    """kubectl 1.27+ (every one on the machine) approves and denies through /approval."""
    from tests.e2e.test_kubectl import KUBECTLS

    if not KUBECTLS:
        pytest.skip("no kubectl binary on this machine")
    api, client, _ = cluster
    for i, binary in enumerate(KUBECTLS):
        home = tmp_path / f"home-{i}"
        request, _ = new_request(f"user-{i}")
        for name in (f"ok-{i}", f"no-{i}"):
            assert (await api.call("POST", PATH, "admin-token", csr_body(name, request)))[0] \
                == 201
        for verb, name in (("approve", f"ok-{i}"), ("deny", f"no-{i}")):
            out = await asyncio.to_thread(kubectl, api.https, home, "--certificate-authority",
                                          str(api.ca), "--token", "admin-token", "certificate",
                                          verb, name, binary=binary)
            done = {"approve": "approved", "deny": "denied"}[verb]
            assert f"{name} {done}" in out.stdout, (binary, out.stdout)
        await _issued(client, f"ok-{i}")
        denied = await client.get(CSRS, f"no-{i}")
        assert [c["type"] for c in denied["status"]["conditions"]] == ["Denied"], binary
