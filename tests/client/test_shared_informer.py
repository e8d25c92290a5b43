"""The shared informer on the DeltaFIFO, fed through its store interface (what the Reflector
calls): processDeltas, listeners with tombstones, per-handler resync, listers."""

from __future__ import annotations

import pytest

from minikube_py.api.errors import StatusError
from minikube_py.client import Client
from minikube_py.client.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Informer,
    meta_namespace_index,
)
from minikube_py.client.cache.handlers import SharedProcessor, determine_resync_period
from minikube_py.client.resources import NODES, PODS


def pod(name: str, rv: int, ns: str = "d", **labels: str) -> dict:
    return {"metadata": {"name": name, "namespace": ns, "resourceVersion": str(rv),
                         "labels": labels}, "spec": {}}


class Recorder:
    """A ResourceEventHandler object (upstream's interface shape)."""

    def __init__(self) -> None:
        self.log: list[tuple] = []

    def on_add(self, obj, is_in_initial_list):
        self.log.append(("add", obj["metadata"]["name"], is_in_initial_list))

    def on_update(self, old, new):
        self.log.append(("update", old["metadata"]["resourceVersion"],
                         new["metadata"]["resourceVersion"]))

    def on_delete(self, obj):
        self.log.append(("delete", obj))


def informer(**kwargs) -> Informer:
    return Informer(Client.__new__(Client), PODS, **kwargs)


def test_initial_list_adds_are_marked_and_a_relist_tombstones_what_vanished():
    inf = informer()
    handler, funcs = Recorder(), []
    inf.add_event_handler(handler)
    inf.add_event_handler(on_add=lambda o: funcs.append(("add", o["metadata"]["name"])),
                          on_delete=lambda o: funcs.append(("delete", o["metadata"]["name"])))
    inf.replace([pod("a", 1), pod("b", 2)], "2")
    assert inf.has_synced
    inf.add(pod("c", 3))
    # the watch was down: b was deleted, a changed, c unchanged; the relist shows it
    inf.replace([pod("a", 4), pod("c", 3)], "5")
    assert handler.log == [
        ("add", "a", True), ("add", "b", True), ("add", "c", False), ("update", "1", "4"),
        ("delete", DeletedFinalStateUnknown("d/b", pod("b", 2)))]
    # the function form gets the tombstone's last known object, as components expect
    assert funcs == [("add", "a"), ("add", "b"), ("add", "c"), ("delete", "b")]
    assert sorted(inf.indexer.keys()) == ["d/a", "d/c"]


def test_a_delete_seen_by_the_watch_is_reported_once():
    inf = informer()
    handler = Recorder()
    inf.add_event_handler(handler)
    inf.replace([pod("a", 1)], "1")
    inf.delete(pod("a", 2))
    inf.delete(pod("a", 2))       # a repeated DELETED: the object is no longer known
    inf.replace([], "3")          # and a relist does not report it again
    assert handler.log == [("add", "a", True), ("delete", pod("a", 2))]


def test_a_handler_added_late_gets_the_cache_as_initial_adds():
    inf = informer()
    inf.replace([pod("a", 1)], "1")
    handler = Recorder()
    inf.add_event_handler(handler)
    assert handler.log == [("add", "a", True)]


def test_a_failing_handler_does_not_stop_the_others():
    inf = informer()
    seen = []

    def broken(obj):
        raise RuntimeError("handler bug")

    inf.add_event_handler(on_add=broken)
    inf.add_event_handler(on_add=lambda o: seen.append(o["metadata"]["name"]))
    inf.add(pod("a", 1))
    assert seen == ["a"] and inf.indexer.get("d/a") is not None


def test_resync_goes_only_to_the_listeners_that_are_due():
    """Per-handler periods over one resync check: a 1 s listener resyncs at each check, a
    3 s one every third, one without a period never; real updates reach everyone."""
    now = [100.0]
    inf = informer(resync_period=0)
    inf.processor.clock = lambda: now[0]
    inf.resync_check_period = 5.0  # as if built with a 5 s default
    fast, slow, never = Recorder(), Recorder(), Recorder()
    inf.add_event_handler(fast, resync_period=0.2)  # raised to the 1 s minimum
    inf.add_event_handler(slow, resync_period=3)
    inf.add_event_handler(never, resync_period=0)
    assert inf.resync_check_period == 1.0  # lowered to the smallest before start
    assert [li.resync_period for li in inf.processor.listeners] == [1.0, 3.0, 0.0]
    inf.replace([pod("a", 1)], "1")
    for recorder in (fast, slow, never):
        recorder.log.clear()
    for _ in range(3):
        now[0] += 1.0
        if inf.processor.should_resync():
            inf.resync()
    assert fast.log == [("update", "1", "1")] * 3
    assert slow.log == [("update", "1", "1")]
    assert never.log == []
    inf.update(pod("a", 2))
    assert never.log == [("update", "1", "2")] and slow.log[-1] == ("update", "1", "2")


def test_resync_period_rules():
    assert determine_resync_period(0, 5) == 0
    assert determine_resync_period(10, 0) == 0      # an informer that never resyncs
    assert determine_resync_period(2, 5) == 5       # never faster than the check
    assert determine_resync_period(30, 5) == 30
    inf = informer(resync_period=10)
    inf.started = True  # once started the check period no longer moves
    listener = inf.add_event_handler(Recorder(), resync_period=2)
    assert inf.resync_check_period == 10 and listener.resync_period == 10
    default = inf.add_event_handler(Recorder())
    assert default.requested_resync_period == 10


def test_should_resync_is_false_when_nobody_is_due():
    now = [0.0]
    processor = SharedProcessor(clock=lambda: now[0])
    assert processor.should_resync() is False


def test_listers_get_and_list_by_selector_per_namespace():
    inf = informer(indexers={NAMESPACE_INDEX: meta_namespace_index})
    inf.replace([pod("a", 1, "x", app="web"), pod("b", 2, "x", app="db"),
                 pod("c", 3, "y", app="web")], "3")
    lister = inf.lister()
    assert sorted(p["metadata"]["name"] for p in lister.list("app=web")) == ["a", "c"]
    assert len(lister.list()) == 3
    x = lister.by_namespace("x")
    assert [p["metadata"]["name"] for p in x.list("app in (web,db),app!=db")] == ["a"]
    assert x.get("b")["metadata"]["name"] == "b"
    with pytest.raises(StatusError) as err:
        x.get("c")
    assert err.value.code == 404 and err.value.message == 'pods "c" not found'
    with pytest.raises(StatusError) as err:
        lister.list("app=(")
    assert err.value.code == 400
    unindexed = informer()
    unindexed.replace([pod("a", 1, "x"), pod("c", 3, "y")], "3")
    assert [p["metadata"]["name"] for p in unindexed.lister().by_namespace("y").list()] == ["c"]
    nodes = Informer(Client.__new__(Client), NODES)
    nodes.add({"metadata": {"name": "n1", "resourceVersion": "1"}})
    assert nodes.lister().get("n1")["metadata"]["name"] == "n1"
    with pytest.raises(StatusError) as err:
        nodes.lister().get("n2")
    assert err.value.message == 'nodes "n2" not found'


def test_factory_gives_informers_its_default_or_custom_resync_period():
    from minikube_py.client.cache import InformerFactory

    factory = InformerFactory(Client.__new__(Client), resync_period=600,
                              custom_resync={NODES: 60})
    assert factory.informer(PODS).resync_check_period == 600
    assert factory.informer(NODES).resync_check_period == 60
    assert InformerFactory(Client.__new__(Client)).informer(PODS).resync_check_period == 0


def test_filtered_views_see_a_tombstone_as_the_last_known_object():
    from minikube_py.client.cache import FilteredInformer

    inf = informer()
    bound = FilteredInformer(inf, lambda p: bool(p["spec"].get("nodeName")))
    deleted = []
    bound.add_event_handler(on_delete=lambda o: deleted.append(o["metadata"]["name"]))
    on_node = dict(pod("a", 1), spec={"nodeName": "n1"})
    inf.replace([on_node, pod("b", 2)], "2")
    inf.replace([], "3")  # both vanished while the watch was down
    assert deleted == ["a"]


def test_removed_handlers_hear_nothing_more():
    inf = informer()
    handler = Recorder()
    registration = inf.add_event_handler(handler)
    inf.add(pod("a", 1))
    inf.remove_event_handler(registration)
    inf.update(pod("a", 2))
    assert handler.log == [("add", "a", False)]


async def test_the_process_loop_survives_an_index_function_that_raises():
    import asyncio

    def by_node(p):
        if p["metadata"]["name"] == "bad":
            raise KeyError("spec.nodeName")
        return []

    inf = informer(indexers={"node": by_node})
    handler = Recorder()
    inf.add_event_handler(handler)
    loop = asyncio.create_task(inf.process_loop())
    try:
        inf.fifo.replace([pod("a", 1)], "1")
        await asyncio.wait_for(inf.wait_for_sync(), 1)
        inf.fifo.add(pod("bad", 2))
        inf.fifo.add(pod("c", 3))
        for _ in range(20):
            await asyncio.sleep(0)
        assert [e[1] for e in handler.log] == ["a", "c"]
        assert inf.indexer.get("d/c") is not None
    finally:
        loop.cancel()


def test_factory_listers_read_the_shared_informers_cache():
    from minikube_py.client.cache import InformerFactory

    factory = InformerFactory(Client.__new__(Client))
    factory.informer(PODS).replace([pod("a", 7, "x")], "7")
    assert factory.lister(PODS).by_namespace("x").get("a")["metadata"]["resourceVersion"] == "7"
    assert factory.lister(PODS, field_selector="spec.nodeName=n1").list() == []
