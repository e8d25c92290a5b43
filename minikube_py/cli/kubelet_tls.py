"""The kubelet API's TLS material and auth settings, for `minikube-py start` and
`minikube-py kubelet`.

Kubernetes pieces: kubeadm's certificate phase for the kubelet side — the kubelet's serving
certificate (`kubelet.crt`, as the kubelet's --cert-dir fallback or TLS bootstrap gives it, here
signed by the cluster CA so the API server can verify it) and the API server's client
certificate for kubelets (`apiserver-kubelet-client.crt`, CN `kube-apiserver-kubelet-client`,
O `system:masters`) — and the kubelet's --tls-cert-file, --tls-private-key-file,
--client-ca-file, --anonymous-auth and --authorization-mode.

`start` with the secure port on: the pool serves HTTPS with a certificate from the CA in
--cert-dir, accepts client certificates signed by that CA (and by the API server's
--client-ca-file) and the bearer tokens of the API server's --token-auth-file (checked in
process, as a TokenReview would), and the API server dials it with its kubelet-client
certificate. With --secure-port 0 the pool stays plain HTTP and open. The CA comes from
apiserver/certs.py; this module only issues the two kubelet-side leaves (generated once,
reused while they cover the hosts, are not about to expire and were signed by the current CA).
"""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
import socket
import ssl
from pathlib import Path
from typing import TYPE_CHECKING

from ..fileperms import check_file
from .storage_target import ConfigError

if TYPE_CHECKING:
    from ..kubelet.auth import KubeletAuth
    from ..kubelet.server import Serving
    from .start_options import StartOptions

KUBELET_CERT, KUBELET_KEY = "kubelet.crt", "kubelet.key"
KUBELET_CLIENT = "apiserver-kubelet-client"          # <cert-dir>/apiserver-kubelet-client.crt
KUBELET_CLIENT_USER = "kube-apiserver-kubelet-client"
KUBELET_CLIENT_GROUP = "system:masters"


def kubelet_hosts(addresses: list[str]) -> list[str]:
    """What the kubelet's serving certificate names: loopback, this host, and the addresses
    the API server dials (the nodes' InternalIP) — never the `kubernetes` service names, so
    the kubelet's key cannot pass for the API server."""
    hosts = ["127.0.0.1", "localhost", socket.gethostname().lower()]
    return list(dict.fromkeys([*hosts, *(a for a in addresses if a)]))


def _reusable(cert_path: Path, key_path: Path, ca, hosts: list[str] | None) -> bool:
    """An existing leaf that the current CA signed, valid for more than a day, covering
    `hosts` (None: a client certificate, no SANs to check). Files others could have rewritten
    raise UnsafePermissionsError (fileperms.py), as for the API server's own."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature

    from ..apiserver import certs

    if not (cert_path.exists() and key_path.exists()):
        return False
    check_file(key_path, f"the key {key_path.name}", generated=True)  # unsafe: refused
    check_file(cert_path, f"the certificate {cert_path.name}", private=False, generated=True)
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        cert.verify_directly_issued_by(ca)
    except (OSError, ValueError, TypeError, InvalidSignature):  # any doubt: issue a new one
        return False
    if hosts is not None:
        ips, names = _split(hosts)
        return certs.covers(cert_path, ips, names)
    left = cert.not_valid_after_utc - datetime.datetime.now(datetime.timezone.utc)
    return left > datetime.timedelta(days=1)


def _split(hosts: list[str]) -> tuple[set, set[str]]:
    ips, names = set(), set()
    for host in hosts:
        try:
            ips.add(ipaddress.ip_address(host))
        except ValueError:
            names.add(host.lower())
    return ips, names


def ensure_kubelet_serving_cert(cert_dir: Path, addresses: list[str]) -> tuple[Path, Path, Path]:
    """(kubelet.crt, kubelet.key, ca.crt) in `cert_dir`, the leaf signed by its CA."""
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    from ..apiserver import certs

    cert_dir = certs.private_cert_dir(cert_dir)
    ca, ca_key = certs.load_ca(cert_dir)
    cert_path, key_path = cert_dir / KUBELET_CERT, cert_dir / KUBELET_KEY
    hosts = kubelet_hosts(addresses)
    if not _reusable(cert_path, key_path, ca, hosts):
        ips, names = _split(hosts)
        san = x509.SubjectAlternativeName(
            [x509.DNSName(n) for n in sorted(names)] +
            [x509.IPAddress(ip) for ip in sorted(ips, key=lambda ip: (ip.version, int(ip)))])
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME,
                                                f"{socket.gethostname().lower()}@kubelet")])
        cert_pem, key_pem = certs.issue(ca, ca_key, subject, ExtendedKeyUsageOID.SERVER_AUTH,
                                         san)
        certs.write_material(key_path, key_pem, private=True)
        certs.write_material(cert_path, cert_pem)
    return cert_path, key_path, cert_dir / certs.CA_CERT


def ensure_kubelet_client_cert(cert_dir: Path) -> tuple[Path, Path]:
    """The API server's certificate for kubelets (kubeadm's apiserver-kubelet-client)."""
    from ..apiserver import certs

    cert_dir = certs.private_cert_dir(cert_dir)
    ca, _ = certs.load_ca(cert_dir)
    cert_path, key_path = cert_dir / f"{KUBELET_CLIENT}.crt", cert_dir / f"{KUBELET_CLIENT}.key"
    if _reusable(cert_path, key_path, ca, None):
        return cert_path, key_path
    return certs.issue_client_cert(cert_dir, KUBELET_CLIENT_USER, [KUBELET_CLIENT_GROUP],
                                   name=KUBELET_CLIENT)


def serving(cert: Path, key: Path, client_cas: list[Path], auth: "KubeletAuth") -> "Serving":
    """The pool's HTTPS: this cert, client certificates verified against `client_cas`
    (requested, not required: bearer tokens work too)."""
    from ..apiserver.certs import server_ssl_context
    from ..kubelet.server import Serving

    try:
        context = server_ssl_context(cert, key, client_cas[0] if client_cas else None)
        for extra in client_cas[1:]:
            context.load_verify_locations(cafile=str(extra))
    except (OSError, ValueError, ssl.SSLError) as exc:
        raise ConfigError(f"the kubelet's TLS material: {exc}") from None
    return Serving(context, auth)


def auth_settings(*, token_auth_file: str | None, client_certificates: bool, anonymous: bool,
                  authorization_mode: str) -> "KubeletAuth":
    """KubeletAuth from flags; a bad token file or mode is a usage error."""
    from ..apiserver.authn import Authenticator, UnionAuthenticator
    from ..apiserver.authn.tokenfile import TokenAuthenticator
    from ..apiserver.authn.x509 import ClientCertAuthenticator
    from ..kubelet.auth import KubeletAuth

    authenticators: list[Authenticator] = [ClientCertAuthenticator()] if client_certificates \
        else []
    try:
        if token_auth_file:
            authenticators.append(TokenAuthenticator.from_file(token_auth_file))
        return KubeletAuth(UnionAuthenticator(authenticators) if authenticators else None,
                           anonymous=anonymous, authorization_mode=authorization_mode)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def secured(options: "StartOptions") -> bool:
    """Whether `start` secures its kubelets: the secure port is on and a kubelet listens."""
    return bool(options.secure_port and options.kubelet_port and options.runs("kubelet")
                and options.node_pools)


def with_kubelet_client(options: "StartOptions") -> "StartOptions":
    """`start`'s options with the API server's kubelet-client certificate and the kubelets'
    CA filled in (generated into --cert-dir) when the kubelets are secured and the
    --kubelet-client-certificate / --kubelet-certificate-authority flags are not given."""
    api = options.apiserver
    if not secured(options) or api.kubelet_client_certificate or \
            api.kubelet_certificate_authority:
        return options
    from ..apiserver import certs

    try:
        cert, key = ensure_kubelet_client_cert(options.cert_dir)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"the API server's kubelet client certificate: {exc}") from None
    api = dataclasses.replace(api, kubelet_client_certificate=str(cert),
                              kubelet_client_key=str(key),
                              kubelet_certificate_authority=str(options.cert_dir / certs.CA_CERT))
    return dataclasses.replace(options, apiserver=api)


def pool_serving(options: "StartOptions") -> "Serving | None":
    """How `start`'s kubelet pool serves: HTTPS with authentication and authorization when
    secured(), else None (plain HTTP, open)."""
    if not secured(options):
        return None
    api = options.apiserver
    try:
        cert, key, ca = ensure_kubelet_serving_cert(options.cert_dir, [options.address])
    except (OSError, ValueError) as exc:
        raise ConfigError(f"the kubelet's serving certificate: {exc}") from None
    client_cas = [ca] + ([Path(api.client_ca_file)] if api.client_ca_file else [])
    auth = auth_settings(token_auth_file=api.token_auth_file, client_certificates=True,
                         anonymous=options.kubelet_anonymous_auth,
                         authorization_mode=options.kubelet_authorization_mode)
    return serving(cert, key, client_cas, auth)
