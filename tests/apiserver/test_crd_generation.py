"""metadata.generation of custom resources (upstream apiextensions-apiserver
customResourceStrategy.PrepareForUpdate): every change outside metadata bumps it — status too
when the CRD has no status subresource (kopf's walkthrough CRD and kopf's peering objects,
whose status kopf patches through the main resource); with the subresource, a write to the
main resource cannot change status, and a status write leaves generation alone."""

from __future__ import annotations

from pathlib import Path

from tests.apiserver.conftest import start_api
from tests.apiserver.test_crds import (
    CRDS,
    WIDGETS,
    _close,
    established,
    widget,
    widget_crd,
)


async def _generation_after(tmp_path: Path, crd: dict) -> list[int]:
    """Generations after: create, a status merge patch, a label patch, a spec patch, a
    top-level field patch, then (when served) a write to /status."""
    api, runner, store, session = await start_api(tmp_path)
    try:
        status, body = await api.post(CRDS, crd)
        assert status == 201, body
        await established(api)
        seen = []
        status, w = await api.post(WIDGETS, widget("w"))
        assert status == 201, w
        seen.append(w["metadata"]["generation"])
        for patch in ({"status": {"phase": "Ready"}}, {"metadata": {"labels": {"a": "b"}}},
                      {"spec": {"size": 2}}, {"data": {"k": "v"}}):
            status, w = await api.patch(f"{WIDGETS}/w", patch)
            assert status == 200, w
            seen.append(w["metadata"]["generation"])
        status, w = await api.patch(f"{WIDGETS}/w/status", {"status": {"phase": "Gone"}})
        seen.append(w["metadata"]["generation"] if status == 200 else status)
        return seen
    finally:
        await _close(runner, store, session)


async def test_without_status_subresource_status_bumps_generation(tmp_path: Path) -> None:
    crd = widget_crd()
    del crd["spec"]["versions"][0]["subresources"]
    assert await _generation_after(tmp_path, crd) == [1, 2, 2, 3, 4, 404]


async def test_with_status_subresource_status_never_bumps_generation(tmp_path: Path) -> None:
    assert await _generation_after(tmp_path, widget_crd()) == [1, 1, 1, 2, 3, 3]
