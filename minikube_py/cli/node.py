"""`minikube-py node stop|start NAME`: kill or revive a simulated node's kubelet.

Kubernetes piece: none — on a real cluster a learner would `systemctl stop kubelet` on the
machine. Here the node's kubelet is found the way the API server finds it for logs (the
Node's InternalIP and status.daemonEndpoints.kubeletEndpoint.Port) and told over its HTTP
toggle (`POST /nodes/{name}/stop|start`). A stopped kubelet posts no heartbeats: after
--node-monitor-grace-period the node controller marks the node Ready=Unknown, after
--pod-eviction-timeout its pods are evicted; `start` makes it Ready again.
"""

from __future__ import annotations

import argparse
import sys

from . import runtime
from .component_settings import API_CLIENT
from .settings import add_flags, resolve
from .storage_target import CommandError


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "node", parents=parents, help="stop or start a simulated node's kubelet",
        description="Stop (no more heartbeats, pods left alone) or start again the kubelet of "
        "a simulated node, to watch the node controller react.")
    parser.add_argument("action", choices=("stop", "start"))
    parser.add_argument("name", help="the node's name, e.g. node-1")
    add_flags(parser, API_CLIENT)
    parser.set_defaults(run=run, command="node")


def run(args: argparse.Namespace) -> int:
    return runtime.run(toggle(args))


async def toggle(args: argparse.Namespace) -> int:
    import aiohttp

    from ..api.errors import StatusError
    from ..apiserver.subresources import kubelet_base_url
    from ..client.resources import NODES
    from .component_process import http_client

    settings = resolve(args, API_CLIENT, {})
    server = settings["master"]
    client = http_client(settings, "minikube-py")
    try:
        node = await client.get(NODES, args.name)
    except StatusError as exc:
        raise CommandError(exc.message) from None
    except aiohttp.ClientError as exc:
        raise CommandError(f"cannot reach the API server at {server}: {exc}") from None
    finally:
        await client.close()
    try:
        url = f"{kubelet_base_url(node)}/nodes/{args.name}/{args.action}"
    except StatusError as exc:
        raise CommandError(exc.message) from None
    try:
        async with aiohttp.ClientSession() as session:
            async with session.post(url) as response:
                text = await response.text()
                if response.status != 200:
                    raise CommandError(f"the kubelet at {url} answered {response.status}: {text}")
    except aiohttp.ClientError as exc:
        raise CommandError(f"cannot reach the kubelet of {args.name} at {url}: {exc}") from None
    sys.stdout.write(f"node {args.name}: kubelet {'stopped' if args.action == 'stop' else 'started'}\n")
    return 0
