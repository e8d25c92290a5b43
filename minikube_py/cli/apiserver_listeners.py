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


def reuseport_sockets(address: str, port: int, count: int) -> list[socket.socket]:
    """`count` listening TCP sockets on address:port (port 0: the kernel's choice, shared by
    all), inheritable. OSError (address in use, ...) closes whatever was opened."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(family, socket.SOCK_STREAM)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((address, port))
            port = sock.getsockname()[1]  # the first socket's port for every later one
            sock.listen(1024)
            sock.setblocking(False)
            sock.set_inheritable(True)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets
