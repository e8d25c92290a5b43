"""The framework runtime: extension points run in order with upstream's semantics and messages.

Small test plugins (defined here) exercise the runtime itself: Skip, PreFilterResult narrowing,
column-wise Filter where a rejected row is not shown to later plugins, Score normalisation and
weights, Reserve/Unreserve order, Permit wait/allow/reject/timeout, the binder chain, PostFilter,
and the FitError text. Tables are real NodeTables built from NodeInfos.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.framework.config.types import PluginRef, Profile
from minikube_py.scheduler.framework.handle import FrameworkHandle
from minikube_py.scheduler.framework.interface import (
    Code,
    CycleState,
    NodeByNodeFilter,
    PostFilterResult,
    PreFilterResult,
    QueuedPodInfo,
    Status,
    StatusError,
)
from minikube_py.scheduler.framework.plugins.queuesort import PrioritySort
from minikube_py.scheduler.framework.plugins.schedulinggates import SchedulingGates
from minikube_py.scheduler.framework.registry import build_registry
from minikube_py.scheduler.framework.runtime import Framework, FrameworkError
from minikube_py.scheduler.framework.schedule_one import (
    FitError,
    PodScheduler,
    num_feasible_nodes_to_find,
)
from minikube_py.scheduler.generic_scheduler import NoNodesAvailable
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import build


def node(name: str, cpu: str = "4") -> NodeInfo:
    return NodeInfo({"metadata": {"name": name, "labels": {}},
                     "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
                                "conditions": [{"type": "Ready", "status": "True"}]}})


def pod(name: str = "p", cpu: str = "1", priority: int = 0, **extra) -> dict:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"priority": priority, "containers": [
                {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]},
            **extra}


class Recorder:
    """Collects what the plugins saw, in call order."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []


class CpuFit:
    """Column-wise Filter: rows whose allocatable CPU is below the pod's request."""

    name = "CpuFit"

    def __init__(self, rec: Recorder) -> None:
        self.rec = rec

    def filter(self, state, pod, nodes, candidates):
        self.rec.calls.append((self.name, np.flatnonzero(candidates).tolist()))
        return [(Status.unschedulable("Insufficient cpu"), nodes.alloc_cpu < pod.milli_cpu)]


class NameBan(NodeByNodeFilter):
    """Per-node Filter: rejects the nodes named in the set."""

    name = "NameBan"

    def __init__(self, rec: Recorder, banned: set[str], code: Code = Code.UNSCHEDULABLE) -> None:
        self.rec, self.banned, self.code = rec, banned, code

    def filter_node(self, state, pod, node):
        self.rec.calls.append((self.name, node.name))
        return Status.of(self.code, "node(s) were banned") if node.name in self.banned else None


class Narrow:
    """PreFilter that narrows to some nodes, or skips, or fails."""

    def __init__(self, name: str, nodes: set[str] | None, status: Status | None = None) -> None:
        self.name, self.nodes, self.status = name, nodes, status

    def pre_filter(self, state, pod, nodes):
        result = None if self.nodes is None else PreFilterResult(frozenset(self.nodes))
        return result, self.status

    def pre_filter_extensions(self):
        return None


class SkipFilter(Narrow):
    """PreFilter answering Skip and a Filter that must then never run."""

    def __init__(self, rec: Recorder) -> None:
        super().__init__("SkipMe", None, Status.of(Code.SKIP))
        self.rec = rec

    def filter(self, state, pod, nodes, candidates):
        self.rec.calls.append(("SkipMe", "filter"))
        return [(Status.unschedulable("never"), nodes.everywhere())]


class CpuScore:
    """Scores the node's allocatable cores; normalises to 0..100 over the candidates."""

    name = "CpuScore"

    def score(self, state, pod, nodes, rows):
        return nodes.alloc_cpu[rows] // 1000

    def score_extensions(self):
        return self

    def normalize_score(self, state, pod, scores):
        top = scores.max()
        scores[:] = scores * 100 // top if top else 0


class Constant:
    """A Score plugin returning one value everywhere (no normalisation)."""

    def __init__(self, name: str, value: int, skip: bool = False) -> None:
        self.name, self.value, self.skip = name, value, skip

    def pre_score(self, state, pod, nodes, rows):
        return Status.of(Code.SKIP) if self.skip else None

    def score(self, state, pod, nodes, rows):
        return np.full(len(rows), self.value, dtype=np.int64)

    def score_extensions(self):
        return None


class Reserver:
    def __init__(self, name: str, rec: Recorder, fail: Status | None = None) -> None:
        self.name, self.rec, self.fail = name, rec, fail

    def reserve(self, state, pod, node):
        self.rec.calls.append(("reserve", self.name))
        return self.fail

    def unreserve(self, state, pod, node):
        self.rec.calls.append(("unreserve", self.name))


class Waiter:
    """Permit: Wait for `timeout` seconds."""

    def __init__(self, name: str, timeout: float) -> None:
        self.name, self.timeout = name, timeout

    def permit(self, state, pod, node):
        return Status.of(Code.WAIT), self.timeout


class Binder:
    def __init__(self, name: str, rec: Recorder, answer: Status | None) -> None:
        self.name, self.rec, self.answer = name, rec, answer

    async def bind(self, state, pod, node):
        self.rec.calls.append(("bind", self.name))
        return self.answer


class PostFilter:
    def __init__(self, name: str, status: Status | None, nominate: str = "") -> None:
        self.name, self.status, self.nominate = name, status, nominate

    async def post_filter(self, state, pod, diagnosis):
        return PostFilterResult(self.nominate), self.status


def make(plugins: dict, **points: list) -> tuple[Framework, FrameworkHandle]:
    """A framework with PrioritySort + DefaultBinder unless overridden; `points` maps an
    extension point to plugin names or PluginRefs; `plugins` name -> instance."""
    enabled = {"queueSort": ["PrioritySort"], "bind": ["DefaultBinder"], **points}
    profile = Profile(plugins={point: [ref if isinstance(ref, PluginRef) else PluginRef(ref)
                                       for ref in refs] for point, refs in enabled.items()})
    registry = build_registry({name: (lambda args, handle, p=p: p) for name, p in plugins.items()},
                              group=None)
    handle = FrameworkHandle()
    return Framework(profile, registry, handle), handle


async def schedule(fw: Framework, handle: FrameworkHandle, nodes, p: dict | None = None):
    table = build(nodes)
    handle.set_snapshot(table)
    return await PodScheduler().schedule_pod(fw, handle, CycleState(), PodMeta.of(p or pod()),
                                             table)


# -- construction -----------------------------------------------------------------------------


@pytest.mark.parametrize(("points", "plugins", "message"), [
    ({"filter": ["Nope"]}, {}, 'FilterPlugin "Nope" does not exist'),
    ({"score": ["CpuFit"]}, {"CpuFit": CpuFit(Recorder())},
     'plugin "CpuFit" does not extend ScorePlugin plugin'),
    ({"filter": ["CpuFit", "CpuFit"]}, {"CpuFit": CpuFit(Recorder())},
     'plugin "CpuFit" already registered as "FilterPlugin"'),
    ({"queueSort": []}, {}, ('only one queue sort plugin required for profile with scheduler name '
                            '"default-scheduler", but got 0')),
    ({"bind": []}, {}, ('at least one bind plugin is needed for profile with scheduler name '
                       '"default-scheduler"')),
    ({"score": [PluginRef("CpuScore", 2**62)]}, {"CpuScore": CpuScore()},
     "total score of Score plugins could overflow"),
])
def test_profile_errors_have_upstreams_messages(points, plugins, message):
    with pytest.raises(FrameworkError) as info:
        make(plugins, **points)
    assert str(info.value) == message


def test_a_failing_factory_names_the_plugin():
    def broken(args, handle):
        raise ValueError("bad args")

    profile = Profile(plugins={"queueSort": [PluginRef("PrioritySort")],
                               "bind": [PluginRef("DefaultBinder")],
                               "filter": [PluginRef("Broken")]})
    with pytest.raises(FrameworkError, match="initializing plugin 'Broken': bad args"):
        Framework(profile, build_registry({"Broken": broken}, group=None), FrameworkHandle())


def test_each_plugin_is_instantiated_once_and_weights_default_to_one():
    built = []

    def factory(args, handle):
        built.append(args)
        return Constant("Both", 5)

    profile = Profile(plugins={"queueSort": [PluginRef("PrioritySort")],
                               "bind": [PluginRef("DefaultBinder")],
                               "preScore": [PluginRef("Both")], "score": [PluginRef("Both")]},
                      plugin_config={"Both": {"x": 1}})
    fw = Framework(profile, build_registry({"Both": factory}, group=None), FrameworkHandle())
    assert built == [{"x": 1}]
    assert fw.score_weights == {"Both": 1}
    assert fw.list_plugins()["score"] == [{"name": "Both", "weight": 1}]


# -- PreFilter / Filter -----------------------------------------------------------------------


async def test_filter_sees_only_rows_earlier_plugins_let_through():
    rec = Recorder()
    fw, handle = make({"CpuFit": CpuFit(rec), "NameBan": NameBan(rec, {"big2"})},
                      filter=["CpuFit", "NameBan"])
    with pytest.raises(FitError) as info:
        await schedule(fw, handle, [node("small", "1"), node("big2", "8")], pod(cpu="2"))
    # NameBan ran on big2 only: small had already failed CpuFit
    assert rec.calls == [("CpuFit", [0, 1]), ("NameBan", "big2")]
    err = info.value
    assert err.message() == ("0/2 nodes are available: 1 Insufficient cpu, "
                             "1 node(s) were banned.")
    assert err.diagnosis.unschedulable_plugins == {"CpuFit", "NameBan"}
    assert [s.plugin for s, _ in err.diagnosis.failures] == ["CpuFit", "NameBan"]


async def test_pre_filter_skip_skips_the_plugins_filter():
    rec = Recorder()
    skip = SkipFilter(rec)
    fw, handle = make({"SkipMe": skip}, preFilter=["SkipMe"], filter=["SkipMe"])
    decision = await schedule(fw, handle, [node("a")])
    assert decision.node == "a" and rec.calls == []


async def test_pre_filter_result_narrows_and_empty_intersection_is_unresolvable():
    fw, handle = make({"A": Narrow("A", {"n1", "n2"}), "B": Narrow("B", {"n2", "n3"})},
                      preFilter=["A", "B"])
    decision = await schedule(fw, handle, [node("n1"), node("n2"), node("n3")])
    assert decision.node == "n2" and decision.feasible == 1
    fw, handle = make({"A": Narrow("A", {"n1"}), "B": Narrow("B", {"n3"})}, preFilter=["A", "B"])
    with pytest.raises(FitError) as info:
        await schedule(fw, handle, [node("n1"), node("n3")])
    assert info.value.message() == ("0/2 nodes are available: node(s) didn't satisfy plugin(s) "
                                    "[A B] simultaneously.")
    assert info.value.diagnosis.unschedulable_plugins == {"A", "B"}


async def test_nodes_outside_the_pre_filter_result_are_charged_as_filtered_out():
    rec = Recorder()
    fw, handle = make({"A": Narrow("A", {"n1"}), "NameBan": NameBan(rec, {"n1"})},
                      preFilter=["A"], filter=["NameBan"])
    with pytest.raises(FitError) as info:
        await schedule(fw, handle, [node("n1"), node("n2"), node("n3")])
    assert info.value.message() == ("0/3 nodes are available: 1 node(s) were banned, "
                                    "2 node is filtered out by the prefilter result.")


async def test_pre_filter_rejection_fails_every_node_and_error_aborts():
    fw, handle = make({"A": Narrow("A", None, Status.unresolvable("no way"))}, preFilter=["A"])
    with pytest.raises(FitError) as info:
        await schedule(fw, handle, [node("n1"), node("n2")])
    assert info.value.message() == "0/2 nodes are available: no way."
    assert [int(m.sum()) for _, m in info.value.diagnosis.failures] == [2]
    assert info.value.diagnosis.unschedulable_plugins == {"A"}
    fw, handle = make({"A": Narrow("A", None, Status.error("boom"))}, preFilter=["A"])
    with pytest.raises(StatusError) as failed:
        await schedule(fw, handle, [node("n1")])
    assert failed.value.status.message() == 'running PreFilter plugin "A": boom'


async def test_a_filter_error_aborts_with_upstreams_text_and_a_raising_plugin_is_an_error():
    rec = Recorder()
    fw, handle = make({"NameBan": NameBan(rec, {"a"}, Code.ERROR)}, filter=["NameBan"])
    with pytest.raises(StatusError) as failed:
        await schedule(fw, handle, [node("a"), node("b")])
    assert failed.value.status.message() == ('running "NameBan" filter plugin: '
                                             "node(s) were banned")

    class Raising(CpuFit):
        def filter(self, state, pod, nodes, candidates):
            raise RuntimeError("plugin bug")

    fw, handle = make({"CpuFit": Raising(rec)}, filter=["CpuFit"])
    with pytest.raises(StatusError, match='running "CpuFit" filter plugin: plugin bug'):
        await schedule(fw, handle, [node("a")])


async def test_no_nodes_is_err_no_nodes_available():
    fw, handle = make({})
    with pytest.raises(NoNodesAvailable, match="no nodes available to schedule pods"):
        await schedule(fw, handle, [])


# -- Score ------------------------------------------------------------------------------------


async def test_scores_are_normalised_weighted_and_summed():
    fw, handle = make({"CpuScore": CpuScore(), "Flat": Constant("Flat", 10)},
                      score=[PluginRef("CpuScore", 3), PluginRef("Flat", 0)])
    decision = await schedule(fw, handle, [node("n2", "2"), node("n4", "4"), node("n8", "8")])
    scores = decision.scores
    assert scores is not None and scores.plugins == ["CpuScore", "Flat"]
    assert scores.weights.tolist() == [3, 1]
    assert scores.normalized.tolist() == [[25, 50, 100], [10, 10, 10]]
    assert scores.totals.tolist() == [85, 160, 310] and decision.node == "n8"


async def test_pre_score_skip_skips_the_plugins_score():
    fw, handle = make({"CpuScore": CpuScore(), "Flat": Constant("Flat", 100, skip=True)},
                      preScore=["Flat"], score=["CpuScore", "Flat"])
    decision = await schedule(fw, handle, [node("n2", "2"), node("n4", "4")])
    assert decision.scores.plugins == ["CpuScore"]


async def test_an_out_of_range_score_fails_with_upstreams_message():
    fw, handle = make({"Flat": Constant("Flat", 101)}, score=["Flat"])
    with pytest.raises(StatusError) as failed:
        await schedule(fw, handle, [node("a"), node("b")])
    assert failed.value.status.message() == (
        'applying score defaultWeights on Score plugins: plugin "Flat" returns an invalid score '
        "101, it should in the range of [0, 100] after normalizing")


def test_adaptive_percentage_of_nodes_to_score():
    assert num_feasible_nodes_to_find(None, 50) == 50
    assert num_feasible_nodes_to_find(None, 1000) == 420  # 50 - 1000/125 = 42%
    assert num_feasible_nodes_to_find(None, 5000) == 500  # 10%
    assert num_feasible_nodes_to_find(0, 100_000) == 5000  # floor 5%
    assert num_feasible_nodes_to_find(1, 1000) == 100  # at least 100
    assert num_feasible_nodes_to_find(100, 1000) == 1000


# -- PostFilter, Reserve, Permit, Bind ----------------------------------------------------------


async def test_post_filter_first_success_wins_else_reasons_accumulate():
    fw, _ = make({"P1": PostFilter("P1", Status.unschedulable("not here")),
                  "P2": PostFilter("P2", None, "n1"),
                  "P3": PostFilter("P3", Status.error("never runs"))},
                 postFilter=["P1", "P2", "P3"])
    result, status = await fw.run_post_filter_plugins(CycleState(), PodMeta.of(pod()), None)
    assert status.code is Code.SUCCESS and result.nominated_node_name == "n1"
    fw, _ = make({"P1": PostFilter("P1", Status.unschedulable("a")),
                  "P2": PostFilter("P2", Status.unschedulable("b"), "n2")},
                 postFilter=["P1", "P2"])
    result, status = await fw.run_post_filter_plugins(CycleState(), PodMeta.of(pod()), None)
    assert (status.code, status.reasons, status.plugin) == (Code.UNSCHEDULABLE, ("a", "b"), "P1")
    assert result.nominated_node_name == "n2"


def test_reserve_failure_and_unreserve_in_reverse_order():
    rec = Recorder()
    fw, _ = make({"R1": Reserver("R1", rec), "R2": Reserver("R2", rec, Status.error("full")),
                  "R3": Reserver("R3", rec)}, reserve=["R1", "R2", "R3"])
    status = fw.run_reserve_plugins_reserve(CycleState(), pod(), "n1")
    assert status.message() == 'running Reserve plugin "R2": full'
    fw.run_reserve_plugins_unreserve(CycleState(), pod(), "n1")
    assert rec.calls == [("reserve", "R1"), ("reserve", "R2"),
                         ("unreserve", "R3"), ("unreserve", "R2"), ("unreserve", "R1")]


async def test_permit_wait_then_every_waiting_plugin_allows():
    fw, handle = make({"W1": Waiter("W1", 5), "W2": Waiter("W2", 5)}, permit=["W1", "W2"])
    p = pod("w")
    status = fw.run_permit_plugins(CycleState(), p, "n1")
    assert status.code is Code.WAIT
    assert status.message() == 'one or more plugins asked to wait and no plugin rejected pod "w"'
    waiter = asyncio.ensure_future(fw.wait_on_permit(p))
    waiting = handle.get_waiting_pod("uid-w")
    assert sorted(waiting.pending_plugins()) == ["W1", "W2"]
    waiting.allow("W1")
    await asyncio.sleep(0)
    assert not waiter.done()  # W2 still waits
    waiting.allow("W2")
    assert await waiter is None
    assert handle.get_waiting_pod("uid-w") is None


async def test_permit_reject_from_any_plugin_through_the_handle():
    fw, handle = make({"W1": Waiter("W1", 5)}, permit=["W1"])
    p = pod("r")
    fw.run_permit_plugins(CycleState(), p, "n1")
    waiter = asyncio.ensure_future(fw.wait_on_permit(p))
    [waiting] = list(handle.iterate_over_waiting_pods())
    waiting.reject("Coscheduling", "gang incomplete")
    status = await waiter
    assert (status.code, status.message(), status.plugin) == \
        (Code.UNSCHEDULABLE, "gang incomplete", "Coscheduling")


async def test_permit_timeout_rejects_with_upstreams_message():
    fw, _ = make({"W1": Waiter("W1", 0.05)}, permit=["W1"])
    p = pod("t")
    fw.run_permit_plugins(CycleState(), p, "n1")
    status = await asyncio.wait_for(fw.wait_on_permit(p), 2)
    assert status.code is Code.UNSCHEDULABLE and status.plugin == "W1"
    assert status.message() == "rejected due to timeout after waiting 50ms at plugin W1"


async def test_permit_rejection_stops_before_waiting():
    class No:
        name = "No"

        def permit(self, state, pod, node):
            return Status.unschedulable("denied"), 0

    fw, handle = make({"W1": Waiter("W1", 5), "No": No()}, permit=["W1", "No"])
    status = fw.run_permit_plugins(CycleState(), pod("x"), "n1")
    assert (status.code, status.plugin) == (Code.UNSCHEDULABLE, "No")
    assert list(handle.iterate_over_waiting_pods()) == []


async def test_bind_skip_hands_over_to_the_next_binder():
    rec = Recorder()
    fw, _ = make({"B1": Binder("B1", rec, Status.of(Code.SKIP)), "B2": Binder("B2", rec, None),
                  "B3": Binder("B3", rec, None)}, bind=["B1", "B2", "B3"])
    assert await fw.run_bind_plugins(CycleState(), pod(), "n1") is None
    assert rec.calls == [("bind", "B1"), ("bind", "B2")]
    fw, _ = make({"B1": Binder("B1", rec, Status.error("api down"))}, bind=["B1"])
    status = await fw.run_bind_plugins(CycleState(), pod(), "n1")
    assert status.message() == 'running Bind plugin "B1": api down'
    fw, _ = make({"B1": Binder("B1", rec, Status.of(Code.SKIP))}, bind=["B1"])
    assert (await fw.run_bind_plugins(CycleState(), pod(), "n1")).code is Code.SKIP


# -- queueing plugins, nominated pods ---------------------------------------------------------


def test_priority_sort_orders_by_priority_then_time():
    less = PrioritySort().less
    high = QueuedPodInfo(pod(priority=10), timestamp=2.0)
    low_early = QueuedPodInfo(pod(priority=1), timestamp=1.0)
    low_late = QueuedPodInfo(pod(priority=1), timestamp=3.0)
    assert less(high, low_early) and not less(low_early, high)
    assert less(low_early, low_late) and not less(low_late, low_early)


def test_scheduling_gates_gate_until_removed():
    fw, _ = make({}, preEnqueue=["SchedulingGates"])
    gated = pod("g", spec={"schedulingGates": [{"name": "a"}, {"name": "b.io/c"}]})
    status = fw.run_pre_enqueue_plugins(gated)
    assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.message() == "waiting for scheduling gates: [a b.io/c]"
    assert status.plugin == "SchedulingGates"
    assert fw.run_pre_enqueue_plugins(pod("free")) is None
    [hint] = SchedulingGates().events_to_register()
    assert hint.hint(gated, gated, gated).name == "QUEUE"
    assert hint.hint(gated, None, pod("other")).name == "QUEUE_SKIP"
    assert "SchedulingGates" in fw.events_to_register()


class Nominator:
    def __init__(self, by_node: dict[str, list[dict]]) -> None:
        self.by_node = by_node

    def nominated_pods_for_node(self, name: str) -> list[dict]:
        return self.by_node.get(name, [])

    def nodes(self) -> list[str]:
        return list(self.by_node)


async def test_filter_with_nominated_pods_leaves_room_for_higher_priority():
    rec = Recorder()
    _fw, handle = make({"CpuFit": FreeCpu(rec)}, filter=["CpuFit"])
    table = build([node("a", "2"), node("b", "2")])
    handle.nominator = Nominator({"a": [pod("vip", cpu="2", priority=100)],
                                  "b": [pod("low", cpu="2", priority=0)]})
    meta = PodMeta.of(pod("me", cpu="1", priority=10))
    failures = handle.run_filter_plugins_with_nominated_pods(CycleState(), meta, table,
                                                              table.everywhere())
    # a: the higher-priority nominated pod takes its 2 cpus; b: lower priority is ignored
    assert [(s.message(), np.flatnonzero(m).tolist()) for s, m in failures] == \
        [("Insufficient cpu", [0])]


class FreeCpu(CpuFit):
    """CPU left after the node's pods (what a nominated pod takes away)."""

    def filter(self, state, pod, nodes, candidates):
        free = nodes.alloc_cpu - nodes.requested_cpu
        return [(Status.unschedulable("Insufficient cpu"), free < pod.milli_cpu)]


# -- the registry -----------------------------------------------------------------------------


def test_a_plugin_name_clash_is_upstreams_error():
    from minikube_py.scheduler.framework.registry import RegistryError

    with pytest.raises(RegistryError, match="^a plugin named PrioritySort already exists$"):
        build_registry({"PrioritySort": lambda args, handle: PrioritySort()}, group=None)


def test_entry_points_of_a_group_are_merged(tmp_path, monkeypatch):
    """A dist-info on sys.path declaring two plugins: one new, one clashing with in-tree."""
    from minikube_py.scheduler.framework.registry import RegistryError

    dist = tmp_path / "demo-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[test.minikube.plugins]\nDemo = json:loads\n"
        "[test.minikube.clash]\nDefaultBinder = json:loads\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "Demo" in build_registry(group="test.minikube.plugins")
    with pytest.raises(RegistryError, match="a plugin named DefaultBinder already exists"):
        build_registry(group="test.minikube.clash")


# -- metrics ----------------------------------------------------------------------------------


def test_extension_point_metrics_always_and_plugin_metrics_only_when_sampled():
    from prometheus_client import REGISTRY

    rec = Recorder()
    fw, _ = make({"MetricReserve": Reserver("MetricReserve", rec)}, reserve=["MetricReserve"])

    def plugin_count() -> float:
        return REGISTRY.get_sample_value(
            "scheduler_plugin_execution_duration_seconds_count",
            {"plugin": "MetricReserve", "extension_point": "Reserve", "status": "Success"}) or 0

    def point_count() -> float:
        return REGISTRY.get_sample_value(
            "scheduler_framework_extension_point_duration_seconds_count",
            {"extension_point": "Reserve", "status": "Success",
             "profile": "default-scheduler"}) or 0

    before_plugin, before_point = plugin_count(), point_count()
    fw.run_reserve_plugins_reserve(CycleState(), pod(), "n1")  # not sampled
    assert (plugin_count(), point_count()) == (before_plugin, before_point + 1)
    sampled = CycleState()
    sampled.record_plugin_metrics = True
    fw.run_reserve_plugins_reserve(sampled, pod(), "n1")
    assert (plugin_count(), point_count()) == (before_plugin + 1, before_point + 2)


def test_about_one_cycle_in_ten_is_sampled():
    import random

    from minikube_py.scheduler.framework.metrics import sample_plugin_metrics

    rng = random.Random(3)
    hits = sum(sample_plugin_metrics(rng) for _ in range(10_000))
    assert 900 < hits < 1100


def test_sampling_rotates_the_start_so_every_node_gets_its_turn():
    class Profiled:
        percentage_of_nodes_to_score = 50

    sampler = PodScheduler()
    feasible = np.arange(200, dtype=np.int64)
    assert sampler._sample(feasible, 200, Profiled()).tolist() == list(range(100))
    assert sampler._sample(feasible, 200, Profiled()).tolist() == list(range(100, 200))
    sampler.next_start = 150  # wraps: the rows from 150, then from the top, in row order
    assert sampler._sample(feasible, 200, Profiled()).tolist() == \
        list(range(50)) + list(range(150, 200))
    assert sampler.next_start == 50


async def test_a_cancelled_wait_leaves_no_timer_and_no_waiting_pod():
    fw, handle = make({"W1": Waiter("W1", 0.05)}, permit=["W1"])
    p = pod("c")
    fw.run_permit_plugins(CycleState(), p, "n1")
    waiting = handle.get_waiting_pod("uid-c")
    waiter = asyncio.ensure_future(fw.wait_on_permit(p))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert handle.get_waiting_pod("uid-c") is None
    assert all(timer.cancelled() for timer in waiting._timers.values())
