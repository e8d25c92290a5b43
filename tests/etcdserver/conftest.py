"""Fixtures: the embedded store served by our etcd v3 server on a real socket (port 0).

`store` is overridden here so the Store conformance suite (tests/conformance) runs with the
real-etcd backend — aetcd speaking gRPC — against our server over the embedded store: every
Range, Txn, Watch, Lease and Compact call of the contract then goes through the wire.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import NamedTuple

import pytest

from minikube_py.etcdserver.server import EtcdServer
from minikube_py.storage import EmbeddedStore, Store


class Served(NamedTuple):
    store: EmbeddedStore
    server: EtcdServer


async def serve(tmp_path: Path, **server_options) -> Served:
    store = await EmbeddedStore.open(tmp_path / "data", fsync=False)
    server = await EtcdServer.start(store, "127.0.0.1:0", **server_options)
    return Served(store, server)


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[Served]:
    s = await serve(tmp_path)
    try:
        yield s
    finally:
        await s.server.stop(None)
        await s.store.close()


@pytest.fixture(params=["etcd-over-embedded"])
async def store(request: pytest.FixtureRequest, served: Served) -> AsyncIterator[Store]:
    from minikube_py.storage.etcd_backend import EtcdStore

    s = await EtcdStore.connect([served.server.endpoint], key_prefix=f"/test-{uuid.uuid4().hex}")
    try:
        yield s
    finally:
        await s.close()
