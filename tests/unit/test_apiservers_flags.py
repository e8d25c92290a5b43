"""`--apiservers N` as a flag, and the shared port's sockets (cli/apiserver_listeners.py)."""

from __future__ import annotations

import socket

import pytest

from minikube_py.cli.apiserver import options_of
from minikube_py.cli.apiserver_listeners import (
    CHILD_SHARE,
    deal,
    reuseport_sockets,
    shares,
)
from minikube_py.cli.main import build_parser
from minikube_py.cli.start_options import StartOptions
from minikube_py.cli.storage_target import ConfigError


def options(*flags: str) -> StartOptions:
    return StartOptions.from_args(build_parser().parse_args(["start", *flags]))


def test_default_is_one_api_server_and_the_flag_sets_more() -> None:
    assert options().apiservers == 1
    assert options("--apiservers", "3").apiservers == 3
    parsed = build_parser().parse_args(["apiserver", "--apiservers", "2"])  # kube-apiserver x2
    assert options_of(parsed).apiservers == 2


def test_auto_is_one_api_server_per_usable_core() -> None:
    import os

    assert options("--apiservers", "auto").apiservers == len(os.sched_getaffinity(0))
    parsed = build_parser().parse_args(["apiserver", "--apiservers", "auto"])
    assert options_of(parsed).apiservers == len(os.sched_getaffinity(0))


def test_bad_counts_are_usage_errors() -> None:
    with pytest.raises(ConfigError, match="neither a number of processes nor 'auto'"):
        options("--apiservers", "many")
    with pytest.raises(ConfigError, match="--apiservers: must be >= 1"):
        options("--apiservers", "0")
    with pytest.raises(ConfigError, match="serves the embedded store to its API servers"):
        options("--apiservers", "2", "--etcd-servers", "127.0.0.1:2379")


def test_every_socket_shares_the_port_the_kernel_chose() -> None:
    sockets = reuseport_sockets("127.0.0.1", 0, 3)
    try:
        ports = {s.getsockname()[1] for s in sockets}
        assert len(sockets) == 3 and len(ports) == 1 and ports != {0}
        assert all(s.get_inheritable() for s in sockets)
        # connections reach the port (whichever socket the kernel hashes them to)
        with socket.create_connection(("127.0.0.1", ports.pop()), timeout=5):
            pass
    finally:
        for s in sockets:
            s.close()


def test_a_taken_port_fails_and_leaves_nothing_open() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))  # no SO_REUSEPORT: nobody may join this port
    holder.listen()
    try:
        with pytest.raises(OSError):
            reuseport_sockets("127.0.0.1", holder.getsockname()[1], 2)
    finally:
        holder.close()


def test_the_store_process_gets_one_socket_and_each_child_a_larger_share() -> None:
    assert shares(1) == [1]
    assert shares(3) == [1, CHILD_SHARE, CHILD_SHARE] and CHILD_SHARE > 1
    sockets = [object() for _ in range(1 + 2 * CHILD_SHARE)]
    dealt = deal(sockets, 3)  # type: ignore[arg-type]
    assert [len(d) for d in dealt] == shares(3)
    assert [s for d in dealt for s in d] == sockets  # each socket to exactly one process
    with pytest.raises(ValueError, match="sockets for shares"):
        deal(sockets[:-1], 3)  # type: ignore[arg-type]
