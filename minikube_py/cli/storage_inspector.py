"""`minikube-py storage ls|get|history|watch|compact`: look inside the store.

Kubernetes v1.0 piece: what operators did with `etcdctl ls/get/watch` against the cluster's
etcd (`etcdctl ls --recursive /registry`, `etcdctl watch --recursive /registry/pods`), and
etcdctl's compaction. Every command works on both backends (a data dir, held by a running
server or not, or a real etcd — see storage_target.py) because it uses the Store contract
only. `history` in particular asks no backend-specific question: it watches one key from the
compaction point and keeps that key's events up to the current revision.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Awaitable, Callable

from ..storage import (
    CompactedError,
    DataDirLockedError,
    Event,
    EventType,
    KeyNotFoundError,
    Store,
    Watch,
)
from ..storage.history import HistoryTimeoutError, collect_history
from . import output, runtime
from .storage_target import (
    CommandError,
    add_target_flags,
    open_reader,
    open_writer,
    target_from_args,
)

Command = Callable[[argparse.Namespace, Store], Awaitable[int]]


def register(subparsers: argparse._SubParsersAction, parents: list[argparse.ArgumentParser]) -> None:
    storage = subparsers.add_parser(
        "storage",
        help="inspect the store (keys, values, history, watch, compaction)",
        description="Inspect the store of a data dir (also while a server holds it, read-only) "
        "or of a real etcd.",
    )
    commands = storage.add_subparsers(dest="storage_command", metavar="COMMAND", required=True)

    def command(name: str, about: str, fn: Command, *, write: bool = False) -> argparse.ArgumentParser:
        parser = commands.add_parser(name, help=about, description=about, parents=parents)
        add_target_flags(parser)
        parser.set_defaults(
            run=lambda args: run_command(args, fn, write=write), command=f"storage {name}"
        )
        return parser

    ls = command("ls", "list keys under a prefix", ls_command)
    ls.add_argument("prefix", nargs="?", default="/", metavar="PREFIX", help="key prefix (default /)")
    ls.add_argument("--revision", type=_revision, default=0, help="read at this revision")
    ls.add_argument("--limit", type=_non_negative, default=0, help="at most N keys (0 = all)")
    ls.add_argument("-o", "--output", choices=output.OUTPUT_FORMATS, default="table")

    get = command("get", "print one key's value", get_command)
    get.add_argument("key", metavar="KEY")
    get.add_argument("--revision", type=_revision, default=0, help="read at this revision")
    get.add_argument("-o", "--output", choices=("value", "json", "table"), default="value")

    history = command(
        "history", "every retained revision of one key, deletions included", history_command
    )
    history.add_argument("key", metavar="KEY")
    history.add_argument("-o", "--output", choices=("table", "json"), default="table")

    watch = command("watch", "print changes under a prefix until Ctrl-C", watch_command)
    watch.add_argument("prefix", nargs="?", default="/", metavar="PREFIX", help="key prefix (default /)")
    watch.add_argument(
        "--revision", type=_revision, default=0, help="start at this revision (default: the next)"
    )
    watch.add_argument(
        "--timeout", type=float, default=0.0, metavar="SECONDS", help="stop after this long"
    )
    watch.add_argument("-o", "--output", choices=("table", "json"), default="table")

    compact = command("compact", "discard history before a revision", compact_command, write=True)
    compact.add_argument("revision", nargs="?", type=_revision, default=0, metavar="REVISION",
                         help="compact up to this revision (default: the current one)")


def _revision(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("a revision is a positive number")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must not be negative")
    return value


def run_command(args: argparse.Namespace, fn: Command, *, write: bool) -> int:
    target = target_from_args(args)

    async def body() -> int:
        if write:
            try:
                store = await open_writer(target)
            except DataDirLockedError as exc:
                raise CommandError(
                    f"data dir {exc.path} is held by running process "
                    f"{exc.holder_pid or '(unknown pid)'}: it can only be read from here. That "
                    "server compacts its history itself, every 5 minutes."
                ) from exc
        else:
            store = await open_reader(target)
        try:
            return await fn(args, store)
        finally:
            await store.close()

    return runtime.run(body())


def out(text: str = "") -> None:
    print(text, flush=True)


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------- ls, get


async def ls_command(args: argparse.Namespace, store: Store) -> int:
    result = await store.range(args.prefix, limit=args.limit, revision=args.revision)
    # an empty prefix that names a resource stored elsewhere: said on stderr after the
    # summary, so stdout stays the listing
    hint = None if result.kvs else await layout_hint(store, args.prefix, result.revision)
    if args.output == "json":
        out(output.dumps({
            "revision": result.revision,
            "count": len(result.kvs),
            "more": result.more,
            "remaining": result.remaining,
            "kvs": [output.kv_json(kv) for kv in result.kvs],
        }))
        if hint:
            note(hint)
        return 0
    if args.output == "keys":
        for kv in result.kvs:
            out(kv.key)
    elif result.kvs:
        out(output.table(output.KV_COLUMNS, map(output.kv_row, result.kvs)))
    summary = f"{len(result.kvs)} keys under {args.prefix!r} at revision {result.revision}"
    if result.more:
        summary += f"; {result.remaining} more not shown (--limit {args.limit})"
    if args.output == "table" or not result.kvs:
        note(summary)
    if hint:
        note(hint)
    return 0


async def layout_hint(store: Store, prefix: str, revision: int) -> str | None:
    """For an empty prefix that names a resource stored elsewhere (`/registry/nodes/`), where
    its keys are — said only when that place holds keys at `revision`."""
    from .key_layout import registry_synonyms, suggest

    suggestion = suggest(prefix, registry_synonyms())
    if suggestion is None:
        return None
    found = await store.range(suggestion.stored_prefix, limit=1, revision=revision)
    return suggestion.message() if found.kvs else None


async def get_command(args: argparse.Namespace, store: Store) -> int:
    kv = await store.get(args.key, revision=args.revision)
    if args.output == "json":
        out(output.dumps(output.kv_json(kv)))
    elif args.output == "table":
        out(output.table(output.KV_COLUMNS, [output.kv_row(kv)]))
    else:
        text, remark = output.value_text(kv.value)
        if remark:
            note(f"({remark})")
        out(text)
    return 0


# -------------------------------------------------------------------------------- history


async def history_command(args: argparse.Namespace, store: Store) -> int:
    try:
        events, live, current, start = await collect_history(store, args.key)
    except HistoryTimeoutError as exc:
        raise CommandError(str(exc)) from None
    # The live value's write can predate the retained history: show it, marked.
    carried = live is not None and not any(e.revision == live.mod_revision for e in events)
    if carried:
        events.insert(0, Event(EventType.PUT, live, None))
    if not events:
        if start <= 1:
            raise KeyNotFoundError(args.key)
        raise CommandError(f"no retained history for {args.key} (kept from revision {start})")
    if args.output == "json":
        out(output.dumps({
            "key": args.key,
            "revision": current,
            "history_from_revision": start,
            "events": [
                {**output.event_json(e), "before_history": carried and i == 0}
                for i, e in enumerate(events)
            ],
        }))
        return 0
    rows = [
        output.history_row(e, marker="*" if carried and i == 0 else "") for i, e in enumerate(events)
    ]
    out(output.table(output.HISTORY_COLUMNS, rows))
    if carried:
        note(f"* the value written at revision {live.mod_revision}, before the retained history "
             f"(kept from revision {start})")
    elif start > 1:
        note(f"history is kept from revision {start}; earlier revisions are compacted")
    return 0


# ---------------------------------------------------------------------------------- watch


async def watch_command(args: argparse.Namespace, store: Store) -> int:
    stop = runtime.stop_on_signals()
    try:
        start = args.revision or await store.current_revision() + 1
        watch = await store.watch(args.prefix, start_revision=start)
        note(f"watching {args.prefix!r} from revision {start} (Ctrl-C to stop)")
        try:
            await _print_events(watch, stop, args.timeout, args.output)
        finally:
            await watch.cancel()
    finally:
        runtime.restore_signals()
    return 0


async def _print_events(watch: Watch, stop: asyncio.Event, timeout: float, fmt: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout if timeout > 0 else None
    stopped = asyncio.ensure_future(stop.wait())
    try:
        while not stop.is_set():
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return
            batch_task = asyncio.ensure_future(watch.next_batch())
            await asyncio.wait({batch_task, stopped}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            if not batch_task.done():
                batch_task.cancel()
                try:
                    await batch_task
                except asyncio.CancelledError:
                    pass
                return
            batch = batch_task.result()  # raises what ended the watch (e.g. CompactedError)
            if not batch:
                return
            for event in batch:
                if fmt == "json":
                    out(output.dumps_line(output.event_json(event)))
                else:
                    out(output.event_line(event))
    finally:
        stopped.cancel()


# -------------------------------------------------------------------------------- compact


async def compact_command(args: argparse.Namespace, store: Store) -> int:
    current = await store.current_revision()
    before = await store.compact_revision()
    revision = args.revision or current
    if revision <= before:
        if not args.revision:
            note(f"nothing to compact: history is already compacted to revision {before}")
            return 0
        raise CommandError(f"history is already compacted to revision {before}")
    try:
        await store.compact(revision)
    except CompactedError as exc:
        raise CommandError(f"history is already compacted to revision {exc.compact_revision}") from exc
    out(f"compacted history to revision {revision} (was {before}; current revision {current})")
    return 0
