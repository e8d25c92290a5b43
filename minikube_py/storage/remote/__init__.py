"""The Store contract over a local socket: one process keeps the store, others use it.

Kubernetes piece: the kube-apiserver ↔ etcd link (`--etcd-servers`, clientv3 over gRPC) that
lets v1.0 run several API servers over one etcd, each with its own watch cache. Here the link
is msgpack frames over a Unix socket (`protocol.py`), pipelined and batched per event-loop
turn, with watches as streams on the same connection: measured cheaper per operation than
our etcd v3 gRPC server (docs/storage.md, "Several API servers over one store"). `StoreServer`
serves any Store; `RemoteStore` is a Store, so everything above the storage layer (registry,
watch caches, the conformance suite) runs over it unchanged. `CachingStore` keeps a copy of
every key in the API server's process and answers consistent reads from it once it has the
revision the store's process published on its `RevisionBoard` (upstream's consistent reads
from the watch cache, without the round trip).
"""

from .cached import CachingStore
from .client import RemoteStore
from .revision_board import PublishingStore, RevisionBoard
from .server import StoreServer

__all__ = ["CachingStore", "PublishingStore", "RemoteStore", "RevisionBoard", "StoreServer"]
