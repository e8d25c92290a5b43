"""Ready-made clients of the libraries people test with, made only when asked for.

Kubernetes piece: what envtest hands out (`cfg *rest.Config`) for client-go — here for Python:
the official `kubernetes` client, `kubernetes_asyncio`, `lightkube` and a raw aiohttp session.
Each library is imported inside its factory, so a project that uses one of them never needs
the others installed; a missing one raises MissingClientLibrary naming the pip package. Every
client is configured from the cluster's kubeconfig file, the way the libraries' own docs load
a cluster, so what a test exercises is the library's real configuration path.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any


class MissingClientLibrary(ImportError):
    """A client factory was called without its library installed."""


def require(module: str, package: str, factory: str) -> ModuleType:
    """`module`, imported; else MissingClientLibrary saying what to pip install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingClientLibrary(
            f"{factory}() needs the {package!r} package, which is not installed: "
            f"pip install {package}") from exc


def kubernetes_client(kubeconfig: Path) -> Any:
    """The official client's ApiClient (`kubernetes.client.CoreV1Api(api_client)`)."""
    config = require("kubernetes.config", "kubernetes", "kubernetes_client")
    return config.new_client_from_config(config_file=str(kubeconfig))


async def kubernetes_asyncio_client(kubeconfig: Path) -> Any:
    """kubernetes_asyncio's ApiClient; close it with `await api_client.close()`."""
    config = require("kubernetes_asyncio.config", "kubernetes_asyncio",
                     "kubernetes_asyncio_client")
    return await config.new_client_from_config(config_file=str(kubeconfig))


def lightkube_client(kubeconfig: Path, *, asynchronous: bool = False, **kwargs: Any) -> Any:
    """lightkube's Client (or AsyncClient); `kwargs` go to the client (e.g. field_manager)."""
    lightkube = require("lightkube", "lightkube", "lightkube_client")
    config = lightkube.KubeConfig.from_file(str(kubeconfig))
    cls = lightkube.AsyncClient if asynchronous else lightkube.Client
    return cls(config=config, **kwargs)


def http_session(url: str, *, token: str | None = None, ca_data: bytes | None = None) -> Any:
    """An aiohttp ClientSession rooted at the API server (`session.get("/api/v1/pods")`);
    call it inside a running event loop and close it when done."""
    aiohttp = require("aiohttp", "aiohttp", "http_session")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    connector = None
    if url.startswith("https:"):
        import ssl

        context = ssl.create_default_context(cadata=ca_data.decode() if ca_data else None)
        connector = aiohttp.TCPConnector(ssl=context)
    return aiohttp.ClientSession(base_url=url, headers=headers, connector=connector)
