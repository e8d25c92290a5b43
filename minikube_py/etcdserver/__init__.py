"""etcd's v3 gRPC API over the embedded store (issue 23): etcdctl, etcd client libraries and a
kube-apiserver can use our store as their etcd.

etcd piece: etcdserver/api/v3rpc (the KV, Watch, Lease, Maintenance, Cluster and Auth services)
in front of mvcc — here in front of the Store contract's TxnStore (storage/interface.py). One
module per service; messages.py builds the message classes from etcd's .proto files (proto/,
etcd v3.5) at import. Importing this package needs no grpcio; serving does
(`pip install 'minikube_py[etcd-server]'`).
"""

from .serving import ListenError, parse_listen, serve_store

__all__ = ["ListenError", "parse_listen", "serve_store"]
