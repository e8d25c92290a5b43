"""Client-side caches (Kubernetes v1.0 pkg/client/cache): the keyed store with indexes, the
FIFO, the reflector that keeps a store in step with the API server, and informers."""

from .factory import InformerFactory
from .fifo import FIFO
from .filtered import FilteredInformer
from .informer import Informer, strip_managed_fields
from .reflector import Reflector
from .store import NAMESPACE_INDEX, Indexer, meta_namespace_index, meta_namespace_key

__all__ = ["FIFO", "FilteredInformer", "Indexer", "InformerFactory", "Informer", "NAMESPACE_INDEX", "Reflector",
           "meta_namespace_index", "meta_namespace_key", "strip_managed_fields"]
