"""The API servers' shared listening port: one socket per API server process, all bound by
the parent to the same address and port with SO_REUSEPORT, so the kernel spreads incoming
connections over the processes.

Kubernetes piece: none in-tree — several kube-apiservers sit behind a load balancer (the
`kubernetes` Service's endpoints, or an external one). One machine needs no balancer: Linux
hashes each new connection onto one of the SO_REUSEPORT sockets of a port. Why the parent binds
them all: port 0 is chosen once by the kernel and every other socket joins that port while the
first is still held, so no port is ever picked, released and hoped for (a shared machine);
each child gets its sockets as inherited fds and serves them (aiohttp's `web.SockSite`).
The children's sockets are bound but not listening until their API server is ready: only then
does the kernel hand them connections, so `start` is ready as soon as API server #0 is, and no
client ever waits on a process that is still importing.
Why not one shared socket: each process's accept loop takes every connection pending when it
wakes, so one busy process can end up with all 32 connections of a benchmark.

Why the store's process has one socket and every other API server `CHILD_SHARE`: the kernel
picks a socket of the group per connection from a hash of its addresses, so a process's share
of new connections is its share of the sockets. The store's process also serves the store to
every other API server (and, under `start`, runs the components): with equal shares it was the
one saturated core while the others idled at half (bench/multiapi.py: 956 creates/s against
1,172/s with shares 1:3, the single process 743/s). Reads need no such care — a client's
connections to an idle process simply cycle faster.
"""

from __future__ import annotations

import socket

#: sockets (shares of new connections) of each API server besides the store's process, which has 1
CHILD_SHARE = 3


def shares(apiservers: int) -> list[int]:
    """How many sockets of the shared port each API server serves: [store process, child 1, ...]."""
    return [1] + [CHILD_SHARE] * (apiservers - 1)


def deal(sockets: list[socket.socket], apiservers: int) -> list[list[socket.socket]]:
    """The port's sockets handed out by `shares`: [API server #0's, child 1's, ...]."""
    dealt, at = [], 0
    for count in shares(apiservers):
        dealt.append(sockets[at:at + count])
        at += count
    if at != len(sockets):
        raise ValueError(f"{len(sockets)} sockets for shares {shares(apiservers)}")
    return dealt


def reuseport_socket(address: str, port: int, *, listen: bool = True) -> socket.socket:
    """One inheritable TCP socket on address:port with SO_REUSEPORT, listening unless
    `listen` is false: a bound socket that does not listen is not in the port's group, so the
    kernel hands it no connection until its process calls listen() — how an API server joins
    the port only once it can answer (asyncio's create_server listens on a given socket)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((address, port))
        if listen:
            sock.listen(socket.SOMAXCONN)
        sock.setblocking(False)
        sock.set_inheritable(True)
    except BaseException:
        sock.close()
        raise
    return sock


def join_port(address: str, port: int, count: int, *, listen: bool = True) -> list[socket.socket]:
    """`count` more sockets on a port a SO_REUSEPORT socket of ours holds. OSError closes
    whatever was opened."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sockets.append(reuseport_socket(address, port, listen=listen))
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def reuseport_sockets(address: str, port: int, count: int) -> list[socket.socket]:
    """`count` listening sockets on address:port (port 0: the kernel's choice, shared by
    all): the first binds, the others join it."""
    first = reuseport_socket(address, port)
    try:
        return [first, *join_port(address, first.getsockname()[1], count - 1)]
    except OSError:
        first.close()
        raise
