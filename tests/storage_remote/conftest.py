"""Fixtures: the embedded store served by StoreServer on a real Unix socket, used through
RemoteStore — the transport of `start --apiservers N`.

`store` is overridden here so the Store conformance suite (tests/conformance) runs over the
socket: every call, watch and error of the contract goes through the wire.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import NamedTuple

import pytest

from minikube_py.storage import EmbeddedStore, Store
from minikube_py.storage.remote import (
    PublishingStore,
    RemoteStore,
    RevisionBoard,
    StoreServer,
)


class Served(NamedTuple):
    store: EmbeddedStore
    server: StoreServer
    board_path: Path


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    store = await EmbeddedStore.open(tmp_path / "data", fsync=False)
    # a short path: a Unix socket's path is limited to ~107 bytes, pytest's tmp_path is not
    with tempfile.TemporaryDirectory(prefix="mkpy-") as where:
        board = RevisionBoard(Path(where) / "revision", create=True)
        server = await StoreServer.start(PublishingStore(store, board), Path(where) / "store.sock")
        try:
            yield Served(store, server, board.path)
        finally:
            await server.stop()
            await store.close()
            board.close()


@pytest.fixture(params=["remote-over-embedded"])
async def store(request: pytest.FixtureRequest, served: Served) -> AsyncIterator[Store]:
    s = await RemoteStore.connect(served.server.path)
    try:
        yield s
    finally:
        await s.close()
