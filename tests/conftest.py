"""Shared fixtures: a Store of each backend, and a real etcd server for the whole session.

The `store` fixture is parametrised over both backends so one test body checks both against
the Store contract. The etcd server is Debian's etcd 3.4 on free loopback ports; without the
binary, etcd-backed tests skip with the reason (hack/test.sh installs it, so CI runs them).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import AsyncIterator

import pytest
import structlog

from minikube_py.storage import EmbeddedStore, Store
from tests.etcd_server import EtcdServer, etcd_binary, start_single

BACKENDS = ["embedded", "etcd"]

# minikube_py's own pytest plugin (kube_cluster, kube_namespace, ...; tests/testing/); an
# installed package registers it through its pytest11 entry point under this same name, so
# naming it here too is harmless; pytester runs the plugin's own tests (tests/testing/)
pytest_plugins = ["pytester", "minikube_py.testing.pytest_plugin"]


@pytest.fixture(autouse=True)
def _restore_structlog():
    """Tests that run the CLI in-process configure logging globally (level, renderer); put
    the previous configuration back so later tests' `capture_logs` still sees every level."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture(scope="session")
def etcd_server(tmp_path_factory: pytest.TempPathFactory) -> EtcdServer:
    if etcd_binary() is None:
        pytest.skip("etcd binary not found: install Debian's etcd-server (hack/test.sh does)")
    server = start_single(tmp_path_factory.mktemp("etcd"))
    yield server
    server.stop()


async def open_store(backend: str, request: pytest.FixtureRequest, tmp_path: Path, **options) -> Store:
    """A fresh, empty store of `backend`. Embedded options are passed to EmbeddedStore.open."""
    if backend == "embedded":
        return await EmbeddedStore.open(tmp_path / "data", **options)
    from minikube_py.storage.etcd_backend import EtcdStore

    server: EtcdServer = request.getfixturevalue("etcd_server")
    return await EtcdStore.connect([server.endpoint], key_prefix=f"/test-{uuid.uuid4().hex}")


@pytest.fixture(params=BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    s = await open_store(request.param, request, tmp_path)
    try:
        yield s
    finally:
        await s.close()
