"""Client-side caches (client-go tools/cache, v1.0's pkg/client/cache): the keyed store with
indexes, the FIFO, the DeltaFIFO, the reflector that keeps a queue in step with the API
server, shared informers with their handlers, and listers."""

from .delta_fifo import (
    ADDED,
    DELETED,
    REPLACED,
    SYNC,
    UPDATED,
    DeletedFinalStateUnknown,
    Delta,
    DeltaFIFO,
    FIFOClosedError,
    Requeue,
)
from .factory import InformerFactory
from .fifo import FIFO
from .filtered import FilteredInformer
from .handlers import Listener, ResourceEventHandler
from .informer import Informer, strip_managed_fields
from .listers import Lister, NamespaceLister
from .reflector import Reflector
from .store import NAMESPACE_INDEX, Indexer, meta_namespace_index, meta_namespace_key

__all__ = [
    "ADDED",
    "DELETED",
    "FIFO",
    "NAMESPACE_INDEX",
    "REPLACED",
    "SYNC",
    "UPDATED",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "FIFOClosedError",
    "FilteredInformer",
    "Indexer",
    "Informer",
    "InformerFactory",
    "Listener",
    "Lister",
    "NamespaceLister",
    "Reflector",
    "Requeue",
    "ResourceEventHandler",
    "meta_namespace_index",
    "meta_namespace_key",
    "strip_managed_fields",
]
