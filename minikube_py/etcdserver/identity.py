"""Who this etcd server says it is: cluster and member ids, name, URLs, version, raft term.

etcd piece: etcdserver/api/membership (the member and cluster ids every ResponseHeader carries)
and version.Version. We serve one member that is always its own leader, so the raft term is a
constant 1 and the raft index follows the store revision. Ids are derived from the member name
and client URL like etcd derives them from its peer URLs (a hash), so they are stable across
restarts of one configuration and differ between configurations.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

#: The etcd API version we speak (rpc.proto of etcd v3.5); etcdctl shows it as the server version.
SERVER_VERSION = "3.5.0"
RAFT_TERM = 1


@dataclass(frozen=True)
class Identity:
    name: str = "minikube-py"
    client_urls: tuple[str, ...] = ()
    cluster_id: int = field(default=0)
    member_id: int = field(default=0)

    @classmethod
    def create(cls, name: str, client_urls: tuple[str, ...]) -> Identity:
        digest = hashlib.sha256(f"{name}|{'|'.join(client_urls)}".encode()).digest()
        member_id = int.from_bytes(digest[:8], "big") or 1
        cluster_id = int.from_bytes(digest[8:16], "big") or 1
        return cls(name, client_urls, cluster_id, member_id)
