"""The store's acknowledged revision in shared memory, for consistent reads from a cache.

Kubernetes piece: what 1.31's ConsistentListFromCache asks etcd for before it serves a read
from the watch cache — the current revision (`getCurrentResourceVersionFromStorage`, one etcd
round trip per read) — here an 8-byte integer every API server process maps from one file.

Why shared memory and not a call: a consistent read needs "every write acknowledged before I
started"; asking the store process costs a round trip through that process's event loop, which
on a loaded machine is most of a GET's latency. The store's process publishes, after every write
returns and before its caller can acknowledge it (`PublishingStore`), the store's revision; an
API server reads it with no syscall, waits until its cache has applied that revision, and serves.
A revision published is never lower than one already published (a reader can only wait longer,
never read stale data). The aligned 8-byte store is a single machine write on the platforms we
run on; a torn value could only be too high or too low by a carry, and a reader's wait is
bounded by a timeout that falls back to the store.
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path
from typing import Any

from ..interface import Store
from ..kv import KeyValue

_FORMAT = struct.Struct("<Q")


class RevisionBoard:
    """One revision in a shared file: `publish` (the store's process), `read` (API servers)."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = Path(path)
        flags = os.O_RDWR | (os.O_CREAT if create else 0)
        fd = os.open(self.path, flags, 0o600)
        try:
            if create:
                os.ftruncate(fd, _FORMAT.size)
            self._map = mmap.mmap(fd, _FORMAT.size)
        finally:
            os.close(fd)
        self._published = self.read()

    def read(self) -> int:
        return _FORMAT.unpack_from(self._map, 0)[0]

    def publish(self, revision: int) -> None:
        if revision > self._published:
            self._published = revision
            _FORMAT.pack_into(self._map, 0, revision)

    def close(self) -> None:
        self._map.close()


class PublishingStore:
    """`store`, publishing its revision on `board` after every write returns (so before any
    caller acknowledges the write to a client). Everything else passes through unchanged,
    including TxnStore's calls for the etcd server."""

    def __init__(self, store: Store, board: RevisionBoard) -> None:
        self._store = store
        self.board = board

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def _published(self, result: Any) -> Any:
        self.board.publish(await self._store.current_revision())
        return result

    async def create(self, key: str, value: bytes, *, lease: int = 0) -> KeyValue:
        return await self._published(await self._store.create(key, value, lease=lease))

    async def update(self, key: str, value: bytes, *, expected_mod_revision: int | None,
                     lease: int = 0) -> KeyValue:
        return await self._published(await self._store.update(
            key, value, expected_mod_revision=expected_mod_revision, lease=lease))

    async def delete(self, key: str, *, expected_mod_revision: int | None = None) -> KeyValue:
        return await self._published(await self._store.delete(
            key, expected_mod_revision=expected_mod_revision))

    async def revoke_lease(self, lease_id: int) -> None:
        await self._published(await self._store.revoke_lease(lease_id))

    async def txn(self, txn: Any) -> Any:
        return await self._published(await self._store.txn(txn))  # type: ignore[attr-defined]
