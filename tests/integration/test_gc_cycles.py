"""The garbage collector against an owner-reference cycle, with a real API server: A owned by
B and B owned by A, both references blocking. Upstream (pkg/controller/garbagecollector,
attemptToDeleteItem) deletes through it: in the foreground, the item whose owner waits for its
dependents and whose own dependent waits too makes its references non-blocking and is deleted
in the foreground, which breaks the wait; in the background and with orphan it never waits.
"""

from __future__ import annotations

import pytest

from minikube_py.client import Client
from minikube_py.client.resources import CONFIGMAPS
from minikube_py.controllers.garbagecollector import GarbageCollector
from tests.integration.test_cluster_controllers import (
    _absent,
    client,  # noqa: F401  (the fixture)
    eventually,
    get_or_none,
    owner_ref,
    running,
)

NS = "default"


async def _cycle(client: Client, *names: str) -> list[dict]:
    """Config maps each owned by the next, the last by the first; every reference blocks."""
    objs = [await client.create(CONFIGMAPS, {"metadata": {"name": n, "namespace": NS}})
            for n in names]
    for i, obj in enumerate(objs):
        owner = objs[(i + 1) % len(objs)]
        obj["metadata"]["ownerReferences"] = [owner_ref(owner)]
        objs[i] = await client.update(CONFIGMAPS, obj)
    return objs


async def _all_gone(client: Client, names: tuple[str, ...]) -> bool:
    return all([await _absent(client, CONFIGMAPS, n, NS) for n in names])


@pytest.mark.parametrize("names", [("a", "b"), ("a", "b", "c")])
async def test_foreground_deletion_resolves_a_cycle(client: Client, names: tuple) -> None:  # noqa: F811
    await _cycle(client, *names)
    async with running(client, GarbageCollector):
        first = await client.delete(CONFIGMAPS, names[0], NS, propagation_policy="Foreground")
        assert first["metadata"]["finalizers"] == ["foregroundDeletion"]

        async def gone() -> bool:
            """every member of the cycle deleted"""
            return await _all_gone(client, names)
        await eventually(gone, timeout=10)


async def test_background_deletion_collects_a_cycle(client: Client) -> None:  # noqa: F811
    await _cycle(client, "a", "b")
    async with running(client, GarbageCollector):
        await client.delete(CONFIGMAPS, "a", NS)

        async def gone() -> bool:
            """the dependent of the deleted owner is collected"""
            return await _all_gone(client, ("a", "b"))
        await eventually(gone, timeout=10)


async def test_orphan_deletion_of_a_cycle_keeps_the_other(client: Client) -> None:  # noqa: F811
    await _cycle(client, "a", "b")
    async with running(client, GarbageCollector):
        await client.delete(CONFIGMAPS, "a", NS, propagation_policy="Orphan")

        async def orphaned() -> bool:
            """a is gone and b no longer names it"""
            b = await get_or_none(client, CONFIGMAPS, "b", NS)
            return (await _absent(client, CONFIGMAPS, "a", NS) and b is not None
                    and not b["metadata"].get("ownerReferences"))
        await eventually(orphaned, timeout=10)
