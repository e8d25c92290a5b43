"""The Store conformance suite over an API server process's cached view of the store:
CachingStore (a copy of every key, consistent reads from memory once fresh) -> RemoteStore ->
Unix socket -> StoreServer -> PublishingStore -> the embedded store. Reads right after writes
(every test does them) pass only if the copy waits for the revision the store published."""

from collections.abc import AsyncIterator

import pytest

from minikube_py.storage import Store
from minikube_py.storage.remote import CachingStore, RemoteStore, RevisionBoard
from tests.conformance.test_store_contract import *
from tests.storage_remote.conftest import Served


@pytest.fixture(params=["cached-remote-over-embedded"])
async def store(request: pytest.FixtureRequest, served: Served) -> AsyncIterator[Store]:
    board = RevisionBoard(served.board_path)
    s = CachingStore(await RemoteStore.connect(served.server.path), board)
    await s.start()
    try:
        yield s
    finally:
        await s.close()
        board.close()
