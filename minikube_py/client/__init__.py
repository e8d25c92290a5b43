"""The client library (Kubernetes v1.0 pkg/client + pkg/client/cache): the only way components
reach the cluster. A REST client over a transport (HTTP, or in-process through the API
server's handler pipeline), reflectors, informers with indexed caches, and the FIFO."""

from .errors import is_conflict, is_gone, is_not_found
from .http import HTTPTransport
from .inprocess import InProcessTransport
from .rest import Client, WatchEvent

__all__ = ["Client", "HTTPTransport", "InProcessTransport", "WatchEvent", "is_conflict", "is_gone", "is_not_found"]
