"""Storage: the Store contract and its two backends.

Kubernetes v1.0 piece: pkg/storage and pkg/tools (etcd_helper.go) plus the etcd server itself.
`EmbeddedStore` is an etcd-like MVCC store inside our process; `EtcdStore` (optional extra
`minikube_py[etcd]`) talks to a real etcd v3 cluster. Both satisfy `Store` and pass one
conformance suite.
"""

from .continuation import decode_continue, encode_continue
from .datadir import DataDirLockedError
from .embedded import EmbeddedStore
from .errors import (
    MAX_VALUE_BYTES,
    CompactedError,
    ConflictError,
    FutureRevisionError,
    InvalidContinueError,
    KeyExistsError,
    InvalidTxnError,
    KeyNotFoundError,
    LeaseExistsError,
    LeaseNotFoundError,
    StorageError,
    StorageFullError,
    UnavailableError,
    ValueTooLargeError,
    WatchCancelledError,
)
from .interface import Store, TxnStore, Watch
from .kv import Event, EventType, KeyValue, LeaseInfo, RangeResult, prefix_end
from .readonly import ReadOnlyStore
from .snapshot import SnapshotCorruptError
from .wal import WALCorruptError

__all__ = [
    "MAX_VALUE_BYTES",
    "CompactedError",
    "ConflictError",
    "DataDirLockedError",
    "EmbeddedStore",
    "Event",
    "EventType",
    "FutureRevisionError",
    "InvalidContinueError",
    "KeyExistsError",
    "InvalidTxnError",
    "KeyNotFoundError",
    "LeaseExistsError",
    "KeyValue",
    "LeaseInfo",
    "LeaseNotFoundError",
    "RangeResult",
    "ReadOnlyStore",
    "SnapshotCorruptError",
    "StorageError",
    "StorageFullError",
    "Store",
    "TxnStore",
    "UnavailableError",
    "ValueTooLargeError",
    "WALCorruptError",
    "Watch",
    "WatchCancelledError",
    "decode_continue",
    "encode_continue",
    "prefix_end",
]
