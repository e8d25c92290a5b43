"""`minikube-py status`: components, nodes and pods of a running cluster, at a glance.

Kubernetes piece: `kubectl get componentstatuses` + `kubectl get nodes` + a pod count by
phase, in one command, read through the API like any client (works against `start` and the
separate-process layout alike). Exit code 0 when the API server answers and every component
is Healthy and every node Ready, 1 otherwise.
"""

from __future__ import annotations

import argparse
import collections
import sys

from . import runtime
from .component_settings import API_CLIENT
from .settings import add_flags
from .storage_target import CommandError
from .user_target import describe, user_client_settings


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "status", parents=parents, help="show components, nodes and pods of a cluster",
        description="Show the health of a running cluster's components, its nodes and its "
        "pods by phase.")
    add_flags(parser, API_CLIENT)
    parser.set_defaults(run=run, command="status")


def run(args: argparse.Namespace) -> int:
    return runtime.run(show(args))


def condition_status(obj: dict, kind: str) -> str:
    """The status of condition `kind` ("Unknown" if absent) — of a Node (status.conditions)
    or a ComponentStatus (conditions at the top level)."""
    for c in (obj.get("status") or {}).get("conditions") or obj.get("conditions") or ():
        if c.get("type") == kind:
            return str(c.get("status"))
    return "Unknown"


async def show(args: argparse.Namespace) -> int:
    from ..client.errors import StatusError
    from ..client.resources import COMPONENTSTATUSES, NODES, PODS
    from .component_process import http_client

    settings = user_client_settings(args)
    server = describe(settings)
    client = http_client(settings, "minikube-py")
    try:
        try:
            components = (await client.list(COMPONENTSTATUSES)).get("items", [])
            nodes = (await client.list(NODES)).get("items", [])
            pods = (await client.list(PODS)).get("items", [])
        except (OSError, StatusError) as exc:
            raise CommandError(f"cannot reach the API server at {server}: {exc}") from None
        except Exception as exc:  # aiohttp's connection errors
            raise CommandError(f"cannot reach the API server at {server}: {exc}") from None
    finally:
        await client.close()
    healthy = True
    out = [f"API server  {server}", "", "COMPONENT            STATUS"]
    for item in sorted(components, key=lambda i: i["metadata"]["name"]):
        ok = condition_status(item, "Healthy") == "True"
        healthy &= ok
        out.append(f"{item['metadata']['name']:<20} {'Healthy' if ok else 'Unhealthy'}")
    per_node = collections.Counter((p.get("spec") or {}).get("nodeName") or "" for p in pods)
    out += ["", "NODE                 STATUS     PODS"]
    for node in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        name = node["metadata"]["name"]
        ready = condition_status(node, "Ready")
        healthy &= ready == "True"
        state = {"True": "Ready", "False": "NotReady"}.get(ready, "Unknown")
        out.append(f"{name:<20} {state:<10} {per_node.get(name, 0)}")
    phases = collections.Counter((p.get("status") or {}).get("phase") or "Pending" for p in pods)
    summary = ", ".join(f"{n} {phase}" for phase, n in sorted(phases.items())) or "none"
    out += ["", f"PODS  {len(pods)} ({summary}); {per_node.get('', 0)} not scheduled"]
    sys.stdout.write("\n".join(out) + "\n")
    return 0 if healthy else 1
