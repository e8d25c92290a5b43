"""The API servers' shared listening port: one socket per API server process, all bound by
the parent to the same address and port with SO_REUSEPORT, so the kernel spreads incoming
connections over the processes.

Kubernetes piece: none in-tree — several kube-apiservers sit behind a load balancer (the
`kubernetes` Service's endpoints, or an external one). One machine needs no balancer: Linux
hashes each new connection onto one of the SO_REUSEPORT sockets of a port. Why the parent binds
them all: port 0 is chosen once by the kernel and every other socket joins that port while the
first is still held, so no port is ever picked, released and hoped for (a shared machine);
each child gets its socket as an inherited fd and serves it (aiohttp's `web.SockSite`).
Why not one shared socket: each process's accept loop takes every connection pending when it
wakes, so one busy process can end up with all 32 connections of a benchmark.
"""

from __future__ import annotations

import socket


def reuseport_socket(address: str, port: int) -> socket.socket:
    """One listening, inheritable TCP socket on address:port with SO_REUSEPORT."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((address, port))
        sock.listen(socket.SOMAXCONN)
        sock.setblocking(False)
        sock.set_inheritable(True)
    except BaseException:
        sock.close()
        raise
    return sock


def join_port(address: str, port: int, count: int) -> list[socket.socket]:
    """`count` more sockets on a port a SO_REUSEPORT socket of ours holds. OSError closes
    whatever was opened."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sockets.append(reuseport_socket(address, port))
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
