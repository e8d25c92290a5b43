"""`minikube-py storage ls` on an empty prefix names where the resource is stored when that
place holds keys (issue 24 item 5), over a real data dir."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from minikube_py.cli.main import main
from minikube_py.storage import EmbeddedStore


def seed(data: Path) -> int:
    """A pod, then a node; returns the node's revision."""
    async def write() -> int:
        store = await EmbeddedStore.open(data, fsync=False, compaction_interval=0)
        try:
            await store.create("/registry/pods/default/web", b'{"kind":"Pod"}')
            return (await store.create("/registry/minions/node-1",
                                       b'{"kind":"Node"}')).mod_revision
        finally:
            await store.close()
    return asyncio.run(write())


def ls(capsys: pytest.CaptureFixture, data: Path, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["storage", "ls", *argv, "--data-dir", str(data)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_empty_prefix_with_a_stored_synonym_is_explained(tmp_path: Path, capsys) -> None:
    node = seed(tmp_path)
    code, out, err = ls(capsys, tmp_path, "/registry/nodes/")
    assert (code, out) == (0, "")
    assert err.splitlines() == [
        f"0 keys under '/registry/nodes/' at revision {node}",
        "nodes are stored under /registry/minions/ (the v1.0 layout)"]
    code, out, err = ls(capsys, tmp_path, "/registry/nodes/node-1", "-o", "json")
    assert code == 0 and '"count":0' in out.replace(" ", "")
    assert err.splitlines()[-1] == ("nodes are stored under /registry/minions/ (the v1.0 "
                                    "layout); try /registry/minions/node-1")


def test_no_hint_when_the_synonym_is_empty_too_or_the_prefix_has_keys(tmp_path: Path,
                                                                       capsys) -> None:
    node = seed(tmp_path)
    # services are stored under /registry/services/specs/, which holds nothing here
    code, _, err = ls(capsys, tmp_path, "/registry/services/default/")
    assert code == 0 and "stored under" not in err
    code, out, err = ls(capsys, tmp_path, "/registry/minions/")
    assert "/registry/minions/node-1" in out and "stored under" not in err
    # at a revision before the node existed, its synonym was empty too
    code, _, err = ls(capsys, tmp_path, "/registry/nodes/", "--revision", str(node - 1))
    assert code == 0 and "stored under" not in err
