"""`minikube-py node stop|start NAME`: kill or revive a simulated node's kubelet.

Kubernetes piece: none — on a real cluster a learner would `systemctl stop kubelet` on the
machine. Here the node's kubelet is told over its HTTP toggle (`POST /nodes/{name}/stop|start`),
reached the way upstream users reach a kubelet's API: through the API server's
`nodes/{name}/proxy` (`kubectl get --raw /api/v1/nodes/node-1/proxy/pods`). So the command
needs only the API server's credentials (--master, or --kubeconfig: the admin token `start`
writes), and the API server, which knows how its kubelets are secured, presents its
kubelet-client certificate. A stopped kubelet posts no heartbeats: after
--node-monitor-grace-period the node controller marks the node Ready=Unknown, after
--pod-eviction-timeout its pods are evicted; `start` makes it Ready again.
"""

from __future__ import annotations

import argparse
import sys
from urllib.parse import quote

import orjson

from . import runtime
from .component_settings import API_CLIENT
from .settings import add_flags
from .storage_target import CommandError
from .user_target import user_client_settings


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


def failure_message(status: int, body: bytes) -> str:
    """What went wrong, from a Status (the API server's), the kubelet's JSON `message`, or
    its plain text (401 `Unauthorized`, 403 `Forbidden (user=...)`)."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and doc.get("message"):
        return str(doc["message"])
    return body.decode(errors="replace").strip() or f"the server answered {status}"


def toggle_path(name: str, action: str) -> str:
    """The API path of a node's toggle, through the nodes/proxy subresource."""
    node = quote(name, safe="")
    return f"/api/v1/nodes/{node}/proxy/nodes/{node}/{action}"


async def toggle(args: argparse.Namespace) -> int:
    import aiohttp

    from .component_process import http_client

    settings = user_client_settings(args)
    client = http_client(settings, "minikube-py")
    where = getattr(client.transport, "base_url", settings["master"])
    try:
        answer = await client.transport.request("POST", toggle_path(args.name, args.action))
    except aiohttp.ClientError as exc:
        raise CommandError(f"cannot reach the API server at {where}: {exc}") from None
    finally:
        await client.close()
    if answer.status != 200:
        raise CommandError(f"node {args.name}: {failure_message(answer.status, answer.body)}")
    sys.stdout.write(f"node {args.name}: kubelet {'stopped' if args.action == 'stop' else 'started'}\n")
    return 0
