"""pod_cidr_for: every simulated node gets its own /24, beyond the 3072 that fit in 10.244/14."""

import ipaddress

from minikube_py.kubelet.pool import pod_cidr_for


def test_first_blocks_follow_upstream_cluster_cidr():
    assert pod_cidr_for(0) == "10.244.0.0/24"
    assert pod_cidr_for(255) == "10.244.255.0/24"
    assert pod_cidr_for(256) == "10.245.0.0/24"
    assert pod_cidr_for(3071) == "10.255.255.0/24"


def test_past_10_255_wraps_to_10_1_and_never_overlaps():
    assert pod_cidr_for(3072) == "10.1.0.0/24"
    cidrs = [pod_cidr_for(i) for i in range(65_280)]
    assert len(set(cidrs)) == len(cidrs)
    services = ipaddress.ip_network("10.0.0.0/16")
    for cidr in cidrs[3072::997]:
        network = ipaddress.ip_network(cidr)
        assert not network.overlaps(services)
