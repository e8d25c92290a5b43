"""May this user approve (or sign) for this signer? The check behind the CSR admission plugins.

Kubernetes piece: pkg/certauthorization (IsAuthorizedForSignerName). Approving or signing a
CertificateSigningRequest is authorized on the synthetic resource `signers` of
`certificates.k8s.io`, named by the signerName — or by `<domain>/*`, so that one rule can
cover every signer of a domain (`kubernetes.io/*`). The attributes name API version `*`: a
signer is not served in any version.

It lives here, not in admission/, because the authorizers import admission's informers; the
API server binds it to its authorizer and hands it to the plugins (admission.PluginContext).
"""

from __future__ import annotations

from ..authn import UserInfo
from . import Attributes, Authorizer

GROUP = "certificates.k8s.io"


def signer_attributes(user: UserInfo, verb: str, name: str) -> Attributes:
    """buildAttributes: `verb` on signers/`name`, any API version."""
    return Attributes(user, verb, True, resource="signers", name=name, api_group=GROUP,
                      api_version="*")


def is_authorized_for_signer_name(authorizer: Authorizer, user: UserInfo, verb: str,
                                  signer_name: str) -> bool:
    """`verb` allowed on the signer itself, else on `<domain>/*`."""
    if authorizer.authorize(signer_attributes(user, verb, signer_name))[0]:
        return True
    domain = signer_name.split("/", 1)[0]
    return authorizer.authorize(signer_attributes(user, verb, f"{domain}/*"))[0]
