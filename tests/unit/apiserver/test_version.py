"""apiserver/version.py: where gitCommit, gitTreeState and buildDate come from."""

from __future__ import annotations

import zlib
from pathlib import Path

from minikube_py.apiserver import version


def _checkout(tmp_path: Path, commit: str, *, packed: bool = False) -> Path:
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    if packed:
        (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{commit} refs/heads/main\n")
    else:
        (git / "refs" / "heads" / "main").write_text(commit + "\n")
    package = tmp_path / "minikube_py"
    package.mkdir()
    return package


def test_a_checkout_gives_its_head_and_the_commit_time(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(version, "_installed_commit", lambda: None)
    commit = "ab" * 20
    package = _checkout(tmp_path, commit)
    body = b"tree x\nauthor A <a@x> 1700000000 +0000\ncommitter C <c@x> 1723533000 +0200\n\nmsg\n"
    obj = tmp_path / ".git" / "objects" / commit[:2] / commit[2:]
    obj.parent.mkdir(parents=True)
    obj.write_bytes(zlib.compress(b"commit %d\0" % len(body) + body))
    assert version.build_info(package) == (commit, "", "2024-08-13T07:10:00Z")


def test_a_packed_ref_is_read(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(version, "_installed_commit", lambda: None)
    monkeypatch.setattr(version, "_install_date", lambda: None)
    package = _checkout(tmp_path, "cd" * 20, packed=True)
    assert version.build_info(package) == ("cd" * 20, "", version.UNSTAMPED_DATE)


def test_no_checkout_and_no_vcs_record_is_an_archive_build(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(version, "_installed_commit", lambda: None)
    monkeypatch.setattr(version, "_install_date", lambda: "2025-01-02T03:04:05Z")
    assert version.build_info(tmp_path / "pkg") == (
        version.UNKNOWN_COMMIT, "archive", "2025-01-02T03:04:05Z")


def test_a_vcs_install_is_clean(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(version, "_installed_commit", lambda: "ef" * 20)
    monkeypatch.setattr(version, "_install_date", lambda: None)
    assert version.build_info(tmp_path) == ("ef" * 20, "clean", version.UNSTAMPED_DATE)


def test_the_platform_uses_go_names() -> None:
    info = version.version_info(Path(version.__file__).parent.parent)
    assert set(info) == {"major", "minor", "gitVersion", "gitCommit", "gitTreeState",
                         "buildDate", "goVersion", "compiler", "platform"}
    assert "x86_64" not in info["platform"] and "aarch64" not in info["platform"]
