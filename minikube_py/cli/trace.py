"""`minikube-py trace pod NAME [-n NS] [--follow]`: a pod's journey through the control plane.

Kubernetes piece: none upstream; it reads the API server's `/debug/trace` stream (the trace
ring, minikube_py.trace) for one pod — its requests, store revisions, the scheduler's decision
with per-node filter and score summary, the binding, the kubelet's state changes — and prints
them as a timeline, like `kubectl get -w` for the insides. Without --follow it replays what the
ring holds (record from the start with `minikube-py start --trace`); with --follow it keeps
printing as things happen until interrupted. Colours (rich) when writing to a terminal,
plain text otherwise.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from . import runtime
from .component_settings import API_CLIENT
from .settings import add_flags
from .storage_target import CommandError
from .user_target import describe, user_client_settings

STYLES = {"created": "bold green", "scheduled": "bold cyan", "unschedulable": "bold red",
          "bound": "bold cyan", "running": "bold green", "kubelet": "yellow",
          "deleted": "bold red", "request": "dim", "watch": "dim", "stored": "",
          "reconcile": "magenta"}


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "trace", parents=parents, help="show a pod's journey from the API server's trace",
        description="Print the journey of a pod (created, scheduled, bound, kubelet states, "
        "Running, with the requests and store revisions on the way) from the API server's "
        "/debug/trace stream.")
    parser.add_argument("what", choices=("pod",), help="what to trace (pod)")
    parser.add_argument("name", help="the pod's name")
    parser.add_argument("-n", "--namespace", default="default", help="the pod's namespace")
    parser.add_argument("-f", "--follow", action="store_true",
                        help="keep printing as the journey goes on (until interrupted)")
    parser.add_argument("--watches", action="store_true",
                        help="also show each watch delivery of the pod's events")
    add_flags(parser, API_CLIENT)
    parser.set_defaults(run=run, command="trace")


def run(args: argparse.Namespace) -> int:
    return runtime.run(show(args))


def printer() -> Any:
    """A function printing one Line: rich's console on a terminal, plain text otherwise."""
    if sys.stdout.isatty():
        try:
            from rich.console import Console
            from rich.text import Text
        except ImportError:
            pass
        else:
            console = Console()

            def fancy(line: Any) -> None:
                text = Text(f"{line.offset * 1000:>9.1f} ms  ", style="dim")
                text.append(f"{line.label:<13} ", style=STYLES.get(line.label, ""))
                text.append(line.text)
                console.print(text, highlight=False, soft_wrap=True)
            return fancy

    def plain(line: Any) -> None:
        sys.stdout.write(line.plain() + "\n")
        sys.stdout.flush()
    return plain


async def show(args: argparse.Namespace) -> int:
    import aiohttp

    from ..client.errors import StatusError
    from ..trace.eventstream import EventParser
    from ..trace.journey import Timeline
    from .component_process import http_client

    settings = user_client_settings(args)
    client = http_client(settings, "minikube-py-trace")
    query = {"object": f"{args.namespace}/{args.name}", "resource": "pods",
             "follow": "true" if args.follow else "false"}
    parser, timeline, emit = EventParser(), Timeline(watches=args.watches), printer()
    shown = 0
    try:
        async for raw in client.transport.stream("/debug/trace", query=query):
            event = parser.feed(raw.decode("utf-8", "replace"))
            if event is None:
                continue
            if event.event == "lost":
                sys.stdout.write(f"({event.data} earlier trace records are no longer in "
                                 "the ring)\n")
                continue
            line = timeline.line(orjson.loads(event.data))
            if line is not None:
                emit(line)
                shown += 1
    except StatusError as exc:
        raise CommandError(f"/debug/trace: {exc}") from None
    except (OSError, aiohttp.ClientError) as exc:
        raise CommandError(f"cannot read the trace at {describe(settings)}: {exc}") from None
    finally:
        await client.close()
    if not shown and not args.follow:
        sys.stdout.write(f"no trace records of pod {args.namespace}/{args.name} (the ring "
                         "records while a viewer is attached, or always with `start --trace`)\n")
    return 0
