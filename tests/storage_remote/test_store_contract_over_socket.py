"""The Store conformance suite over the remote transport: RemoteStore -> Unix socket ->
StoreServer -> the embedded store. The same test bodies pass against the embedded store in
process and against Debian's etcd (tests/conformance), so where they pass here the transport
keeps the contract: revisions, CAS, errors, watch order, compaction, leases."""

from tests.conformance.test_store_contract import *
