"""`minikube-py start --etcd-listen` and `minikube-py etcd-server`: the store over etcd's API
from a running cluster and standalone, checked with etcdctl on real sockets (port 0)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import aiohttp
import pytest

from minikube_py.cli import etcd_server
from minikube_py.cli.main import build_parser
from minikube_py.cli.settings import resolve
from minikube_py.cli.start import print_summary, running_cluster
from minikube_py.cli.start_options import StartOptions
from minikube_py.cli.storage_target import ConfigError
from minikube_py.etcdserver.serving import ListenError, parse_listen
from tests.etcdserver.test_etcdctl import etcdctl, pytestmark  # noqa: F401 - skip without etcdctl


def start_options(tmp: Path, *extra: str) -> StartOptions:
    args = ["start", "--data-dir", str(tmp / "data"), "--cert-dir", str(tmp / "certs"),
            "--fsync", "never", "--nodes", "0", "--secure-port", "0",
            "--scheduler-port", "0", "--controller-manager-port", "0", "--kubelet-port", "0",
            "--kubeconfig-out", "", "--authorization-mode", "AlwaysAllow", *extra]
    return dataclasses.replace(StartOptions.from_args(build_parser().parse_args(args)),
                               ephemeral_ports=True)


async def test_start_etcd_listen_serves_the_clusters_store(tmp_path, capsys):
    options = start_options(tmp_path, "--etcd-listen", "127.0.0.1:0")
    async with running_cluster(options) as cluster:
        assert cluster.etcd_url is not None
        endpoint = cluster.etcd_url.removeprefix("http://")
        print_summary(options, cluster, 0.1)  # what `start` prints when ready
        assert f"etcd v3 API         {cluster.etcd_url}  (etcdctl --endpoints={endpoint}" in (
            capsys.readouterr().out)
        async with aiohttp.ClientSession() as http, http.post(
                f"{cluster.url}/api/v1/namespaces", json={"metadata": {"name": "from-api"}}) as resp:
            assert resp.status == 201, await resp.text()
        keys = (await etcdctl(endpoint, "get", "/registry/namespaces/", "--prefix",
                              "--keys-only")).split()
        assert "/registry/namespaces/from-api" in keys and "/registry/namespaces/default" in keys
        raw = await etcdctl(endpoint, "get", "/registry/namespaces/from-api", "--print-value-only")
        assert json.loads(raw)["metadata"]["name"] == "from-api"


def test_etcd_listen_refuses_a_real_etcd_backend(tmp_path):
    args = build_parser().parse_args(["start", "--etcd-servers", "127.0.0.1:2379",
                                      "--etcd-listen", "127.0.0.1:0"])
    with pytest.raises(ConfigError, match="--etcd-listen serves the embedded store"):
        StartOptions.from_args(args)


async def test_etcd_server_command_prints_a_working_endpoint(tmp_path, capsys):
    args = build_parser().parse_args(["etcd-server", "--data-dir", str(tmp_path / "d"),
                                      "--listen-client-urls", "127.0.0.1:0", "--fsync", "never"])
    settings = resolve(args, etcd_server.SETTINGS, {}, "")
    ready, stop = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(etcd_server.serve(settings, ready=ready, stop=stop))
    await asyncio.wait_for(ready.wait(), 10)
    try:
        line = capsys.readouterr().out
        endpoint = line.split("--endpoints=")[1].split()[0]
        assert (await etcdctl(endpoint, "put", "/k", "v")).strip() == "OK"
        assert (await etcdctl(endpoint, "get", "/k", "--print-value-only")).strip() == "v"
    finally:
        stop.set()
        assert await asyncio.wait_for(task, 10) == 0


@pytest.mark.parametrize("value, expected", [
    ("http://127.0.0.1:2379", "127.0.0.1:2379"),
    ("127.0.0.1:0", "127.0.0.1:0"),
    ("http://[::1]:2379", "[::1]:2379"),
])
def test_parse_listen(value, expected):
    assert parse_listen(value) == expected


@pytest.mark.parametrize("value, message", [
    ("https://127.0.0.1:2379", "only http://"),
    ("http://a:1,http://b:2", "one URL only"),
    ("localhost", "expected HOST:PORT"),
    ("127.0.0.1:99999", "out of range"),
])
def test_parse_listen_refuses(value, message):
    with pytest.raises(ListenError, match=message):
        parse_listen(value)

