"""The pure rules of csrapproving (upstream's recognizers, the access review it sends) and of
csrcleaner (which CSR is due at which time), table-driven, without a server."""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from minikube_py.controllers.csrapproving import (
    access_review,
    approval_state,
    is_node_client_cert,
    is_self_node_client_cert,
    with_approval,
)
from minikube_py.controllers.csrcleaner import clean_reason

KUBELET = "kubernetes.io/kube-apiserver-client-kubelet"
NOW = datetime.datetime(2026, 1, 2, 12, 0, tzinfo=datetime.UTC)


def request(cn: str, orgs: tuple[str, ...] = ("system:nodes",),
            dns: tuple[str, ...] = ()) -> x509.CertificateSigningRequest:
    names = [x509.NameAttribute(NameOID.COMMON_NAME, cn),
             *(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs)]
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names))
    if dns:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), critical=False)
    return builder.sign(ec.generate_private_key(ec.SECP256R1()), hashes.SHA256())


def csr(username: str = "system:bootstrap:x", signer: str = KUBELET,
        usages: tuple[str, ...] = ("digital signature", "client auth")) -> dict:
    return {"metadata": {"name": "c"},
            "spec": {"username": username, "signerName": signer, "usages": list(usages),
                     "groups": ["system:bootstrappers", "system:authenticated"],
                     "uid": "7", "extra": {"scopes": ["a"]}}}


@pytest.mark.parametrize(("obj", "req", "node", "self_node"), [
    (csr(), request("system:node:n1"), True, False),
    (csr("system:node:n1"), request("system:node:n1"), True, True),
    (csr(usages=("key encipherment", "digital signature", "client auth")),
     request("system:node:n1"), True, False),  # the RSA usages are accepted too
    (csr(usages=("client auth",)), request("system:node:n1"), False, False),
    (csr(usages=("digital signature", "client auth", "server auth")),
     request("system:node:n1"), False, False),
    (csr(signer="kubernetes.io/kube-apiserver-client"), request("system:node:n1"), False, False),
    (csr(), request("n1"), False, False),  # CN not system:node:
    (csr(), request("system:node:n1", ("system:nodes", "extra")), False, False),
    (csr(), request("system:node:n1", ()), False, False),
    (csr(), request("system:node:n1", dns=("n1.example",)), False, False),
])
def test_recognizers(obj: dict, req: x509.CertificateSigningRequest, node: bool,
                     self_node: bool) -> None:
    assert is_node_client_cert(obj, req) is node
    assert is_self_node_client_cert(obj, req) is self_node


def test_the_access_review_asks_about_the_requestor() -> None:
    review = access_review(csr(), "nodeclient")
    assert review == {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "system:bootstrap:x", "uid": "7",
                 "groups": ["system:bootstrappers", "system:authenticated"],
                 "extra": {"scopes": ["a"]},
                 "resourceAttributes": {"group": "certificates.k8s.io",
                                        "resource": "certificatesigningrequests",
                                        "verb": "create", "subresource": "nodeclient"}}}


def test_approval_appends_upstreams_condition() -> None:
    approved = with_approval({**csr(), "status": {}}, "msg")
    assert approved["status"]["conditions"] == [
        {"type": "Approved", "status": "True", "reason": "AutoApproved", "message": "msg"}]
    assert approval_state(approved) == (True, False)
    assert approval_state({"status": {"conditions": [{"type": "Denied"}]}}) == (False, True)
    assert approval_state({}) == (False, False)


def _at(minutes: float) -> str:
    return (NOW - datetime.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(("status", "created_minutes_ago", "due"), [
    ({}, 60 * 23, False),
    ({}, 60 * 24 + 1, True),  # pending a day
    ({"conditions": [{"type": "Approved", "lastUpdateTime": _at(61)}]}, 90, False),  # no cert
    ({"conditions": [{"type": "Approved", "lastUpdateTime": _at(61)}], "certificate": "x"},
     90, True),
    ({"conditions": [{"type": "Approved", "lastUpdateTime": _at(59)}], "certificate": "x"},
     90, False),
    ({"conditions": [{"type": "Denied", "lastUpdateTime": _at(61)}]}, 90, True),
    ({"conditions": [{"type": "Failed", "lastUpdateTime": _at(61)}]}, 90, True),
    ({"conditions": [{"type": "Denied", "lastUpdateTime": _at(30)}]}, 60 * 48, False),
    ({"conditions": [{"type": "Denied"}]}, 60 * 48, False),  # an unset time is never old
])
def test_clean_reason(status: dict, created_minutes_ago: float, due: bool) -> None:
    obj = {"metadata": {"name": "c", "creationTimestamp": _at(created_minutes_ago)},
           "status": status}
    assert (clean_reason(obj, NOW) is not None) is due
