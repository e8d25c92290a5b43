"""`start`'s default service-account signing key and issuer.

Kubernetes piece: what kubeadm's `certs sa` phase and its kube-apiserver manifest do — an RSA
key `sa.key` in the certificate directory, passed as --service-account-signing-key-file (and,
by default here, --service-account-key-file), with --service-account-issuer
https://kubernetes.default.svc.cluster.local; the controller-manager's
--service-account-private-key-file is the same key (legacy Secret tokens). Only when the secure port is on (service-account
tokens authenticate only there) and the user gave neither flag; the key is generated once and
reused (checked like every other generated key: not writable by others).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from ..fileperms import UnsafePermissionsError, check_file
from .storage_target import ConfigError

if TYPE_CHECKING:
    from .start_options import StartOptions

DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
KEY_NAME = "sa.key"


def ensure_signing_key(cert_dir: Path) -> Path:
    """<cert-dir>/sa.key, generated (0600) when missing."""
    from ..apiserver.certs import private_cert_dir, write_material
    from ..serviceaccount_keys import new_private_key_pem

    cert_dir = private_cert_dir(cert_dir)
    path = cert_dir / KEY_NAME
    if path.exists():
        check_file(path, "the service-account signing key", generated=True)
        return path
    write_material(path, new_private_key_pem(), private=True)
    return path


def with_service_account_key(options: StartOptions) -> StartOptions:
    """Options with the default signing key and issuer filled in (secure port only)."""
    api = options.apiserver
    if not options.secure_port or api.service_account_signing_key_file or \
            api.service_account_key_file:
        return options
    try:
        key = ensure_signing_key(options.cert_dir)
    except UnsafePermissionsError as exc:
        raise ConfigError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"the service-account signing key: {exc}") from None
    api = dataclasses.replace(api, service_account_signing_key_file=str(key),
                              service_account_issuer=api.service_account_issuer or DEFAULT_ISSUER)
    controllers = options.controllers
    if controllers.service_account_private_key_file is None:  # legacy Secret tokens too
        controllers = dataclasses.replace(controllers, service_account_private_key_file=str(key))
    return dataclasses.replace(options, apiserver=api, controllers=controllers)
