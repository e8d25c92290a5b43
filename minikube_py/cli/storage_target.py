"""Which store a command talks to: the embedded store's data dir, or a real etcd.

Kubernetes v1.0 piece: the storage flags of cmd/kube-apiserver/app (--etcd-servers) and
etcd's own --data-dir for the embedded store. The keys themselves already start with
`/registry/...` (the API server's --etcd-prefix builds them); `--etcd-key-prefix` is an extra
namespace the etcd backend prepends to every key, so several clusters can share one etcd, and
keys are shown without it, as the API server sees them.

Why reads never open an EmbeddedStore: opening one takes the data dir's lock, truncates a torn
tail, deletes obsolete files and opens a segment for appending. A read command must do none of
that, whether or not a server holds the directory, so reads always go through ReadOnlyStore.
Only `storage compact` opens the directory for writing, and fails naming the holder's pid if a
server has it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from ..storage import EmbeddedStore, Store, UnavailableError
from ..storage.readonly import ReadOnlyStore

DEFAULT_DATA_DIR = "~/.minikube-py/data"
DEFAULT_ETCD_KEY_PREFIX = ""


class CommandError(Exception):
    """A command cannot do what was asked; the message is the one line the user sees."""

    exit_code = 1


class ConfigError(CommandError):
    """A flag or config-file setting is wrong (usage error: exit code 2, like argparse)."""

    exit_code = 2


@dataclass(frozen=True)
class Target:
    """A data dir (etcd_servers empty) or an etcd cluster."""

    data_dir: Path
    etcd_servers: tuple[str, ...] = ()
    etcd_key_prefix: str = DEFAULT_ETCD_KEY_PREFIX

    @property
    def is_etcd(self) -> bool:
        return bool(self.etcd_servers)

    def describe(self) -> str:
        if self.is_etcd:
            return f"etcd {','.join(self.etcd_servers)} (prefix {self.etcd_key_prefix or '(none)'})"
        return f"data dir {self.data_dir}"


def add_target_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("store")
    group.add_argument(
        "--data-dir",
        metavar="DIR",
        help=f"the embedded store's data directory (default {DEFAULT_DATA_DIR})",
    )
    group.add_argument(
        "--etcd-servers",
        metavar="HOST:PORT[,...]",
        help="use a real etcd cluster instead of a data dir",
    )
    group.add_argument(
        "--etcd-key-prefix",
        metavar="PREFIX",
        default=DEFAULT_ETCD_KEY_PREFIX,
        help="namespace prepended to every key in etcd, so clusters can share one etcd (default: none; the keys themselves already start with /registry)",
    )


def parse_servers(text: str) -> tuple[str, ...]:
    servers = tuple(part.strip() for part in text.split(",") if part.strip())
    if not servers:
        raise CommandError("--etcd-servers needs at least one host:port")
    return servers


def target_from_args(args: argparse.Namespace) -> Target:
    if args.etcd_servers and args.data_dir:
        raise CommandError("use either --data-dir or --etcd-servers, not both")
    data_dir = Path(args.data_dir or DEFAULT_DATA_DIR).expanduser()
    servers = parse_servers(args.etcd_servers) if args.etcd_servers is not None else ()
    return Target(data_dir, servers, args.etcd_key_prefix)


def check_data_dir(path: Path) -> None:
    """Refuse a directory that holds no store, with the command that would make one."""
    if not path.is_dir():
        raise CommandError(
            f"no data dir at {path} (a server creates it: minikube-py start --data-dir {path})"
        )
    if not (path / "wal").is_dir():
        raise CommandError(f"{path} is not a minikube-py data dir (it has no wal/ directory)")


async def connect_etcd(servers: tuple[str, ...], prefix: str) -> Store:
    try:
        from ..storage.etcd_backend import EtcdStore
    except ImportError as exc:
        raise CommandError(
            f"the etcd backend is not installed ({exc}); pip install 'minikube_py[etcd]'"
        ) from exc
    try:
        return await EtcdStore.connect(list(servers), key_prefix=prefix)
    except UnavailableError as exc:
        raise CommandError(f"cannot reach etcd at {','.join(servers)}: {exc}") from exc


async def open_reader(target: Target) -> Store:
    """A store for reading that changes nothing: ReadOnlyStore on a data dir, or etcd."""
    if target.is_etcd:
        return await connect_etcd(target.etcd_servers, target.etcd_key_prefix)
    check_data_dir(target.data_dir)
    return await ReadOnlyStore.open(target.data_dir)


async def open_writer(target: Target) -> Store:
    """A store for writing. On a data dir this takes its lock, so it raises
    DataDirLockedError (naming the holder's pid) when a server holds it."""
    if target.is_etcd:
        return await connect_etcd(target.etcd_servers, target.etcd_key_prefix)
    check_data_dir(target.data_dir)
    return await EmbeddedStore.open(target.data_dir, compaction_interval=0)
