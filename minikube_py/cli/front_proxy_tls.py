"""The API server's front-proxy client certificate, for aggregated API servers.

Kubernetes piece: kube-apiserver's --proxy-client-cert-file/--proxy-client-key-file, which
kubeadm fills with `front-proxy-client` (CN) issued by its front-proxy CA. An aggregated API
server trusts the X-Remote-User/X-Remote-Group headers only on a connection presenting it.
Here the cluster CA in --cert-dir issues it (one CA for everything, as this project's kubelet
certificates), on first start, and it is reused while valid.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from .storage_target import ConfigError

if TYPE_CHECKING:
    from .start_options import StartOptions

FRONT_PROXY_CLIENT = "front-proxy-client"


def ensure_proxy_client_cert(cert_dir: Path) -> tuple[Path, Path]:
    """(front-proxy-client.crt, .key) in `cert_dir`, issued by its CA when missing, not
    signed by it, or about to expire (the kubelet client certificate's reuse rule)."""
    from ..apiserver import certs
    from .kubelet_tls import _reusable

    cert_dir = certs.private_cert_dir(cert_dir)
    ca, _ = certs.load_ca(cert_dir)
    cert_path = cert_dir / f"{FRONT_PROXY_CLIENT}.crt"
    key_path = cert_dir / f"{FRONT_PROXY_CLIENT}.key"
    if _reusable(cert_path, key_path, ca, None):
        return cert_path, key_path
    return certs.issue_client_cert(cert_dir, FRONT_PROXY_CLIENT, [], name=FRONT_PROXY_CLIENT)


def with_proxy_client(options: StartOptions) -> StartOptions:
    """`start`'s options with the proxy client certificate filled in when the secure port is
    on (so --cert-dir is in use) and --proxy-client-cert-file is not given."""
    api = options.apiserver
    if not options.secure_port or api.proxy_client_cert_file:
        return options
    try:
        cert, key = ensure_proxy_client_cert(options.cert_dir)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"the API server's front-proxy client certificate: {exc}") from None
    api = dataclasses.replace(api, proxy_client_cert_file=str(cert),
                              proxy_client_key_file=str(key))
    return dataclasses.replace(options, apiserver=api)
