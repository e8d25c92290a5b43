"""Fixtures for the tests that drive the official `kubernetes` client against an API server
thread: the server (one per module), a client for it, a fresh namespace per test. Modules
that start a whole cluster instead (client_cluster.py) define their own `namespace`."""

from __future__ import annotations

import uuid

import pytest

from tests.apiserver_thread import ServerThread

try:
    from kubernetes import client
except ImportError:  # the modules that use these fixtures skip with their own reason
    client = None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    thread = ServerThread(tmp_path_factory.mktemp("apiserver") / "data").start()
    yield thread
    thread.stop()


@pytest.fixture(scope="module")
def api(server: ServerThread):
    config = client.Configuration()
    config.host = server.url
    with client.ApiClient(config) as api_client:
        yield api_client


@pytest.fixture
def namespace(api) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    client.CoreV1Api(api).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    return name
