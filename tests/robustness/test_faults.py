"""Durability under faults (issue 6): a full disk and repeated kill -9.

Disk full: the data dir lives on a small tmpfs; writes fail with a 500 InternalError Status
saying "storage full", reads keep working, service resumes by itself once space returns, and
after a restart every acknowledged object is there. Kill -9: bench/robustness.py's driver runs a
mixed create/update/delete load against `minikube-py apiserver --fsync always`, SIGKILLs it,
restarts and compares the store with every acknowledged operation, cycle after cycle.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from bench.robustness import kill_cycles
from minikube_py.storage import EmbeddedStore, StorageFullError
from tests.apiserver.conftest import start_api

FILLER_BYTES = 2 * 1024 * 1024


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs holding a 2 MiB filler file (deleting it is how space "returns")."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root / CAP_SYS_ADMIN): {done.stderr.strip()}")
    try:
        (mount / "filler").write_bytes(b"\0" * FILLER_BYTES)
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def configmap(name: str, size: int = 60_000) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"blob": name[-1] * size}}


async def test_store_full_disk_refuses_writes_then_resumes(tmpfs: Path):
    store = await EmbeddedStore.open(tmpfs / "store", fsync=True)
    acked: dict[str, bytes] = {}
    try:
        with pytest.raises(StorageFullError, match="storage full"):
            for i in range(1000):
                value = bytes([65 + i % 26]) * 50_000
                await store.create(f"/k/{i:04d}", value)
                acked[f"/k/{i:04d}"] = value
        assert len(acked) > 10
        with pytest.raises(StorageFullError):  # refused up front while the disk is full
            await store.create("/k/refused", b"x")
        assert (await store.get(next(iter(acked)))).value == next(iter(acked.values()))  # reads work
        (tmpfs / "filler").unlink()
        for _ in range(100):  # the WAL retries what it held; then new writes go through
            try:
                await store.create("/k/after", b"back")
                break
            except StorageFullError:
                await asyncio.sleep(0.05)
        assert (await store.get("/k/after")).value == b"back"
    finally:
        await store.close()
    store = await EmbeddedStore.open(tmpfs / "store")
    try:
        for key, value in acked.items():
            assert (await store.get(key)).value == value, key
        assert (await store.get("/k/after")).value == b"back"
    finally:
        await store.close()


async def test_api_full_disk_gives_storage_full_status_and_loses_nothing(tmpfs: Path):
    api, runner, store, session = await start_api(tmpfs)
    acked: list[str] = []
    path = "/api/v1/namespaces/default/configmaps"
    try:
        for i in range(500):
            status, body = await api.post(path, configmap(f"cm-{i:04d}"))
            if status != 201:
                break
            acked.append(f"cm-{i:04d}")
        else:
            pytest.fail("the disk never filled up")
        assert len(acked) > 10
        assert status == 500, body
        assert body["kind"] == "Status" and body["reason"] == "InternalError", body
        assert "storage full" in body["message"], body
        status, body = await api.post(path, configmap("refused"))  # still full: same answer
        assert status == 500 and "storage full" in body["message"], body
        # reads keep working
        status, body = await api.get(f"{path}/{acked[0]}")
        assert status == 200 and body["data"]["blob"] == configmap(acked[0])["data"]["blob"]
        status, body = await api.get(path)
        assert status == 200 and {f"cm-{i:04d}" for i in range(len(acked))} <= \
            {item["metadata"]["name"] for item in body["items"]}

        (tmpfs / "filler").unlink()  # space returns: service resumes without a restart
        for _ in range(100):
            status, body = await api.post(path, configmap("after-space", 1000))
            if status == 201:
                break
            assert status == 500 and "storage full" in body["message"], body
            await asyncio.sleep(0.05)
        assert status == 201, body
        acked.append("after-space")
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()

    api, runner, store, session = await start_api(tmpfs)
    try:
        status, body = await api.get(path)
        assert status == 200
        names = {item["metadata"]["name"] for item in body["items"]}
        assert set(acked) <= names, sorted(set(acked) - names)
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


@pytest.mark.slow
async def test_repeated_kill_9_loses_no_acknowledged_write(tmp_path: Path):
    result = await kill_cycles(tmp_path / "data", cycles=5, seed=20261121)
    assert result["lost"] == 0, result["lost_detail"]
    assert result["crashes"] == 0
    assert all(n > 0 for n in result["acknowledged_per_cycle"]), result
    assert result["unanswered"] > 0  # the kills did land while requests were in flight
