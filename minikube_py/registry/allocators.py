"""Service cluster IP and NodePort allocation, persisted as RangeAllocation objects.

Kubernetes v1.0 piece: pkg/registry/service/ipallocator and portallocator with their etcd
controller (`/registry/ranges/serviceips`, `/registry/ranges/servicenodeports`). The bitmap of
taken values is stored as a RangeAllocation (`range`, base64 `data`) and every change is one
compare-and-swap on that key, so two API servers sharing an etcd never hand out the same IP —
the guarantee v1.0 got from etcd, which an in-memory set would lose.
"""

from __future__ import annotations

import base64
import ipaddress
import random

import orjson

from ..api import errors
from ..storage import ConflictError, KeyExistsError, KeyNotFoundError, Store


class RangeFullError(Exception):
    pass


class _Bitmap:
    def __init__(self, size: int, data: bytes = b"") -> None:
        self.size = size
        self.bits = int.from_bytes(data, "little") if data else 0

    def taken(self, offset: int) -> bool:
        return bool(self.bits >> offset & 1)

    def set(self, offset: int, value: bool) -> None:
        if value:
            self.bits |= 1 << offset
        else:
            self.bits &= ~(1 << offset)

    def data(self) -> bytes:
        return self.bits.to_bytes((self.size + 7) // 8, "little")

    def free_offset(self, rng: random.Random) -> int:
        """A random free offset (upstream allocates randomly to spread reuse)."""
        start = rng.randrange(self.size)
        for i in range(self.size):
            offset = (start + i) % self.size
            if not self.taken(offset):
                return offset
        raise RangeFullError


class RangeAllocator:
    """Allocate values of a contiguous range (IPs as offsets, or ports) with CAS persistence."""

    def __init__(self, store: Store, key: str, range_text: str, size: int, *,
                 rng: random.Random | None = None) -> None:
        self.store = store
        self.key = key
        self.range_text = range_text
        self.size = size
        self.rng = rng or random.Random()

    async def _update(self, change) -> int:
        while True:
            try:
                kv = await self.store.get(self.key)
                doc = orjson.loads(kv.value)
                bitmap = _Bitmap(self.size, base64.b64decode(doc.get("data", "")))
                expected = kv.mod_revision
            except KeyNotFoundError:
                bitmap, expected = _Bitmap(self.size), None
            result = change(bitmap)
            body = orjson.dumps({
                "kind": "RangeAllocation", "apiVersion": "v1", "metadata": {},
                "range": self.range_text, "data": base64.b64encode(bitmap.data()).decode(),
            })
            try:
                if expected is None:
                    await self.store.create(self.key, body)
                else:
                    await self.store.update(self.key, body, expected_mod_revision=expected)
                return result
            except (ConflictError, KeyExistsError):
                continue  # another writer changed the range first: recompute on its bitmap

    async def allocate_next(self) -> int:
        def take(bitmap: _Bitmap) -> int:
            offset = bitmap.free_offset(self.rng)
            bitmap.set(offset, True)
            return offset

        return await self._update(take)

    async def allocate(self, offset: int) -> bool:
        """Take a specific offset; False if it was already taken."""
        def take(bitmap: _Bitmap) -> int:
            if bitmap.taken(offset):
                return 0
            bitmap.set(offset, True)
            return 1

        return bool(await self._update(take))

    async def release(self, offset: int) -> None:
        await self._update(lambda bitmap: bitmap.set(offset, False))


class ServiceIPAllocator:
    """Cluster IPs from --service-cluster-ip-range (network and broadcast addresses excluded)."""

    def __init__(self, store: Store, cidr: str, prefix: str = "/registry") -> None:
        self.network = ipaddress.ip_network(cidr, strict=False)
        size = max(0, self.network.num_addresses - 2)
        self.base = int(self.network.network_address) + 1
        self.allocator = RangeAllocator(store, f"{prefix}/ranges/serviceips", str(self.network), size)

    def contains(self, ip: str) -> bool:
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            return False
        offset = int(addr) - self.base
        return addr in self.network and 0 <= offset < self.allocator.size

    async def allocate_next(self) -> str:
        try:
            offset = await self.allocator.allocate_next()
        except RangeFullError:
            raise errors.invalid_object("Service", "", [errors.FieldError(
                errors.FieldErrorType.INVALID, "spec.clusterIP", "range is full", "")]) from None
        return str(ipaddress.ip_address(self.base + offset))

    async def allocate(self, ip: str) -> bool:
        return await self.allocator.allocate(int(ipaddress.ip_address(ip)) - self.base)

    async def release(self, ip: str) -> None:
        if self.contains(ip):
            await self.allocator.release(int(ipaddress.ip_address(ip)) - self.base)


class NodePortAllocator:
    """NodePorts from --service-node-port-range (default 30000-32767)."""

    def __init__(self, store: Store, port_range: str, prefix: str = "/registry") -> None:
        low, _, high = port_range.partition("-")
        self.low, self.high = int(low), int(high or low)
        if not (0 < self.low <= self.high <= 65535):
            raise ValueError(f"invalid port range {port_range!r}")
        self.allocator = RangeAllocator(store, f"{prefix}/ranges/servicenodeports",
                                        f"{self.low}-{self.high}", self.high - self.low + 1)

    def contains(self, port: int) -> bool:
        return self.low <= port <= self.high

    async def allocate_next(self) -> int:
        try:
            return self.low + await self.allocator.allocate_next()
        except RangeFullError:
            raise errors.invalid_object("Service", "", [errors.FieldError(
                errors.FieldErrorType.INVALID, "spec.ports[0].nodePort", "range is full", "")]) from None

    async def allocate(self, port: int) -> bool:
        return await self.allocator.allocate(port - self.low)

    async def release(self, port: int) -> None:
        if self.contains(port):
            await self.allocator.release(port - self.low)
