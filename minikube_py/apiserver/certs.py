"""TLS material for the secure port: a self-signed CA, a serving cert, client certs.

Kubernetes v1.0 piece: cmd/kube-apiserver's --cert-dir fallback (pkg/util's
GenerateSelfSignedCert, called when --tls-cert-file/--tls-private-key-file are not given:
"apiserver.crt"/"apiserver.key" generated on first start and reused afterwards). Here, as
later kubeadm/minikube do, a CA signs the serving cert so a kubeconfig can carry the CA and
survive a serving-cert re-issue. The serving cert's SANs are 127.0.0.1, localhost, the host
name, the in-cluster `kubernetes` service names, and the given hosts (e.g. the first service
IP). On later calls the same files are returned untouched; only when a requested host is
not covered is a new serving cert issued by the SAME CA.

Files and modes, whatever the umask (as client-go's keyutil/certutil that kubeadm uses): the
directory 0700 when created here, keys 0600, certificates 0644. Before a file is reused, it and
the directory are checked (fileperms.py): one that another user owns, or that group or others
can write, is refused with UnsafePermissionsError naming the file and the chmod that fixes it.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ..fileperms import (PRIVATE_FILE, PUBLIC_FILE, check_dir, check_file, create_file,
                         make_private_dir)

CA_CERT, CA_KEY = "ca.crt", "ca.key"
SERVING_CERT, SERVING_KEY = "apiserver.crt", "apiserver.key"
_CA_DAYS, _CERT_DAYS = 3650, 365
_DEFAULT_DNS = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local")

IPAddr = ipaddress.IPv4Address | ipaddress.IPv6Address


def _split_hosts(hosts: list[str]) -> tuple[set[IPAddr], set[str]]:
    ips: set[IPAddr] = set()
    names: set[str] = set()
    for host in hosts:
        if not host:
            continue
        try:
            ips.add(ipaddress.ip_address(host))
        except ValueError:
            names.add(host.lower())
    return ips, names


def serving_hosts(hosts: list[str]) -> tuple[set[IPAddr], set[str]]:
    """(IPs, DNS names) a serving cert for `hosts` must cover."""
    return _split_hosts(["127.0.0.1", *_DEFAULT_DNS, socket.gethostname(), *hosts])


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def write_material(path: Path, data: bytes, private: bool = False) -> None:
    """Atomic write (temp file + rename), 0600 for keys, 0644 for certificates."""
    tmp = path.with_name(path.name + ".tmp")
    fd = create_file(tmp, PRIVATE_FILE if private else PUBLIC_FILE)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def _builder(subject: x509.Name, issuer: x509.Name, public_key, days: int) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
            .public_key(public_key).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days)))


def load_ca(cert_dir: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """The cluster CA in `cert_dir`, generated on first use (its key file must be safe to
    reuse: fileperms). Public, like issue/covers/write_material, for the kubelet's certs."""
    ca_cert_path, ca_key_path = cert_dir / CA_CERT, cert_dir / CA_KEY
    if ca_cert_path.exists() and ca_key_path.exists():
        check_file(ca_key_path, "the CA key", generated=True)
        check_file(ca_cert_path, "the CA certificate", private=False, generated=True)
        cert = x509.load_pem_x509_certificate(ca_cert_path.read_bytes())
        key = serialization.load_pem_private_key(ca_key_path.read_bytes(), None)
        assert isinstance(key, ec.EllipticCurvePrivateKey)
        return cert, key
    key = _new_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "minikube-py-ca")])
    cert = (_builder(name, name, key.public_key(), _CA_DAYS)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    write_material(ca_key_path, _pem_key(key), private=True)
    write_material(ca_cert_path, cert.public_bytes(serialization.Encoding.PEM))
    return cert, key


def issue(ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, subject: x509.Name,
           usage: x509.ObjectIdentifier, san: x509.SubjectAlternativeName | None
           ) -> tuple[bytes, bytes]:
    """(cert PEM, key PEM) of a new leaf certificate signed by the CA."""
    key = _new_key()
    builder = (_builder(subject, ca.subject, key.public_key(), _CERT_DAYS)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                              critical=False))
    if san is not None:
        builder = builder.add_extension(san, critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def covers(cert_path: Path, ips: set[IPAddr], names: set[str]) -> bool:
    """Whether the certificate at `cert_path` names every IP and DNS name (reuse it) or not."""
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (OSError, ValueError, x509.ExtensionNotFound):
        return False
    have_ips = set(san.get_values_for_type(x509.IPAddress))
    have_names = {n.lower() for n in san.get_values_for_type(x509.DNSName)}
    expires = cert.not_valid_after_utc
    fresh = expires - datetime.datetime.now(datetime.timezone.utc) > datetime.timedelta(days=1)
    return fresh and ips <= have_ips and names <= have_names


def private_cert_dir(cert_dir: Path | str) -> Path:
    """`cert_dir`, created 0700 (with its missing parents) or, when it exists, checked: a
    directory others can write lets them swap the keys in it."""
    cert_dir = Path(cert_dir)
    if cert_dir.is_dir():
        check_dir(cert_dir, "the certificate directory")
    return make_private_dir(cert_dir)


def ensure_serving_cert(cert_dir: Path, hosts: list[str]) -> tuple[Path, Path, Path]:
    """(serving cert, serving key, CA cert) in `cert_dir`, generated on first call and reused
    (same files, same bytes) while they cover `hosts` and are not about to expire."""
    cert_dir = private_cert_dir(cert_dir)
    ca, ca_key = load_ca(cert_dir)
    cert_path, key_path = cert_dir / SERVING_CERT, cert_dir / SERVING_KEY
    ips, names = serving_hosts(hosts)
    if key_path.exists() and cert_path.exists():
        check_file(key_path, "the serving key", generated=True)
        check_file(cert_path, "the serving certificate", private=False, generated=True)
    if not (key_path.exists() and covers(cert_path, ips, names)):
        san = x509.SubjectAlternativeName(
            [x509.DNSName(n) for n in sorted(names)] +
            [x509.IPAddress(ip) for ip in sorted(ips, key=lambda ip: (ip.version, int(ip)))])
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
        cert_pem, key_pem = issue(ca, ca_key, subject, ExtendedKeyUsageOID.SERVER_AUTH, san)
        write_material(key_path, key_pem, private=True)
        write_material(cert_path, cert_pem)
    return cert_path, key_path, cert_dir / CA_CERT


def issue_client_cert(cert_dir: Path, user: str, groups: list[str],
                      name: str | None = None) -> tuple[Path, Path]:
    """(cert, key) of a client certificate for `user` (CN) in `groups` (O), signed by the CA
    in `cert_dir` — what --client-ca-file authenticates (e.g. an admin kubeconfig)."""
    cert_dir = private_cert_dir(cert_dir)
    ca, ca_key = load_ca(cert_dir)
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups] +
                        [x509.NameAttribute(NameOID.COMMON_NAME, user)])
    cert_pem, key_pem = issue(ca, ca_key, subject, ExtendedKeyUsageOID.CLIENT_AUTH, None)
    stem = name or f"client-{user.replace(':', '_')}"
    cert_path, key_path = cert_dir / f"{stem}.crt", cert_dir / f"{stem}.key"
    write_material(key_path, key_pem, private=True)
    write_material(cert_path, cert_pem)
    return cert_path, key_path


def server_ssl_context(cert: Path, key: Path, client_ca: Path | None = None) -> ssl.SSLContext:
    """The secure port's TLS context; with `client_ca`, client certificates are requested and
    verified against it but not required (CERT_OPTIONAL: tokens work too)."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(str(cert), str(key))
    if client_ca is not None:
        ctx.load_verify_locations(cafile=str(client_ca))
        ctx.verify_mode = ssl.CERT_OPTIONAL
    return ctx
