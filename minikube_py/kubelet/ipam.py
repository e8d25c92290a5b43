"""Pod IPs from the node's podCIDR, lowest free address first, freed addresses reused.

Kubernetes piece: the host-local IPAM of the kubenet / bridge CNI plugin the kubelet calls when
it creates a pod sandbox (v1.0: the docker bridge cbr0 over the node's PodCIDR). As upstream,
the network address and the first host (the bridge's gateway, `.1`) are never handed out, nor
the broadcast address.
"""

from __future__ import annotations

import heapq
import ipaddress


class PodIPAllocator:
    def __init__(self, cidr: str) -> None:
        self.network = ipaddress.ip_network(cidr, strict=False)
        self._first = int(self.network.network_address) + 2  # .0 network, .1 gateway
        self._last = int(self.network.broadcast_address) - 1
        self._next = self._first  # never handed out at or above this
        self._free: list[int] = []  # freed addresses below _next (a heap)
        self._used: set[int] = set()

    @property
    def in_use(self) -> int:
        return len(self._used)

    def allocate(self) -> str | None:
        """The lowest free address, None when the range is exhausted."""
        while self._free:
            candidate = heapq.heappop(self._free)
            if candidate not in self._used:
                self._used.add(candidate)
                return str(ipaddress.ip_address(candidate))
        while self._next <= self._last:
            candidate = self._next
            self._next += 1
            if candidate not in self._used:
                self._used.add(candidate)
                return str(ipaddress.ip_address(candidate))
        return None

    def reserve(self, ip: str) -> bool:
        """Mark `ip` taken (a pod adopted with its IP); False if outside the range or taken."""
        try:
            value = int(ipaddress.ip_address(ip))
        except ValueError:
            return False
        if not self._first <= value <= self._last or value in self._used:
            return False
        self._used.add(value)
        return True

    def release(self, ip: str | None) -> None:
        if not ip:
            return
        try:
            value = int(ipaddress.ip_address(ip))
        except ValueError:
            return
        if value in self._used:
            self._used.discard(value)
            if value < self._next:
                heapq.heappush(self._free, value)
