"""The secure port's material, prepared before the API server is built: the serving
certificate (given, or a self-signed CA + cert generated into --cert-dir and reused), the TLS
context, and — when no authenticator is configured — an admin token, so the secure port never
serves anonymous users. A generated CA is also the client CA (unless --client-ca-file), as
kubeadm's one cluster CA: the client certificates the CSR signer issues from it authenticate.

Kubernetes v1.0 piece: kube-apiserver's --secure-port/--tls-cert-file/--tls-private-key-file
with its self-signed fallback in --cert-dir (pkg/util/crypto GenerateSelfSignedCert), and the
admin bearer token that cluster/kube-up.sh wrote into known_tokens.csv and the kubeconfig.

Every file of key material the secure port is about to use — generated ones when reused, and
the ones given by flag — is checked first (fileperms.py): one that another user (root aside)
owns, or that group or others can write, stops the start with a usage error (exit 2) naming
the file and the fix. Upstream loads such files without looking; an admin token or CA key
anyone can rewrite makes everyone admin.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
import secrets
import ssl
from dataclasses import dataclass
from pathlib import Path

from ..fileperms import PRIVATE_FILE, UnsafePermissionsError, check_file, create_file
from .start_options import StartOptions
from .storage_target import ConfigError

ADMIN_USER = "admin"
ADMIN_GROUP = "system:masters"


@dataclass(frozen=True)
class SecureServing:
    ssl_context: ssl.SSLContext
    ca_path: Path | None          # the CA clients should trust (None: the given cert's)
    admin_token: str | None       # the generated admin token (None: the user's own authn)


def first_service_ip(cidr: str) -> str:
    return str(next(ipaddress.ip_network(cidr, strict=False).hosts()))


def ensure_admin_token(cert_dir: Path) -> tuple[Path, str]:
    """`<cert-dir>/tokens.csv` with one admin token, created once (0600, in a 0700 directory,
    whatever the umask) and reused. UnsafePermissionsError for a file others could rewrite."""
    from ..apiserver.certs import private_cert_dir

    path = cert_dir / "tokens.csv"
    private_cert_dir(cert_dir)
    if path.exists():
        check_file(path, "the token file", generated=True)
        for line in path.read_text().splitlines():
            fields = line.split(",")
            if len(fields) >= 3 and fields[1] == ADMIN_USER:
                return path, fields[0]
    token = secrets.token_hex(16)
    tmp = path.with_suffix(".tmp")
    with os.fdopen(create_file(tmp, PRIVATE_FILE), "w") as f:
        f.write(f'{token},{ADMIN_USER},{ADMIN_USER},"{ADMIN_GROUP}"\n')
    os.replace(tmp, path)
    return path, token


def check_given_files(options: StartOptions) -> None:
    """The key material named by flags, checked before use (UnsafePermissionsError)."""
    api = options.apiserver
    given = [(options.tls_private_key_file, "--tls-private-key-file", True),
             (options.tls_cert_file, "--tls-cert-file", False),
             (api.client_ca_file, "--client-ca-file", False),
             (api.token_auth_file, "--token-auth-file", True),
             (api.basic_auth_file, "--basic-auth-file", True),
             (options.controllers.cluster_signing_key_file, "--cluster-signing-key-file", True)]
    for path, flag, private in given:
        if path and os.path.exists(path):  # a missing file is reported by whoever loads it
            check_file(path, flag, private=private)


def prepare(options: StartOptions) -> tuple[StartOptions, SecureServing | None]:
    """Options with the generated token file filled in, and the TLS material; (options,
    None) when the secure port is disabled. Unreadable, bad or unsafe (UnsafePermissionsError)
    files are usage errors."""
    if not options.secure_port:
        return options, None
    try:
        return _prepare(options)
    except UnsafePermissionsError as exc:
        raise ConfigError(str(exc)) from None


def _prepare(options: StartOptions) -> tuple[StartOptions, SecureServing]:
    from ..apiserver.certs import CA_KEY, ensure_serving_cert, server_ssl_context

    api = options.apiserver
    check_given_files(options)
    try:
        if options.tls_cert_file and options.tls_private_key_file:
            cert, key, ca = Path(options.tls_cert_file), Path(options.tls_private_key_file), None
        else:
            hosts = [first_service_ip(api.service_cluster_ip_range)]
            if options.bind_address not in ("0.0.0.0", "::", ""):
                hosts.append(options.bind_address)
            cert, key, ca = ensure_serving_cert(options.cert_dir, hosts)
        token = None
        if not (api.token_auth_file or api.basic_auth_file or api.client_ca_file):
            token_file, token = ensure_admin_token(options.cert_dir)
            api = dataclasses.replace(api, token_auth_file=str(token_file))
        if ca is not None and not api.client_ca_file:
            # one CA for everything, as kubeadm: the certificates csrsigning issues from it
            # (kubectl certificate approve) authenticate on this port
            api = dataclasses.replace(api, client_ca_file=str(ca))
        context = server_ssl_context(cert, key,
                                     Path(api.client_ca_file) if api.client_ca_file else None)
    except UnsafePermissionsError:
        raise
    except (OSError, ValueError, ssl.SSLError) as exc:
        raise ConfigError(f"the secure port's TLS material: {exc}") from None
    controllers = options.controllers
    if ca is not None and controllers.root_ca_file is None:  # kube-root-ca.crt publishes it
        controllers = dataclasses.replace(controllers, root_ca_file=str(ca))
    if ca is not None and controllers.cluster_signing_cert_file is None:  # csrsigning signs
        controllers = dataclasses.replace(controllers, cluster_signing_cert_file=str(ca),
                                          cluster_signing_key_file=str(ca.parent / CA_KEY))
    return (dataclasses.replace(options, apiserver=api, controllers=controllers),
            SecureServing(context, ca, token))
