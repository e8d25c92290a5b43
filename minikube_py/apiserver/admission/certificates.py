"""Who may approve, sign and ask for which CertificateSigningRequests: three admission plugins.

Kubernetes pieces (1.31, all on by default): plugin/pkg/admission/certificates/approval
(`CertificateApproval`), .../signing (`CertificateSigning`), .../subjectrestriction
(`CertificateSubjectRestriction`); the authorization check is authz/signers.py.

Approving or signing a CSR is a power over a signer, not over the CSR object: RBAC on
`certificatesigningrequests/approval` only says who may call the endpoint. So an UPDATE of
`/approval` also needs verb `approve`, and an UPDATE of `/status` that changes the certificate
or the conditions needs verb `sign`, on the synthetic resource `signers` of
`certificates.k8s.io` named by the CSR's signerName — or by `<domain>/*`, so one rule can cover
every signer of a domain. The signerName is the stored (old) object's: the endpoint cannot be
used to move a CSR to a signer one may approve.

`CertificateSubjectRestriction` keeps the `kubernetes.io/kube-apiserver-client` signer from
minting `system:masters` certificates (a member of that group bypasses every authorizer).

Requests without a user (the insecure port, in-process components) are not checked, as
upstream's privileged loopback. The check itself (authz/signers.py, bound to the secure port's
authorizer) arrives with the server's start (upstream's WantsAuthorizer initializer: the guard
exists only after the chain is built); without one — no secure port — nothing is checked.
"""

from __future__ import annotations

from typing import Any

import structlog
from cryptography import x509
from cryptography.x509.oid import NameOID

from ...api.validation.certificates import decode_bytes
from ...registry import codec
from ...registry.certificates import GROUP, populate_condition_timestamps
from .chain import Attributes, PluginContext, SignerAuthorizer
from .denial import forbidden

log = structlog.get_logger(component="apiserver")

RESOURCE = "certificatesigningrequests"
KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
SYSTEM_MASTERS = "system:masters"


def _spec(obj: dict[str, Any] | None) -> dict[str, Any]:
    spec = (obj or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def _status(obj: dict[str, Any] | None) -> dict[str, Any]:
    status = (obj or {}).get("status")
    return status if isinstance(status, dict) else {}


class _SignerPlugin:
    """What the two signer checks share: the authorizer hand-over and the old object."""

    name = ""
    verb = ""
    subresource = ""

    def __init__(self) -> None:
        self.authorized: SignerAuthorizer | None = None

    async def start(self, context: PluginContext) -> None:
        self.authorized = context.signer_authorizer

    def _applies(self, attrs: Attributes) -> bool:
        return (attrs.operation == "UPDATE" and attrs.subresource == self.subresource
                and attrs.strategy.group == GROUP and attrs.strategy.resource == RESOURCE
                and attrs.user is not None and self.authorized is not None)

    async def _old(self, attrs: Attributes) -> dict[str, Any] | None:
        return attrs.old_obj if attrs.old_obj is not None else await attrs.read_old()

    def _check(self, attrs: Attributes, old: dict[str, Any]) -> None:
        assert self.authorized is not None and attrs.user is not None
        signer = str(_spec(old).get("signerName") or "")
        if not self.authorized(attrs.user, self.verb, signer):
            log.debug("csr admission refused", plugin=self.name, csr=attrs.name,
                      signer=signer, user=attrs.user.name)
            raise forbidden(attrs, f"user not permitted to {self.verb} requests with "
                                   f'signerName "{signer}"')


class CertificateApproval(_SignerPlugin):
    """Every UPDATE of `certificatesigningrequests/approval` needs `approve` on the signer."""

    name = "CertificateApproval"
    verb = "approve"
    subresource = "approval"

    async def admit(self, attrs: Attributes) -> None:
        if not self._applies(attrs):
            return
        old = await self._old(attrs)
        if old is not None:  # gone: the update answers its own 404
            self._check(attrs, old)


class CertificateSigning(_SignerPlugin):
    """An UPDATE of `certificatesigningrequests/status` that changes `status.certificate` or
    `status.conditions` needs `sign` on the signer."""

    name = "CertificateSigning"
    verb = "sign"
    subresource = "status"

    async def admit(self, attrs: Attributes) -> None:
        if not self._applies(attrs) or attrs.obj is None:
            return
        old = await self._old(attrs)
        if old is None:
            return
        if not _changes_signing(attrs.obj, old):
            return
        self._check(attrs, old)


def _changes_signing(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whether the certificate or the conditions differ, the conditions compared as the
    status strategy will store them (timestamps filled in: upstream validates after
    PrepareForUpdate)."""
    if _status(new).get("certificate") != _status(old).get("certificate"):
        return True
    prepared = {"status": codec.clone(_status(new))}
    populate_condition_timestamps(prepared, old)
    return (prepared["status"].get("conditions") or []) != (_status(old).get("conditions") or [])


class CertificateSubjectRestriction:
    """A CREATE of a CSR for kube-apiserver-client whose subject's O has system:masters is
    refused. A request that does not parse is left to validation's 422 (upstream validates
    before this plugin runs, so its own parse error is never seen there either)."""

    name = "CertificateSubjectRestriction"

    async def admit(self, attrs: Attributes) -> None:
        if (attrs.operation != "CREATE" or attrs.subresource or attrs.obj is None
                or attrs.strategy.group != GROUP or attrs.strategy.resource != RESOURCE):
            return
        spec = _spec(attrs.obj)
        if spec.get("signerName") != KUBE_APISERVER_CLIENT:
            return
        if SYSTEM_MASTERS in subject_organizations(spec.get("request")):
            raise forbidden(attrs, f"use of {KUBE_APISERVER_CLIENT} signer with "
                                   f"{SYSTEM_MASTERS} group is not allowed")


def subject_organizations(request: Any) -> list[str]:
    """The O values of a CSR's subject (`spec.request`, base64 PEM); [] when it does not
    parse."""
    pem = decode_bytes(request) or b""
    try:
        parsed = x509.load_pem_x509_csr(pem)
        return [str(a.value) for a in
                parsed.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    except ValueError:
        return []
