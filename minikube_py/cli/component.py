"""`minikube-py component list|pause NAME|resume NAME`: pause the scheduler or a controller.

Kubernetes piece: none (minikube_py/pausing.py says why pausing exists). The command talks
to the all-in-one's API server (`/debug/components`, apiserver/debug_components.py) with the
API server's credentials — --master, or --kubeconfig (the admin token `start` writes) — as
`minikube-py node` does, so it works on the secure port as a cluster-admin would.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any
from urllib.parse import quote

import orjson

from . import runtime
from .component_settings import API_CLIENT
from .node import failure_message
from .settings import add_flags, resolve
from .storage_target import CommandError

PATH = "/debug/components"


def register(subparsers: argparse._SubParsersAction,
             parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "component", parents=parents,
        help="list, pause or resume the scheduler and the controllers",
        description="Pause the scheduler or a controller (it stops taking work; its queue keeps "
        "filling) and resume it (the backlog drains). `list` shows every pausable component.")
    parser.add_argument("action", choices=("list", "pause", "resume"))
    parser.add_argument("name", nargs="?", default="",
                        help="the component: scheduler, or a --controllers name such as "
                        "replicaset, deployment, nodelifecycle")
    add_flags(parser, API_CLIENT)
    parser.set_defaults(run=run, command="component")


def run(args: argparse.Namespace) -> int:
    if args.action != "list" and not args.name:
        raise CommandError(f"component {args.action}: which component? (minikube-py component "
                           "list shows them)")
    return runtime.run(act(args))


def action_path(action: str, name: str) -> str:
    """The endpoint's path for `action` (list, pause, resume) on `name`."""
    return PATH if action == "list" else f"{PATH}/{quote(name, safe='')}/{action}"


def format_table(components: list[dict[str, Any]], now: float) -> str:
    """`kubectl get`-style columns: NAME KIND STATUS SINCE (age of the last change)."""
    rows = [("NAME", "KIND", "STATUS", "SINCE")]
    for component in components:
        rows.append((str(component["name"]), str(component["kind"]),
                     "Paused" if component["paused"] else "Running",
                     _age(now - float(component["since"]))))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "".join("   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
                   + "   " + row[3] + "\n" for row in rows)


def _age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 7200:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h"


async def act(args: argparse.Namespace) -> int:
    import aiohttp

    from .component_process import http_client

    settings = resolve(args, API_CLIENT, {})
    client = http_client(settings, "minikube-py")
    where = getattr(client.transport, "base_url", settings["master"])
    method = "GET" if args.action == "list" else "POST"
    try:
        answer = await client.transport.request(method, action_path(args.action, args.name))
    except aiohttp.ClientError as exc:
        raise CommandError(f"cannot reach the API server at {where}: {exc}") from None
    finally:
        await client.close()
    if answer.status != 200:
        what = f"component {args.name}" if args.name else "components"
        raise CommandError(f"{what}: {failure_message(answer.status, answer.body)}")
    doc = orjson.loads(answer.body)
    if args.action == "list":
        sys.stdout.write(format_table(doc["components"], time.time()))
    else:
        sys.stdout.write(f"component {doc['name']}: {'paused' if doc['paused'] else 'resumed'}\n")
    return 0
