"""`minikube-py`: the one command line of the project; commands live in their own modules.

Kubernetes v1.0 piece: cmd/<component>/<component>.go — parse flags, initialise logs
(util.InitLogs), run the component's app, exit non-zero on error. What this module adds is one
error policy for every command: a failure the user can act on (a missing key, a compacted
revision, a locked or missing data dir, an unreachable etcd) prints one line to stderr and exits
1 — never a traceback. Set MINIKUBE_PY_DEBUG=1 to get the traceback of an unexpected error.
"""

from __future__ import annotations

import argparse
import os
import sys

from .. import __version__
from ..logs import FORMATS, LEVELS, configure_logging
from ..storage import StorageError
from . import (
    apiserver,
    component,
    controller_manager,
    etcd_server,
    kubeconfig,
    kubelet,
    node,
    scheduler,
    start,
    status,
    storage_inspector,
    trace,
)
from .storage_target import CommandError

PROG = "minikube-py"


def logging_flags(default_level: str) -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("logging")
    group.add_argument("--log-level", choices=tuple(LEVELS), default=default_level,
                       help=f"least severe level logged (default {default_level})")
    group.add_argument("--log-format", choices=FORMATS, default="console",
                       help="console (for people) or json (one object per line); default console")
    return parent


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="A mini Kubernetes control plane in one Python process, laid out like v1.0.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command_name", metavar="COMMAND")
    start.register(commands, [logging_flags("info")])
    apiserver.register(commands, [logging_flags("info")])
    scheduler.register(commands, [logging_flags("info")])
    controller_manager.register(commands, [logging_flags("info")])
    kubelet.register(commands, [logging_flags("info")])
    status.register(commands, [logging_flags("warning")])
    kubeconfig.register(commands, [logging_flags("warning")])
    node.register(commands, [logging_flags("warning")])
    trace.register(commands, [logging_flags("warning")])
    component.register(commands, [logging_flags("warning")])
    # Inspection prints results on stdout; only warnings belong beside them.
    storage_inspector.register(commands, [logging_flags("warning")])
    etcd_server.register(commands, [logging_flags("info")])
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if not hasattr(args, "run"):
        parser.print_help(sys.stderr)
        return 2
    configure_logging(level=args.log_level, fmt=args.log_format)
    try:
        return args.run(args)
    except KeyboardInterrupt:
        return 130
    except (StorageError, CommandError, OSError) as exc:
        print(f"{PROG} {args.command}: error: {describe(exc)}", file=sys.stderr)
        return exc.exit_code if isinstance(exc, CommandError) else 1
    except Exception as exc:  # noqa: BLE001 - one line, unless debugging
        if os.environ.get("MINIKUBE_PY_DEBUG"):
            raise
        print(
            f"{PROG} {args.command}: internal error: {type(exc).__name__}: {exc} "
            "(set MINIKUBE_PY_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        return 1


def describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, StorageError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return str(exc)


if __name__ == "__main__":
    sys.exit(main())
