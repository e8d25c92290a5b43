"""Every port `minikube-py start` listens on, bound together before anything serves.

Kubernetes piece: none upstream binds all of a cluster's ports at once — kube-apiserver,
kube-scheduler, kube-controller-manager and each kubelet bind their own (`--secure-port`,
`--port`, `--port`, `--port`) and a busy one fails that binary alone. In one process that
turned into a newcomer's loop: each retry of `start` named only the next busy port. So `start`
binds every listener it needs first (the table below: one row per listener, the component it
belongs to and the flag that moves it), reports every conflict in one error, and only then
opens the store and starts components, which serve on the sockets bound here.

`--ports auto` binds each enabled listener on port 0 and reads back the port the kernel chose:
the socket handed over is the one bound, so no other process can take the port in between (a
port picked by probing and released would race every other cluster on a shared machine).

A row is data; a new listener (e.g. the console's) is one more row in LISTENERS.
"""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..procinfo import describe_process
from .storage_target import CommandError

if TYPE_CHECKING:
    from .start_options import StartOptions

#: values of --ports
FIXED, AUTO = "fixed", "auto"


@dataclass(frozen=True)
class Listener:
    """One listener of `start`: who serves on it, which flag moves it, when it is wanted."""

    name: str                                   # key of the bound socket
    component: str                              # shown to people
    flag: str                                   # the flag that changes its port
    address: Callable[[StartOptions], str]
    port: Callable[[StartOptions], int]       # 0: disabled (upstream's meaning of --port 0)
    wanted: Callable[[StartOptions, bool], bool] = lambda options, secure: True
    #: port 0 means "a free port" rather than "off" (a listener of our own, e.g. a console
    #: whose flag defaults to 0 and is turned off by a flag of its own)
    zero_is_free: bool = False


LISTENERS: tuple[Listener, ...] = (
    Listener("apiserver", "the API server's insecure port", "--insecure-port",
             lambda o: o.address, lambda o: o.port),
    Listener("secure", "the API server's secure port", "--secure-port",
             lambda o: o.bind_address, lambda o: o.secure_port,
             lambda o, secure: secure),
    Listener("scheduler", "the scheduler's healthz/metrics port", "--scheduler-port",
             lambda o: o.address, lambda o: o.scheduler_port,
             lambda o, secure: o.runs("scheduler")),
    Listener("controller-manager", "the controller manager's healthz/metrics port",
             "--controller-manager-port", lambda o: o.address,
             lambda o: o.controller_manager_port,
             lambda o, secure: o.runs("controller-manager")),
    Listener("kubelet", "the simulated kubelets' port", "--kubelet-port",
             lambda o: o.address, lambda o: o.kubelet_port,
             lambda o, secure: o.runs("kubelet") and bool(o.node_pools)),
    Listener("ingress", "the simulated ingress controller", "--ingress-port",
             lambda o: o.address, lambda o: o.ingress_port,
             lambda o, secure: o.ingress),
    Listener("console", "the web console", "--console-port",
             lambda o: o.console_address, lambda o: o.console_port,
             lambda o, secure: o.console, zero_is_free=True),
)
# Not in the table: --etcd-listen (etcdserver/serving.py), which gRPC binds from an address
# string (grpc.aio takes no socket); its conflicts are reported when it starts, first.


@dataclass(frozen=True)
class Wanted:
    """A listener to bind: where, and on which port (0: the kernel's choice)."""

    listener: Listener
    address: str
    port: int


def plan(options: StartOptions, secure: bool,
         listeners: tuple[Listener, ...] = LISTENERS) -> list[Wanted]:
    """The listeners `options` needs, in table order; with --ports auto each on port 0."""
    auto = options.ports == AUTO or options.ephemeral_ports
    return [Wanted(row, row.address(options), 0 if auto else row.port(options))
            for row in listeners
            if (row.port(options) or row.zero_is_free) and row.wanted(options, secure)]


def duplicates(wanted: list[Wanted]) -> list[str]:
    """Two of our own listeners given the same fixed port (bind would blame the second)."""
    seen: dict[int, Wanted] = {}
    problems = []
    for w in wanted:
        if not w.port:
            continue
        first = seen.setdefault(w.port, w)
        if first is not w:
            problems.append(f"port {w.port} is given to both {first.listener.component} "
                            f"({first.listener.flag}) and {w.listener.component} "
                            f"({w.listener.flag})")
    return problems


def conflict_line(w: Wanted, exc: OSError) -> str:
    """One conflict, for people: the component, the address, why, and the flag to change."""
    reason = ("in use" if exc.errno == errno.EADDRINUSE
              else exc.strerror or str(exc))
    holder = port_holder(w.port) if exc.errno == errno.EADDRINUSE else None
    return (f"{w.listener.component}: {w.address}:{w.port} is {reason}"
            + (f" by {holder}" if holder else "")
            + f"; change it with {w.listener.flag}")


class PortConflictError(CommandError):
    """Some listeners could not be bound; the message lists all of them."""


class Bound:
    """The bound, listening sockets by listener name; each is handed to its server once."""

    def __init__(self, sockets: dict[str, socket.socket]) -> None:
        self.sockets = sockets

    def take(self, name: str) -> socket.socket | None:
        """The socket for `name` (None: that listener is not wanted)."""
        return self.sockets.get(name)

    def port(self, name: str) -> int | None:
        sock = self.sockets.get(name)
        return sock.getsockname()[1] if sock is not None else None

    def close(self) -> None:
        """Close every socket; a server that took one closes it too, which is harmless."""
        for sock in self.sockets.values():
            sock.close()


#: the API server's listeners: shared by every API server process with --apiservers N
API = frozenset({"apiserver", "secure"})


def bind_all(wanted: list[Wanted], extra_problems: list[str] = (), *,
             reuseport: frozenset[str] | tuple = ()) -> Bound:
    """Bind and listen on every wanted listener; on any conflict close them all and raise one
    PortConflictError naming every conflict (and `extra_problems`, e.g. a busy data dir)."""
    problems = [*extra_problems, *duplicates(wanted)]
    sockets: dict[str, socket.socket] = {}
    for w in wanted:
        if w.port and any(p.startswith(f"port {w.port} ") for p in problems):
            continue  # already reported as a duplicate
        try:
            sockets[w.listener.name] = listen(w.address, w.port,
                                              reuseport=w.listener.name in reuseport)
        except OSError as exc:
            problems.append(conflict_line(w, exc))
    if problems:
        for sock in sockets.values():
            sock.close()
        hint = ("\nor let every listener take a free port: --ports auto"
                if any("change it with" in p for p in problems) else "")
        raise PortConflictError("cannot start (nothing was started):\n  "
                                + "\n  ".join(problems) + hint)
    return Bound(sockets)


def listen(address: str, port: int, *, reuseport: bool = False) -> socket.socket:
    """A listening TCP socket on address:port, set up as asyncio's create_server would
    (SO_REUSEADDR, IPv6-only for an IPv6 address, non-blocking); `reuseport`: with
    SO_REUSEPORT and inheritable, so other API server processes can serve the same port
    (apiserver_listeners.py)."""
    family, kind, proto, _, sockaddr = socket.getaddrinfo(
        address or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuseport:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.set_inheritable(True)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(sockaddr)
        sock.listen(socket.SOMAXCONN)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def port_holder(port: int) -> str | None:
    """Which of this user's processes listens on `port` (from /proc; None when unknown, e.g.
    another user's process or no /proc)."""
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:[") and target[8:-1] in inodes:
                return describe_process(int(pid))
    return None


def _listening_inodes(port: int) -> set[str]:
    """Inodes of sockets in LISTEN state (0A) on `port`, from /proc/net/tcp{,6}."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f, None)
                for line in f:
                    fields = line.split()
                    if len(fields) > 9 and fields[3] == "0A" \
                            and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(fields[9])
        except OSError:
            continue
    return inodes
