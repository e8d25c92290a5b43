"""fileperms: the pure verdict on a mode and owner, the checks that refuse unsafe key
material with an actionable message, and creation with exact modes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import structlog

from minikube_py import fileperms
from minikube_py.apiserver.certs import ensure_serving_cert
from minikube_py.cli.secure_serving import ensure_admin_token
from minikube_py.fileperms import UnsafePermissionsError
from minikube_py.storage.datadir import DataDir

ME = 1000


@pytest.mark.parametrize(("mode", "owner", "unsafe"), [
    (0o100600, ME, None),
    (0o100644, ME, None),                 # a certificate others may read
    (0o100400, ME, None),
    (0o040700, ME, None),
    (0o100600, 0, None),                  # root's files are trusted
    (0o100620, ME, "group or others can write it (mode 0620)"),
    (0o100602, ME, "group or others can write it (mode 0602)"),
    (0o100666, ME, "group or others can write it (mode 0666)"),
    (0o040777, ME, "group or others can write it (mode 0777)"),
    (0o041777, ME, "group or others can write it (mode 1777)"),   # even sticky, like /tmp
    (0o100600, 4242, "it is owned by uid 4242, not by this user (uid 1000) or root"),
])
def test_problem(mode: int, owner: int, unsafe: str | None) -> None:
    assert fileperms.problem(mode, owner, uid=ME) == unsafe


def test_check_file_names_the_file_and_the_fix(tmp_path: Path) -> None:
    key = tmp_path / "ca.key"
    key.write_text("secret")
    os.chmod(key, 0o600)
    fileperms.check_file(key, "the CA key")  # fine
    os.chmod(key, 0o666)
    with pytest.raises(UnsafePermissionsError) as caught:
        fileperms.check_file(key, "the CA key", generated=True)
    message = str(caught.value)
    assert message.startswith(f"refusing to use the CA key {key}: group or others can write "
                              "it (mode 0666)")
    assert f"Fix: chmod 600 {key} (or delete it" in message
    cert = tmp_path / "ca.crt"
    cert.write_text("public")
    os.chmod(cert, 0o664)
    with pytest.raises(UnsafePermissionsError, match=f"Fix: chmod 644 {cert}$"):
        fileperms.check_file(cert, "the CA certificate", private=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_another_user_owns_is_refused(tmp_path: Path) -> None:
    token = tmp_path / "tokens.csv"
    token.write_text("t,admin,admin\n")
    os.chmod(token, 0o600)
    os.chown(token, 4242, 4242)
    with pytest.raises(UnsafePermissionsError,
                       match=r"owned by uid 4242.*Fix: chown \$\(id -u\) .* && chmod 600"):
        fileperms.check_file(token, "the token file")


def test_make_private_dir_and_create_file_ignore_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        deep = fileperms.make_private_dir(tmp_path / "a" / "b" / "c")
        fd = fileperms.create_file(deep / "f", fileperms.PRIVATE_FILE)
        os.close(fd)
    finally:
        os.umask(old)
    for directory in (tmp_path / "a", tmp_path / "a" / "b", deep):
        assert directory.stat().st_mode & 0o777 == 0o700, directory
    assert (deep / "f").stat().st_mode & 0o777 == 0o600
    # a leftover file with a wide mode is narrowed, not kept (O_CREAT keeps an old mode)
    stale = deep / "stale.tmp"
    stale.write_text("x")
    os.chmod(stale, 0o666)
    os.close(fileperms.create_file(stale, fileperms.PRIVATE_FILE))
    assert stale.stat().st_mode & 0o777 == 0o600
    # an existing directory keeps its mode: the caller decides whether to check it
    (tmp_path / "open").mkdir()
    os.chmod(tmp_path / "open", 0o755)
    fileperms.make_private_dir(tmp_path / "open" / "x")
    assert (tmp_path / "open").stat().st_mode & 0o777 == 0o755


def test_world_writable_generated_material_is_refused_on_reuse(tmp_path: Path) -> None:
    certs = tmp_path / "certs"
    ensure_serving_cert(certs, [])
    ensure_admin_token(certs)
    for name, what in [("ca.key", "the CA key"), ("ca.crt", "the CA certificate"),
                       ("apiserver.key", "the serving key"), ("tokens.csv", "the token file")]:
        path = certs / name
        mode = path.stat().st_mode & 0o777
        os.chmod(path, 0o666)
        with pytest.raises(UnsafePermissionsError, match=f"refusing to use {what} {path}"):
            ensure_serving_cert(certs, [])
            ensure_admin_token(certs)
        os.chmod(path, mode)
    os.chmod(certs, 0o777)
    with pytest.raises(UnsafePermissionsError,
                       match=f"the certificate directory {certs}: .*chmod 700 {certs}"):
        ensure_serving_cert(certs, [])
    with pytest.raises(UnsafePermissionsError, match="the certificate directory"):
        ensure_admin_token(certs)


def test_an_open_data_dir_is_used_with_a_warning(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    os.chmod(data, 0o777)
    with structlog.testing.capture_logs() as logs:
        DataDir(data).ensure()
    warnings = [e for e in logs if e["log_level"] == "warning"]
    assert [(e["event"], e["data_dir"], e["problem"], e["fix"]) for e in warnings] == [
        ("data dir permissions", str(data), "group or others can write it (mode 0777)",
         f"chmod 700 {data}")]
    assert (data / "wal").stat().st_mode & 0o777 == 0o700
    os.chmod(data, 0o700)
    with structlog.testing.capture_logs() as logs:
        DataDir(data).ensure()
    assert not [e for e in logs if e["log_level"] == "warning"]
