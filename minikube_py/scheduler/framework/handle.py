"""What plugins get from the scheduler: the Handle (client, informers, snapshot, waiting pods, events).

Kubernetes piece: the framework.Handle half of pkg/scheduler/framework/runtime/framework.go
(ClientSet, SharedInformerFactory, SnapshotSharedLister, EventRecorder, GetWaitingPod,
IterateOverWaitingPods, RejectWaitingPod, RunFilterPluginsWithNominatedPods,
RunPreFilterExtensionAddPod/RemovePod, NominatedPodsForNode). Upstream the frameworkImpl *is*
the Handle; here the handle is its own object, created before the framework and bound to it
(`bind_framework`) before any plugin factory runs, so plugins can keep it from construction on.

The snapshot is the NodeTable the current scheduling cycle reads (upstream: the cache snapshot
taken at the start of each cycle); the scheduler sets it with `set_snapshot`.

`run_filter_plugins_with_nominated_pods` keeps upstream's two passes, column-wise: every
candidate row runs the Filter plugins as the cycle does; rows of nodes that have nominated
pods of equal or higher priority (not the pod itself) also run them on a scratch copy of the
node with those pods added (and PreFilter state updated through AddPod, per node, on a
clone), and a row that fails with the nominated pods gets that status — a node passes only
if it fits both with and without them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from ..nodeinfo import NodeInfo
from ..nodetable import NodeTable, build
from .interface import CycleState, FilterFailures, Mask, Status, is_success
from .waiting_pods import WaitingPod, pod_uid

if TYPE_CHECKING:
    from ..algorithm.predicates_meta import PodMeta
    from .runtime import Framework

Obj = dict[str, Any]


class PodNominator(Protocol):
    """upstream framework.PodNominator (the scheduling queue keeps it): pods nominated to a
    node by preemption, which later pods of lower priority must leave room for."""

    def nominated_pods_for_node(self, node_name: str) -> list[Obj]: ...

    def nodes(self) -> list[str]:
        """The nodes some pod is nominated to (so a cycle visits only those, not every row)."""
        ...


def pod_priority(pod: Obj) -> int:
    """upstream corev1helpers.PodPriority: spec.priority, 0 when unset."""
    return int((pod.get("spec") or {}).get("priority") or 0)


class EventSink(Protocol):
    def event(self, obj: Obj, event_type: str, reason: str, message: str) -> None: ...


class FrameworkHandle:
    """upstream framework.Handle for one profile's framework."""

    def __init__(self, *, client: Any = None, informers: Any = None,
                 snapshot: Callable[[], NodeTable] | None = None,
                 recorder: EventSink | None = None,
                 nominator: PodNominator | None = None, parallelism: int = 16) -> None:
        """`snapshot`: where the table comes from before the first cycle set one (the
        scheduler cache's `snapshot`); `recorder`: the scheduler's event recorder."""
        self.client = client
        self.informers = informers
        self.recorder = recorder
        self.nominator = nominator
        self.parallelism = parallelism
        self._snapshot_source = snapshot
        self._table: NodeTable | None = None
        self._framework: Framework | None = None

    # -- wiring -----------------------------------------------------------------------------
    def bind_framework(self, framework: Framework) -> None:
        self._framework = framework

    @property
    def framework(self) -> Framework:
        if self._framework is None:
            raise RuntimeError("the handle is not bound to a framework yet")
        return self._framework

    @property
    def profile_name(self) -> str:
        return self.framework.profile_name

    def set_snapshot(self, table: NodeTable) -> None:
        """The table this scheduling cycle reads (set at the start of every cycle)."""
        self._table = table

    # -- the cluster as of this cycle -------------------------------------------------------
    def snapshot(self) -> NodeTable:
        if self._table is None:
            self._table = self._snapshot_source() if self._snapshot_source else NodeTable()
        return self._table

    def node_info(self, name: str) -> NodeInfo | None:
        table = self.snapshot()
        row = table.row_of.get(name)
        return None if row is None else table.infos[row]

    def nominated_pods_for_node(self, node_name: str) -> list[Obj]:
        return self.nominator.nominated_pods_for_node(node_name) if self.nominator else []

    # -- running plugins for other plugins (preemption) -------------------------------------
    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: PodMeta, pod_to_add: Obj,
                                         node: NodeInfo) -> Status | None:
        return self.framework.run_pre_filter_extension_add_pod(state, pod, pod_to_add, node)

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: PodMeta,
                                            pod_to_remove: Obj, node: NodeInfo) -> Status | None:
        return self.framework.run_pre_filter_extension_remove_pod(state, pod, pod_to_remove, node)

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: PodMeta,
                                               nodes: NodeTable, candidates: Mask) -> FilterFailures:
        framework = self.framework
        failures = framework.run_filter_plugins(state, pod, nodes, candidates)
        if self.nominator is None:
            return failures
        priority = pod_priority(pod.pod)
        uid = pod_uid(pod.pod)
        overridden = nodes.everywhere(False)
        extra: FilterFailures = []
        for name in self.nominator.nodes():
            row = nodes.row_of.get(name)
            if row is None or not candidates[row]:
                continue
            nominated = [p for p in self.nominator.nominated_pods_for_node(name)
                         if pod_priority(p) >= priority and pod_uid(p) != uid]
            if not nominated:
                continue
            status = self._fails_with(framework, state, pod, nodes.infos[row], nominated)
            if status is not None:
                mask = nodes.everywhere(False)
                mask[row] = True
                overridden[row] = True
                extra.append((status, mask))
        if not extra:
            return failures
        kept = [(status, mask & ~overridden) for status, mask in failures]
        return [(s, m) for s, m in kept if m.any()] + extra

    @staticmethod
    def _fails_with(framework: Framework, state: CycleState, pod: PodMeta, info: NodeInfo,
                    nominated: list[Obj]) -> Status | None:
        """upstream addGENominatedPods + the first RunFilterPlugins pass, for one node."""
        scratch = NodeInfo(node=info.node)
        for existing in info.pods.values():
            scratch.add_pod(existing)
        cloned = state.clone()
        for other in nominated:
            scratch.add_pod(other)
            status = framework.run_pre_filter_extension_add_pod(cloned, pod, other, scratch)
            if not is_success(status):
                return status
        table = build([scratch])
        for status, mask in framework.run_filter_plugins(cloned, pod, table, table.everywhere()):
            if mask[0]:
                return status
        return None

    # -- waiting pods -----------------------------------------------------------------------
    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.framework.get_waiting_pod(uid)

    def iterate_over_waiting_pods(self) -> Iterable[WaitingPod]:
        return self.framework.iterate_over_waiting_pods()

    def reject_waiting_pod(self, uid: str) -> bool:
        return self.framework.reject_waiting_pod(uid)

    # -- events -----------------------------------------------------------------------------
    def event(self, obj: Obj, event_type: str, reason: str, message: str) -> None:
        if self.recorder is not None:
            self.recorder.event(obj, event_type, reason, message)
