"""certificates.k8s.io/v1 CertificateSigningRequest.

Kubernetes piece: pkg/apis/certificates/validation (validateCertificateSigningRequest,
ValidateCertificateSigningRequest{Create,Update,StatusUpdate,ApprovalUpdate}, validateConditions,
validateCertificate) and apimachinery's ValidateSignerName, for the v1 API (no legacy signer, no
unknown or duplicate usages, no empty condition types). The three update flavours differ in
what they allow: only the `approval` subresource may add or change Approved/Denied conditions,
only `status` may set `status.certificate` (once), and nothing may remove an Approved, Denied or
Failed condition. `spec.request` must be a PEM `CERTIFICATE REQUEST` whose signature verifies.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm

from minikube_py.api.errors import (
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from minikube_py.api.naming import is_dns1123_label
from minikube_py.api.validation.common import path_segment_name
from minikube_py.api.validation.meta import (
    validate_object_meta,
    validate_object_meta_update,
)
from minikube_py.api.validation.typed import (
    Errs,
    get_dict,
    get_int,
    get_list,
    get_str,
    index,
    type_error,
)

APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
LEGACY_UNKNOWN_SIGNER = "kubernetes.io/legacy-unknown"
#: certificates.KeyUsage's values (allValidUsages)
VALID_USAGES = (
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement",
    "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any",
    "server auth", "client auth", "code signing", "email protection", "s/mime",
    "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc",
)
_CONDITION_STATUSES = ("True", "False", "Unknown")
_DNS1123_SUBDOMAIN_MAX = 253


def decode_bytes(value: Any) -> bytes | None:
    """A []byte field from its JSON form (base64); None when it is not valid base64."""
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def parse_csr(pem: bytes) -> x509.CertificateSigningRequest:
    """certificates.ParseCSR + CheckSignature; raises ValueError with upstream's message."""
    if b"-----BEGIN CERTIFICATE REQUEST-----" not in pem:
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    try:
        csr = x509.load_pem_x509_csr(pem)
    except (ValueError, UnsupportedAlgorithm) as exc:
        raise ValueError(f"x509: malformed certificate request: {exc}") from None
    try:
        valid = csr.is_signature_valid
    except (InvalidSignature, UnsupportedAlgorithm, ValueError):
        valid = False
    if not valid:
        raise ValueError("x509: ECDSA verification failure")
    return csr


def validate_signer_name(path: str, signer: str, errs: Errs) -> None:
    """apimachinery ValidateSignerName: `<domain with a dot>/<path segment>`."""
    if not signer:
        errs.append(required(path))
        return
    segments = signer.split("/")
    if len(segments) != 2:
        errs.append(invalid(path, signer, "must be a fully qualified domain and path of the "
                                          "form 'example.com/signer-name'"))
        return
    domain, name = segments
    if len(domain) > _DNS1123_SUBDOMAIN_MAX:
        errs.append(too_long(path, _DNS1123_SUBDOMAIN_MAX))
    labels = domain.split(".")
    for label in labels:
        msgs = is_dns1123_label(label)
        if msgs:
            errs.extend(invalid(path, domain, f'validating label "{label}": {msg}')
                        for msg in msgs)
            break
    if len(labels) < 2:
        errs.append(invalid(path, domain,
                            "should be a domain with at least two segments separated by dots"))
    max_path = _DNS1123_SUBDOMAIN_MAX - len(domain) - 1
    if len(name) > max_path:
        errs.append(too_long(path, max_path))
    if not name:
        errs.append(invalid(path, name, "may not be empty"))
    errs.extend(invalid(path, name, msg) for msg in path_segment_name(name, False))


def _validate_spec(obj: dict[str, Any], errs: Errs) -> None:
    spec = get_dict(obj, "spec", "", errs) or {}
    request = decode_bytes(spec.get("request"))
    if request is None and spec.get("request") is not None:
        errs.append(invalid("spec.request", spec.get("request"), "illegal base64 data"))
    else:
        try:
            parse_csr(request or b"")
        except ValueError as exc:
            errs.append(invalid("spec.request", "<request>", str(exc)))
    usages = get_list(spec, "usages", "spec", errs) or []
    if not usages:
        errs.append(required("spec.usages"))
    seen: set[Any] = set()
    for i, usage in enumerate(usages):
        path = index("spec.usages", i)
        if usage not in VALID_USAGES:
            errs.append(not_supported(path, usage, sorted(VALID_USAGES)))
        if isinstance(usage, str):
            if usage in seen:
                errs.append(duplicate(path, usage))
            seen.add(usage)
    signer = get_str(spec, "signerName", "spec", errs)
    if signer == LEGACY_UNKNOWN_SIGNER:
        errs.append(invalid("spec.signerName", signer,
                            "the legacy signerName is not allowed via this API version"))
    else:
        validate_signer_name("spec.signerName", signer, errs)
    expiration = get_int(spec, "expirationSeconds", "spec", errs)
    if expiration is not None and expiration < 600:
        errs.append(invalid("spec.expirationSeconds", expiration,
                            "may not specify a duration less than 600 seconds (10 minutes)"))


def conditions_of(obj: dict[str, Any]) -> list[Any]:
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    return conditions if isinstance(conditions, list) else []


def _validate_conditions(obj: dict[str, Any], errs: Errs) -> None:
    path = "status.conditions"
    status = get_dict(obj, "status", "", errs) or {}
    get_list(status, "conditions", "status", errs)  # reports a wrong type
    seen: set[str] = set()
    has = {APPROVED: False, DENIED: False}
    for i, cond in enumerate(conditions_of(obj)):
        if not isinstance(cond, dict):
            errs.append(type_error(index(path, i), cond, "an object"))
            continue
        type_ = get_str(cond, "type", index(path, i), errs)
        status = cond.get("status")
        if not type_:
            errs.append(required(f"{index(path, i)}.type"))
        if status not in _CONDITION_STATUSES:
            errs.append(not_supported(f"{index(path, i)}.status", status, _CONDITION_STATUSES))
        if type_ in has:
            has[type_] = True
            if status != "True":
                errs.append(invalid(f"{index(path, i)}.status", status,
                                    f"{type_} condition may only be set to True"))
        if type_ in seen:
            errs.append(duplicate(f"{index(path, i)}.type", type_))
        seen.add(type_)
    if has[APPROVED] and has[DENIED]:
        errs.append(invalid(path, conditions_of(obj),
                            "Approved and Denied conditions are mutually exclusive"))


def _validate_certificate(obj: dict[str, Any], errs: Errs) -> None:
    """validateCertificate: empty, or one or more parseable PEM CERTIFICATE blocks only."""
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    raw = status.get("certificate")
    if raw in (None, ""):
        return
    if not isinstance(raw, str):
        errs.append(type_error("status.certificate", raw, "a string"))
        return
    data = decode_bytes(raw)
    if data is None:
        errs.append(invalid("status.certificate", "<certificate data>", "illegal base64 data"))
        return
    try:
        certs = x509.load_pem_x509_certificates(data)
    except ValueError:
        errs.append(invalid("status.certificate", "<certificate data>",
                            "must contain at least one CERTIFICATE PEM block"))
        return
    if not certs:
        errs.append(invalid("status.certificate", "<certificate data>",
                            "must contain at least one CERTIFICATE PEM block"))


def _validate(obj: dict[str, Any], errs: Errs) -> None:
    validate_object_meta(obj, False, path_segment_name, errs)
    _validate_spec(obj, errs)
    _validate_conditions(obj, errs)
    _validate_certificate(obj, errs)


def validate_csr(obj: dict[str, Any], errs: Errs) -> None:
    """ValidateCertificateSigningRequestCreate. Upstream's PrepareForCreate drops the status
    before validating; here the registry validates first, so the status is not looked at."""
    validate_object_meta(obj, False, path_segment_name, errs)
    _validate_spec(obj, errs)


def _find(obj: dict[str, Any], type_: str) -> list[Any]:
    return [c for c in conditions_of(obj) if isinstance(c, dict) and c.get("type") == type_]


def _certificate_of(obj: dict[str, Any]) -> Any:
    status = obj.get("status")
    return (status.get("certificate") if isinstance(status, dict) else None) or ""


def _update(new: dict[str, Any], old: dict[str, Any], errs: Errs, *,
            approval: bool, certificate: bool) -> None:
    """validateCertificateSigningRequestUpdate with the flavour's options."""
    _validate(new, errs)
    for type_ in (APPROVED, DENIED, FAILED):
        if len(_find(new, type_)) < len(_find(old, type_)):
            errs.append(forbidden("status.conditions",
                                  f'updates may not remove a condition of type "{type_}"'))
    if not approval:
        for type_ in (APPROVED, DENIED):
            before, after = _find(old, type_), _find(new, type_)
            if len(after) > len(before):
                errs.append(forbidden("status.conditions",
                                      f'updates may not add a condition of type "{type_}"'))
            elif len(after) == len(before) and after != before:
                errs.append(forbidden("status.conditions",
                                      f'updates may not modify a condition of type "{type_}"'))
    new_cert, old_cert = _certificate_of(new), _certificate_of(old)
    if new_cert != old_cert:
        if not certificate:
            errs.append(forbidden("status.certificate", "updates may not set certificate content"))
        elif old_cert:
            errs.append(forbidden("status.certificate",
                                  "updates may not modify existing certificate content"))
    validate_object_meta_update(new, old, errs)


def validate_csr_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """The main resource and the `approval` subresource (both end in the registry's update
    validator; a main update cannot change the status at all, the strategy keeps the old)."""
    _update(new, old, errs, approval=True, certificate=False)


def validate_csr_status_update(new: dict[str, Any], old: dict[str, Any], errs: Errs) -> None:
    """ValidateCertificateSigningRequestStatusUpdate: the signer sets the certificate."""
    _update(new, old, errs, approval=False, certificate=True)
