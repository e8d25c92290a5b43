"""CertificateSigningRequest validation (pkg/apis/certificates/validation for v1), its Table
row (printCertificateSigningRequest) and the strategy's condition timestamps — pure, no server."""

from __future__ import annotations

import base64
import copy

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from minikube_py.api import tables
from minikube_py.api.validation import (
    validate_create,
    validate_status_update,
    validate_update,
)
from minikube_py.registry.certificates import (
    apply_approval,
    populate_condition_timestamps,
)

KIND = "CertificateSigningRequest"


def _request(cn: str = "alice") -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    csr = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])).sign(key, hashes.SHA256())
    return csr.public_bytes(serialization.Encoding.PEM)


REQUEST = _request()


def csr(**spec) -> dict:
    body = {"request": base64.b64encode(REQUEST).decode(),
            "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"]}
    body.update(spec)
    return {"apiVersion": "certificates.k8s.io/v1", "kind": KIND,
            "metadata": {"name": "alice", "resourceVersion": "1"}, "spec": body, "status": {}}


def create_errors(obj: dict) -> list[str]:
    return [e.message() for e in validate_create(KIND, obj)]


def test_a_valid_request_passes() -> None:
    assert create_errors(csr()) == []
    assert create_errors(csr(expirationSeconds=600, usages=["client auth", "digital signature"],
                             signerName="example.com/my-signer")) == []


@pytest.mark.parametrize(("spec", "expected"), [
    ({"request": base64.b64encode(b"hello").decode()},
     "spec.request: Invalid value: \"<request>\": PEM block type must be CERTIFICATE REQUEST"),
    ({"request": "%%%"}, "spec.request: Invalid value: \"%%%\": illegal base64 data"),
    ({"usages": []}, "spec.usages: Required value"),
    ({"usages": ["client auth", "flying"]},
     "spec.usages[1]: Unsupported value: \"flying\": supported values:"),
    ({"usages": ["client auth", "client auth"]},
     "spec.usages[1]: Duplicate value: \"client auth\""),
    ({"signerName": ""}, "spec.signerName: Required value"),
    ({"signerName": "kubernetes.io/legacy-unknown"},
     "the legacy signerName is not allowed via this API version"),
    ({"signerName": "no-slash"},
     "must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    ({"signerName": "a/b/c"}, "must be a fully qualified domain and path"),
    ({"signerName": "localhost/signer"},
     "should be a domain with at least two segments separated by dots"),
    ({"signerName": "Bad_Domain.io/signer"}, 'validating label "Bad_Domain"'),
    ({"expirationSeconds": 599},
     ("spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 "
     "seconds (10 minutes)")),
])
def test_invalid_specs(spec: dict, expected: str) -> None:
    errs = create_errors(csr(**spec))
    assert any(expected in e for e in errs), errs


def test_a_tampered_request_fails_its_signature_check() -> None:
    pem = REQUEST.decode()
    body = pem.split("\n")[1:-2]
    der = bytearray(base64.b64decode("".join(body)))
    der[-5] ^= 0x01  # inside the signature
    tampered = ("-----BEGIN CERTIFICATE REQUEST-----\n" + base64.b64encode(der).decode()
                + "\n-----END CERTIFICATE REQUEST-----\n")
    errs = create_errors(csr(request=base64.b64encode(tampered.encode()).decode()))
    assert len(errs) == 1 and errs[0].startswith("spec.request: Invalid value"), errs


APPROVED = {"type": "Approved", "status": "True", "reason": "R", "message": "m"}
DENIED = {"type": "Denied", "status": "True", "reason": "R", "message": "m"}
FAILED = {"type": "Failed", "status": "True", "reason": "R", "message": "m"}


def with_status(obj: dict, **status) -> dict:
    new = copy.deepcopy(obj)
    new["status"] = status
    return new


def test_the_approval_update_adds_approved_but_not_with_denied() -> None:
    old = csr()
    assert [e.message() for e in validate_update(KIND, with_status(old, conditions=[APPROVED]),
                                            old)] == []
    errs = [e.message() for e in validate_update(
        KIND, with_status(old, conditions=[APPROVED, DENIED]), old)]
    assert any("Approved and Denied conditions are mutually exclusive" in e for e in errs)
    errs = [e.message() for e in validate_update(
        KIND, with_status(old, conditions=[{**APPROVED, "status": "False"}]), old)]
    assert any("Approved condition may only be set to True" in e for e in errs)
    errs = [e.message() for e in validate_update(
        KIND, with_status(old, conditions=[APPROVED, APPROVED]), old)]
    assert any("status.conditions[1].type: Duplicate value" in e for e in errs)


def test_the_status_update_sets_the_certificate_once_and_never_approves() -> None:
    old = csr()
    errs = [e.message() for e in validate_status_update(
        KIND, with_status(old, conditions=[APPROVED]), old)]
    assert errs == [('status.conditions: Forbidden: updates may not add a condition of type '
                    '"Approved"')]
    approved = with_status(old, conditions=[APPROVED])
    changed = with_status(old, conditions=[{**APPROVED, "message": "changed"}])
    assert [e.message() for e in validate_status_update(KIND, changed, approved)] == [
        'status.conditions: Forbidden: updates may not modify a condition of type "Approved"']
    assert [e.message() for e in validate_status_update(KIND, with_status(old), approved)] == [
        'status.conditions: Forbidden: updates may not remove a condition of type "Approved"']
    assert [e.message() for e in validate_status_update(
        KIND, with_status(old, conditions=[APPROVED, FAILED]), approved)] == []
    errs = [e.message() for e in validate_status_update(
        KIND, with_status(approved, conditions=[APPROVED], certificate="bm90IGEgY2VydA=="),
        approved)]
    assert errs == [('status.certificate: Invalid value: "<certificate data>": must contain at '
                    'least one CERTIFICATE PEM block')]
    # the main resource (and approval) may not set a certificate
    errs = [e.message() for e in validate_update(
        KIND, with_status(approved, conditions=[APPROVED], certificate="Zm9v"), approved)]
    assert "status.certificate: Forbidden: updates may not set certificate content" in errs


def test_condition_timestamps_are_filled_and_kept() -> None:
    old = with_status(csr(), conditions=[{**APPROVED, "lastTransitionTime": "T0",
                                          "lastUpdateTime": "T0"}])
    new = with_status(csr(), conditions=[{**APPROVED}, {**FAILED}])
    populate_condition_timestamps(new, old, now="T1")
    assert [(c["lastTransitionTime"], c["lastUpdateTime"]) for c in new["status"]["conditions"]] \
        == [("T0", "T1"), ("T1", "T1")]
    approved = apply_approval(csr(), {"metadata": {"labels": {"x": "y"}}, "spec": {},
                                      "status": {"conditions": [APPROVED],
                                                 "certificate": "Zm9v"}})
    assert approved["spec"] == csr()["spec"] and "labels" not in approved["metadata"]
    assert "certificate" not in approved["status"]
    assert approved["status"]["conditions"][0]["type"] == "Approved"


@pytest.mark.parametrize(("status", "spec", "condition", "duration"), [
    ({}, {}, "Pending", "<none>"),
    ({"conditions": [APPROVED], "certificate": "Zm9v"}, {"expirationSeconds": 3600},
     "Approved,Issued", "60m"),
    ({"conditions": [DENIED]}, {"expirationSeconds": 86400}, "Denied", "24h"),
    ({"conditions": [APPROVED, FAILED]}, {}, "Approved,Failed", "<none>"),
])
def test_table_row(status: dict, spec: dict, condition: str, duration: str) -> None:
    obj = csr(username="alice", **spec)
    obj["status"] = status
    names = [c["name"] for c in tables.column_definitions(KIND)]
    assert names == ["Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"]
    cells = tables.row_cells(KIND, obj, 0.0)
    assert cells[2:] == ["kubernetes.io/kube-apiserver-client", "alice", duration, condition]


@pytest.mark.parametrize("status", ["s", {"conditions": "c"}, {"conditions": [1]},
                                    {"conditions": [{"type": 5, "status": None}]},
                                    {"certificate": 5}, {"certificate": "%%"}])
def test_malformed_statuses_are_field_errors_never_exceptions(status) -> None:
    old = csr()
    new = copy.deepcopy(old)
    new["status"] = status
    for validate in (validate_update, validate_status_update):
        errs = [e.message() for e in validate(KIND, new, old)]
        assert errs and all(e.startswith("status") for e in errs), errs


@pytest.mark.parametrize("spec", [5, {"usages": "x"}, {"usages": [1, {}]}, {"signerName": 7},
                                  {"expirationSeconds": "x"}])
def test_malformed_specs_are_field_errors(spec) -> None:
    obj = csr()
    if isinstance(spec, dict):
        obj["spec"].update(spec)
    else:
        obj["spec"] = spec
    assert [e.message() for e in validate_create(KIND, obj)]
