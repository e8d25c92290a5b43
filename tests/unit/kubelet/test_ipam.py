"""Pod IPs from the podCIDR: .0 and .1 never, lowest free first, freed reused."""

from __future__ import annotations

from minikube_py.kubelet.ipam import PodIPAllocator


def test_allocates_from_2_and_reuses_freed_addresses() -> None:
    ipam = PodIPAllocator("10.244.3.0/24")
    assert [ipam.allocate() for _ in range(3)] == ["10.244.3.2", "10.244.3.3", "10.244.3.4"]
    ipam.release("10.244.3.3")
    assert ipam.allocate() == "10.244.3.3"
    assert ipam.allocate() == "10.244.3.5"
    assert ipam.in_use == 4


def test_exhaustion_and_reserve() -> None:
    ipam = PodIPAllocator("10.0.0.0/29")  # .2 .. .6
    assert ipam.reserve("10.0.0.4")
    assert not ipam.reserve("10.0.0.4")
    assert not ipam.reserve("10.0.0.1") and not ipam.reserve("10.0.1.2")
    got = [ipam.allocate() for _ in range(5)]
    assert got == ["10.0.0.2", "10.0.0.3", "10.0.0.5", "10.0.0.6", None]
    ipam.release("10.0.0.4")
    assert ipam.allocate() == "10.0.0.4"
