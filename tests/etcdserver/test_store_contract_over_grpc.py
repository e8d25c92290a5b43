"""The Store conformance suite, run through our etcd server: EtcdStore (aetcd, gRPC) -> our
etcd v3 server -> the embedded store. The same test bodies pass against Debian's etcd
(tests/conformance, backend "etcd"), so where they pass here our server answers as etcd does."""

from tests.conformance.test_store_contract import *
