"""Which EndpointSlices a controller wrote, at which generation: how it tells an informer cache
that is behind its own writes from a change someone else made.

Kubernetes piece: staging/src/k8s.io/endpointslice/util/endpointslice_tracker.go
(EndpointSliceTracker: Has, ShouldSync, StaleSlices, Update, ExpectDeletion, HandleDeletion,
DeleteService). Without it, a sync that runs before the informer has seen the slice the last
sync created would create a second one; with it, that sync fails as "stale" and is retried
with the queue's backoff until the cache has caught up. Pure state, no I/O.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

#: the generation recorded for a slice the controller has deleted and expects to disappear
DELETION_EXPECTED = -1


class StaleInformerCache(Exception):
    """endpointslicepkg.NewStaleInformerCache: retry the sync once the cache caught up."""


def _service_key(slice_: Obj, label: str) -> str:
    md = slice_.get("metadata") or {}
    return f"{md.get('namespace', '')}/{(md.get('labels') or {}).get(label, '')}"


def _uid_generation(slice_: Obj) -> tuple[str, int]:
    md = slice_.get("metadata") or {}
    return md.get("uid", ""), int(md.get("generation") or 0)


class EndpointSliceTracker:
    """service key (`ns/name`, from the slice's service-name label) -> {slice uid: generation
    this controller last wrote (or DELETION_EXPECTED)}."""

    def __init__(self, service_label: str) -> None:
        self.label = service_label
        self.generations: dict[str, dict[str, int]] = {}

    def has(self, slice_: Obj) -> bool:
        uid, _ = _uid_generation(slice_)
        return uid in self.generations.get(_service_key(slice_, self.label), {})

    def should_sync(self, slice_: Obj) -> bool:
        """An informer event for this slice needs a sync unless it is one of our own writes
        (or an older one): unknown slices, newer generations and unexpected ones do."""
        uid, generation = _uid_generation(slice_)
        known = self.generations.get(_service_key(slice_, self.label), {})
        tracked = known.get(uid)
        return tracked is None or tracked == DELETION_EXPECTED or generation > tracked

    def stale_slices(self, service_key: str, slices: list[Obj]) -> bool:
        """True when the cache lacks a slice we wrote, holds an older generation of one, or
        still holds one we deleted."""
        known = self.generations.get(service_key)
        if not known:
            return False
        provided = {}
        for slice_ in slices:
            uid, generation = _uid_generation(slice_)
            provided[uid] = generation
            tracked = known.get(uid)
            if tracked is not None and (tracked == DELETION_EXPECTED or tracked > generation):
                return True
        return any(g != DELETION_EXPECTED and uid not in provided for uid, g in known.items())

    def update(self, slice_: Obj) -> None:
        uid, generation = _uid_generation(slice_)
        self.generations.setdefault(_service_key(slice_, self.label), {})[uid] = generation

    def expect_deletion(self, slice_: Obj) -> None:
        uid, _ = _uid_generation(slice_)
        self.generations.setdefault(_service_key(slice_, self.label), {})[uid] = \
            DELETION_EXPECTED

    def handle_deletion(self, slice_: Obj) -> bool:
        """Forget a deleted slice; True when the deletion was not ours (the service must be
        synced to put its endpoints back)."""
        uid, _ = _uid_generation(slice_)
        key = _service_key(slice_, self.label)
        known = self.generations.get(key, {})
        tracked = known.pop(uid, None)
        if not known:
            self.generations.pop(key, None)
        return tracked != DELETION_EXPECTED

    def delete_service(self, service_key: str) -> None:
        self.generations.pop(service_key, None)
