"""The CSR approving controller: kubelets' client certificates approved after an access review.

Kubernetes piece: pkg/controller/certificates/approver/sarapprove.go (`csrapproving` in
kube-controller-manager, on by default). A joining node (TLS bootstrapping) asks for its first
client certificate with a bootstrap identity, and a running kubelet renews its own; nobody
should have to `kubectl certificate approve` each one. So a pending CSR for
`kubernetes.io/kube-apiserver-client-kubelet` that looks like a node client certificate
(csr_authority.is_kubelet_client_csr: O = [system:nodes], CN `system:node:...`, no SANs,
upstream's usages) is approved when its *requestor* — the user recorded in spec.username/
groups at create — is allowed, by a SubjectAccessReview through the API:

- `create certificatesigningrequests/selfnodeclient` when the requestor is the node named in
  the CN (renewal);
- `create certificatesigningrequests/nodeclient` otherwise (a new node's first certificate:
  upstream binds this to system:bootstrappers).

Approving is writing an `Approved` condition (reason `AutoApproved`) through the `approval`
subresource; signing is csrsigning's job. A recognised CSR whose requestor is not allowed stays
pending and is retried with backoff (upstream's IgnorableError: RBAC may change).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cryptography import x509
from cryptography.x509.oid import NameOID

from ..api.errors import StatusError
from ..api.validation.certificates import APPROVED, DENIED, decode_bytes, parse_csr
from ..client.resources import CERTIFICATE_SIGNING_REQUESTS as CSRS
from ..client.resources import SUBJECT_ACCESS_REVIEWS
from .base import Controller, ControllerContext, Obj
from .csr_authority import KUBE_APISERVER_CLIENT_KUBELET, is_kubelet_client_csr

GROUP = "certificates.k8s.io"
REASON = "AutoApproved"


class NotApproved(Exception):
    """Recognised, but the access review said no: retried with backoff (upstream
    IgnorableError)."""


@dataclass(frozen=True)
class Recognizer:
    """csrRecognizer: which CSRs it takes, the permission the requestor needs, the message."""

    recognize: Callable[[Obj, x509.CertificateSigningRequest], bool]
    subresource: str
    message: str


def _usages(csr: Obj) -> list[str]:
    return [u for u in (csr.get("spec") or {}).get("usages") or [] if isinstance(u, str)]


def is_node_client_cert(csr: Obj, request: x509.CertificateSigningRequest) -> bool:
    """isNodeClientCert: the kubelet client signer and a valid kubelet client request."""
    if (csr.get("spec") or {}).get("signerName") != KUBE_APISERVER_CLIENT_KUBELET:
        return False
    return is_kubelet_client_csr(request, _usages(csr))


def is_self_node_client_cert(csr: Obj, request: x509.CertificateSigningRequest) -> bool:
    """isSelfNodeClientCert: also asked for by the node it names (CN == requestor)."""
    names = request.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    common_name = str(names[0].value) if names else ""
    if (csr.get("spec") or {}).get("username") != common_name:
        return False
    return is_node_client_cert(csr, request)


#: upstream's recognizers(), in its order: renewal first
RECOGNIZERS = (
    Recognizer(is_self_node_client_cert, "selfnodeclient",
               "Auto approving self kubelet client certificate after SubjectAccessReview."),
    Recognizer(is_node_client_cert, "nodeclient",
               "Auto approving kubelet client certificate after SubjectAccessReview."),
)


def approval_state(csr: Obj) -> tuple[bool, bool]:
    """GetCertApprovalCondition: (approved, denied), by condition type alone."""
    status = csr.get("status") if isinstance(csr.get("status"), dict) else {}
    types = {c.get("type") for c in status.get("conditions") or [] if isinstance(c, dict)}
    return APPROVED in types, DENIED in types


def access_review(csr: Obj, subresource: str) -> Obj:
    """The SubjectAccessReview asking whether the CSR's requestor may `create` the synthetic
    subresource (sarApprover.authorize)."""
    spec = csr.get("spec") or {}
    review: dict[str, Any] = {"user": spec.get("username") or "",
                              "resourceAttributes": {"group": GROUP,
                                                     "resource": "certificatesigningrequests",
                                                     "verb": "create",
                                                     "subresource": subresource}}
    if spec.get("uid"):
        review["uid"] = spec["uid"]
    if spec.get("groups"):
        review["groups"] = list(spec["groups"])
    if spec.get("extra"):
        review["extra"] = {k: list(v) for k, v in spec["extra"].items()}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": review}


def with_approval(csr: Obj, message: str) -> Obj:
    """appendApprovalCondition: the CSR with an Approved/AutoApproved condition added (the
    server fills the timestamps)."""
    status = dict(csr.get("status") or {})
    status["conditions"] = [*(status.get("conditions") or []),
                            {"type": APPROVED, "status": "True", "reason": REASON,
                             "message": message}]
    return {**csr, "status": status}


class CSRApprovingController(Controller):
    name = "csrapproving"
    service_account = "certificate-controller"  # upstream starts it with that client

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.csrs = ctx.informers.informer(CSRS)
        self.csrs.add_event_handler(on_add=self._enqueue,
                                    on_update=lambda old, new: self._enqueue(new))

    def _enqueue(self, csr: Obj) -> None:
        self.queue.add(csr["metadata"]["name"])

    async def sync(self, key: str) -> None:
        csr = self.csrs.indexer.get(key)
        if csr is None or (csr.get("status") or {}).get("certificate") or any(
                approval_state(csr)):
            return
        try:
            request = parse_csr(decode_bytes((csr.get("spec") or {}).get("request")) or b"")
        except ValueError as exc:
            self.log.info("unable to parse csr", csr=key, error=str(exc))
            return
        tried = []
        for recognizer in RECOGNIZERS:
            if not recognizer.recognize(csr, request):
                continue
            tried.append(recognizer.subresource)
            review = await self.client.create(SUBJECT_ACCESS_REVIEWS,
                                              access_review(csr, recognizer.subresource))
            if (review.get("status") or {}).get("allowed"):
                await self._approve(csr, recognizer.message)
                return
        if tried:
            raise NotApproved(f"recognized csr {key!r} as {tried} but subject access review "
                              f"was not approved")

    async def _approve(self, csr: Obj, message: str) -> None:
        try:
            await self.client.update(CSRS, with_approval(csr, message), subresource="approval")
        except StatusError as exc:
            if exc.code == 404:  # deleted meanwhile
                return
            raise  # 409: our cache is behind; retried with the newer object
        self.log.info("auto-approved", csr=csr["metadata"]["name"], message=message)
