"""`start`'s web console listener (minikube_py.console), for as long as the cluster runs.

Kubernetes piece: the kube-ui addon's Service, here a listener of the all-in-one process:
127.0.0.1 and a port the OS picks by default (--console-port 0), `--no-console` for none. On
a non-loopback --console-address the console asks for the secure port's credentials, so it
needs the secure port's authenticator: without one (--secure-port 0) `start` refuses.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from .storage_target import CommandError

if TYPE_CHECKING:
    import socket

    from .start import RunningCluster
    from .start_options import StartOptions


@contextlib.asynccontextmanager
async def serving_console(options: StartOptions, cluster: RunningCluster,
                          sock: socket.socket | None = None) -> AsyncIterator[None]:
    """Serve the console for the `with` block and set `cluster.console_url`; `sock`: its
    listener, already bound by `start` (cli/listeners.py), else it binds its own."""
    if not options.console:
        yield
        return
    from ..console.app import is_loopback, serve
    from ..console.context import ConsoleContext
    from .start import in_process_client

    guarded = not is_loopback(options.console_address)
    guard = cluster.apiserver.guard
    if guarded and (guard is None or cluster.secure_url is None):
        raise CommandError(f"--console-address {options.console_address} is not loopback: the "
                           "console then asks for the secure port's credentials, but the API "
                           "server has no secure port with authentication (use "
                           "--console-address 127.0.0.1)")
    ctx = ConsoleContext(cluster.store, functools.partial(in_process_client, cluster.runner.app),
                         cluster, guard=guard, require_auth=guarded)
    try:
        server = await serve(ctx, options.console_address, options.console_port, sock)
    except OSError as exc:
        raise CommandError(f"cannot serve the console on {options.console_address}:"
                           f"{options.console_port}: {exc.strerror or exc} (use --console-port, "
                           "or --no-console)") from None
    cluster.console_url = server.url
    try:
        yield
    finally:
        cluster.console_url = None
        await server.close()
