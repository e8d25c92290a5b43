"""`start`'s listener table (cli/listeners.py): which listeners a configuration needs, every
conflict reported at once with its component and flag, --ports auto read back from the bound
socket, and the holder of a busy port named."""

from __future__ import annotations

import os
import socket

import pytest

from minikube_py.cli import listeners
from minikube_py.cli.main import build_parser
from minikube_py.cli.start_options import StartOptions


def options(*flags: str) -> StartOptions:
    return StartOptions.from_args(build_parser().parse_args(["start", *flags]))


def held() -> socket.socket:
    """A port this process listens on (bound to 0 and read back, as the project does)."""
    return listeners.listen("127.0.0.1", 0)


def test_plan_follows_the_flags_disabled_components_and_the_secure_port() -> None:
    names = [w.listener.name for w in listeners.plan(options(), secure=True)]
    assert names == ["apiserver", "secure", "scheduler", "controller-manager", "kubelet",
                     "console"]
    wanted = listeners.plan(options("--scheduler-port", "0", "--disable", "kubelet",
                                    "--ingress", "--ingress-port", "9999", "--no-console"),
                            secure=False)
    assert [(w.listener.name, w.port) for w in wanted] == [
        ("apiserver", 8080), ("controller-manager", 10252), ("ingress", 9999)]


def test_the_console_port_zero_means_a_free_port_and_no_console_none() -> None:
    wanted = listeners.plan(options("--scheduler-port", "0"), secure=False)
    assert [(w.listener.name, w.port) for w in wanted] == [
        ("apiserver", 8080), ("controller-manager", 10252), ("kubelet", 10250), ("console", 0)]
    assert [w.listener.name for w in listeners.plan(
        options("--console-port", "9090"), secure=False)][-1] == "console"
    assert "console" not in [w.listener.name for w in listeners.plan(
        options("--no-console"), secure=False)]


def test_ports_auto_binds_every_wanted_listener_on_port_zero() -> None:
    wanted = listeners.plan(options("--ports", "auto", "--scheduler-port", "0"), secure=True)
    assert [w.listener.name for w in wanted] == ["apiserver", "secure", "controller-manager",
                                                 "kubelet", "console"]
    assert {w.port for w in wanted} == {0}
    bound = listeners.bind_all(wanted)
    try:
        ports = [bound.port(w.listener.name) for w in wanted]
        assert all(ports) and len(set(ports)) == len(ports)
        # the bound sockets are listening: a client connects before any server runs
        with socket.create_connection(("127.0.0.1", bound.port("kubelet")), timeout=2):
            pass
    finally:
        bound.close()


def test_every_conflict_is_reported_at_once_with_component_and_flag() -> None:
    a, b = held(), held()
    try:
        pa, pb = a.getsockname()[1], b.getsockname()[1]
        wanted = listeners.plan(options("--insecure-port", str(pa), "--kubelet-port", str(pb),
                                        "--scheduler-port", "0",
                                        "--controller-manager-port", "0"), secure=False)
        with pytest.raises(listeners.PortConflictError) as caught:
            listeners.bind_all(wanted, ["data dir /x is in use by process 1"])
        message = str(caught.value)
        assert message.startswith("cannot start (nothing was started):")
        assert "data dir /x is in use by process 1" in message
        assert (f"the API server's insecure port: 127.0.0.1:{pa} is in use by process "
                f"{os.getpid()}") in message
        assert "change it with --insecure-port" in message
        assert f"the simulated kubelets' port: 127.0.0.1:{pb} is in use" in message
        assert "change it with --kubelet-port" in message
        assert message.endswith("or let every listener take a free port: --ports auto")
    finally:
        a.close()
        b.close()


def test_nothing_stays_bound_after_a_conflict() -> None:
    busy = held()
    free = held()
    free_port = free.getsockname()[1]
    free.close()
    try:
        wanted = listeners.plan(options("--insecure-port", str(free_port), "--kubelet-port",
                                        str(busy.getsockname()[1]), "--scheduler-port", "0",
                                        "--controller-manager-port", "0"), secure=False)
        with pytest.raises(listeners.PortConflictError):
            listeners.bind_all(wanted)
        again = listeners.listen("127.0.0.1", free_port)  # released by bind_all
        again.close()
    finally:
        busy.close()


def test_one_port_given_to_two_listeners_is_a_conflict_naming_both_flags() -> None:
    wanted = listeners.plan(options("--scheduler-port", "10999",
                                    "--controller-manager-port", "10999",
                                    "--insecure-port", "0"), secure=True)
    assert listeners.duplicates(wanted) == [
        ("port 10999 is given to both the scheduler's healthz/metrics port (--scheduler-port) "
         "and the controller manager's healthz/metrics port (--controller-manager-port)")]


def test_the_holder_of_a_port_is_named_and_a_free_port_has_none() -> None:
    sock = held()
    port = sock.getsockname()[1]
    assert (listeners.port_holder(port) or "").startswith(f"process {os.getpid()} (")
    sock.close()
    assert listeners.port_holder(port) is None
