"""Property test: the embedded store behaves like a plain-Python model of the contract.

Hypothesis drives random sequences of creates, CAS updates and deletes (some with stale
revisions), reads now and at past revisions, paged ranges, compactions, snapshots and
restarts, and checks every answer against a model made of dicts. A watcher opened at the start
must see exactly the model's event log.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from minikube_py.storage import (
    CompactedError,
    ConflictError,
    EmbeddedStore,
    EventType,
    KeyExistsError,
    KeyNotFoundError,
)

KEYS = st.sampled_from(["/a", "/a/b", "/a/c", "/ab", "/b", "/b/x", "/c"])
PREFIXES = st.sampled_from(["/", "/a", "/a/", "/b", "/c", "/z"])
VALUES = st.binary(min_size=0, max_size=8)


class StoreModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.dir = tempfile.mkdtemp(prefix="store-model-")
        self.store = self.run(EmbeddedStore.open(self.dir, fsync=False, snapshot_count=10**9))
        self.revision = 1
        self.compact_revision = 0
        self.snapshot_revision = 0
        #: key -> (value, create_revision, mod_revision, version)
        self.live: dict[str, tuple[bytes, int, int, int]] = {}
        #: revision -> copy of `live` after that revision
        self.states: dict[int, dict[str, tuple[bytes, int, int, int]]] = {1: {}}
        #: (type, key, value, revision) in order
        self.log: list[tuple[EventType, str, bytes, int]] = []
        self.open_watch()

    def run(self, coro):
        return self.loop.run_until_complete(coro)

    def open_watch(self) -> None:
        self.watch = self.run(self.store.watch("/"))
        self.watch_from = self.revision + 1

    def commit(self, kind: EventType, key: str, value: bytes) -> None:
        self.revision += 1
        if kind is EventType.PUT:
            old = self.live.get(key)
            create = old[1] if old else self.revision
            version = old[3] + 1 if old else 1
            self.live[key] = (value, create, self.revision, version)
        else:
            del self.live[key]
        self.states[self.revision] = dict(self.live)
        self.log.append((kind, key, value if kind is EventType.PUT else b"", self.revision))

    def state_at(self, revision: int) -> dict:
        return self.states[max(r for r in self.states if r <= revision)]

    # ------------------------------------------------------------------------ writes

    @rule(key=KEYS, value=VALUES)
    def create(self, key, value):
        if key in self.live:
            with pytest.raises(KeyExistsError):
                self.run(self.store.create(key, value))
            return
        kv = self.run(self.store.create(key, value))
        self.commit(EventType.PUT, key, value)
        assert (kv.value, kv.create_revision, kv.mod_revision, kv.version) == self.live[key]

    @rule(key=KEYS, value=VALUES, stale=st.booleans())
    def update(self, key, value, stale):
        if key not in self.live:
            with pytest.raises(KeyNotFoundError):
                self.run(self.store.update(key, value, expected_mod_revision=None))
            return
        expected = self.live[key][2]
        if stale:
            with pytest.raises(ConflictError) as err:
                self.run(self.store.update(key, value, expected_mod_revision=expected - 1))
            assert err.value.current.mod_revision == expected
            return
        kv = self.run(self.store.update(key, value, expected_mod_revision=expected))
        self.commit(EventType.PUT, key, value)
        assert (kv.value, kv.create_revision, kv.mod_revision, kv.version) == self.live[key]

    @rule(key=KEYS, cas=st.booleans())
    def delete(self, key, cas):
        if key not in self.live:
            with pytest.raises(KeyNotFoundError):
                self.run(self.store.delete(key))
            return
        expected = self.live[key][2] if cas else None
        prev = self.run(self.store.delete(key, expected_mod_revision=expected))
        assert prev.value == self.live[key][0]
        self.commit(EventType.DELETE, key, b"")

    # ------------------------------------------------------------------------- reads

    @rule(key=KEYS, data=st.data())
    def get(self, key, data):
        revision = data.draw(st.integers(min_value=max(1, self.compact_revision), max_value=self.revision))
        expected = self.state_at(revision).get(key)
        try:
            kv = self.run(self.store.get(key, revision=revision))
        except KeyNotFoundError:
            assert expected is None
        else:
            assert (kv.value, kv.create_revision, kv.mod_revision, kv.version) == expected

    @rule(prefix=PREFIXES, limit=st.integers(min_value=0, max_value=3), data=st.data())
    def paged_range(self, prefix, limit, data):
        revision = data.draw(st.integers(min_value=max(1, self.compact_revision), max_value=self.revision))
        expected = sorted((k, v) for k, v in self.state_at(revision).items() if k.startswith(prefix))
        page = self.run(self.store.range(prefix, limit=limit, revision=revision))
        got = list(page.kvs)
        assert page.remaining == len(expected) - len(got)
        while page.continue_token:
            page = self.run(self.store.range(prefix, limit=limit, continue_token=page.continue_token))
            assert page.revision == revision
            got.extend(page.kvs)
        assert [(kv.key, (kv.value, kv.create_revision, kv.mod_revision, kv.version)) for kv in got] == expected

    @rule(data=st.data())
    def read_below_compaction_fails(self, data):
        if self.compact_revision <= 1:
            return
        revision = data.draw(st.integers(min_value=1, max_value=self.compact_revision - 1))
        with pytest.raises(CompactedError):
            self.run(self.store.range("/", revision=revision))

    # ------------------------------------------------------------------- maintenance

    @precondition(lambda self: self.revision > max(self.compact_revision, 1))
    @rule(data=st.data())
    def compact(self, data):
        target = data.draw(st.integers(min_value=max(self.compact_revision + 1, 2), max_value=self.revision))
        self.run(self.store.compact(target))
        self.compact_revision = target

    @rule()
    def snapshot(self):
        self.run(self.store.snapshot())
        self.snapshot_revision = self.revision

    @rule()
    def restart(self):
        self.check_watch()
        self.run(self.watch.cancel())
        self.run(self.store.close())
        self.store = self.run(EmbeddedStore.open(self.dir, fsync=False, snapshot_count=10**9))
        # A restart keeps the history the WAL holds after the newest snapshot.
        self.compact_revision = max(self.compact_revision, self.snapshot_revision)
        assert self.run(self.store.current_revision()) == self.revision
        assert self.run(self.store.compact_revision()) == self.compact_revision
        self.open_watch()

    # ------------------------------------------------------------------------ checks

    @invariant()
    def check_watch(self):
        expected = [e for e in self.log if e[3] >= self.watch_from]
        seen = getattr(self, "_seen", None)
        if seen is None or seen[0] is not self.watch:
            self._seen = seen = (self.watch, [])
        events = seen[1]

        async def drain():
            while len(events) < len(expected):
                events.extend(await asyncio.wait_for(self.watch.next_batch(), 5))

        self.run(drain())
        assert [(e.type, e.kv.key, e.kv.value, e.revision) for e in events] == expected

    def teardown(self):
        try:
            self.run(self.store.close())
        finally:
            self.loop.close()
            shutil.rmtree(self.dir, ignore_errors=True)


StoreModel.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_embedded_store_matches_model = StoreModel.TestCase
