"""CA + serving cert generation, reuse, re-issue on new hosts, client certs, SSL contexts."""

from __future__ import annotations

import ipaddress
import socket
import ssl
from pathlib import Path

from cryptography import x509

from minikube_py.apiserver.certs import ensure_serving_cert, issue_client_cert, server_ssl_context


def _san(path: Path) -> x509.SubjectAlternativeName:
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    return cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value


def test_generated_once_then_reused(tmp_path: Path) -> None:
    cert, key, ca = ensure_serving_cert(tmp_path / "certs", ["10.0.0.1"])
    first = {p: p.read_bytes() for p in (cert, key, ca)}
    assert (key.stat().st_mode & 0o777) == 0o600
    san = _san(cert)
    assert set(san.get_values_for_type(x509.IPAddress)) >= {
        ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("10.0.0.1")}
    assert {"localhost", socket.gethostname().lower(), "kubernetes.default.svc"} <= set(
        san.get_values_for_type(x509.DNSName))
    again = ensure_serving_cert(tmp_path / "certs", ["10.0.0.1"])
    assert again == (cert, key, ca)
    assert {p: p.read_bytes() for p in again} == first
    ca_cert = x509.load_pem_x509_certificate(ca.read_bytes())
    x509.load_pem_x509_certificate(cert.read_bytes()).verify_directly_issued_by(ca_cert)
    assert server_ssl_context(cert, key).verify_mode == ssl.CERT_NONE


def test_new_host_reissues_serving_cert_keeps_ca(tmp_path: Path) -> None:
    cert, key, ca = ensure_serving_cert(tmp_path, ["10.0.0.1"])
    ca_bytes, cert_bytes = ca.read_bytes(), cert.read_bytes()
    ensure_serving_cert(tmp_path, ["10.0.0.1", "192.168.1.5", "api.example.com"])
    assert ca.read_bytes() == ca_bytes
    assert cert.read_bytes() != cert_bytes
    san = _san(cert)
    assert ipaddress.ip_address("192.168.1.5") in san.get_values_for_type(x509.IPAddress)
    assert "api.example.com" in san.get_values_for_type(x509.DNSName)


def test_client_cert_subject(tmp_path: Path) -> None:
    ensure_serving_cert(tmp_path, [])
    cert_path, key_path = issue_client_cert(tmp_path, "alice", ["dev", "ops"])
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    assert cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value == "alice"
    assert [a.value for a in cert.subject.get_attributes_for_oid(
        x509.NameOID.ORGANIZATION_NAME)] == ["dev", "ops"]
    ctx = server_ssl_context(tmp_path / "apiserver.crt", tmp_path / "apiserver.key",
                             tmp_path / "ca.crt")
    assert ctx.verify_mode == ssl.CERT_OPTIONAL
